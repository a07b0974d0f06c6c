package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/version"
)

var update = flag.Bool("update", false, "rewrite the out, stderr and exit sections of testdata/*.txtar")

// archive is a txtar file (the golang.org/x/tools/txtar format): prose, then
// "-- name --" sections.
type archive struct {
	comment string
	names   []string
	files   map[string]string
}

func parseArchive(b string) *archive {
	a := &archive{files: map[string]string{}}
	cur := ""
	var body strings.Builder
	flush := func() {
		if cur == "" {
			a.comment = body.String()
		} else {
			a.names = append(a.names, cur)
			a.files[cur] = body.String()
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(b, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur = t[3 : len(t)-3]
			continue
		}
		body.WriteString(line)
	}
	flush()
	return a
}

func (a *archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, n := range a.names {
		b.WriteString("-- " + n + " --\n")
		b.WriteString(a.files[n])
	}
	return b.String()
}

func (a *archive) set(name, body string) {
	if _, ok := a.files[name]; !ok {
		a.names = append(a.names, name)
	}
	a.files[name] = body
}

// TestGolden runs each testdata/*.txtar: "args" holds the arguments one per
// line, "mode" the fake server mode (none: no server), "stdin" the input;
// "out", "stderr" and "exit" are what mcp-call must print and return. With
// -update the last three are rewritten from the run.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.txtar (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(b))
			var argv []string
			for _, l := range strings.Split(strings.TrimSuffix(a.files["args"], "\n"), "\n") {
				if l != "" {
					argv = append(argv, l)
				}
			}
			if mode := strings.TrimSpace(a.files["mode"]); mode != "" {
				argv = append(argv, fake(mode)...)
			}
			r := runT(t, a.files["stdin"], nil, argv...)
			// The transcripts say "dev" whatever version the build stamps.
			stamp := `{"name":"mcp-call","version":` + strconv.Quote(version.Number) + `}`
			r.stderr = strings.ReplaceAll(r.stderr, stamp, `{"name":"mcp-call","version":"dev"}`)
			exit := strconv.Itoa(r.code) + "\n"
			if *update {
				a.set("out", r.stdout)
				a.set("stderr", r.stderr)
				a.set("exit", exit)
				if err := os.WriteFile(file, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, c := range []struct{ name, got string }{{"out", r.stdout}, {"stderr", r.stderr}, {"exit", exit}} {
				if want := a.files[c.name]; !bytes.Equal([]byte(c.got), []byte(want)) {
					t.Errorf("%s:\n got: %q\nwant: %q", c.name, c.got, want)
				}
			}
		})
	}
}
