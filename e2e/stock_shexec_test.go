package e2e

// End-to-end tests of sh_exec: the real mcp-stock served by the real
// mcp-route, configured the way an operator does it (--env
// MCP_SH_ALLOW=...). Binaries: MCP_ROUTE_BIN and MCP_STOCK_BIN under Bazel
// (internal/testbin); the programs it runs (echo, ls, cat, sleep, touch
// and, when present, find, git, tar, sort, make, rsync and the refused
// shells) come from the host's PATH.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec/shexectest"
)

// shStructured is sh_exec's structuredContent.
type shStructured struct {
	Argv        []string `json:"argv"`
	ExitCode    int      `json:"exitCode"`
	Signal      string   `json:"signal"`
	TimedOut    bool     `json:"timedOut"`
	Stdout      string   `json:"stdout"`
	Stderr      string   `json:"stderr"`
	StdoutBytes int64    `json:"stdoutBytes"`
	StderrBytes int64    `json:"stderrBytes"`
	Truncated   bool     `json:"truncated"`
}

func shStart(t *testing.T, f readPackFixture, allow string) *server {
	t.Helper()
	return f.start(t, readPackInstall(t, false), append(shUnconfined(), "--env", "MCP_SH_ALLOW="+allow, "--env", "SECRET_TOKEN=hunter2")...)
}

// shUnconfined is the opt-in sh_exec needs to run at all on a kernel
// without Landlock, where mcp-route cannot confine it: there these tests
// prove the allowlist alone. Where Landlock is, they run confined, as
// users' sh_exec does.
func shUnconfined() []string {
	if confine.ABI() > 0 {
		return nil
	}
	return []string{"--env", shexec.UnconfinedEnv + "=1"}
}

func TestStockShExec(t *testing.T) {
	for _, p := range []string{"echo", "ls", "cat", "sleep", "printenv"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s in PATH", p)
		}
	}
	f := newReadPackFixture(t)
	s := shStart(t, f, "echo,ls,cat,sleep,printenv")
	call := func(args map[string]any) (shStructured, string, bool) {
		t.Helper()
		r := s.callTool("sh_exec", args)
		var sc shStructured
		if len(r.StructuredContent) > 0 {
			if err := json.Unmarshal(r.StructuredContent, &sc); err != nil {
				t.Fatal(err)
			}
		}
		return sc, readText(r), r.IsError
	}
	sc, text, isErr := call(map[string]any{"command": `echo "hello world" 'a|b'`})
	if isErr || sc.Stdout != "hello world a|b\n" || text != sc.Stdout || sc.ExitCode != 0 {
		t.Errorf("echo: %v %+v %q", isErr, sc, text)
	}
	sc, _, _ = call(map[string]any{"command": "cat hello.txt dir/b.txt"})
	if sc.Stdout != "hello\nworld\nb\n" {
		t.Errorf("cat in the root: %q", sc.Stdout)
	}
	sc, text, isErr = call(map[string]any{"command": "ls absent"})
	if !isErr || sc.ExitCode == 0 || !strings.Contains(text, "[exit status") {
		t.Errorf("failing ls: %v %+v %q", isErr, sc, text)
	}
	sc, _, _ = call(map[string]any{"command": "printenv"})
	if strings.Contains(sc.Stdout, "hunter2") || strings.Contains(sc.Stdout, "MCP_") {
		t.Errorf("the program sees the tool's environment: %q", sc.Stdout)
	}
	sc, text, isErr = call(map[string]any{"command": "sleep 60", "timeoutSeconds": 1})
	if !isErr || !sc.TimedOut || !strings.Contains(text, "timed out after 1s") {
		t.Errorf("timeout: %v %+v %q", isErr, sc, text)
	}
	sc, text, _ = call(map[string]any{"command": "cat lines.txt", "maxBytes": 10})
	if sc.Stdout != "line 1\nlin" || !sc.Truncated || !strings.Contains(text, "[truncated: 10 of") {
		t.Errorf("cap: %+v %q", sc, text)
	}
	// The schema bounds arguments before anything runs.
	if _, text, isErr := call(map[string]any{"command": "echo x", "timeoutSeconds": 100000}); !isErr || !strings.Contains(text, "timeoutSeconds") {
		t.Errorf("timeoutSeconds over the maximum: %v %q", isErr, text)
	}
	for _, tc := range []struct{ command, want string }{
		{"cat ../outside/secret.txt", "outside the root"},
		{"cat link-out", "outside the root"},
		{"cat chain1", "outside the root"},
		{"cat dir-out/secret.txt", "outside the root"},
		{"cat " + filepath.Join(f.base, "data-evil", "secret.txt"), "outside the root"},
		{"cat proc-link", "outside the root"},
		{"ls /", "outside the root"},
		{"touch x", "not on the allowlist"},
		{"echo x | cat", "no pipes"},
	} {
		_, text, isErr := call(map[string]any{"command": tc.command})
		if !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, readCanary) {
			t.Errorf("%q: %v %q, want a refusal with %q", tc.command, isErr, text, tc.want)
		}
	}
}

// TestStockShExecDisabled: without MCP_SH_ALLOW, sh_exec refuses all.
func TestStockShExecDisabled(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, false), shUnconfined()...)
	r := s.callTool("sh_exec", map[string]any{"command": "echo x"})
	if !r.IsError || !strings.Contains(readText(r), "disabled") {
		t.Errorf("no allowlist: %v %q", r.IsError, readText(r))
	}
}

// TestStockShExecInjection: the injection corpus, through the real router.
// Nothing outside the allowlist runs: the canaries (in the root, in the
// base beside it, and named by a relative path) never appear, even with
// shells and wrappers on the allowlist.
func TestStockShExecInjection(t *testing.T) {
	if _, err := exec.LookPath("touch"); err != nil {
		t.Skip("no touch in PATH")
	}
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, false), append(shUnconfined(), "--env", "MCP_SH_ALLOW="+shexectest.Allow,
		"--env", "MCP_SH_ALLOW_RUNNERS="+shexectest.AllowRunners, "--env", "SECRET_TOKEN=hunter2")...)
	in, out := filepath.Join(f.root, "canary"), filepath.Join(f.base, "canary")
	for _, cmd := range shexectest.InjectionCorpus(in, out, "canary", "../canary") {
		r := s.callTool("sh_exec", map[string]any{"command": cmd, "timeoutSeconds": 5})
		for _, c := range []string{in, out} {
			if _, err := os.Lstat(c); err == nil {
				t.Fatalf("%q created %s: %s", cmd, c, readText(r))
			}
		}
	}
	// The control: allowed, touch does create the canary, so the corpus
	// would have seen one.
	s2 := shStart(t, f, "touch")
	if r := s2.callTool("sh_exec", map[string]any{"command": "touch canary"}); r.IsError {
		t.Fatalf("control: %s", readText(r))
	}
	if _, err := os.Stat(in); err != nil {
		t.Errorf("control: no canary: %v", err)
	}
}

// TestStockShExecConfinement: under mcp-route --confine off sh_exec
// refuses to run, saying why and how to opt in, and runs nothing; with
// --env MCP_SH_UNCONFINED=1 it runs. Where Landlock is, it runs confined
// by default, with no opt-in, and the kernel refuses what the allowlist
// cannot see.
func TestStockShExecConfinement(t *testing.T) {
	if _, err := exec.LookPath("touch"); err != nil {
		t.Skip("no touch in PATH")
	}
	f := newReadPackFixture(t)
	canary := filepath.Join(f.root, "canary")
	touch := map[string]any{"command": "touch canary"}
	off := f.start(t, readPackInstall(t, false), "--confine", "off", "--env", "MCP_SH_ALLOW=touch")
	r := off.callTool("sh_exec", touch)
	if text := readText(r); !r.IsError || !strings.Contains(text, "not in force") || !strings.Contains(text, "MCP_SH_UNCONFINED=1") {
		t.Errorf("--confine off: %v %q, want a refusal naming MCP_SH_UNCONFINED=1", r.IsError, text)
	}
	if _, err := os.Lstat(canary); err == nil {
		t.Fatal("--confine off: sh_exec refused, yet touch ran")
	}
	opted := f.start(t, readPackInstall(t, false), "--confine", "off", "--env", "MCP_SH_ALLOW=touch", "--env", "MCP_SH_UNCONFINED=1")
	if r := opted.callTool("sh_exec", touch); r.IsError {
		t.Fatalf("--confine off with MCP_SH_UNCONFINED=1: %q", readText(r))
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("--confine off with MCP_SH_UNCONFINED=1: touch did not run: %v", err)
	}
	os.Remove(canary)

	confinetest.Need(t, 1)
	s := f.start(t, readPackInstall(t, false), "--env", "MCP_SH_ALLOW=touch")
	if r := s.callTool("sh_exec", touch); r.IsError {
		t.Fatalf("confined: %q", readText(r))
	}
	if _, err := os.Stat(canary); err != nil {
		t.Fatalf("confined: touch did not run: %v", err)
	}
}
