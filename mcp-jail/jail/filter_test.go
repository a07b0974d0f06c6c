package jail

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	base := tree(t)
	root := filepath.Join(base, "data")
	r := openRoot(t, root)
	cases := []struct {
		name      string
		names     []string // nil: read in
		in        string
		o         FilterOptions
		out, errs string
		refused   int
	}{
		{
			name:  "args",
			names: []string{"f.txt", "../x", "link-in/g.txt"},
			o:     FilterOptions{Resolve: r.Resolve, Prog: "p"},
			out:   root + "/f.txt\n" + root + "/sub/g.txt\n",
			errs:  "p: ../x: path escapes root\n", refused: 1,
		},
		{
			name: "lines, empty lines skipped, last line unterminated",
			in:   "./sub\n\n/etc/passwd\nout-rel/secret.txt\nsub/deep/h.txt",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p"},
			out:  root + "/sub\n" + root + "/sub/deep/h.txt\n",
			errs: "p: /etc/passwd: path escapes root\np: out-rel/secret.txt: path escapes root\n", refused: 2,
		},
		{
			name: "NUL records, a name with a newline",
			in:   "a\nb\x00..\x00.\x00",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p", NUL: true, Rel: r.Rel},
			out:  "a\nb\x00.\x00",
			errs: "p: ..: path escapes root\n", refused: 1,
		},
		{
			name: "control characters in a refused name are quoted",
			in:   "../a\tb\x00",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p", NUL: true},
			errs: "p: \"../a\\tb\": path escapes root\n", refused: 1,
		},
		{
			name: "relative",
			in:   root + "\nsub/\n",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p", Rel: r.Rel},
			out:  ".\nsub\n",
		},
		{
			name: "invalid",
			in:   strings.Repeat("y", 5000) + "\n",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p"},
			errs: "p: " + strings.Repeat("y", 5000) + ": invalid path: longer than 4095 bytes\n", refused: 1,
		},
		{
			name: "a record longer than the buffer is skipped, the stream goes on",
			in:   strings.Repeat("z", 100000) + "\nf.txt\n",
			o:    FilterOptions{Resolve: r.Resolve, Prog: "p"},
			out:  root + "/f.txt\n",
			errs: "p: " + strings.Repeat("z", 64) + "...: invalid path: longer than 4095 bytes\n", refused: 1,
		},
		{
			name: "lexical does not follow links",
			in:   "out-rel/secret.txt\n../x\n",
			o:    FilterOptions{Resolve: r.ResolveLexical, Prog: "p"},
			out:  root + "/out-rel/secret.txt\n",
			errs: "p: ../x: path escapes root\n", refused: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			n, err := Filter(strings.NewReader(c.in), c.names, &out, &errs, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.refused || out.String() != c.out || errs.String() != c.errs {
				t.Errorf("refused %d, out %q, errs %q\nwant %d, %q, %q", n, out.String(), errs.String(), c.refused, c.out, c.errs)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestFilterIOErrors(t *testing.T) {
	o := FilterOptions{Resolve: func(p string) (string, error) { return ResolveLexical("/r", p) }, Prog: "p"}
	if _, err := Filter(strings.NewReader("a\n"), nil, failWriter{}, &bytes.Buffer{}, o); err == nil {
		t.Error("write error not reported")
	}
	if _, err := Filter(failReader{}, nil, &bytes.Buffer{}, &bytes.Buffer{}, o); err == nil {
		t.Error("read error not reported")
	}
}
