package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// Tools in worker mode ("run": {"mode": "worker"}), driven through the real
// mcp-route with internal/testbin/testworker, a tool that speaks the worker
// protocol itself and misbehaves on request (see its doc).

func testworkerBin(t *testing.T) string {
	return testbin.Path(t, "MCP_TESTWORKER_BIN", "internal/testbin/testworker")
}

// workerTool installs testworker as tool name: a symlink to the binary
// (tools linked to one executable share its workers), or with copy a
// file of its own; run holds more members of the run object.
func (f *fixture) workerTool(name, run string, copy bool) {
	f.t.Helper()
	if run != "" {
		run = "," + run
	}
	d := def(name, "", `{"mode":"worker"`+run+`}`)
	if err := os.WriteFile(filepath.Join(f.tools, name+".json"), []byte(d), 0o644); err != nil {
		f.t.Fatal(err)
	}
	bin := testworkerBin(f.t)
	dst := filepath.Join(f.tools, name)
	if !copy {
		if err := os.Symlink(bin, dst); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	f.copyExecutable(bin, dst)
}

// copyExecutable writes a copy of src at dst, through a hidden name and a
// rename: a new inode, as a rebuild makes.
func (f *fixture) copyExecutable(src, dst string) {
	f.t.Helper()
	in, err := os.Open(src)
	if err != nil {
		f.t.Fatal(err)
	}
	defer in.Close()
	tmp := filepath.Join(filepath.Dir(dst), ".tmp-"+filepath.Base(dst))
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		f.t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		f.t.Fatal(err)
	}
}

// workerOut is testworker's default answer.
type workerOut struct {
	Pid             int            `json:"pid"`
	Tool            string         `json:"tool"`
	Args            map[string]any `json:"args"`
	ProtocolVersion string         `json:"protocolVersion"`
	Progress        bool           `json:"progress"`
	Calls           int            `json:"calls"`
	Worker          string         `json:"worker"`
	MCPTool         string         `json:"mcpTool"`
	ArgEnv          []string       `json:"argEnv"`
}

func decodeWorkerOut(t *testing.T, r *codec.CallToolResult) workerOut {
	t.Helper()
	if r.IsError {
		t.Fatalf("call failed: %s", text(r))
	}
	var o workerOut
	if err := json.Unmarshal([]byte(text(r)), &o); err != nil {
		t.Fatalf("answer %q: %v", text(r), err)
	}
	return o
}

func (s *server) workerCall(name string, args any) workerOut {
	s.t.Helper()
	return decodeWorkerOut(s.t, s.callTool(name, args))
}

// pidIn waits for a pid written to file.
func pidIn(t *testing.T, file string) int { return proctest.WaitPIDFile(t, file) }

func TestWorkerServesManyCallsAndTools(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw_a", `"workers":1`, false)
	f.workerTool("tw_b", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.Rev20250618)
	a := s.workerCall("tw_a", map[string]any{"n": 1})
	b := s.workerCall("tw_b", map[string]any{"n": 2})
	if a.Pid != b.Pid {
		t.Errorf("two tools linked to one executable ran on workers %d and %d, want one shared", a.Pid, b.Pid)
	}
	if a.Tool != "tw_a" || b.Tool != "tw_b" || b.Calls != 2 {
		t.Errorf("requests named tools %q, %q (calls %d), want tw_a, tw_b on one worker's 2nd call", a.Tool, b.Tool, b.Calls)
	}
	if a.ProtocolVersion != codec.Rev20250618 || a.Worker != "1" || a.MCPTool != "" || len(a.ArgEnv) > 0 {
		t.Errorf("worker sees protocolVersion %q, MCP_WORKER %q, MCP_TOOL %q, MCP_ARG_* %q; want the session's revision in the request, MCP_WORKER=1 and no per-call variables",
			a.ProtocolVersion, a.Worker, a.MCPTool, a.ArgEnv)
	}
	// The worker gets stdin, stdout and stderr of mcp-route's, nothing more.
	for _, l := range strings.Split(text(s.callTool("tw_a", map[string]any{"fds": true})), "\n") {
		fd, target, _ := strings.Cut(l, " -> ")
		// The Go runtime's own (epoll, eventfd, its cgroup CPU limits, the
		// directory listing, gone by the time it is looked at) are
		// no leak; a pipe, a socket or a file of mcp-route's would be.
		own := target == "" || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/proc/") || strings.HasPrefix(target, "/sys/fs/cgroup/")
		if n, _ := strconv.Atoi(fd); n > 2 && !own {
			t.Errorf("the worker inherited descriptor %s", l)
		}
	}
}

// Two calls on one worker: neither the arguments nor the progress token of
// the first reach the second.
func TestWorkerPerCallStateDoesNotLeak(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	var r1, r2 codec.CallToolResult
	s.result(s.startCall("tw", map[string]any{"secret": "first-call-only", "progress": 2}, "tok-1"), &r1)
	s.result(s.startCall("tw", map[string]any{"progress": 3}, "tok-2"), &r2)
	a, b := decodeWorkerOut(t, &r1), decodeWorkerOut(t, &r2)
	if a.Pid != b.Pid {
		t.Fatalf("the calls ran on workers %d and %d, want one", a.Pid, b.Pid)
	}
	if strings.Contains(text(&r2), "first-call-only") || len(b.Args) != 1 {
		t.Errorf("the second call saw the first one's arguments: %s", text(&r2))
	}
	if n := countProgress(t, s.notes, `"tok-1"`); n != 2 {
		t.Errorf("%d progress notifications for tok-1, want 2", n)
	}
	if n := countProgress(t, s.notes, `"tok-2"`); n != 3 {
		t.Errorf("%d progress notifications for tok-2, want 3", n)
	}
	// Without a token the request says so, and nothing is sent.
	s.notes = nil
	c := s.workerCall("tw", map[string]any{"progress": 2})
	if c.Progress {
		t.Errorf("a call without a progressToken asked the worker for progress")
	}
	for _, m := range s.notes {
		if m.Method == codec.MethodProgress {
			t.Errorf("progress without a progressToken: %s", m.Params)
		}
	}
}

func TestWorkerKilled(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	// Between calls: the next call starts a new worker.
	a := s.workerCall("tw", nil)
	syscall.Kill(a.Pid, syscall.SIGKILL)
	proctest.WaitGone(t, a.Pid)
	b := s.workerCall("tw", nil)
	if b.Pid == a.Pid {
		t.Fatal("answered by a dead worker")
	}
	// During a call: that call fails with the cause, the next one works.
	pidfile := filepath.Join(f.root, "during.pid")
	id := s.startCall("tw", map[string]any{"sleep": "1m", "pidfile": pidfile, "stderr": "about to be killed"}, nil)
	pid := pidIn(t, pidfile)
	syscall.Kill(pid, syscall.SIGKILL)
	var r codec.CallToolResult
	s.result(id, &r)
	wantErr(t, &r, "worker died: killed by SIGKILL", "about to be killed")
	if c := s.workerCall("tw", nil); c.Pid == pid {
		t.Error("answered by a dead worker")
	}
	if !strings.Contains(s.stderr.String(), `outcome="killed by SIGKILL"`) {
		t.Errorf("the log does not say the worker died:\n%s", s.stderr)
	}
}

func TestWorkerJunkOnStdout(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	a := s.workerCall("tw", nil)
	wantErr(t, s.callTool("tw", map[string]any{"junk": "debug: x=1\x1b[2J"}), "worker killed", "other than a response")
	proctest.WaitGroupGone(t, a.Pid)
	log := s.stderr.String()
	if !strings.Contains(log, "tool=tw") || !strings.Contains(log, `debug: x=1\\x1b[2J`) || strings.Contains(log, "\x1b") {
		t.Errorf("the log does not name the tool and the junk, escaped:\n%s", log)
	}
	if b := s.workerCall("tw", nil); b.Pid == a.Pid {
		t.Error("the junk writer still serves")
	}
}

func TestWorkerTimeout(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1,"timeout":"300ms"`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	pidfile := filepath.Join(f.root, "hang.pid")
	wantErr(t, s.callTool("tw", map[string]any{"hang": true, "pidfile": pidfile}), "timed out after 300ms")
	pid := pidIn(t, pidfile)
	proctest.WaitGroupGone(t, pid)
	if b := s.workerCall("tw", nil); b.Pid == pid {
		t.Error("the hung worker still serves")
	}
}

func TestWorkerRecycledAfterMaxCalls(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1,"maxCalls":2`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	var pids []int
	for i := range 5 {
		pids = append(pids, s.workerCall("tw", map[string]any{"i": i}).Pid)
	}
	if pids[0] != pids[1] || pids[2] != pids[3] || pids[1] == pids[2] || pids[3] == pids[4] {
		t.Errorf("pids %v: want a new worker every 2 calls", pids)
	}
	proctest.WaitGone(t, pids[0])
	proctest.WaitGone(t, pids[2])
}

func TestWorkerCrashLoopBacksOff(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1,"timeout":"1s","env":{"TW_CRASH_ON_START":"1","TW_STARTS":`+strconv.Quote(filepath.Join(f.root, "starts"))+`}`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	refused := 0
	const calls = 12
	for range calls {
		r := s.callTool("tw", nil)
		switch t1 := text(r); {
		case !r.IsError:
			t.Fatalf("a worker that cannot start answered: %s", t1)
		case strings.Contains(t1, "restarting after"):
			refused++
		case strings.Contains(t1, "worker died: exit status 3: boom on start"), strings.Contains(t1, "timed out"):
		default:
			t.Errorf("unexpected failure %q", t1)
		}
	}
	b, _ := os.ReadFile(filepath.Join(f.root, "starts"))
	if n := strings.Count(string(b), "\n"); n >= calls || refused == 0 {
		t.Errorf("%d starts and %d refusals for %d calls: no backoff", n, refused, calls)
	}
	if !strings.Contains(s.stderr.String(), "crashes in a row") || !strings.Contains(s.stderr.String(), "retry_in=") {
		t.Errorf("the log does not say it backs off:\n%s", s.stderr)
	}
}

func TestWorkerHotReload(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, true)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	pidfile, gate := filepath.Join(f.root, "old.pid"), filepath.Join(f.root, "gate")
	inFlight := s.startCall("tw", map[string]any{"wait": gate, "pidfile": pidfile}, nil)
	old := pidIn(t, pidfile)
	// A rebuilt executable: a new file under the same name. tools/list
	// re-reads the directory, so the next call sees it.
	f.copyExecutable(testworkerBin(t), filepath.Join(f.tools, "tw"))
	s.listTools()
	// The one worker allowed is busy: the new call gets a new one anyway.
	if o := s.workerCall("tw", nil); o.Pid == old {
		t.Errorf("a call after the change ran on the old worker %d", old)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var r codec.CallToolResult
	s.result(inFlight, &r)
	if o := decodeWorkerOut(t, &r); o.Pid != old {
		t.Errorf("the call in flight was answered by %d, want the old worker %d", o.Pid, old)
	}
	proctest.WaitGone(t, old) // retired: stopped once its call was answered
}

func TestWorkerCancellation(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":1`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	// A worker that stops the cancelled call stays.
	p1 := filepath.Join(f.root, "p1")
	id := s.startCall("tw", map[string]any{"sleep": "1m", "pidfile": p1}, nil)
	pid := pidIn(t, p1)
	s.notify(codec.MethodCancelled, map[string]any{"requestId": id, "reason": "test"})
	if o := s.workerCall("tw", nil); o.Pid != pid {
		t.Errorf("a worker that honoured the cancel was replaced: %d then %d", pid, o.Pid)
	}
	// One that ignores it is killed --grace later.
	p2 := filepath.Join(f.root, "p2")
	id2 := s.startCall("tw", map[string]any{"hang": true, "pidfile": p2}, nil)
	pidIn(t, p2)
	s.notify(codec.MethodCancelled, map[string]any{"requestId": id2, "reason": "test"})
	proctest.WaitGroupGone(t, pid)
	if o := s.workerCall("tw", nil); o.Pid == pid {
		t.Error("the worker that ignored the cancel still serves")
	}
	s.closeStdin()
	for _, m := range append(s.stash, s.drain()...) {
		if m.ID != nil && (m.ID.Key() == id.Key() || m.ID.Key() == id2.Key()) {
			t.Errorf("mcp-route answered cancelled request %s: %s", m.ID, m.Result)
		}
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// 5000 calls, 16 in flight, over 4 workers taking 2 each: every call is
// answered once, with its own arguments.
func TestWorkerManyCallsInFlight(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw", `"workers":4,"concurrency":2`, false)
	s := f.start("--max-procs", "16")
	s.initialize(codec.LatestLegacyRevision)
	const total, inFlight = 5000, 16
	want := map[string]int{} // id → n
	sent := 0
	send := func() {
		id := s.startCall("tw", map[string]any{"n": sent}, nil)
		want[id.Key()] = sent
		sent++
	}
	for range inFlight {
		send()
	}
	answered := map[string]bool{}
	pids := map[int]bool{}
	for len(answered) < total {
		m := s.next()
		if m == nil {
			t.Fatalf("stdout closed after %d answers", len(answered))
		}
		if m.ID == nil {
			continue
		}
		k := m.ID.Key()
		n, ok := want[k]
		if !ok || answered[k] {
			t.Fatalf("answer for %s: unknown or answered twice", k)
		}
		answered[k] = true
		var r codec.CallToolResult
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatal(err)
		}
		o := decodeWorkerOut(t, &r)
		if o.Args["n"] != float64(n) {
			t.Fatalf("call %s with n=%d answered with %v", k, n, o.Args)
		}
		pids[o.Pid] = true
		if sent < total {
			send()
		}
	}
	if len(pids) > 4 {
		t.Errorf("%d workers served, at most 4 allowed", len(pids))
	}
	s.closeStdin()
	if extra := s.drain(); len(extra) > 0 {
		t.Errorf("%d messages after the last answer, e.g. %s", len(extra), extra[0].Result)
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	for pid := range pids {
		proctest.WaitGone(t, pid)
	}
}

// Idle workers exit, descriptors return to their count, and shutdown
// leaves no process behind.
func TestWorkerShutdownLeavesNothing(t *testing.T) {
	f := newFixture(t)
	f.workerTool("tw_idle", `"workers":2,"idle":"200ms"`, false)
	f.workerTool("tw_stay", `"workers":2`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	s.listTools()
	fdsBefore := proctest.CountFDsOf(t, s.cmd.Process.Pid)

	idle := s.workerCall("tw_idle", nil).Pid
	proctest.WaitGone(t, idle)
	noChildren(t, s)
	proctest.Eventually(t, func() string {
		if n := proctest.CountFDsOf(t, s.cmd.Process.Pid); n > fdsBefore {
			return fmt.Sprintf("mcp-route has %d descriptors open, %d before the worker", n, fdsBefore)
		}
		return ""
	})

	// Shutdown with calls in flight: they are given --grace, then their
	// workers are stopped with everything else.
	var stay []int
	gate := filepath.Join(f.root, "never")
	for i := range 2 {
		p := filepath.Join(f.root, fmt.Sprint("stay", i))
		s.startCall("tw_stay", map[string]any{"wait": gate, "pidfile": p}, nil)
		stay = append(stay, pidIn(t, p))
	}
	if kids := proctest.Children(t, s.cmd.Process.Pid); len(kids) != 2 {
		t.Errorf("mcp-route's children %s, want the 2 workers", proctest.Describe(kids))
	}
	s.closeStdin()
	for _, m := range append(s.stash, s.drain()...) {
		var r codec.CallToolResult
		if m.ID != nil && json.Unmarshal(m.Result, &r) == nil {
			wantErr(t, &r, "shutting down")
		}
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	for _, pid := range stay {
		proctest.WaitGroupGone(t, pid)
	}
}

// A worker's output goes through run.result and run.maxOutput as an exec'd
// tool's stdout does; a refused output or an error answer costs the call,
// not the worker.
func TestWorkerResultModesAndCaps(t *testing.T) {
	f := newFixture(t)
	f.workerTool("twj", `"workers":1,"result":"json","maxOutput":64`, false)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	pidfile := filepath.Join(f.root, "pid")
	r := s.callTool("twj", map[string]any{"output": `{"a": 1}`, "pidfile": pidfile})
	if r.IsError || string(r.StructuredContent) != `{"a":1}` || text(r) != `{"a":1}` {
		t.Errorf("json result: isError %v, structuredContent %s, text %q", r.IsError, r.StructuredContent, text(r))
	}
	first := pidIn(t, pidfile)
	os.Remove(pidfile)
	wantErr(t, s.callTool("twj", map[string]any{"output": "not json"}), "not one JSON value")
	wantErr(t, s.callTool("twj", map[string]any{"output": `"` + strings.Repeat("x", 100) + `"`}), "output exceeded 64 bytes")
	r = s.callTool("twj", map[string]any{"error": "disk on fire"})
	if !r.IsError || text(r) != "disk on fire" {
		t.Errorf("error answer: isError %v, text %q; want isError with the worker's text", r.IsError, text(r))
	}
	wantErr(t, s.callTool("twj", map[string]any{"error": "  "}), "without a message")
	if r := s.callTool("twj", map[string]any{"output": `{}`, "pidfile": pidfile}); r.IsError {
		t.Fatalf("call: %s", text(r))
	}
	if pid := pidIn(t, pidfile); pid != first {
		t.Errorf("the worker %d was replaced by %d after refused outputs and error answers", first, pid)
	}
}
