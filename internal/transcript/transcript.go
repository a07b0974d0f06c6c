// Package transcript is the one golden-transcript format of mcpipe's tests:
// what a program was given and what it must print, in a txtar archive
// (golang.org/x/tools/txtar), one file per case under testdata/.
//
// # Format
//
// The archive comment is prose saying what the transcript pins. Then
// sections, each "-- NAME --" and its lines:
//
//	-- args --    the program's arguments, ONE PER LINE (a line is one
//	              argument, spaces and quotes included; blank lines are
//	              skipped). Optional: none.
//	-- in --      its stdin. Optional: empty.
//	-- out --     its stdout, byte for byte. Missing: it must print nothing.
//	-- stderr --  its stderr, byte for byte. Missing: nothing.
//	-- exit --    its exit status, a decimal number. Missing: 0.
//
// Any other section is the test's own input, read with [Transcript.Section]
// or [Transcript.Files]: mcp-call's "mode" (which fake server to run), the
// router's "tools/NAME" (files of the tool directory). Names are compared
// exactly.
//
// Every section ends with a newline (txtar adds one when writing). Output
// without a final newline therefore cannot be expected: it shows as a
// difference, which is the honest result. A section's text cannot contain a
// line of the form "-- NAME --".
//
// # Running
//
// [Run] runs every archive a pattern matches as a subtest, compares what the
// program did with out, stderr and exit, and with -update rewrites those
// three sections from the run instead (the comment and the other sections
// are kept as they are). [Verify] does the same but never rewrites: for a
// second runner over the same files, such as the built binary after an
// in-process run. The package defines the -update flag: a test package
// that imports it must not define its own.
//
// A harness whose comparison is its own (mcp-route/router's conformance
// test sorts the lines of out, since calls finish in any order) uses [Glob],
// [Transcript.Files], [Transcript.Section] and, for -update,
// [Transcript.Set] and [Transcript.Save], and drops its private parser and
// its own -update flag.
//
// The package is test support: it calls t.Fatal, and is meant for _test.go
// files only. It uses only the txtar API that golang.org/x/tools v0.1.10
// already has (Archive, File, Parse, ParseFile, Format), the version the
// WORKSPACE build pins.
package transcript

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Updating reports whether the test run was asked to rewrite the expected
// side (-update), for a harness whose comparison is its own.
func Updating() bool { return *update }

var update = flag.Bool("update", false, "rewrite the out, stderr and exit sections of golden transcripts from the run")

// Section names of the format.
const (
	Args   = "args"
	In     = "in"
	Out    = "out"
	Stderr = "stderr"
	Exit   = "exit"
)

// Transcript is one archive.
type Transcript struct {
	Path    string
	archive *txtar.Archive
}

// Result is what a program did.
type Result struct {
	Stdout, Stderr string
	Exit           int
}

// Load reads the archive at path.
func Load(path string) (*Transcript, error) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	return &Transcript{Path: path, archive: a}, nil
}

// Parse reads an archive from data; path is only for messages and Save.
func Parse(path string, data []byte) *Transcript {
	return &Transcript{Path: path, archive: txtar.Parse(data)}
}

// Glob loads every archive pattern matches; it fails the test when there
// is none or one cannot be read.
func Glob(t testing.TB, pattern string) []*Transcript {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("transcript: nothing matches %s (%v)", pattern, err)
	}
	var trs []*Transcript
	for _, p := range paths {
		tr, err := Load(p)
		if err != nil {
			t.Fatalf("transcript: %v", err)
		}
		trs = append(trs, tr)
	}
	return trs
}

// Name is the file name without directory and ".txtar": the subtest name.
func (tr *Transcript) Name() string {
	return strings.TrimSuffix(filepath.Base(tr.Path), ".txtar")
}

// Comment is the prose before the first section.
func (tr *Transcript) Comment() string { return string(tr.archive.Comment) }

// Section returns the text of the named section and whether it is there.
func (tr *Transcript) Section(name string) (string, bool) {
	for _, f := range tr.archive.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// Files returns the sections in order (the archive's own slice: do not
// modify it).
func (tr *Transcript) Files() []txtar.File { return tr.archive.Files }

// Args returns the args section, one argument per line.
func (tr *Transcript) Args() []string {
	s, _ := tr.Section(Args)
	var args []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			args = append(args, l)
		}
	}
	return args
}

// Stdin returns the in section.
func (tr *Transcript) Stdin() string {
	s, _ := tr.Section(In)
	return s
}

// Want returns the expected result.
func (tr *Transcript) Want() (Result, error) {
	var w Result
	w.Stdout, _ = tr.Section(Out)
	w.Stderr, _ = tr.Section(Stderr)
	if s, ok := tr.Section(Exit); ok {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return w, fmt.Errorf("%s: exit section %q is not a number", tr.Path, s)
		}
		w.Exit = n
	}
	return w, nil
}

// Diff describes how got differs from the expected result; "" when it
// does not.
func (tr *Transcript) Diff(got Result) string {
	want, err := tr.Want()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	if got.Stdout != want.Stdout {
		fmt.Fprintf(&b, "stdout:\n got: %q\nwant: %q\n", got.Stdout, want.Stdout)
	}
	if got.Stderr != want.Stderr {
		fmt.Fprintf(&b, "stderr:\n got: %q\nwant: %q\n", got.Stderr, want.Stderr)
	}
	if got.Exit != want.Exit {
		fmt.Fprintf(&b, "exit %d, want %d\n", got.Exit, want.Exit)
	}
	if b.Len() > 0 {
		b.WriteString("(run the test with -update to accept the new output)")
	}
	return b.String()
}

// Set replaces the named section, or appends it.
func (tr *Transcript) Set(name, data string) {
	for i := range tr.archive.Files {
		if tr.archive.Files[i].Name == name {
			tr.archive.Files[i].Data = []byte(data)
			return
		}
	}
	tr.archive.Files = append(tr.archive.Files, txtar.File{Name: name, Data: []byte(data)})
}

// Format returns the archive as it would be saved.
func (tr *Transcript) Format() []byte { return txtar.Format(tr.archive) }

// Save writes the archive back to Path.
func (tr *Transcript) Save() error { return os.WriteFile(tr.Path, tr.Format(), 0o644) }

// Accept makes got the expected result and saves the archive.
func (tr *Transcript) Accept(got Result) error {
	tr.Set(Out, got.Stdout)
	tr.Set(Stderr, got.Stderr)
	tr.Set(Exit, strconv.Itoa(got.Exit)+"\n")
	return tr.Save()
}

// Run runs every archive pattern matches as a subtest of t: run executes
// the program as the transcript says and returns what it did. Without
// -update a difference fails the subtest; with it the archive is rewritten.
func Run(t *testing.T, pattern string, run func(t *testing.T, tr *Transcript) Result) {
	t.Helper()
	runAll(t, pattern, run, *update)
}

// Verify is Run that never rewrites an archive.
func Verify(t *testing.T, pattern string, run func(t *testing.T, tr *Transcript) Result) {
	t.Helper()
	runAll(t, pattern, run, false)
}

func runAll(t *testing.T, pattern string, run func(*testing.T, *Transcript) Result, rewrite bool) {
	t.Helper()
	for _, tr := range Glob(t, pattern) {
		t.Run(tr.Name(), func(t *testing.T) {
			got := run(t, tr)
			if rewrite {
				if err := tr.Accept(got); err != nil {
					t.Fatal(err)
				}
				return
			}
			if d := tr.Diff(got); d != "" {
				t.Errorf("%s:\n%s", tr.Path, d)
			}
		})
	}
}
