package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// mcp-call against servers we did not write:
//   - a server on the official Go SDK (interop/gosdk-server), always;
//   - @modelcontextprotocol/server-filesystem and a server on the official
//     TypeScript SDK (interop/ts-server/server.cjs), when
//     MCP_INTEROP_NODE_DIR names an npm prefix filled by
//     interop/setup-node.sh (skipped otherwise).

func goSDKServer(t *testing.T) string {
	return testbin.Path(t, "MCP_GOSDK_SERVER_BIN", "e2e/interop/gosdk-server")
}

// nodeDir returns the npm prefix with the Node servers, or skips.
func nodeDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCP_INTEROP_NODE_DIR")
	if dir == "" {
		t.Skip("MCP_INTEROP_NODE_DIR not set: run e2e/interop/setup-node.sh DIR and set it to DIR to test against the Node MCP servers")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("MCP_INTEROP_NODE_DIR is set but node is not in PATH: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")); err != nil {
		t.Fatalf("MCP_INTEROP_NODE_DIR=%s has no server-filesystem (run e2e/interop/setup-node.sh %s): %v", dir, dir, err)
	}
	return dir
}

func TestInteropGoSDK(t *testing.T) {
	bin := goSDKServer(t)
	for _, tc := range []struct {
		name, era  string
		serverArgs []string
		wantEra    string
		wantProbe  string
	}{
		{"auto", "auto", nil, "modern", "server/discover answered"},
		{"legacy", "legacy", nil, "legacy", "no probe"},
		{"modern", "modern", nil, "modern", "server/discover answered"},
		{"auto-vs-legacy-server", "auto", []string{"-legacy"}, "legacy", "fell back to initialize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := append([]string{"--", bin}, tc.serverArgs...)
			run := func(stdin string, argv ...string) callOut {
				return mcpCall(t, stdin, append(append([]string{"--era", tc.era}, argv...), server...)...)
			}
			r := checkGoSDKServer(t, run, tc.wantEra, tc.wantProbe)
			if r = run("", "call", "add", "a=two", "b=1"); r.code != 2 || !strings.Contains(r.stderr, `argument "a"`) {
				t.Errorf("bad argument: %+v", r)
			}
			if r = run("", "call", "nope"); r.code != 2 || !strings.Contains(r.stderr, `no tool named "nope"`) {
				t.Errorf("unknown tool: %+v", r)
			}
			if r = run("", "ping"); r.code != 0 || r.stdout != "ok\n" {
				t.Errorf("ping: %+v", r)
			}
			r = run("greet name=Bo\nadd a=1 b=1\nfail\ngreet name=Cy\n", "script")
			if r.code != 1 || !strings.HasPrefix(r.stdout, "Hello, Bo!\n") || !strings.HasSuffix(r.stdout, "Hello, Cy!\n") {
				t.Errorf("script: %+v", r)
			}
		})
	}
}

func TestInteropNodeFilesystem(t *testing.T) {
	dir := nodeDir(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	server := []string{"--", filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem"), root}
	run := func(stdin string, argv ...string) callOut {
		return mcpCall(t, stdin, append(append([]string{"--server-stderr", "discard"}, argv...), server...)...)
	}
	r := run("", "discover")
	if r.code != 0 || !strings.Contains(r.stdout, "era:               legacy") {
		t.Errorf("discover: %+v", r)
	}
	r = run("", "tools")
	for _, want := range []string{"read_text_file", "write_file", "list_directory"} {
		if !slices.Contains(strings.Fields(r.stdout), want) {
			t.Errorf("tools lack %s: %+v", want, r)
		}
	}
	if r = run("", "call", "read_text_file", "path="+filepath.Join(root, "a.txt")); r.code != 0 || r.stdout != "alpha\n" {
		t.Errorf("read: %+v", r)
	}
	if r = run("", "call", "read_text_file", "path=/etc/passwd"); r.code != 1 || !strings.Contains(r.stderr, "denied") {
		t.Errorf("read outside: %+v", r)
	}
	// A write and a read back over one connection.
	script := "write_file path=" + filepath.Join(root, "b.txt") + " content=beta\n" +
		"read_text_file path=" + filepath.Join(root, "b.txt") + "\n"
	if r = run(script, "script"); r.code != 0 || !strings.HasSuffix(r.stdout, "beta\n") {
		t.Errorf("script: %+v", r)
	}
}

func TestInteropNodeTSSDK(t *testing.T) {
	dir := nodeDir(t)
	script, err := filepath.Abs("interop/ts-server/server.cjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("ts-server not available: %v", err)
	}
	server := []string{"--", "env", "NODE_PATH=" + filepath.Join(dir, "node_modules"), "node", script}
	run := func(argv ...string) callOut {
		return mcpCall(t, "", append(append([]string{"--server-stderr", "discard"}, argv...), server...)...)
	}
	if r := run("discover"); r.code != 0 || !strings.Contains(r.stdout, "ts-server 1.0.0") {
		t.Errorf("discover: %+v", r)
	}
	if r := run("call", "shout", "text=hey"); r.code != 0 || r.stdout != "HEY\n" {
		t.Errorf("shout: %+v", r)
	}
	r := run("--structured", "call", "divide", "a=1", "b=4")
	var q struct{ Quotient float64 }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &q) != nil || q.Quotient != 0.25 {
		t.Errorf("divide: %+v", r)
	}
	if r := run("call", "divide", "a=1", "b=0"); r.code != 1 || !strings.Contains(r.stderr, "division by zero") {
		t.Errorf("divide by zero: %+v", r)
	}
	if r := run("call", "divide", "a=1", "b=zero"); r.code != 2 || !strings.Contains(r.stderr, `argument "b"`) {
		t.Errorf("bad argument: %+v", r)
	}
}

// checkGoSDKServer runs what every transport of mcp-call must do against
// the Go SDK's server: discover (era and probe), the tool list, a text
// call, a structured call and a tool error (exit 1, text on stderr). It
// returns the last result for the caller's own checks.
func checkGoSDKServer(t *testing.T, run func(stdin string, argv ...string) callOut, wantEra, wantProbe string) callOut {
	t.Helper()
	r := run("", "discover")
	if r.code != 0 || !strings.Contains(r.stdout, "era:               "+wantEra) ||
		!strings.Contains(r.stdout, "gosdk-server 1.0.0") || !strings.Contains(r.stdout, wantProbe) {
		t.Errorf("discover: %+v", r)
	}
	r = run("", "tools")
	got := strings.Fields(r.stdout)
	slices.Sort(got)
	if r.code != 0 || !slices.Equal(got, []string{"add", "addtool", "fail", "greet", "mixed", "pid", "region", "roots", "slow"}) {
		t.Errorf("tools: %+v", r)
	}
	if r = run("", "call", "greet", "name=Ann"); r.code != 0 || r.stdout != "Hello, Ann!\n" {
		t.Errorf("greet: %+v", r)
	}
	r = run("", "--structured", "call", "add", "a=2", "b=40")
	var sum struct{ Sum int }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &sum) != nil || sum.Sum != 42 {
		t.Errorf("add: %+v", r)
	}
	if r = run("", "call", "fail", "reason=on purpose"); r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "on purpose") {
		t.Errorf("fail: %+v", r)
	}
	return r
}
