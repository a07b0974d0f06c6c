//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpipe/mcpipe/internal/fakeserver"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// openPTY returns a pseudo-terminal pair. The terminal side does no output
// processing (no "\n" → "\r\n"), so what the master reads is byte for byte
// what the program wrote.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// terminalRun runs the built mcp-call with stdout and/or stderr on a
// terminal (the other one, or both, piped) and returns what each showed.
func terminalRun(t *testing.T, stdoutTTY, stderrTTY bool, argv ...string) result {
	t.Helper()
	bin := testbin.Path(t, "MCP_CALL_BIN", "mcp-call")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv...)
	var outPipe, errPipe bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outPipe, &errPipe
	var ttys []*os.File
	reads := map[*bytes.Buffer]chan []byte{}
	attach := func(dst *io.Writer, buf *bytes.Buffer) {
		m, tty := openPTY(t)
		*dst = tty
		ttys = append(ttys, tty)
		ch := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(m) // ends with EIO once every tty fd is closed
			ch <- b
		}()
		reads[buf] = ch
	}
	if stdoutTTY {
		attach(&cmd.Stdout, &outPipe)
	}
	if stderrTTY {
		attach(&cmd.Stderr, &errPipe)
	}
	err := cmd.Start()
	for _, tty := range ttys {
		tty.Close() // the child has its own copies
	}
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	for buf, ch := range reads {
		buf.Write(<-ch)
	}
	return result{code, outPipe.String(), errPipe.String()}
}

// safeHostile is fakeserver.Hostile as a terminal must show it: every
// control character but tab and newline spelled out, none left to obey.
const safeHostile = `clear\x1b[2J\x1b[H title\x1b]0;pwned\x07 clip\x1b]52;c;cm0gLXJmIH4=\x07 ` +
	`link\x1b]8;;https://evil.example\x1b\here\x1b]8;;\x1b\ c1\u009b31m bell\x07 cr\x0dtab` + "\t" + `nl` + "\n" + `end`

// obeyable reports control characters a terminal would act on.
func obeyable(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\r\u009b")
}

// TestTerminalIsSafe: a hostile server's text cannot drive the user's
// terminal: on a terminal, tool results, descriptions, tool names, error
// messages and the server's own stderr show their control characters
// escaped; piped, the same output is byte for byte what the server sent.
// --raw and --safe force either.
func TestTerminalIsSafe(t *testing.T) {
	srv := fake("hostile")
	tests := []struct {
		name                 string
		argv                 []string
		stdoutTTY, stderrTTY bool
		code                 int
		stdout, stderr       string
	}{
		{name: "result on a terminal", argv: []string{"call", "hostile"}, stdoutTTY: true, stdout: safeHostile + "\n"},
		{name: "result piped", argv: []string{"call", "hostile"}, stdout: fakeserver.Hostile + "\n"},
		{name: "result --raw on a terminal", argv: []string{"--raw", "call", "hostile"}, stdoutTTY: true, stdout: fakeserver.Hostile + "\n"},
		{name: "result --safe piped", argv: []string{"--safe", "call", "hostile"}, stdout: safeHostile + "\n"},
		{name: "result --json on a terminal", argv: []string{"--json", "call", "hostile"}, stdoutTTY: true,
			// JSON escapes C0 controls itself but may carry U+009B (CSI) raw;
			// the terminal gets it as \u009b, which JSON reads the same.
			stdout: "{\n  \"_meta\": {\n    \"io.modelcontextprotocol/serverInfo\": {\n      \"name\": \"fakeserver\",\n      \"version\": \"1.0.0\"\n    }\n  },\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"clear\\u001b[2J\\u001b[H title\\u001b]0;pwned\\u0007 clip\\u001b]52;c;cm0gLXJmIH4=\\u0007 link\\u001b]8;;https://evil.example\\u001b\\\\here\\u001b]8;;\\u001b\\\\ c1\\u009b31m bell\\u0007 cr\\rtab\\tnl\\nend\"\n    }\n  ],\n  \"resultType\": \"complete\"\n}\n"},
		{name: "tool names on a terminal", argv: []string{"tools"}, stdoutTTY: true, stdout: "hostile\nhostile_fail\nevil\\x1b[8mhidden\n"},
		{name: "tool names piped", argv: []string{"tools"}, stdout: "hostile\nhostile_fail\n" + fakeserver.HostileName + "\n"},
		{name: "description on a terminal", argv: []string{"describe", "hostile"}, stdoutTTY: true,
			stdout: "hostile\n  " + strings.ReplaceAll(safeHostile, "\n", "\n  ") + "\n\narguments: none\n"},
		{name: "isError on a terminal", argv: []string{"call", "hostile_fail"}, stderrTTY: true, code: 1, stderr: safeHostile + "\n"},
		{name: "isError piped", argv: []string{"call", "hostile_fail"}, code: 1, stderr: fakeserver.Hostile + "\n"},
		{name: "error message on a terminal", argv: []string{"call", "nope"}, stderrTTY: true, code: 2,
			stderr: `mcp-call: no tool named "nope" (the server has: evil\x1b[8mhidden, hostile, hostile_fail)` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := terminalRun(t, tt.stdoutTTY, tt.stderrTTY, append(tt.argv, srv...)...)
			if r.code != tt.code || r.stdout != tt.stdout || r.stderr != tt.stderr {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
			if raw := tt.argv[0] == "--raw"; !raw && (tt.stdoutTTY && obeyable(r.stdout) || tt.stderrTTY && obeyable(r.stderr)) {
				t.Error("a control character reached the terminal")
			}
		})
	}
}

// TestTerminalServerStderr: with --server-stderr inherit (the default) the
// server's own stderr reaches the user's terminal through the same escaping;
// piped, it is passed through unchanged.
func TestTerminalServerStderr(t *testing.T) {
	sh := []string{"--era", "legacy", "tools", "--", "sh", "-c", `printf 'boom\033[2J\033]52;c;eA==\007\n' >&2; exit 3`}
	want := `boom\x1b[2J\x1b]52;c;eA==\x07` + "\nmcp-call: server ended before answering: exit status 3\n"
	r := terminalRun(t, false, true, sh...)
	if r.code != 3 || r.stderr != want {
		t.Errorf("terminal: exit %d stderr %q, want 3 and %q", r.code, r.stderr, want)
	}
	r = terminalRun(t, false, false, sh...)
	if want := "boom\x1b[2J\x1b]52;c;eA==\x07\n"; r.code != 3 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("piped: exit %d stderr %q, want 3 and %q first", r.code, r.stderr, want)
	}
}
