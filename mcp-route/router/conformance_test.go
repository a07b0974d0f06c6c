package router

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the -- out -- sections of testdata/*.txtar")

// TestConformance replays testdata/*.txtar: prose saying what the file pins,
// then sections. "-- tools/NAME --" files become the tool directory (an
// executable script when the content starts with "#!"), "-- in --" lines are
// sent to the server, and "-- out --" holds every line it writes. Calls
// finish in any order, so lines are compared sorted; their bytes are exact.
// Run with -update to rewrite the expected side.
func TestConformance(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/*.txtar")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseTxtar(data)
			dir := t.TempDir()
			var in, want string
			var order []string
			for _, s := range sections {
				order = append(order, s.name)
				switch {
				case s.name == "in":
					in = s.data
				case s.name == "out":
					want = s.data
				case strings.HasPrefix(s.name, "tools/"):
					mode := os.FileMode(0o644)
					if strings.HasPrefix(s.data, "#!") {
						mode = 0o755
					}
					if err := os.WriteFile(filepath.Join(dir, strings.TrimPrefix(s.name, "tools/")), []byte(s.data), mode); err != nil {
						t.Fatal(err)
					}
				}
			}
			h := newHarness(t, dir, nil)
			for _, l := range strings.Split(strings.TrimRight(in, "\n"), "\n") {
				h.send(l)
			}
			var got []string
			for _, l := range h.closeAndDrain() {
				got = append(got, string(l))
			}
			slices.Sort(got)
			gotText := strings.Join(got, "\n") + "\n"
			if *update {
				var b bytes.Buffer
				b.WriteString(comment)
				for _, s := range sections {
					if s.name == "out" {
						continue
					}
					b.WriteString("-- " + s.name + " --\n" + s.data)
				}
				b.WriteString("-- out --\n" + gotText)
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantLines := strings.Split(strings.TrimRight(want, "\n"), "\n")
			slices.Sort(wantLines)
			if wantText := strings.Join(wantLines, "\n") + "\n"; gotText != wantText {
				t.Errorf("output differs (run with -update to accept)\ngot:\n%s\nwant:\n%s", gotText, wantText)
			}
		})
	}
}

type section struct{ name, data string }

// parseTxtar splits a txtar archive: the comment, then "-- name --" files.
func parseTxtar(data []byte) (comment string, files []section) {
	lines := strings.SplitAfter(string(data), "\n")
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			comment = b.String()
		} else {
			files[cur].data = b.String()
		}
		b.Reset()
	}
	for _, l := range lines {
		trim := strings.TrimRight(l, "\n")
		if strings.HasPrefix(trim, "-- ") && strings.HasSuffix(trim, " --") && len(trim) > 6 {
			flush()
			files = append(files, section{name: trim[3 : len(trim)-3]})
			cur = len(files) - 1
			continue
		}
		b.WriteString(l)
	}
	flush()
	return comment, files
}
