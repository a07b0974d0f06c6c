package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// mcp-call driving mcp-route: the client and the server of this repo
// against each other through the built binaries, in both eras.

// callBin is the mcp-call binary under test.
func callBin(t *testing.T) string { return testbin.Path(t, "MCP_CALL_BIN", "mcp-call") }

type callOut struct {
	code           int
	stdout, stderr string
}

// mcpCall runs mcp-call with argv and stdin, bounded by waitLong, with the
// test environment (no HOME).
func mcpCall(t *testing.T, stdin string, argv ...string) callOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, callBin(t), argv...)
	cmd.Env = baseEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcp-call %q hung; stderr:\n%s", argv, errb.String())
	}
	r := callOut{code: exitStatus(cmd.ProcessState, err), stdout: out.String(), stderr: errb.String()}
	if r.code != 0 && r.stderr == "" {
		t.Errorf("mcp-call %q: exit %d with an empty stderr", argv, r.code)
	}
	return r
}

// exampleRoute is the server command line for mcp-route on the example
// tools, jailed to a fresh root; it skips the test when the examples are
// not available.
func exampleRoute(t *testing.T) []string {
	t.Helper()
	examples, err := filepath.Abs("../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(examples, "echo.json")); err != nil {
		t.Skipf("examples not available: %v", err)
	}
	return []string{"--", routeBin(t), "--tools", examples, "--root", t.TempDir(), "--grace", "300ms", "--poll", "0"}
}

func TestCallRouteBothEras(t *testing.T) {
	server := exampleRoute(t)
	for _, era := range []string{"auto", "legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			run := func(stdin string, argv ...string) callOut {
				return mcpCall(t, stdin, append(append([]string{"--era", era, "--server-stderr", "discard"}, argv...), server...)...)
			}
			r := run("", "tools")
			if r.code != 0 || r.stdout != "crash\necho\nsleep\nsteps\nwordcount\n" {
				t.Errorf("tools: %+v", r)
			}
			r = run("", "discover")
			wantEra := map[string]string{"auto": "modern", "legacy": "legacy", "modern": "modern"}[era]
			if r.code != 0 || !strings.Contains(r.stdout, "era:               "+wantEra) || !strings.Contains(r.stdout, "mcp-route") {
				t.Errorf("discover: %+v", r)
			}
			r = run("", "call", "echo", "text=hello, pipes")
			if r.code != 0 || r.stdout != "hello, pipes\n" {
				t.Errorf("call echo: %+v", r)
			}
			r = run("", "--structured", "call", "wordcount", "text=one two\nthree")
			var counts map[string]int
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &counts) != nil || counts["words"] != 3 || counts["lines"] != 1 {
				t.Errorf("wordcount: %+v", r)
			}
			r = run("", "call", "crash", "how=exit")
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "flux capacitor") {
				t.Errorf("crash: %+v", r)
			}
			r = run("", "--progress", "call", "steps", "steps=3")
			if r.code != 0 || r.stdout != "done: 3 steps\n" || strings.Count(r.stderr, "mcp-call: progress ") != 3 {
				t.Errorf("steps: %+v", r)
			}
			r = run("", "ping")
			if r.code != 0 || r.stdout != "ok\n" {
				t.Errorf("ping: %+v", r)
			}
		})
	}
}

// TestCallRoutePinnedVersions pins each revision mcp-route serves.
func TestCallRoutePinnedVersions(t *testing.T) {
	server := exampleRoute(t)
	for _, rev := range codec.Revisions {
		r := mcpCall(t, "", append([]string{"--server-stderr", "discard", "--protocol-version", rev, "discover"}, server...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "protocol version:  "+rev+"\n") {
			t.Errorf("%s: discover %+v", rev, r)
		}
		r = mcpCall(t, "", append([]string{"--server-stderr", "discard", "--protocol-version", rev, "call", "echo", "text=" + rev}, server...)...)
		if r.code != 0 || strings.TrimSpace(r.stdout) != rev {
			t.Errorf("%s: call %+v", rev, r)
		}
	}
}

func TestCallRouteArgumentsRefusedBeforeCall(t *testing.T) {
	server := exampleRoute(t)
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"call", "echo"}, `missing required argument "text"`},
		{[]string{"call", "echo", "text=x", "loud=yes"}, `"loud"`},
		{[]string{"call", "steps", "steps=many"}, `argument "steps"`},
		{[]string{"call", "crash", "how=gently"}, `argument "how"`},
		{[]string{"call", "nosuchtool"}, `no tool named "nosuchtool"`},
	} {
		r := mcpCall(t, "", append(append([]string{"--server-stderr", "discard"}, tt.argv...), server...)...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q: %+v, want exit 2 and %q", tt.argv, r, tt.want)
		}
	}
}

// TestCallRouteScript is the README's scripted use: many calls over one
// connection, a crashing tool answered as an error while the server goes on.
func TestCallRouteScript(t *testing.T) {
	server := exampleRoute(t)
	script := `# the example tools, one connection
echo text="first call"
wordcount text="a b c"
crash how=signal
echo text='still serving'
`
	r := mcpCall(t, script, append([]string{"--server-stderr", "discard", "script"}, server...)...)
	if r.code != 1 {
		t.Errorf("exit %d, want 1 (a call returned isError)", r.code)
	}
	if !strings.HasPrefix(r.stdout, "first call\n") || !strings.HasSuffix(r.stdout, "still serving\n") {
		t.Errorf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "line 4: crash: ") || !strings.Contains(r.stderr, "SIGSEGV") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = mcpCall(t, script, append([]string{"--server-stderr", "discard", "--json", "script"}, server...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], `"isError":true`) {
		t.Errorf("--json script: %q", lines)
	}
}

// TestCallRawRoute sends hand-written frames through mcp-call raw.
func TestCallRawRoute(t *testing.T) {
	server := exampleRoute(t)
	in := `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"raw"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
`
	r := mcpCall(t, in, append([]string{"--server-stderr", "discard", "raw"}, server...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.Contains(r.stdout, `"supportedVersions"`) || !strings.Contains(r.stdout, `"text":"raw`) {
		t.Errorf("raw: %+v", r)
	}

	// A 2025-03-26 session may batch: raw waits for the answers inside the
	// array the server sends back.
	batch := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]
`
	r = mcpCall(t, batch, append([]string{"--server-stderr", "discard", "raw"}, server...)...)
	lines = strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], "[") || !strings.Contains(lines[1], `"wordcount"`) {
		t.Errorf("raw batch: %+v", r)
	}
}

// TestCallRawSendsBadLines: raw sends a line that is not JSON to the
// server as it is, prints the server's parse error answer, and waits for
// nothing on its behalf or a notification's.
func TestCallRawSendsBadLines(t *testing.T) {
	server := exampleRoute(t)
	in := `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}
junk
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}
`
	r := mcpCall(t, in, append([]string{"--server-stderr", "discard", "raw"}, server...)...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"supportedVersions"`) || !strings.Contains(lines[1], `-32700`) {
		t.Errorf("raw: %+v", r)
	}
}

// TestCallRouteUsageError: a server that fails on its command line is
// started once (its usage error printed once), and mcp-call says so in one
// line, exit 3.
func TestCallRouteUsageError(t *testing.T) {
	r := mcpCall(t, "", "tools", "--", routeBin(t), "--bogus")
	if n := strings.Count(r.stderr, "-bogus"); r.code != 3 || n != 1 ||
		!strings.HasSuffix(r.stderr, "\nmcp-call: server ended before answering: exit status 2\n") {
		t.Errorf("%+v", r)
	}
}

// TestCallStopsServerOnTimeout: a call that outlives --timeout ends mcp-call
// with 3, and neither mcp-route nor the tool process outlives it.
func TestCallStopsServerOnTimeout(t *testing.T) {
	f := newFixture(t)
	f.tool("hang", def("hang", "", ""), `echo $$ > "$MCP_ROOT/tool.pid"; exec sleep 30`)
	routePID := filepath.Join(t.TempDir(), "route.pid")
	// exec keeps the pid, so the file names mcp-route itself.
	wrapper := fmt.Sprintf(`echo $$ > %q; exec %q --tools %q --root %q --grace 300ms --poll 0`, routePID, routeBin(t), f.tools, f.root)
	r := mcpCall(t, "", "--timeout", "4s", "--server-stderr", "discard", "call", "hang", "--", "sh", "-c", wrapper)
	if r.code != 3 || !strings.Contains(r.stderr, "mcp-call: no answer from the server within 4s (--timeout); raise it with --timeout 8s") {
		t.Errorf("hang: %+v", r)
	}
	for _, file := range []string{routePID, filepath.Join(f.root, "tool.pid")} {
		pid := readPIDFile(t, file)
		proctest.Eventually(t, func() string {
			if p, ok := proctest.Lookup(pid); ok && p.State != 'Z' {
				return fmt.Sprintf("process %s from %s still running", p, filepath.Base(file))
			}
			return ""
		})
	}
}

func readPIDFile(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", file, errors.New(string(b)))
	}
	return pid
}
