package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/mcp-route/worker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// logs collects the pool's log lines.
type logs struct {
	mu    sync.Mutex
	lines []string
}

// Write takes one record of a slog handler.
func (l *logs) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSuffix(string(b), "\n"))
	return len(b), nil
}

func (l *logs) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

type fixture struct {
	t     *testing.T
	ps    *worker.Pools
	log   *logs
	spec  worker.Spec
	dir   string
	start string // the file each worker start appends its pid to
}

// newFixture returns pools with a testworker spec; env is added to the
// worker's environment.
func newFixture(t *testing.T, limits worker.Limits, env ...string) *fixture {
	t.Helper()
	bin := testbin.Path(t, "MCP_TESTWORKER_BIN", "internal/testbin/testworker")
	dir := t.TempDir()
	f := &fixture{t: t, log: &logs{}, dir: dir, start: filepath.Join(dir, "starts")}
	f.ps = worker.New(worker.Options{Grace: 300 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	f.spec = worker.Spec{
		Cmd: proc.Cmd{
			Path: bin, Dir: dir,
			Env: append([]string{"MCP_WORKER=1", "PATH=/usr/bin:/bin", "TW_STARTS=" + f.start}, env...),
		},
		Exec: bin, Stamp: "v1", Limits: limits,
	}
	t.Cleanup(func() {
		f.ps.Close()
		if pids := f.ps.Running(); len(pids) > 0 {
			t.Errorf("workers still running after Close: %v", pids)
		}
		if t.Failed() {
			t.Logf("pool log:\n%s", f.log)
		}
	})
	return f
}

// call runs the tool with args (a JSON object) and a minute's timeout.
func (f *fixture) call(args string) *worker.Result {
	f.t.Helper()
	return f.callWith(context.Background(), worker.Call{Tool: "tw", Arguments: json.RawMessage(args), Timeout: time.Minute})
}

func (f *fixture) callWith(ctx context.Context, c worker.Call) *worker.Result {
	return f.ps.Call(ctx, f.spec, c)
}

// out decodes a default testworker answer.
type out struct {
	Pid   int            `json:"pid"`
	Tool  string         `json:"tool"`
	Args  map[string]any `json:"args"`
	Calls int            `json:"calls"`
}

func (f *fixture) ok(r *worker.Result) out {
	f.t.Helper()
	if !r.OK() {
		f.t.Fatalf("call failed (kind %d): %s", r.Kind, r.Failure)
	}
	var o out
	if err := json.Unmarshal(r.Output, &o); err != nil {
		f.t.Fatalf("output %q: %v", r.Output, err)
	}
	return o
}

func (f *fixture) starts() int {
	b, _ := os.ReadFile(f.start)
	return strings.Count(string(b), "\n")
}

func wantFailure(t *testing.T, r *worker.Result, kind worker.Kind, words ...string) {
	t.Helper()
	if r.Kind != kind {
		t.Errorf("kind %d (%q), want %d", r.Kind, r.Failure, kind)
	}
	for _, w := range words {
		if !strings.Contains(r.Failure, w) {
			t.Errorf("failure %q does not mention %q", r.Failure, w)
		}
	}
}

func TestReuseAndRecycle(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1, MaxCalls: 3})
	var pids []int
	for i := range 7 {
		o := f.ok(f.call(fmt.Sprintf(`{"n":%d}`, i)))
		if o.Args["n"] != float64(i) {
			t.Errorf("call %d answered with the arguments %v", i, o.Args)
		}
		pids = append(pids, o.Pid)
	}
	// Three calls per worker, then a new one.
	for i, pid := range pids {
		if pid != pids[i/3*3] {
			t.Errorf("call %d on pid %d, want the worker of call %d (pid %d): pids %v", i, pid, i/3*3, pids[i/3*3], pids)
		}
	}
	if pids[0] == pids[3] || pids[3] == pids[6] {
		t.Errorf("no worker recycled after 3 calls: pids %v", pids)
	}
	proctest.WaitGone(t, pids[0])
	proctest.WaitGone(t, pids[3])
	if n := f.starts(); n != 3 {
		t.Errorf("%d workers started, want 3", n)
	}
}

func TestRecycleOverRSS(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1, MaxRSS: 64 << 20})
	a := f.ok(f.call(`{}`))
	b := f.ok(f.call(`{}`))
	if a.Pid != b.Pid {
		t.Fatalf("a small worker was replaced: %d then %d", a.Pid, b.Pid)
	}
	c := f.ok(f.call(`{"grow":100}`)) // answered: the cap acts after the call
	if c.Pid != a.Pid {
		t.Errorf("the growing call ran on %d, want %d", c.Pid, a.Pid)
	}
	d := f.ok(f.call(`{}`))
	if d.Pid == a.Pid {
		t.Errorf("the worker over maxRSS took the next call")
	}
	proctest.WaitGone(t, a.Pid)
	if !f.log.has("RSS") {
		t.Errorf("the log does not say why the worker was retired:\n%s", f.log)
	}
}

func TestIdleWorkerStops(t *testing.T) {
	f := newFixture(t, worker.Limits{Idle: 100 * time.Millisecond})
	a := f.ok(f.call(`{}`))
	proctest.WaitGone(t, a.Pid)
	b := f.ok(f.call(`{}`))
	if b.Pid == a.Pid {
		t.Errorf("the idle worker answered again")
	}
}

func TestConcurrencyAndWorkers(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 2, Concurrency: 3})
	// Six calls at once fit 2 workers × 3, and no more workers start.
	var wg sync.WaitGroup
	res := make([]*worker.Result, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = f.call(fmt.Sprintf(`{"sleep":"200ms","pidfile":%q}`, filepath.Join(f.dir, fmt.Sprint(i))))
		}()
	}
	wg.Wait()
	per := map[int]int{}
	for _, r := range res {
		per[f.ok(r).Pid]++
	}
	if len(per) > 2 {
		t.Errorf("calls spread over %d workers, at most 2 allowed: %v", len(per), per)
	}
	for pid, n := range per {
		if n > 3 {
			t.Errorf("worker %d took %d calls, concurrency is 3", pid, n)
		}
	}
}

func TestCrashFailsOnlyItsCalls(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 2})
	// One worker busy with a slow call, the other crashes: the slow call
	// is answered.
	var wg sync.WaitGroup
	var slow *worker.Result
	wg.Add(1)
	pidfile := filepath.Join(f.dir, "slow.pid")
	go func() {
		defer wg.Done()
		slow = f.call(fmt.Sprintf(`{"sleep":"500ms","pidfile":%q}`, pidfile))
	}()
	proctest.Eventually(t, func() string {
		if _, err := os.Stat(pidfile); err != nil {
			return "slow call not started"
		}
		return ""
	})
	wantFailure(t, f.call(`{"crash":"exit","stderr":"last words"}`), worker.Died, "worker died: exit status 4", "crash on purpose")
	wg.Wait()
	f.ok(slow)
	wantFailure(t, f.call(`{"crash":"kill"}`), worker.Died, "worker died: killed by SIGKILL")
	f.ok(f.call(`{}`))
}

func TestKilledBetweenCalls(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1})
	a := f.ok(f.call(`{}`))
	syscall.Kill(a.Pid, syscall.SIGKILL)
	proctest.WaitGone(t, a.Pid)
	proctest.Eventually(t, func() string {
		if !f.log.has(`msg="worker died: its calls in flight fail"`) || !f.log.has(`outcome="killed by SIGKILL"`) {
			return "no log line for the dead idle worker"
		}
		return ""
	})
	b := f.ok(f.call(`{}`))
	if b.Pid == a.Pid {
		t.Errorf("answered by the dead worker")
	}
	// The next call right after the death, before mcp-route has reaped
	// the worker: its request, never read, goes to a new worker.
	for range 5 {
		syscall.Kill(b.Pid, syscall.SIGKILL)
		proctest.WaitGone(t, b.Pid)
		// The leader shows as a zombie while its other threads are still
		// dying with the pipe open, and one of them may yet read the
		// request: then it was read, and the call rightly fails. Wait
		// for every thread, so that the request is never read.
		waitThreadsGone(t, b.Pid)
		c := f.ok(f.call(`{}`))
		if c.Pid == b.Pid {
			t.Fatalf("answered by the dead worker")
		}
		b = c
	}
}

// waitThreadsGone waits until process pid has no thread left but a zombie
// leader (or is gone).
func waitThreadsGone(t *testing.T, pid int) {
	t.Helper()
	proctest.Eventually(t, func() string {
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return "" // reaped
		}
		live := 0
		for _, e := range ents {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
			if err != nil {
				continue
			}
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X' {
				live++
			}
		}
		if live > 0 {
			return fmt.Sprintf("%d threads of %d still dying", live, pid)
		}
		return ""
	})
}

func TestJunkKillsTheWorker(t *testing.T) {
	for name, args := range map[string]string{
		"text":         `{"junk":"hello \u001b[31mred"}`,
		"unknown id":   `{"junk":"{\"id\":999,\"output\":\"x\"}"}`,
		"two members":  `{"junk":"{\"id\":1,\"output\":\"x\",\"error\":\"y\"}"}`,
		"second reply": `{"twice":true}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, worker.Limits{Workers: 1})
			r := f.call(args)
			if name == "second reply" {
				a := f.ok(r) // the first answer counts
				proctest.WaitGone(t, a.Pid)
			} else {
				wantFailure(t, r, worker.Died, "worker killed", "other than a response")
			}
			proctest.Eventually(t, func() string {
				if !f.log.has("wrote junk on stdout") || !f.log.has("tool=tw") {
					return "the log does not name the tool and the junk"
				}
				return ""
			})
			if name == "text" && !f.log.has(`\x1b[31mred`) {
				t.Errorf("the junk is not in the log, escaped:\n%s", f.log)
			}
			f.ok(f.call(`{}`))
		})
	}
}

func TestTimeoutKillsAndReplaces(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1})
	pidfile := filepath.Join(f.dir, "hang.pid")
	r := f.callWith(context.Background(), worker.Call{Tool: "tw", Arguments: json.RawMessage(fmt.Sprintf(`{"hang":true,"pidfile":%q}`, pidfile)), Timeout: 300 * time.Millisecond})
	wantFailure(t, r, worker.TimedOut, "timed out after 300ms")
	b, _ := os.ReadFile(pidfile)
	var pid int
	fmt.Sscan(string(b), &pid)
	proctest.WaitGroupGone(t, pid)
	if o := f.ok(f.call(`{}`)); o.Pid == pid {
		t.Errorf("the hung worker answered")
	}
}

func TestCancel(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1})
	// A worker that honours the cancel stays.
	a := f.ok(f.call(`{}`))
	ctx, cancel := context.WithCancel(context.Background())
	pidfile := filepath.Join(f.dir, "p1")
	go func() {
		proctest.Eventually(t, func() string {
			if _, err := os.Stat(pidfile); err != nil {
				return "not started"
			}
			return ""
		})
		cancel()
	}()
	r := f.callWith(ctx, worker.Call{Tool: "tw", Arguments: json.RawMessage(fmt.Sprintf(`{"sleep":"1m","pidfile":%q}`, pidfile)), Timeout: time.Minute})
	wantFailure(t, r, worker.Canceled, "canceled")
	if b := f.ok(f.call(`{}`)); b.Pid != a.Pid {
		t.Errorf("a worker that stopped its cancelled call was replaced: %d then %d", a.Pid, b.Pid)
	}
	// One that ignores it is killed --grace later.
	ctx, cancel = context.WithCancel(context.Background())
	pidfile = filepath.Join(f.dir, "p2")
	go func() {
		proctest.Eventually(t, func() string {
			if _, err := os.Stat(pidfile); err != nil {
				return "not started"
			}
			return ""
		})
		cancel()
	}()
	r = f.callWith(ctx, worker.Call{Tool: "tw", Arguments: json.RawMessage(fmt.Sprintf(`{"hang":true,"pidfile":%q}`, pidfile)), Timeout: time.Minute})
	wantFailure(t, r, worker.Canceled, "canceled")
	proctest.WaitGroupGone(t, a.Pid)
	if c := f.ok(f.call(`{}`)); c.Pid == a.Pid {
		t.Errorf("the worker that ignored a cancel still serves")
	}
}

func TestCrashLoopBacksOff(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1}, "TW_CRASH_ON_START=1")
	// Each call may start one worker; from the second crash in a row the
	// next start waits, doubling. A call whose timeout ends before the
	// next start is refused at once, without a start.
	c := worker.Call{Tool: "tw", Arguments: json.RawMessage(`{}`), Timeout: time.Second}
	refused := 0
	for range 12 {
		r := f.callWith(context.Background(), c)
		switch {
		case r.Kind == worker.Died:
			if !strings.Contains(r.Failure, "boom on start") {
				t.Errorf("crash text %q lacks the stderr tail", r.Failure)
			}
		case r.Kind == worker.NotStarted && strings.Contains(r.Failure, "restarting after"):
			refused++
		case r.Kind == worker.TimedOut:
		default:
			t.Errorf("unexpected result %d %q", r.Kind, r.Failure)
		}
	}
	if refused == 0 {
		t.Errorf("no call was refused while the worker backs off")
	}
	if n := f.starts(); n >= 12 {
		t.Errorf("%d starts for 12 calls: no backoff", n)
	}
	if !f.log.has("crashes in a row") || !f.log.has("retry_in=") {
		t.Errorf("the log does not say it backs off:\n%s", f.log)
	}
}

func TestHotReload(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1})
	pidfile, gate := filepath.Join(f.dir, "old.pid"), filepath.Join(f.dir, "gate")
	var wg sync.WaitGroup
	var old *worker.Result
	wg.Add(1)
	go func() {
		defer wg.Done()
		old = f.call(fmt.Sprintf(`{"wait":%q,"pidfile":%q}`, gate, pidfile))
	}()
	proctest.Eventually(t, func() string {
		if _, err := os.Stat(pidfile); err != nil {
			return "not started"
		}
		return ""
	})
	spec := f.spec
	spec.Stamp = "v2"
	// The one worker allowed is busy with the old executable's call.
	r := f.ps.Call(context.Background(), spec, worker.Call{Tool: "tw", Arguments: json.RawMessage(`{}`), Timeout: time.Minute})
	os.WriteFile(gate, nil, 0o644)
	wg.Wait()
	o, n := f.ok(old), f.ok(r)
	if o.Pid == n.Pid {
		t.Fatalf("the new executable's call ran on the old worker %d", o.Pid)
	}
	proctest.WaitGone(t, o.Pid) // retired once its call was answered
	// A call that looked the tool up before the change does not bring the
	// old stamp back: it runs on the new worker.
	if late := f.ok(f.call(`{}`)); late.Pid != n.Pid {
		t.Errorf("a call with the old stamp ran on %d, want the new worker %d", late.Pid, n.Pid)
	}
}

// TestRequestLine: whatever the arguments look like (over several lines,
// with characters a JSON string escapes) and whatever the tool's name, the
// worker gets one request line with the same values, and arguments that
// are not JSON arrive as {}.
func TestRequestLine(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 1})
	args := "{\n  \"s\": \"a\\nb \\\"q\\\" <&> \u00e9\u2028\",\r\n  \"n\": [1,\n 2]\n}"
	for _, c := range []struct {
		tool, args, want string
	}{
		{"tw", args, `{"n":[1,2],"s":"a\nb \"q\" <&> é` + "\u2028" + `"}`},
		{"t\"w\\\n\u00e9", `{"n":1}`, `{"n":1}`},
		{"tw", `{"n":`, `{}`},
		{"tw", ``, `{}`},
	} {
		r := f.callWith(context.Background(), worker.Call{Tool: c.tool, Arguments: json.RawMessage(c.args), ProtocolVersion: "2025-06-18", Timeout: time.Minute})
		o := f.ok(r)
		got, _ := json.Marshal(o.Args)
		var want map[string]any
		json.Unmarshal([]byte(c.want), &want)
		wantB, _ := json.Marshal(want)
		if string(got) != string(wantB) || o.Tool != c.tool {
			t.Errorf("tool %q, arguments %q: the worker saw tool %q, arguments %s; want %s", c.tool, c.args, o.Tool, got, wantB)
		}
	}
}

// Calls queued behind full workers start as places free up, one queued
// call per freed place, and every one of them is served.
func TestQueuedCallsTakeFreedPlaces(t *testing.T) {
	f := newFixture(t, worker.Limits{Workers: 2, Concurrency: 2})
	const n = 10
	gate := func(i int) string { return filepath.Join(f.dir, fmt.Sprint("gate", i)) }
	started := func(i int) bool {
		_, err := os.Stat(filepath.Join(f.dir, fmt.Sprint("started", i)))
		return err == nil
	}
	startedSoFar := func() (ids []int) {
		for i := range n {
			if started(i) {
				ids = append(ids, i)
			}
		}
		return ids
	}
	waitStarted := func(want int) []int {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ids := startedSoFar()
			if len(ids) == want {
				time.Sleep(100 * time.Millisecond) // and no more
				if ids = startedSoFar(); len(ids) == want {
					return ids
				}
			}
			if len(ids) > want || time.Now().After(deadline) {
				t.Fatalf("calls started: %v, want %d", ids, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	res := make([]*worker.Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = f.call(fmt.Sprintf(`{"wait":%q,"pidfile":%q}`, gate(i), filepath.Join(f.dir, fmt.Sprint("started", i))))
		}()
	}
	released := map[int]bool{}
	release := func(ids []int, k int) {
		for _, i := range ids {
			if k == 0 {
				return
			}
			if !released[i] {
				released[i] = true
				os.WriteFile(gate(i), nil, 0o644)
				k--
			}
		}
	}
	ids := waitStarted(4) // 2 workers × 2
	release(ids, 1)
	ids = waitStarted(5) // one freed place: one more call
	release(ids, 3)
	waitStarted(8)
	for i := range n {
		os.WriteFile(gate(i), nil, 0o644)
	}
	wg.Wait()
	for i, r := range res {
		if !r.OK() {
			t.Errorf("call %d: kind %d: %s", i, r.Kind, r.Failure)
		}
	}
}
