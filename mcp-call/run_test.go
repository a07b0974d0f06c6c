package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/internal/fakeserver"
	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/mcp-call/args"
)

// The test binary doubles as the fake MCP server: `TEST_BINARY -fake-server
// MODE` serves on stdin/stdout (an argument rather than an environment
// variable, so parallel tests can pick different modes).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-fake-server" {
		err := fakeserver.Serve(os.Stdin, os.Stdout, os.Args[2])
		// A requested exit is a clean one (status 0): Dial restarts a
		// server that exits 0 on the probe, not one that fails.
		if err != nil && !errors.Is(err, fakeserver.ErrExit) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func fake(mode string) []string { return []string{"--", os.Args[0], "-fake-server", mode} }

type result struct {
	code           int
	stdout, stderr string
}

func runT(t *testing.T, stdin string, getenv func(string) string, argv ...string) result {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := runEnv(ctx, argv, strings.NewReader(stdin), &out, &errb, env{getenv: getenv})
	return result{code, out.String(), errb.String()}
}

func TestHelpAndVersion(t *testing.T) {
	r := runT(t, "", nil, "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Exit status:") || r.stderr != "" {
		t.Errorf("--help: %+v", r)
	}
	r = runT(t, "", nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mcp-call ") {
		t.Errorf("--version: %+v", r)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate", "--", "x"}, `unknown command "frobnicate"`},
		{[]string{"tools"}, "no server"},
		{[]string{"describe", "--", "x"}, "describe takes one TOOL"},
		{[]string{"call", "--", "x"}, "call needs a TOOL"},
		{[]string{"tools", "extra", "--", "x"}, "takes no arguments"},
		{[]string{"--era", "legacy", "--protocol-version", "2026-07-28", "tools", "--", "x"}, "era is legacy"},
		{[]string{"--era", "sideways", "tools", "--", "x"}, "unknown era"},
		{[]string{"--json", "--structured", "call", "x", "--", "x"}, "exclude each other"},
		{[]string{"--raw", "--safe", "tools", "--", "x"}, "--raw and --safe exclude each other"},
		{[]string{"--nope", "tools", "--", "x"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		r := runT(t, "", nil, tt.argv...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || !strings.HasPrefix(r.stderr, "mcp-call: ") || r.stdout != "" {
			t.Errorf("%q: code %d stdout %q stderr %q, want 2 and %q", tt.argv, r.code, r.stdout, r.stderr, tt.want)
		}
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name      string
		argv      []string
		mode      string
		stdin     string
		code      int
		stdout    string // exact, unless stdoutHas
		stdoutHas string
		stderrHas string
	}{
		{name: "tools", argv: []string{"tools"}, mode: "dual", stdout: "echo\nadd\nfail\nstructured\nprogress\nping_client\nask_roots\ncrash\nhang\nfiller_1\nfiller_2\nfiller_3\n"},
		{name: "tools legacy", argv: []string{"tools"}, mode: "legacy-invalid", stdoutHas: "filler_3\n"},
		{name: "tools json", argv: []string{"tools", "--json"}, mode: "dual", stdoutHas: `"name": "echo"`},
		{name: "call text", argv: []string{"call", "echo", "text=hello world"}, mode: "dual", stdout: "hello world\n"},
		{name: "call flags after", argv: []string{"call", "add", "a=2", "b=40", "--era", "legacy"}, mode: "dual", stdout: "42\n"},
		{name: "call json object", argv: []string{"call", "add", `{"a":1,"b":2}`}, mode: "legacy", stdout: "3\n"},
		{name: "call raw json", argv: []string{"call", "add", "a:=5", "b:=6"}, mode: "dual", stdout: "11\n"},
		{name: "call stdin", argv: []string{"call", "add", "-"}, mode: "dual", stdin: `{"a":1,"b":1}`, stdout: "2\n"},
		{name: "call json", argv: []string{"--json", "call", "echo", "text=x"}, mode: "dual", stdoutHas: `"resultType": "complete"`},
		{name: "call json legacy", argv: []string{"--json", "call", "echo", "text=x"}, mode: "legacy", stdoutHas: `"text": "x"`},
		{name: "structured", argv: []string{"--structured", "call", "structured"}, mode: "dual", stdout: "{\n  \"n\": 42\n}\n"},
		{name: "structured missing", argv: []string{"--structured", "call", "echo", "text=x"}, mode: "dual", code: 2, stderrHas: "no structuredContent"},
		{name: "isError", argv: []string{"call", "fail"}, mode: "dual", code: 1, stdout: "", stderrHas: "it failed"},
		{name: "bad type", argv: []string{"call", "add", "a=two", "b=1"}, mode: "dual", code: 2, stderrHas: `argument "a"`},
		{name: "unknown key", argv: []string{"call", "add", "a=1", "b=1", "c=1"}, mode: "dual", code: 2, stderrHas: `"c"`},
		{name: "missing key", argv: []string{"call", "echo"}, mode: "dual", code: 2, stderrHas: `missing required argument "text"`},
		{name: "unknown tool", argv: []string{"call", "nope"}, mode: "dual", code: 2, stderrHas: `no tool named "nope"`},
		{name: "server crash", argv: []string{"call", "crash"}, mode: "dual", code: 3, stderrHas: "server closed the connection"},
		{name: "describe", argv: []string{"describe", "add"}, mode: "dual", stdoutHas: "  a (integer, required)"},
		{name: "describe json", argv: []string{"--json", "describe", "echo"}, mode: "dual", stdoutHas: `"inputSchema"`},
		{name: "discover modern", argv: []string{"discover"}, mode: "dual", stdoutHas: "supported:         2026-07-28, 2025-11-25"},
		{name: "discover legacy", argv: []string{"discover"}, mode: "legacy", stdoutHas: "probe:             server/discover answered -32601"},
		{name: "discover restarted", argv: []string{"discover"}, mode: "legacy-exit", stdoutHas: "restarted it and used initialize"},
		{name: "discover json", argv: []string{"--json", "discover"}, mode: "dual", stdoutHas: `"era": "modern"`},
		{name: "ping modern", argv: []string{"ping"}, mode: "dual", stdout: "ok\n"},
		{name: "ping legacy", argv: []string{"ping", "--era=legacy"}, mode: "dual", stdout: "ok\n"},
		{name: "pinned version", argv: []string{"--protocol-version", "2025-03-26", "discover"}, mode: "dual", stdoutHas: "protocol version:  2025-03-26"},
		{name: "noise", argv: []string{"call", "echo", "text=x"}, mode: "noise", code: 2, stdout: "x\n", stderrHas: "invalid line(s)"},
		{name: "progress", argv: []string{"--progress", "call", "progress"}, mode: "dual", stdout: "done\n", stderrHas: "progress 1/2: step 1"},
		{name: "server requests", argv: []string{"call", "ask_roots"}, mode: "legacy", stdout: "client answered error -32601\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runT(t, tt.stdin, nil, append(tt.argv, fake(tt.mode)...)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.code, r.stdout, r.stderr)
			}
			if tt.stdoutHas != "" {
				if !strings.Contains(r.stdout, tt.stdoutHas) {
					t.Errorf("stdout %q, want it to contain %q", r.stdout, tt.stdoutHas)
				}
			} else if r.stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderrHas) {
				t.Errorf("stderr %q, want it to contain %q", r.stderr, tt.stderrHas)
			}
			if r.code != 0 && r.stderr == "" {
				t.Error("non-zero exit with empty stderr")
			}
		})
	}
}

func TestServerFromEnvironment(t *testing.T) {
	line := fmt.Sprintf("'%s' -fake-server dual", os.Args[0])
	r := runT(t, "", func(k string) string {
		if k == "MCP_SERVER" {
			return line
		}
		return ""
	}, "call", "echo", "text=env")
	if r.code != 0 || r.stdout != "env\n" {
		t.Errorf("%+v", r)
	}
}

func TestServerCannotStart(t *testing.T) {
	r := runT(t, "", nil, "tools", "--", filepath.Join(t.TempDir(), "no-such-server"))
	if r.code != 3 || !strings.Contains(r.stderr, "cannot start server") {
		t.Errorf("%+v", r)
	}
	r = runT(t, "", nil, "tools", "--", "false")
	if r.code != 3 || !strings.Contains(r.stderr, "exit status 1") {
		t.Errorf("%+v", r)
	}
}

// TestServerFailingAtStart: a server that fails before answering (a usage
// error) is started once, and mcp-call says so in one line, exit 3.
func TestServerFailingAtStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "starts")
	r := runT(t, "", nil, "tools", "--", "sh", "-c", `echo >> "$0"; echo "usage: bogus flag" >&2; exit 2`, file)
	want := "usage: bogus flag\nmcp-call: server ended before answering: exit status 2\n"
	if r.code != 3 || r.stderr != want {
		t.Errorf("exit %d stderr %q, want 3 and %q", r.code, r.stderr, want)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("server started %d times, want 1", n)
	}
}

// TestInvalidLineDuringHandshake: a server that writes something other
// than MCP on stdout before answering the handshake is a protocol error at
// once (2), naming the line; mcp-call does not wait for --timeout.
func TestInvalidLineDuringHandshake(t *testing.T) {
	r := runT(t, "", nil, "tools", "--", "sh", "-c", "echo hello; cat >/dev/null")
	want := "mcp-call: the server wrote something that is not MCP on its stdout during the handshake: server stdout line 1: parse error: invalid character 'h' looking for beginning of value at offset 0; the line: \"hello\"\n"
	if r.code != 2 || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q, want 2 and %q", r.code, r.stdout, r.stderr, want)
	}
}

// TestInvalidLineThenTimeout: an invalid line from the server after the
// handshake makes the status 2 (protocol error) even when a timeout
// follows. The timeout leaves a loaded machine ample time to start the
// server and finish the handshake.
func TestInvalidLineThenTimeout(t *testing.T) {
	r := runT(t, "", nil, append([]string{"--timeout", "3s", "call", "hang"}, fake("noise")...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "invalid line(s)") || !strings.Contains(r.stderr, "no answer from the server within 3s (--timeout); raise it with --timeout 6s") {
		t.Errorf("noise hang: %+v", r)
	}
	// An interrupt is the user's: it keeps 3.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := runEnv(ctx, append([]string{"tools"}, fake("noise")...), strings.NewReader(""), &out, &errb, env{getenv: func(string) string { return "" }})
	if code != 3 {
		t.Errorf("interrupted: exit %d, stderr %q", code, errb.String())
	}
}

func TestServerStderr(t *testing.T) {
	dir := t.TempDir()
	logf := filepath.Join(dir, "server.log")
	sh := `echo from-server >&2; exit 3`
	r := runT(t, "", nil, "--server-stderr", logf, "--era", "legacy", "tools", "--", "sh", "-c", sh)
	if r.code != 3 || strings.Contains(r.stderr, "from-server") {
		t.Errorf("%+v", r)
	}
	if b, err := os.ReadFile(logf); err != nil || !strings.Contains(string(b), "from-server") {
		t.Errorf("log %q %v", b, err)
	}
	r = runT(t, "", nil, "--server-stderr", "discard", "--era", "legacy", "tools", "--", "sh", "-c", sh)
	if strings.Contains(r.stderr, "from-server") {
		t.Errorf("discard: %+v", r)
	}
	r = runT(t, "", nil, "--era", "legacy", "tools", "--", "sh", "-c", sh)
	if !strings.Contains(r.stderr, "from-server") {
		t.Errorf("inherit: %+v", r)
	}
}

func TestTimeout(t *testing.T) {
	// A server that never answers: the handshake must time out with 3, and
	// the server (and its child sleep) must be stopped.
	r := runT(t, "", nil, "--timeout", "300ms", "--era", "legacy", "tools", "--", "sh", "-c", "sleep 30")
	if want := "mcp-call: no answer from the server within 300ms (--timeout); raise it with --timeout 600ms\n"; r.code != 3 || r.stderr != want {
		t.Errorf("%+v", r)
	}
}

const script = `# a comment

echo text="one two"
add a=1 b=2
fail
add a=x b=1
nope
echo text=last
`

func TestScript(t *testing.T) {
	r := runT(t, script, nil, append([]string{"script"}, fake("dual")...)...)
	if r.code != 2 {
		t.Errorf("exit %d, want 2 (the worst)", r.code)
	}
	if want := "one two\n3\nlast\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, want := range []string{"line 5: fail: it failed", `line 6: add: argument "a"`, `line 7: no tool named "nope"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	}
	r = runT(t, script, nil, append([]string{"script", "--fail-fast"}, fake("dual")...)...)
	if r.code != 1 || r.stdout != "one two\n3\n" {
		t.Errorf("fail-fast: %+v", r)
	}
	r = runT(t, script, nil, append([]string{"script", "--json"}, fake("dual")...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 6 || !strings.Contains(lines[2], `"isError":true`) || !strings.HasPrefix(lines[4], `{"error":`) {
		t.Errorf("json: %q", lines)
	}
	r = runT(t, "echo text=a\ncrash\necho text=b\n", nil, append([]string{"script"}, fake("dual")...)...)
	if r.code != 3 || r.stdout != "a\n" {
		t.Errorf("crash: %+v", r)
	}
}

func TestRaw(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json
{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"raw"}}}
{"jsonrpc":"2.0","id":3,"method":"nope"}
`
	r := runT(t, in, nil, append([]string{"raw"}, fake("dual")...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("stdout %q", r.stdout)
	}
	// The line that is not JSON is sent as it is; the server's parse error
	// answer (id null) is printed and awaited by nothing. The server answers
	// the last two requests concurrently: in either order.
	last := lines[2] + lines[3]
	if !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) || !strings.Contains(lines[1], `-32700`) ||
		!strings.Contains(last, `"text":"raw"`) || !strings.Contains(last, `-32601`) {
		t.Errorf("stdout %q", lines)
	}
	if r.code != 0 || r.stderr != "" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

// TestRawSendsLinesAsTheyAre: raw neither refuses nor rewrites a line, and
// waits only for requests with an id.
func TestRawSendsLinesAsTheyAre(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	// The server records its stdin and answers nothing: with no request
	// with an id among the lines, raw must not wait for an answer.
	in := "junk\n{ \"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\" }\r\n\n[1,\n{\"id\":1}\n"
	r := runT(t, in, nil, "raw", "--timeout", "20s", "--", "sh", "-c", `cat > "$0"`, got)
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("%+v", r)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	want := "junk\n{ \"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\" }\n[1,\n{\"id\":1}\n"
	if string(b) != want {
		t.Errorf("server read %q, want %q", b, want)
	}
}

func TestRawTimeout(t *testing.T) {
	// A request the server never answers: timeout, 3.
	r := runT(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`+"\n", nil,
		append([]string{"raw", "--timeout", "300ms"}, fake("legacy-silent")...)...)
	if want := "mcp-call: no answer to 1 request(s) within 300ms (--timeout); raise it with --timeout 600ms\n"; r.code != 3 || r.stderr != want {
		t.Errorf("silent: %+v", r)
	}
}

func TestTimeoutAdvice(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:        "within 45s (--timeout); raise it with --timeout 2m",
		300 * time.Millisecond:  "within 300ms (--timeout); raise it with --timeout 600ms",
		2 * time.Minute:         "within 2m (--timeout); raise it with --timeout 4m",
		1500 * time.Millisecond: "within 1.5s (--timeout); raise it with --timeout 3s",
		time.Hour:               "within 1h (--timeout); raise it with --timeout 2h",
	} {
		if got := timeoutMessage("x", d); got != "x "+want {
			t.Errorf("%v: %q, want %q", d, got, "x "+want)
		}
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{usagef("x"), 2},
		{&args.Error{Msg: "x"}, 2},
		{fmt.Errorf("tools/call: %w", codec.ErrMethodNotFound), 2},
		{&client.ProtocolError{Msg: "x"}, 2},
		{&client.StartError{Err: os.ErrNotExist}, 3},
		{fmt.Errorf("x: %w", client.ErrClosed), 3},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), 3},
		{context.Canceled, 3},
		{errors.New("other"), 2},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestBinary runs the built mcp-call: flags, exit statuses and the process
// ladder as a user sees them.
func TestBinary(t *testing.T) {
	bin := testbin.Path(t, "MCP_CALL_BIN", "mcp-call")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runBin := func(stdin string, argv ...string) result {
		cmd := exec.CommandContext(ctx, bin, argv...)
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
	if r := runBin("", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Exit status:") {
		t.Errorf("--help: %+v", r)
	}
	if r := runBin("", append([]string{"call", "add", "a=20", "b=22"}, fake("dual")...)...); r.code != 0 || r.stdout != "42\n" {
		t.Errorf("call: %+v", r)
	}
	if r := runBin("", append([]string{"call", "fail"}, fake("legacy")...)...); r.code != 1 || r.stderr != "it failed\n" {
		t.Errorf("isError: %+v", r)
	}
	if r := runBin("echo text=a\nadd a=1 b=1\n", append([]string{"script"}, fake("dual")...)...); r.code != 0 || r.stdout != "a\n2\n" {
		t.Errorf("script: %+v", r)
	}
	if r := runBin("", "tools"); r.code != 2 || !strings.HasPrefix(r.stderr, "mcp-call: no server") {
		t.Errorf("no server: %+v", r)
	}

	// SIGINT during a call: exit 3, "interrupted", and the server stopped.
	cmd := exec.CommandContext(ctx, bin, append([]string{"--progress", "call", "hang"}, fake("dual")...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "progress 0: hanging") {
			cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(strings.Join(seen, "\n"), "interrupted") {
		t.Errorf("SIGINT: %v, stderr %q", err, seen)
	}
}
