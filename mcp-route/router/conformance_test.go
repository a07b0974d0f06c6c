package router

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/transcript"
)

// TestConformance replays testdata/*.txtar, in the one transcript format
// (internal/transcript): prose saying what the file pins, then sections.
// "-- tools/NAME --" files become the tool directory (an executable script
// when the content starts with "#!"), "-- in --" lines are sent to the
// server, and "-- out --" holds every line it writes. Calls finish in any
// order, so lines are compared sorted; their bytes are exact. Run with
// -update to rewrite the expected side.
func TestConformance(t *testing.T) {
	for _, tr := range transcript.Glob(t, "testdata/*.txtar") {
		t.Run(tr.Name(), func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tr.Files() {
				name, ok := strings.CutPrefix(f.Name, "tools/")
				if !ok {
					continue
				}
				mode := os.FileMode(0o644)
				if strings.HasPrefix(string(f.Data), "#!") {
					mode = 0o755
				}
				if err := os.WriteFile(filepath.Join(dir, name), f.Data, mode); err != nil {
					t.Fatal(err)
				}
			}
			in, _ := tr.Section("in")
			want, _ := tr.Section("out")
			// The input ends right after the last request: the calls
			// still running get a grace that a loaded machine cannot
			// overrun (200 ms was, once in five -race runs).
			h := newHarness(t, dir, func(o *Options) { o.Grace = time.Minute })
			for _, l := range strings.Split(strings.TrimRight(in, "\n"), "\n") {
				h.send(l)
			}
			var got []string
			for _, l := range h.closeAndDrain() {
				got = append(got, string(l))
			}
			slices.Sort(got)
			gotText := strings.Join(got, "\n") + "\n"
			if transcript.Updating() {
				tr.Set("out", gotText)
				if err := tr.Save(); err != nil {
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
