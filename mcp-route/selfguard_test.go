package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

const (
	guardSecret = "guard-secret-only-in-mcp-route-7d2e"
	guardPassed = "guard-passed-on-purpose-91ab"
)

// peekScript is a tool that attacks its parent, mcp-route, through /proc and
// reports what it got, next to what it was meant to get (--pass-env) and
// proof that its way of reading an environ works (its own, /proc/$$).
const peekScript = `#!/bin/sh
if penv=$(tr '\0' '\n' < /proc/$PPID/environ 2>/dev/null); then
	case $penv in *` + guardSecret + `*) echo "parent environ: secret";; *) echo "parent environ: no secret";; esac
else
	echo "parent environ: refused"
fi
if (exec 3</proc/$PPID/mem) 2>/dev/null; then echo "parent mem: opened"; else echo "parent mem: refused"; fi
case $(tr '\0' '\n' < /proc/$$/environ) in *` + guardPassed + `*) echo "own environ: passed";; *) echo "own environ: missing";; esac
case $(env) in *` + guardSecret + `*) echo "own env: secret";; esac
echo "passed: $MCP_ROUTE_GUARD_PASSED"
`

// TestToolCannotReadRouterEnviron runs the real binary with a variable set
// only in its own environment and a tool that reads /proc/$PPID/environ and
// /proc/$PPID/mem. As root (CI), the environ must hold no secret; /proc/PID/mem
// stays open to root until tools are confined (README, "Safety"). As an
// unprivileged uid, both must be refused. --pass-env still hands over what it
// names in every case.
func TestToolCannotReadRouterEnviron(t *testing.T) {
	// A world-readable copy, so the unprivileged run can exec and read it.
	dir, err := os.MkdirTemp("", "mcp-route-guard-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "mcp-route")
	copyFile(t, testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route"), bin, 0o755)
	tools := filepath.Join(dir, "tools")
	os.Mkdir(tools, 0o755)
	if err := os.WriteFile(filepath.Join(tools, "peek"), []byte(peekScript), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tools, "peek.json"), []byte(`{"description":"reads its parent's /proc files"}`), 0o644)
	// The root beside the tools, not around them: mcp-route refuses tools
	// that its tools could write.
	root := filepath.Join(dir, "root")
	os.Mkdir(root, 0o777)

	t.Run("same uid as the test", func(t *testing.T) {
		out := callPeek(t, bin, tools, root, nil)
		if !strings.Contains(out, "parent environ: no secret") && !strings.Contains(out, "parent environ: refused") {
			t.Errorf("tool read mcp-route's environment:\n%s", out)
		}
		if os.Geteuid() != 0 && !strings.Contains(out, "parent mem: refused") {
			t.Errorf("tool opened mcp-route's memory:\n%s", out)
		}
		if os.Geteuid() == 0 {
			t.Logf("as root: %s", strings.Split(out, "\n")[1]) // what remains for root, see README
		}
		checkPassed(t, out)
	})

	t.Run("unprivileged uid", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to start mcp-route under another uid")
		}
		const nobody = 65534
		out := callPeek(t, bin, tools, root, &syscall.Credential{Uid: nobody, Gid: nobody})
		for _, want := range []string{"parent environ: refused", "parent mem: refused"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q, tool got:\n%s", want, out)
			}
		}
		checkPassed(t, out)
	})
}

func checkPassed(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "passed: "+guardPassed) || !strings.Contains(out, "own environ: passed") {
		t.Errorf("--pass-env did not reach the tool:\n%s", out)
	}
	if strings.Contains(out, "own env: secret") {
		t.Errorf("the secret reached the tool's own environment:\n%s", out)
	}
}

// callPeek starts bin (as cred when not nil), calls peek once and returns the
// text of its result.
func callPeek(t *testing.T, bin, tools, root string, cred *syscall.Credential) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// --confine off: this is selfguard's proof, which holds without
	// Landlock (where confined, /proc is out of reach altogether:
	// TestConfineProcEnviron).
	cmd := exec.CommandContext(ctx, bin, "--tools", tools, "--root", root, "--describe-cache", "",
		"--pass-env", "MCP_ROUTE_GUARD_PASSED", "--confine", "off")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "MCP_ROUTE_GUARD_SECRET=" + guardSecret, "MCP_ROUTE_GUARD_PASSED=" + guardPassed}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	cmd.Stdin = strings.NewReader(initLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"peek","arguments":{}}}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if cred != nil && errors.Is(err, syscall.EPERM) {
			// Bazel's sandbox runs tests in a user namespace that cannot
			// switch uids; go test -race in test.sh runs this case.
			t.Skipf("cannot start mcp-route as uid %d here: %v", cred.Uid, err)
		}
		t.Fatalf("mcp-route: %v\n%s", err, stderr.String())
	}
	r := codec.NewReader(&stdout, 0)
	for {
		l, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("no answer to the call; stderr:\n%s", stderr.String())
		}
		var m struct {
			ID     json.RawMessage
			Result codec.CallToolResult
		}
		if json.Unmarshal(l, &m) != nil || string(m.ID) != "2" {
			continue
		}
		var text strings.Builder
		for _, c := range m.Result.Content {
			text.WriteString(c.Text)
		}
		if m.Result.IsError {
			t.Fatalf("peek failed: %s\nstderr:\n%s", text.String(), stderr.String())
		}
		return text.String()
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
