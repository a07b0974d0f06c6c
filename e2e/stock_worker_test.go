package e2e

// End-to-end test of the stock pack as workers: the real mcp-route serving
// the real mcp-stock, whose 32 definitions say run.mode "worker".

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// stockWorkers returns the pids of the children of parent that run the
// mcp-stock binary.
func stockWorkers(t *testing.T, parent int) []int {
	t.Helper()
	bin, err := filepath.EvalSymlinks(testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock"))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == bin {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestStockWorkers: calls of many different stock tools, one after the
// other, are all served by one mcp-stock worker that stays up between
// calls (exec mode would leave none, a worker per tool would leave many);
// each call sees its own arguments; shutdown leaves no worker behind.
func TestStockWorkers(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, false), "--env", "MCP_SH_ALLOW=echo", "--env", "MCP_ENV_ALLOW=MCP_ROOT")
	s.initialize(modern)
	route := s.cmd.Process.Pid

	readWantOK(t, "fs_write", s.callTool("fs_write", map[string]any{"path": "w.txt", "content": "from a worker\n"}))
	if got := readWantOK(t, "fs_read", s.callTool("fs_read", map[string]any{"path": "w.txt"})); got != "from a worker\n" {
		t.Errorf("fs_read of what fs_write wrote: %q", got)
	}
	if got := readWantOK(t, "fs_read", s.callTool("fs_read", map[string]any{"path": "hello.txt"})); got != "hello\nworld\n" {
		t.Errorf("fs_read hello.txt: %q", got)
	}
	readWantOK(t, "fs_list", s.callTool("fs_list", map[string]any{}))
	readWantOK(t, "fs_stat", s.callTool("fs_stat", map[string]any{"path": "hello.txt"}))
	readWantOK(t, "time_now", s.callTool("time_now", map[string]any{}))
	if got := readWantOK(t, "env_get", s.callTool("env_get", map[string]any{"name": "MCP_ROOT"})); !strings.Contains(got, f.root) {
		t.Errorf("env_get MCP_ROOT: %q, want the root %s", got, f.root)
	}
	r := s.callTool("fs_read", map[string]any{"path": "../outside/secret.txt"})
	if !r.IsError || !strings.Contains(readText(r), "path escapes root") || strings.Contains(readText(r), readCanary) {
		t.Errorf("escape through a worker: isError %v, %q", r.IsError, readText(r))
	}
	workers := stockWorkers(t, route)
	if len(workers) != 1 {
		t.Fatalf("mcp-stock processes under mcp-route after 8 sequential calls of 6 tools: %v, want one worker serving them all", workers)
	}
	// sh_exec's larger run.maxOutput puts it in a pool of its own
	// (mcp-route/worker pools by settings): one more worker, no more.
	if got := readWantOK(t, "sh_exec", s.callTool("sh_exec", map[string]any{"command": "echo one two"})); !strings.HasPrefix(got, "one two\n") {
		t.Errorf("sh_exec: %q", got)
	}
	readWantOK(t, "fs_head", s.callTool("fs_head", map[string]any{"path": "lines.txt", "lines": 2}))
	if workers = stockWorkers(t, route); len(workers) != 2 {
		t.Fatalf("mcp-stock processes after sh_exec: %v, want 2", workers)
	}
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("mcp-route exit %d", code)
	}
	for _, pid := range workers {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("worker %d still exists after shutdown (kill 0: %v)", pid, err)
		}
	}
}
