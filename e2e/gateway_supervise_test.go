package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// The gateway as a supervisor: upstreams that die, cannot start, hang or
// never answer; calls by the thousand; processes counted (see
// gateway_test.go for the setting).

// TestGatewayUpstreamKilled: an upstream killed (SIGKILL) in the middle of a
// call. The call gets isError at once, naming the upstream and with its
// stderr tail; the upstream is restarted after its backoff, in its own
// process group, and serves again; the gateway and its other upstream
// never stop serving.
func TestGatewayUpstreamKilled(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			started := make(chan struct{}, 16)
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				if req.Params.ProgressToken == "doomed" {
					select {
					case started <- struct{}{}:
					default:
					}
				}
			}}
			g := startGateway(t, ctx, dir, rev, copts, slices.Concat(
				// -announce: a line on stderr, which the death notice
				// must carry (its stderr tail).
				upstreamFlag("gosdk", goSDKServer(t), "-announce"),
				upstreamFlag("other", goSDKServer(t)))...)
			g.waitTools(ctx, "gosdk__slow", "gosdk__pid", "other__greet")
			pid, o := g.upstreamPID(ctx, "gosdk")
			if pid == 0 {
				t.Fatalf("gosdk__pid: %v", o)
			}
			if p, ok := proctest.Lookup(pid); !ok || p.PGID != pid {
				t.Errorf("upstream %d is not the leader of its own process group: %+v", pid, p)
			}

			type answer struct {
				o  outcome
				at time.Time
			}
			done := make(chan answer, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 100000}}
				p.SetProgressToken("doomed")
				res, err := g.cs.CallTool(ctx, p)
				done <- answer{goSDKOutcome(t, res, err), time.Now()}
			}()
			select {
			case <-started: // the upstream is working on it
			case a := <-done:
				t.Fatalf("slow answered before it was killed: %v", a.o)
			case <-ctx.Done():
				t.Fatal("no progress from gosdk__slow")
			}
			killed := time.Now()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var a answer
			select {
			case a = <-done:
			case <-ctx.Done():
				t.Fatal("the call in flight was never answered after its upstream died")
			}
			took := a.at.Sub(killed)
			// The 100ms is measured and reported, not asserted
			// (a loaded machine may miss it); the bound below is.
			t.Logf("in-flight call answered %v after SIGKILL of its upstream (goal: 100ms%s)", took, missed(took, 100*time.Millisecond))
			if problem := wantIsError("upstream gosdk died", fmt.Sprintf("serving as %d", pid))(a.o); problem != "" {
				t.Errorf("the call in flight: %s; got %v", problem, a.o)
			}
			// Far above the goal, far below the call's own timeout: the
			// answer came from the death, not from the timeout.
			if took > gatewayTimeout/3 {
				t.Errorf("the call in flight took %v after its upstream died (timeout %v): it waited, not failed at once", took, gatewayTimeout)
			}
			// The other upstream never stopped.
			if problem := wantText("Hello, Ann!")(g.call(ctx, "other__greet", map[string]any{"name": "Ann"})); problem != "" {
				t.Errorf("other__greet while gosdk restarts: %s", problem)
			}
			// Until it is back, its calls fail fast; then it serves again,
			// as a new process in a new group.
			var newPID, fastFails int
			for newPID == 0 {
				start := time.Now()
				newPID, o = g.upstreamPID(ctx, "gosdk")
				if newPID != 0 {
					break
				}
				fastFails++
				if problem := wantIsError("upstream gosdk is restarting", "retry in")(o); problem != "" {
					t.Fatalf("a call while gosdk restarts: %s; got %v", problem, o)
				}
				if d := time.Since(start); d > gatewayTimeout/3 {
					t.Errorf("a call while gosdk restarts took %v: it waited, not failed at once", d)
				}
				if ctx.Err() != nil {
					t.Fatal("gosdk never came back")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("gosdk back as %d after %v; %d calls failed fast meanwhile", newPID, time.Since(killed), fastFails)
			if newPID == pid {
				t.Errorf("gosdk__pid still answers from the killed process %d", pid)
			}
			if p, ok := proctest.Lookup(newPID); !ok || p.PGID != newPID {
				t.Errorf("restarted upstream %d is not the leader of its own process group: %+v", newPID, p)
			}
			if problem := wantText("Hello, Bo!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Bo"})); problem != "" {
				t.Errorf("gosdk__greet after the restart: %s", problem)
			}
			g.close()
			proctest.WaitGroupGone(t, newPID)
		})
	}
}

// TestGatewayUpstreamDiesChildHoldsStdout: an upstream whose own child
// holds its stdin and stdout (gosdk-server -spawn-stdio, as a launcher's
// child does) dies by SIGKILL mid-call. Its stdout stays open, so only the
// process's exit tells that it died: the call must still get isError at
// once, not at its timeout, and the child must go with the upstream's
// group.
func TestGatewayUpstreamDiesChildHoldsStdout(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	started := make(chan struct{}, 1)
	copts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case started <- struct{}{}:
		default:
		}
	}}
	g := startGateway(t, ctx, dir, "", copts, upstreamFlag("gosdk", goSDKServer(t), "-spawn-stdio")...)
	g.waitTools(ctx, "gosdk__slow")
	pid, o := g.upstreamPID(ctx, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %v", o)
	}
	if n := len(proctest.Group(t, pid)); n != 2 {
		t.Fatalf("want gosdk-server and its sleep in group %d; got %s", pid, proctest.Describe(proctest.Group(t, pid)))
	}
	type answer struct {
		o  outcome
		at time.Time
	}
	done := make(chan answer, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 100000}}
		p.SetProgressToken("doomed")
		res, err := g.cs.CallTool(ctx, p)
		done <- answer{goSDKOutcome(t, res, err), time.Now()}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("no progress from gosdk__slow")
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a := <-done
	took := a.at.Sub(killed)
	// The 100ms is measured and reported, not asserted: a loaded
	// machine may miss it without anything being wrong. Before proc.Start
	// killed the group at the leader's exit, this took its 200ms drain.
	t.Logf("in-flight call answered %v after SIGKILL of its upstream, whose child holds its stdout (goal: 100ms%s): %v", took, missed(took, 100*time.Millisecond), a.o)
	if problem := wantIsError("upstream gosdk died")(a.o); problem != "" || took > gatewayTimeout/3 {
		t.Errorf("the call in flight: want isError \"upstream gosdk died\" at once (timeout %v); got %v after %v", gatewayTimeout, a.o, took)
	}
	proctest.WaitGroupGone(t, pid)
	g.close()
}

// TestGatewayUpstreamDown: an upstream that cannot start again. Its tools
// stay listed from the last good list, its calls fail fast, the log says
// why it is down, and once it can start it is back.
func TestGatewayUpstreamDown(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("gosdk", goSDKServer(t), "-require", ok)...)
	before := g.waitTools(ctx, prefixed("gosdk", gosdkTools...)...)
	pid, o := g.upstreamPID(ctx, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %v", o)
	}
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The log says why (the failed start's stderr), once it has tried.
	proctest.Eventually(t, func() string {
		if !strings.Contains(g.stderr.String(), "cannot start: "+ok+" is missing") {
			return "the log never says why gosdk cannot start (its stderr: \"cannot start: ... is missing\")"
		}
		return ""
	})
	if got := names(g.tools(ctx)); !slices.Equal(got, names(before)) {
		t.Errorf("tools while gosdk is down: %v, want the last good list %v", got, names(before))
	}
	for range 3 {
		start := time.Now()
		o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2})
		if problem := wantIsError("upstream gosdk is restarting", "retry in")(o); problem != "" {
			t.Errorf("a call while gosdk is down: %s; got %v", problem, o)
		}
		if d := time.Since(start); d > gatewayTimeout/3 {
			t.Errorf("a call while gosdk is down took %v: it waited, not failed at once", d)
		}
	}
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2})
		if o.result != nil && !o.result.IsError {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("gosdk never came back after it could start again: %v", o)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("gosdk back %v after it could start again", time.Since(back))
	g.close()
}

// TestGatewayHungUpstream: an upstream that never answers initialize (nor
// anything else; it ignores SIGTERM and EOF too) beside one that works.
// tools/list answers within --upstream-timeout with the working one's
// tools, calls to them go through, and shutdown kills the hung one's whole
// process group.
func TestGatewayHungUpstream(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	hung := filepath.Join(dir, "hung.sh")
	proctest.WriteExecutable(t, hung, []byte(`#!/bin/sh
trap '' TERM
echo $$ > "$1"
sleep 3600 &
sleep 3600
`))
	pidFile := filepath.Join(dir, "hung.pid")
	const bound = 500 * time.Millisecond
	start := time.Now()
	g := startGateway(t, ctx, dir, "", nil, slices.Concat(
		upstreamFlag("hung", hung, pidFile),
		upstreamFlag("gosdk", goSDKServer(t)),
		[]string{"--upstream-timeout", bound.String()})...)
	hungPID := proctest.WaitPIDFile(t, pidFile)
	// The first lists may come before gosdk has answered (a slow start on a
	// loaded machine); each must still come within the bound.
	var took time.Duration
	for {
		begin := time.Now()
		got := g.toolNames(ctx)
		took = time.Since(begin)
		if took > bound+10*time.Second {
			t.Errorf("tools/list took %v with a hung upstream (--upstream-timeout %v)", took, bound)
		}
		if slices.Contains(got, "gosdk__add") {
			if slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "hung__") }) {
				t.Errorf("tools of the hung upstream listed: %v", got)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("gosdk's tools never listed beside the hung upstream: %v", got)
		}
	}
	t.Logf("tools/list answered in %v (%v after start) with a hung upstream, --upstream-timeout %v", took, time.Since(start), bound)
	for i := range 3 {
		begin := time.Now()
		if problem := wantText(fmt.Sprintf("Hello, %d!", i))(g.call(ctx, "gosdk__greet", map[string]any{"name": strconv.Itoa(i)})); problem != "" {
			t.Errorf("gosdk__greet beside a hung upstream: %s", problem)
		}
		begin2 := time.Now()
		g.toolNames(ctx)
		t.Logf("call %v, tools/list %v", begin2.Sub(begin), time.Since(begin2))
	}
	if o := g.call(ctx, "hung__anything", nil); o.result == nil && o.code != int(codec.CodeInvalidParams) {
		t.Errorf("a call to the hung upstream: want an isError or -32602, got %v", o)
	} else if o.result != nil && !o.result.IsError {
		t.Errorf("a call to the hung upstream succeeded: %v", o)
	}
	g.close()
	proctest.WaitGroupGone(t, hungPID)
}

// TestGatewayServerRequests: a request from an upstream to its client
// (roots/list, which the Go SDK's server sends in a legacy session) gets a
// clean JSON-RPC error from mcp-route, which the upstream's tool reports as
// its isError result; the call does not hang and the next one is served.
func TestGatewayServerRequests(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("gosdk", goSDKServer(t), "-legacy")...)
	g.waitTools(ctx, "gosdk__roots")
	start := time.Now()
	o := g.call(ctx, "gosdk__roots", nil)
	t.Logf("gosdk__roots: %v after %v", o, time.Since(start))
	if problem := wantIsError("roots/list", "method not found", "no sampling, elicitation or roots")(o); problem != "" {
		t.Errorf("gosdk__roots: %s", problem)
	}
	if d := time.Since(start); d > gatewayTimeout/3 {
		t.Errorf("gosdk__roots took %v: its roots/list waited, not failed at once", d)
	}
	if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("gosdk__greet after roots/list: %s", problem)
	}
	g.close()
}

// TestGatewayCallTimeout: a call an upstream never answers times out on its
// own (the per-call --timeout), and the upstream serves the next call.
func TestGatewayCallTimeout(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	g := startGateway(t, ctx, dir, "", nil, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), []string{"--timeout", "1s"})...)
	g.waitTools(ctx, "gosdk__slow")
	o := g.call(ctx, "gosdk__slow", map[string]any{"steps": 100000})
	if problem := wantIsError("gosdk", "timed out after 1s")(o); problem != "" {
		t.Errorf("a call past its timeout: %s; got %v", problem, o)
	}
	if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("gosdk__greet after a timeout: %s", problem)
	}
	g.close()
}

// missed is ", MISSED" when took is past goal, for the log of a goal a test
// reports rather than asserts.
func missed(took, goal time.Duration) string {
	if took > goal {
		return ", MISSED"
	}
	return ""
}

// gatewayProcs lists the processes of the gateway whose mcp-route is pid:
// its descendants, zombies included (an unreaped child is a leak too), and
// every live process in a process group led by one of them or in groups
// (an upstream's own child that outlived it stays in the upstream's group,
// re-parented to init). It adds the groups it saw to groups.
func gatewayProcs(t *testing.T, pid int, groups map[int]bool) []proctest.Proc {
	t.Helper()
	all := proctest.List(t)
	children := map[int][]proctest.Proc{}
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p)
	}
	seen := map[int]bool{}
	var out []proctest.Proc
	for todo := children[pid]; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], children[p.PID]...)
		seen[p.PID] = true
		out = append(out, p)
		if p.PGID == p.PID {
			groups[p.PID] = true
		}
	}
	for _, p := range all {
		if groups[p.PGID] && !seen[p.PID] && p.State != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// TestGatewayManyCalls: 10,000 calls through the gateway, 16 in flight,
// from a client that sees every line: each answered exactly once, with the
// sum of its own arguments; the gateway's processes the same at the end as
// at the start; none left after it exits.
func TestGatewayManyCalls(t *testing.T) {
	const (
		calls    = 10000
		inFlight = 16
	)
	dir := gatewayDir(t)
	c := startGatewayConn(t, dir, "gosdk__add", upstreamFlag("gosdk", goSDKServer(t))...)
	groups := map[int]bool{}
	before := gatewayProcs(t, c.cmd.Process.Pid, groups)
	var (
		next     atomic.Int64
		answered atomic.Int64
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > calls {
					return
				}
				res, err := c.call("tools/call", fmt.Sprintf(`{"name":"gosdk__add","arguments":{"a":%d,"b":1}}`, i))
				var r struct {
					StructuredContent struct{ Sum *int64 }
					IsError           bool
				}
				if err != nil || json.Unmarshal(res, &r) != nil || r.IsError || r.StructuredContent.Sum == nil || *r.StructuredContent.Sum != i+1 {
					t.Errorf("call %d (a=%d b=1): %v %s", i, i, err, res)
					return
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d calls, %d in flight: %v (%.0f calls/s)", calls, inFlight, took, calls/took.Seconds())
	if n := answered.Load(); n != calls {
		t.Fatalf("%d of %d calls answered", n, calls)
	}
	// Nothing more may come: an answer to no request fails the reader, and
	// the next request with it.
	if _, err := c.call("ping", `{}`); err != nil {
		t.Errorf("after the calls: %v", err)
	}
	after := gatewayProcs(t, c.cmd.Process.Pid, groups)
	if len(after) != len(before) {
		t.Errorf("%d processes after %d calls, %d before: %s, then %s", len(after), calls, len(before),
			proctest.Describe(before), proctest.Describe(after))
	}
	if err := c.close(); err != nil {
		t.Errorf("mcp-route on EOF: %v\n%s", err, c.stderr.String())
	}
	for pgid := range groups {
		proctest.WaitGroupGone(t, pgid)
	}
}

// The leak check: 100 upstream restarts during 10,000 calls with 16
// in flight. --upstream-backoff shortens the restart delay so that the 100
// restarts take seconds, not the 48 minutes of the default 0.5s..30s.
const (
	gatewayRestarts       = 100
	gatewayRestartCalls   = 10000
	gatewayRestartFlight  = 16
	gatewayRestartBackoff = "5ms,50ms"
	// gatewayCallsPerUp is how many calls must succeed on each new
	// upstream before it is killed again, so that every restart falls
	// among calls that reach it.
	gatewayCallsPerUp = 40
)

// startGatewayConn runs mcp-route --root dir --timeout gatewayTimeout ARGS
// under benchConn (a client that sees every line), initializes, and waits
// until tool is listed.
func startGatewayConn(t *testing.T, dir, tool string, args ...string) *benchConn {
	t.Helper()
	argv := append([]string{routeBin(t), "--root", dir, "--timeout", gatewayTimeout.String(), "--grace", "500ms"}, args...)
	c, err := startBenchConn(argv, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("mcp-route stderr:\n%s", c.stderr.String())
		}
	})
	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.notify("notifications/initialized"); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, func() string {
		res, err := c.call("tools/list", `{}`)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if !strings.Contains(string(res), strconv.Quote(tool)) {
			return tool + " never listed: " + string(res)
		}
		return ""
	})
	return c
}

// connResult is a CallToolResult as benchConn sees it.
type connResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r connResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// connCall calls tool with args (JSON) through c.
func connCall(c *benchConn, tool, args string) (connResult, error) {
	var r connResult
	res, err := c.call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return r, fmt.Errorf("not a CallToolResult: %s", res)
	}
	return r, nil
}

// connUpstreamPID calls NAME__pid through c: the upstream's pid, or 0 and
// the isError text while it is not up.
func connUpstreamPID(t *testing.T, c *benchConn, name string) (int, string) {
	t.Helper()
	r, err := connCall(c, name+"__pid", `{}`)
	if err != nil {
		t.Fatalf("%s__pid: %v", name, err)
	}
	if r.IsError {
		return 0, r.text()
	}
	var out struct{ PID int }
	if err := json.Unmarshal(r.StructuredContent, &out); err != nil || out.PID == 0 {
		t.Fatalf("%s__pid: %s", name, r.StructuredContent)
	}
	return out.PID, ""
}

// TestGatewayRestartsLeakNothing: the leak check. An upstream that
// starts a child of its own (gosdk-server -spawn, as a server behind a
// launcher has one) is killed gatewayRestarts times, its leader only, by
// SIGKILL, while gatewayRestartCalls calls to it run, gatewayRestartFlight
// in flight; each new upstream serves gatewayCallsPerUp calls before it is
// killed, so every death falls among calls. Every call is answered exactly
// once: with its own sum, or with an isError naming the upstream (it died
// under the call, or is restarting). At the end the gateway has as many
// processes as at the start, counting any left behind in the old
// upstreams' groups; after it exits, none.
func TestGatewayRestartsLeakNothing(t *testing.T) {
	dir := gatewayDir(t)
	c := startGatewayConn(t, dir, "gosdk__pid", slices.Concat(
		upstreamFlag("gosdk", goSDKServer(t), "-spawn"),
		[]string{"--upstream-backoff", gatewayRestartBackoff})...)
	route := c.cmd.Process.Pid
	pid, why := connUpstreamPID(t, c, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %s", why)
	}
	groups := map[int]bool{pid: true}
	before := gatewayProcs(t, route, groups)
	t.Logf("at the start: %s", proctest.Describe(before))
	if len(before) < 2 {
		t.Fatalf("want gosdk-server and its sleep at the start; got %s", proctest.Describe(before))
	}

	var (
		next, ok, failed atomic.Int64
		callsDone        = make(chan struct{})
		wg               sync.WaitGroup
	)
	start := time.Now()
	for range gatewayRestartFlight {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > gatewayRestartCalls {
					return
				}
				r, err := connCall(c, "gosdk__add", fmt.Sprintf(`{"a":%d,"b":1}`, i))
				var out struct{ Sum *int64 }
				switch {
				case err != nil:
					t.Errorf("call %d: %v", i, err)
					return
				case r.IsError:
					if txt := r.text(); !strings.HasPrefix(txt, "upstream gosdk died: ") && !strings.HasPrefix(txt, "upstream gosdk is restarting") && !strings.HasPrefix(txt, "upstream gosdk is starting") {
						t.Errorf("call %d: isError %q, want one naming the upstream's death or restart", i, txt)
						return
					}
					failed.Add(1)
					// As a client told "retry in 1s" would: not at once.
					time.Sleep(20 * time.Millisecond)
				case json.Unmarshal(r.StructuredContent, &out) != nil || out.Sum == nil || *out.Sum != i+1:
					t.Errorf("call %d (a=%d b=1): %s", i, i, r.StructuredContent)
					return
				default:
					ok.Add(1)
				}
			}
		})
	}
	go func() { wg.Wait(); close(callsDone) }()

	// The killer: wait for the upstream to be back (a new pid), let it
	// serve gatewayCallsPerUp calls (unless the calls are over), kill it.
	restartsAmid := 0
	var killed time.Time
	var downFor time.Duration // summed over the restarts: kill → serving again
	for i := range gatewayRestarts {
		if t.Failed() {
			break
		}
		if i > 0 {
			old := pid
			for pid == 0 || pid == old {
				if pid, why = connUpstreamPID(t, c, "gosdk"); pid == 0 && !strings.HasPrefix(why, "upstream gosdk ") {
					t.Fatalf("restart %d: gosdk__pid while gosdk restarts: %q", i, why)
				}
				if time.Since(start) > 5*time.Minute {
					t.Fatalf("restart %d: gosdk never came back", i)
				}
				time.Sleep(5 * time.Millisecond)
			}
			groups[pid] = true
			downFor += time.Since(killed)
		}
		for base := ok.Load(); ok.Load() < base+gatewayCallsPerUp; {
			select {
			case <-callsDone:
			default:
				time.Sleep(time.Millisecond)
				continue
			}
			break
		}
		select {
		case <-callsDone:
		default:
			restartsAmid++
		}
		killed = time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("restart %d: kill %d: %v", i, pid, err)
		}
	}
	<-callsDone
	took := time.Since(start)
	t.Logf("%d calls (%d in flight) and %d restarts (%d of them while calls ran, --upstream-backoff %s, down %v on average) in %v: %d answered with their sum, %d isError naming the upstream's death or restart",
		gatewayRestartCalls, gatewayRestartFlight, gatewayRestarts, restartsAmid, gatewayRestartBackoff, downFor/(gatewayRestarts-1), took, ok.Load(), failed.Load())
	if n := ok.Load() + failed.Load(); n != gatewayRestartCalls && !t.Failed() {
		t.Errorf("%d of %d calls answered", n, gatewayRestartCalls)
	}
	// It comes back once more and serves; nothing more may come on the
	// wire (an answer to no request fails the reader, and the next call).
	proctest.Eventually(t, func() string {
		if pid, why = connUpstreamPID(t, c, "gosdk"); pid == 0 {
			return "gosdk not back after the last restart: " + why
		}
		return ""
	})
	groups[pid] = true
	if r, err := connCall(c, "gosdk__greet", `{"name":"Ann"}`); err != nil || r.text() != "Hello, Ann!" {
		t.Errorf("gosdk__greet after the restarts: %v %+v", err, r)
	}
	// A killed upstream's group is killed as it dies; Eventually only
	// allows for a start still under way when counting.
	var after []proctest.Proc
	proctest.Eventually(t, func() string {
		after = gatewayProcs(t, route, groups)
		if len(after) != len(before) {
			return fmt.Sprintf("%d processes after %d restarts and %d calls, %d before: %s, then %s", len(after), gatewayRestarts, gatewayRestartCalls, len(before),
				proctest.Describe(before), proctest.Describe(after))
		}
		return ""
	})
	t.Logf("at the end: %s", proctest.Describe(after))
	if err := c.close(); err != nil {
		t.Errorf("mcp-route on EOF: %v\n%s", err, c.stderr.String())
	}
	for pgid := range groups {
		proctest.WaitGroupGone(t, pgid)
	}
}
