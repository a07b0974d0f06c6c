package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite the out, stderr and exit sections of testdata/*.txtar")

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// A golden transcript: prose, then sections.
//
//	-- args --    the flags, split on white space (optional)
//	-- in --      stdin
//	-- out --     stdout expected
//	-- stderr --  stderr expected
//	-- exit --    the exit status expected
type transcript struct {
	comment string
	files   []section
}

type section struct {
	name string
	data string
}

func (tr *transcript) get(name string) string {
	for _, s := range tr.files {
		if s.name == name {
			return s.data
		}
	}
	return ""
}

func (tr *transcript) set(name, data string) {
	for i := range tr.files {
		if tr.files[i].name == name {
			tr.files[i].data = data
			return
		}
	}
	tr.files = append(tr.files, section{name, data})
}

// parseTxtar reads the txtar format (golang.org/x/tools/txtar): lines
// "-- NAME --" start sections.
func parseTxtar(data string) *transcript {
	tr := &transcript{}
	cur := -1
	var b strings.Builder
	flush := func() {
		if cur < 0 {
			tr.comment = b.String()
		} else {
			tr.files[cur].data = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			tr.files = append(tr.files, section{name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = len(tr.files) - 1
			continue
		}
		b.WriteString(line)
	}
	flush()
	return tr
}

func (tr *transcript) format() string {
	var b strings.Builder
	b.WriteString(tr.comment)
	for _, s := range tr.files {
		fmt.Fprintf(&b, "-- %s --\n", s.name)
		b.WriteString(s.data)
		if s.data != "" && !strings.HasSuffix(s.data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

type result struct {
	out, stderr string
	exit        int
}

func runInProcess(args []string, in string) result {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(in), &out, &errb)
	return result{out.String(), errb.String(), code}
}

func runBinary(t *testing.T, bin string, args []string, in string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		code = ee.ExitCode()
	default:
		t.Fatalf("%s: %v (stderr %q)", bin, err, errb.String())
	}
	return result{out.String(), errb.String(), code}
}

func goldens(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.txtar (%v)", err)
	}
	return files
}

// TestGolden runs each transcript through run; -update rewrites the
// expected sections from what run did.
func TestGolden(t *testing.T) {
	for _, file := range goldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr := parseTxtar(string(data))
			got := runInProcess(strings.Fields(tr.get("args")), tr.get("in"))
			if *update {
				tr.set("out", got.out)
				tr.set("stderr", got.stderr)
				tr.set("exit", strconv.Itoa(got.exit)+"\n")
				if err := os.WriteFile(file, []byte(tr.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			compare(t, tr, got)
		})
	}
}

// TestBinaryGolden runs the same transcripts through the built binary: the
// program, not just run, must behave (exit status, stdout and stderr).
func TestBinaryGolden(t *testing.T) {
	bin := testbin.Path(t, "MCP_FRAME_BIN", "mcp-frame")
	for _, file := range goldens(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr := parseTxtar(string(data))
			compare(t, tr, runBinary(t, bin, strings.Fields(tr.get("args")), tr.get("in")))
		})
	}
}

func compare(t *testing.T, tr *transcript, got result) {
	t.Helper()
	if got.out != tr.get("out") {
		t.Errorf("stdout:\n%s\nwant:\n%s", got.out, tr.get("out"))
	}
	if got.stderr != tr.get("stderr") {
		t.Errorf("stderr:\n%s\nwant:\n%s", got.stderr, tr.get("stderr"))
	}
	want, err := strconv.Atoi(strings.TrimSpace(tr.get("exit")))
	if err != nil {
		t.Fatalf("bad exit section %q", tr.get("exit"))
	}
	if got.exit != want {
		t.Errorf("exit %d, want %d", got.exit, want)
	}
	if got.exit != 0 && got.stderr == "" {
		t.Errorf("exit %d with an empty stderr", got.exit)
	}
}

func TestVersion(t *testing.T) {
	got := runInProcess([]string{"--version"}, "")
	if got.exit != 0 || !strings.HasPrefix(got.out, "mcp-frame ") || got.stderr != "" {
		t.Errorf("--version: %+v", got)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--revision", "2020-01-01"},
		{"--from", "both"},
		{"--max-frame", "0"},
		{"--max-frame", "lots"},
		{"--check", "--pretty"},
		{"--no-such-flag"},
		{"file.jsonl"},
	} {
		got := runInProcess(args, "")
		if got.exit != 2 || got.out != "" || !strings.HasPrefix(got.stderr, "mcp-frame: ") || strings.Count(got.stderr, "\n") != 1 {
			t.Errorf("%v: %+v, want exit 2 and one stderr line", args, got)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "100": 100, "4K": 4096, "16M": 16 << 20, "1g": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "-1", "0", "1.5M", "1T"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) succeeded", in)
		}
	}
}

// TestBinaryBrokenOutput: when stdout is closed under it, the binary stops
// with an error instead of spinning; here stdout is a pipe nobody reads,
// closed at once.
func TestBinaryBrokenOutput(t *testing.T) {
	bin := testbin.Path(t, "MCP_FRAME_BIN", "mcp-frame")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	line := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}` + "\n"
	cmd.Stdin = strings.NewReader(strings.Repeat(line, 50000))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatal("mcp-frame kept running with its stdout closed")
	}
	if err == nil {
		t.Errorf("exit 0 with a broken stdout; stderr %q", errb.String())
	}
}
