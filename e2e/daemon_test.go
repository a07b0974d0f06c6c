package e2e

import (
	"path/filepath"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// daemonTool starts a daemon that leaves the tool's process group and
// session (setsid) with its stdio detached, records its pid and its
// child's, and then either returns at once or, with MCP_ARG_HOLD set,
// waits to be killed. Without a subreaper the daemon would be reparented
// to init and run on after the call, and after mcp-route.
const daemonTool = `setsid sh -c 'sleep 300 & echo $! > "$MCP_ROOT/sleep.pid"; echo $$ > "$MCP_ROOT/daemon.pid"; wait' </dev/null >/dev/null 2>&1 &
while [ ! -s "$MCP_ROOT/daemon.pid" ]; do sleep 0.02; done
echo started
if [ -n "$MCP_ARG_HOLD" ]; then sleep 300; fi`

// TestDaemonKilledAfterCall: what a tool daemonized is gone when the
// call's answer arrives, and an ordinary tool still works after it.
func TestDaemonKilledAfterCall(t *testing.T) {
	f := newFixture(t)
	f.tool("daemonize", def("daemonize", "", ""), daemonTool)
	f.tool("hello", def("hello", "", ""), `echo hello`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	wantOK(t, s.callTool("daemonize", nil), "started")
	daemon := proctest.WaitPIDFile(t, filepath.Join(f.root, "daemon.pid"))
	sleeper := proctest.WaitPIDFile(t, filepath.Join(f.root, "sleep.pid"))
	// No polling: mcp-route kills and reaps them before it answers.
	for _, pid := range []int{daemon, sleeper} {
		if proctest.Alive(pid) {
			t.Errorf("process %d of the daemonized tool outlived its call", pid)
		}
	}
	wantOK(t, s.callTool("hello", nil), "hello")
	noChildren(t, s)
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// TestDaemonKilledAtShutdown: a call in flight at EOF whose tool
// daemonized is killed after the grace, and when mcp-route has exited
// nothing of the tool is left.
func TestDaemonKilledAtShutdown(t *testing.T) {
	f := newFixture(t)
	f.tool("daemonize", def("daemonize", "", ""), daemonTool)
	s := f.start("--grace", "200ms")
	s.initialize(codec.LatestLegacyRevision)
	s.startCall("daemonize", map[string]any{"hold": "1"}, nil)
	daemon := proctest.WaitPIDFile(t, filepath.Join(f.root, "daemon.pid"))
	sleeper := proctest.WaitPIDFile(t, filepath.Join(f.root, "sleep.pid"))
	if !proctest.Alive(daemon) || !proctest.Alive(sleeper) {
		t.Fatal("the daemon is not running while its call is")
	}
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	for _, pid := range []int{daemon, sleeper} {
		if proctest.Alive(pid) {
			t.Errorf("process %d of the daemonized tool outlived mcp-route", pid)
		}
	}
}
