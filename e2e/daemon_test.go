package e2e

import (
	"os"
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

// TestWorkerCallLeavesNoStray: what a call on a worker leaves outside the
// worker's tree is gone when the call is answered — a daemon (setsid, its
// parent gone) and a process that joined the live worker's process group
// (setpgid) and lost its parent, both reparented to mcp-route — while a
// child the worker keeps (its parent is the worker) lives on, and the
// worker serves on.
func TestWorkerCallLeavesNoStray(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	route := s.cmd.Process.Pid
	keptFile := filepath.Join(f.root, "kept.pid")
	daemonFile := filepath.Join(f.root, "daemon.pid")
	joinedFile := filepath.Join(f.root, "joined.pid")

	w := s.workerCall("tw", map[string]any{"keep": "echo $$ > '" + keptFile + "'; exec sleep 300"})
	kept := pidIn(t, keptFile)

	s.workerCall("tw", map[string]any{"spawn": "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > '" + daemonFile + "'"})
	daemon := pidIn(t, daemonFile)
	if proctest.Alive(daemon) {
		t.Errorf("the daemon %d a worker call started outlived the call", daemon)
	}

	// The joiner writes its pid once it is in the worker's group; the
	// shell waits for that, so the call is answered with the joiner in
	// the group and its parent gone.
	s.workerCall("tw", map[string]any{"spawn": `TW_JOIN_PGID=$TW_WORKER_PGID TW_JOIN_PIDFILE='` + joinedFile + `' "$TW_BIN" </dev/null >/dev/null 2>&1 &
while [ ! -s '` + joinedFile + `' ]; do sleep 0.02; done`})
	joined := pidIn(t, joinedFile)
	if proctest.Alive(joined) {
		t.Errorf("process %d that joined the worker's group outlived its call", joined)
	}

	if p, ok := proctest.Lookup(kept); !ok || p.State == 'Z' || p.PPID != w.Pid || p.PGID != w.Pid {
		t.Errorf("the worker's own child %d: %+v (alive %v), want alive, child of and in the group of the worker %d", kept, p, ok, w.Pid)
	}
	if again := s.workerCall("tw", nil); again.Pid != w.Pid {
		t.Errorf("the calls went to worker %d, then %d: the worker was replaced", w.Pid, again.Pid)
	}
	onlyChild(t, route, w.Pid)
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	proctest.WaitGone(t, kept)
}

// TestSweepSparesRunningCall: a process of an exec'd call that lost its
// parent during the call (reparented to mcp-route, still in the call's
// group) survives the sweep after another call, a worker's, and is gone
// when its own call ends.
func TestSweepSparesRunningCall(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	f.tool("bg", def("bg", "", ""), `( sleep 300 & echo $! > "$MCP_ROOT/bg.tmp" ); mv "$MCP_ROOT/bg.tmp" "$MCP_ROOT/bg.pid"
while [ ! -e "$MCP_ROOT/go" ]; do sleep 0.02; done
kill -0 "$(cat "$MCP_ROOT/bg.pid")" && echo alive`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	route := s.cmd.Process.Pid
	id := s.startCall("bg", nil, nil)
	bg := pidIn(t, filepath.Join(f.root, "bg.pid"))
	if p, ok := proctest.Lookup(bg); !ok || p.PPID != route {
		t.Fatalf("the background child %d: %+v, want a child of mcp-route %d", bg, p, route)
	}
	s.workerCall("tw", nil)
	if !proctest.Alive(bg) {
		t.Errorf("the sweep after a worker call killed %d, a process of a call still running", bg)
	}
	if err := os.WriteFile(filepath.Join(f.root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var res codec.CallToolResult
	s.result(id, &res)
	wantOK(t, &res, "alive")
	if proctest.Alive(bg) {
		t.Errorf("process %d of the call outlived it", bg)
	}
	onlyChild(t, route, s.workerCall("tw", nil).Pid)
}

// onlyChild fails unless pid is route's one child.
func onlyChild(t *testing.T, route, pid int) {
	t.Helper()
	for _, c := range proctest.Children(t, route) {
		if c.PID != pid {
			t.Errorf("mcp-route has a child besides its worker %d: %v", pid, c)
		}
	}
}
