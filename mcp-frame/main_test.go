package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/internal/transcript"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
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

// golden runs a transcript (internal/transcript's format) with run and
// checks what every golden must: a failure says why on stderr.
func golden(run func(args []string, in string) result) func(*testing.T, *transcript.Transcript) transcript.Result {
	return func(t *testing.T, tr *transcript.Transcript) transcript.Result {
		got := run(tr.Args(), tr.Stdin())
		if got.exit != 0 && got.stderr == "" {
			t.Errorf("exit %d with an empty stderr", got.exit)
		}
		return transcript.Result{Stdout: got.out, Stderr: got.stderr, Exit: got.exit}
	}
}

// TestGolden runs each testdata/*.txtar through run; -update rewrites the
// expected sections from what run did.
func TestGolden(t *testing.T) {
	transcript.Run(t, "testdata/*.txtar", golden(runInProcess))
}

// TestBinaryGolden runs the same transcripts through the built binary: the
// program, not just run, must behave (exit status, stdout and stderr).
func TestBinaryGolden(t *testing.T) {
	bin := testbin.Path(t, "MCP_FRAME_BIN", "mcp-frame")
	transcript.Verify(t, "testdata/*.txtar", golden(func(args []string, in string) result {
		return runBinary(t, bin, args, in)
	}))
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
