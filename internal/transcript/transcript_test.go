package transcript

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sample = `Prose saying what this pins.
-- args --
--flag
two words

'quoted'
-- in --
line 1
-- tools/x --
#!/bin/sh
-- out --
hello
-- stderr --
prog: warning
-- exit --
1
`

func TestSections(t *testing.T) {
	tr := Parse("testdata/sample.txtar", []byte(sample))
	if got := tr.Name(); got != "sample" {
		t.Errorf("Name = %q", got)
	}
	if got := tr.Comment(); got != "Prose saying what this pins.\n" {
		t.Errorf("Comment = %q", got)
	}
	if got, want := tr.Args(), []string{"--flag", "two words", "'quoted'"}; !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q (one per line, taken as written)", got, want)
	}
	if got := tr.Stdin(); got != "line 1\n" {
		t.Errorf("Stdin = %q", got)
	}
	if got, ok := tr.Section("tools/x"); !ok || got != "#!/bin/sh\n" {
		t.Errorf("Section(tools/x) = %q, %v", got, ok)
	}
	if _, ok := tr.Section("nope"); ok {
		t.Error("Section(nope) found")
	}
	if n := len(tr.Files()); n != 6 {
		t.Errorf("%d files, want 6", n)
	}
}

func TestDiff(t *testing.T) {
	tr := Parse("x.txtar", []byte(sample))
	if d := tr.Diff(Result{Stdout: "hello\n", Stderr: "prog: warning\n", Exit: 1}); d != "" {
		t.Errorf("equal result: %s", d)
	}
	for _, tt := range []struct {
		got  Result
		want string
	}{
		{Result{Stdout: "hello", Stderr: "prog: warning\n", Exit: 1}, "stdout:"}, // no final newline
		{Result{Stdout: "hello\n", Stderr: "", Exit: 1}, "stderr:"},
		{Result{Stdout: "hello\n", Stderr: "prog: warning\n", Exit: 0}, "exit 0, want 1"},
	} {
		if d := tr.Diff(tt.got); !strings.Contains(d, tt.want) || !strings.Contains(d, "-update") {
			t.Errorf("Diff(%+v) = %q, want it to say %q and how to accept", tt.got, d, tt.want)
		}
	}
	// Missing out, stderr and exit expect nothing and 0.
	bare := Parse("bare.txtar", []byte("-- args --\nx\n"))
	if d := bare.Diff(Result{}); d != "" {
		t.Errorf("bare: %s", d)
	}
	if d := bare.Diff(Result{Stderr: "boom\n", Exit: 2}); !strings.Contains(d, "stderr") || !strings.Contains(d, "exit 2, want 0") {
		t.Errorf("bare: %s", d)
	}
	if d := Parse("bad.txtar", []byte("-- exit --\none\n")).Diff(Result{}); !strings.Contains(d, `exit section "one\n" is not a number`) {
		t.Errorf("bad exit: %s", d)
	}
}

// TestAccept: -update rewrites out, stderr and exit and keeps the rest,
// comment and order included.
func TestAccept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "case.txtar")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Accept(Result{Stdout: "new\n", Stderr: "", Exit: 0}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(sample, "-- out --\nhello\n-- stderr --\nprog: warning\n-- exit --\n1\n", "-- out --\nnew\n-- stderr --\n-- exit --\n0\n", 1)
	if string(b) != want {
		t.Errorf("saved:\n%s\nwant:\n%s", b, want)
	}
	// Unchanged input round-trips byte for byte.
	if got := string(Parse("x", []byte(sample)).Format()); got != sample {
		t.Errorf("round trip:\n%s", got)
	}
	// New sections are appended.
	tr = Parse("x", []byte("prose\n"))
	tr.Set(Out, "x\n")
	if got := string(tr.Format()); got != "prose\n-- out --\nx\n" {
		t.Errorf("appended: %q", got)
	}
}
