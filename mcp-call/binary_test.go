package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/complete/completetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// runBinary runs the built mcp-call with stdin, extra environment
// variables (KEY=VALUE) and argv, and returns what a user would see.
func runBinary(t *testing.T, stdin string, env []string, argv ...string) result {
	t.Helper()
	bin := testbin.Path(t, "MCP_CALL_BIN", "mcp-call")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// TestScriptRefusesShellOperators: a script line is split like a shell
// would split it, but no shell runs, so an unquoted ; | & < > cannot end
// the command there. It used to: "echo text=hello;rm" called echo with
// "hello" and exited 0. Now the line is refused (nothing is called) and
// the next line still runs; quoted, the same text is an argument.
func TestScriptRefusesShellOperators(t *testing.T) {
	script := "echo text=hello;rm\necho text=a|b\necho text=x >out\necho 'text=hello;rm'\necho text=a\\|b\n"
	r := runBinary(t, script, nil, append([]string{"script"}, fake("dual")...)...)
	if r.code != 2 {
		t.Errorf("exit %d, want 2", r.code)
	}
	if want := "hello;rm\na|b\n"; r.stdout != want {
		t.Errorf("stdout %q, want only the quoted lines' output %q", r.stdout, want)
	}
	for _, want := range []string{
		`mcp-call: line 1: unquoted ";" at column 16 of "echo text=hello;rm": no shell runs`,
		`mcp-call: line 2: unquoted "|" at column 12 of "echo text=a|b"`,
		`mcp-call: line 3: unquoted ">" at column 13 of "echo text=x >out"`,
		`quote it ('a;b') or escape it (a\;b) to pass it as text`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q, want it to contain %q", r.stderr, want)
		}
	}
}

// TestServerFromEnvironmentRefusesShellOperators: $MCP_SERVER with an
// unquoted ";" is a usage error before anything starts (the server used to
// start without the words after it, e.g. without --readonly); quoted, the
// same character is an argument.
func TestServerFromEnvironmentRefusesShellOperators(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	line := "touch " + started + " ; --readonly"
	r := runBinary(t, "", []string{"MCP_SERVER=" + line}, "tools")
	want := `mcp-call: MCP_SERVER: unquoted ";" at column ` // the column depends on the temp dir
	if r.code != 2 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "quote it") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d stderr %q, want 2 and %q...", r.code, r.stderr, want)
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the server was started")
	}
	// The harmless counterpart: the fake server, its mode quoted with a ";"
	// inside, is refused by the fake server itself (an unknown mode), which
	// shows the quoted word reached it whole.
	r = runBinary(t, "", []string{"MCP_SERVER='" + os.Args[0] + "' -fake-server 'dual;x'"}, "tools")
	if r.code != 3 || !strings.Contains(r.stderr, `unknown mode "dual;x"`) {
		t.Errorf("quoted: %+v", r)
	}
	r = runBinary(t, "", []string{"MCP_SERVER='" + os.Args[0] + "' -fake-server dual"}, "call", "echo", "text=env")
	if r.code != 0 || r.stdout != "env\n" {
		t.Errorf("plain: %+v", r)
	}
}

// TestScriptLongLines: a script line is not bounded by bufio.Scanner's
// 1 MiB token any more but by the frame cap (16 MiB); a longer line is an
// error naming the line and the cap, and the script goes on.
func TestScriptLongLines(t *testing.T) {
	long := strings.Repeat("a", 2<<20)
	tooLong := "echo text=" + strings.Repeat("b", maxScriptLine)
	script := "echo text=" + long + "\n" + tooLong + "\necho text=after\n"
	r := runBinary(t, script, nil, append([]string{"script"}, fake("dual")...)...)
	if want := long + "\nafter\n"; r.stdout != want {
		t.Errorf("stdout has %d bytes, want %d (the 2 MiB line and the last one)", len(r.stdout), len(want))
	}
	want := "mcp-call: line 2: longer than the 16 MiB limit for one line (16777216 bytes, the frame cap); pass less data per call\n"
	if r.code != 2 || r.stderr != want {
		t.Errorf("exit %d stderr %q, want 2 and %q", r.code, r.stderr, want)
	}
	// With --json the refused line has its {"error":...} line like any
	// failed call, so output lines still match script lines.
	r = runBinary(t, script, nil, append([]string{"--json", "script"}, fake("dual")...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], `{"error":{"message":"longer than the 16 MiB limit`) || !strings.Contains(lines[2], `"text":"after"`) {
		t.Errorf("--json: %d lines, the second %.100q", len(lines), lines[min(1, len(lines)-1)])
	}
}

// TestScriptUnquotedJSON: a JSON object a script line did not quote as one
// word gets a message that shows how to quote it.
func TestScriptUnquotedJSON(t *testing.T) {
	script := "echo {\"text\": \"hi there\"}\necho '{\"text\": \"hi there\"}'\n"
	r := runBinary(t, script, nil, append([]string{"script"}, fake("dual")...)...)
	if r.code != 2 || r.stdout != "hi there\n" {
		t.Errorf("exit %d stdout %q, want 2 and the quoted line's output", r.code, r.stdout)
	}
	want := `mcp-call: line 1: echo: arguments "{text: hi there}": give either one JSON object or key=value pairs, not both; a JSON object must be one word, so quote it whole: TOOL '{"path": "a b.txt", "n": 3}'` + "\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// mcp-call's bash completion, from the real binary, in a real bash: the
// commands first, flags anywhere before --, --era's values, files after
// --token-file, complete's two kinds; a shell it does not know is a usage
// error (exit 2) naming the ones it does.
func TestCompletionBinary(t *testing.T) {
	script := runBinary(t, "", nil, "completion", "bash")
	if script.code != 0 || !strings.Contains(script.stdout, "complete -F") {
		t.Fatalf("mcp-call completion bash: exit %d, stderr %q", script.code, script.stderr)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "token"), nil, 0o600)
	complete := func(line string) []string {
		t.Helper()
		return completetest.Bash(t, script.stdout, dir, line)
	}
	if got := complete("mcp-call "); !completetest.Has(got, "tools", "call", "read", "prompt", "complete", "script", "completion") {
		t.Errorf("mcp-call: %q, want the commands", got)
	}
	if got := complete("mcp-call --"); !completetest.Has(got, "--url", "--token-file", "--json", "--era") || completetest.Has(got, "--h") {
		t.Errorf("mcp-call --: %q, want the flags (and no --h)", got)
	}
	if got := complete("mcp-call call --js"); strings.Join(got, " ") != "--json" {
		t.Errorf("mcp-call call --js: %q, want the flag after a command too", got)
	}
	if got := complete("mcp-call --era "); strings.Join(got, " ") != "auto legacy modern" {
		t.Errorf("mcp-call --era: %q", got)
	}
	if got := complete("mcp-call --token-file t"); strings.Join(got, " ") != "token" {
		t.Errorf("mcp-call --token-file t: %q, want the file", got)
	}
	if got := complete("mcp-call complete "); strings.Join(got, " ") != "prompt resource" {
		t.Errorf("mcp-call complete: %q", got)
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		r := runBinary(t, "", nil, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "bash") || r.stdout != "" {
			t.Errorf("mcp-call %q: exit %d, stdout %q, stderr %q: want exit 2 naming the shells", args, r.code, r.stdout, r.stderr)
		}
	}
}
