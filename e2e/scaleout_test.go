package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// Scale-out behind a real nginx (see nginx_test.go): replicas round-robin,
// no sticky sessions, driven by the official Go SDK client and by mcp-call.

// replicaSet is N HTTP replicas started by the test.
type replicaSet struct {
	urls []string
	pids []int
}

// startGoSDKReplicas starts n stateless Go SDK servers: the reference
// behaviour for the load balancer (a stateless server needs no shared
// session state, so round-robin works for it too).
func startGoSDKReplicas(t *testing.T, n int) *replicaSet {
	t.Helper()
	rs := &replicaSet{}
	for i := 0; i < n; i++ {
		url, pid := startListenerPID(t, goSDKServer(t), "--http", "127.0.0.1:0", "--stateless")
		rs.urls = append(rs.urls, url)
		rs.pids = append(rs.pids, pid)
	}
	return rs
}

// goSDKHTTPSession connects the Go SDK client over Streamable HTTP. close
// ends the session and its idle connections (whose goroutines would
// otherwise count against the baseline).
func goSDKHTTPSession(t *testing.T, ctx context.Context, url string) (cs *mcp.ClientSession, close func()) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-gosdk", Version: "1.0.0"}, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Go SDK client: connect to %s: %v", url, err)
	}
	return cs, func() {
		cs.Close()
		hc.CloseIdleConnections()
	}
}

// callResult is one call of a load run.
type callResult struct {
	text string
	err  error
}

// runLoad makes n calls, at most inFlight at a time, and returns each
// call's outcome by index. after, when set, runs once when half the calls
// have finished (to kill or drain a replica mid-run).
func runLoad(ctx context.Context, n, inFlight int, call func(ctx context.Context, i int) (string, error), after func()) []callResult {
	out := make([]callResult, n)
	var next, finished atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				text, err := call(ctx, i)
				out[i] = callResult{text, err}
				if finished.Add(1) == int64(n/2) && after != nil {
					once.Do(after)
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// sdkCall calls tool with args on the Go SDK session and returns the text.
func sdkCall(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, waitLong)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", fmt.Errorf("isError: %v", res.Content)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if b.Len() == 0 {
		// No text where the tools always write some: show what came.
		raw, _ := json.Marshal(res)
		return "", fmt.Errorf("a result without text: %s", raw)
	}
	return b.String(), nil
}

// goroutineBaseline waits until the goroutine count is back to base
// (within a little slack for the runtime's own), failing after Patience.
func goroutineBaseline(t *testing.T, base int) {
	t.Helper()
	proctest.Eventually(t, func() string {
		if n := runtime.NumGoroutine(); n > base+2 {
			return fmt.Sprintf("%d goroutines, %d before the run", n, base)
		}
		return ""
	})
}

func TestNginxGoSDKReplicas(t *testing.T) {
	nginxBin(t) // skips early, before the replicas start
	rs := startGoSDKReplicas(t, 3)
	lb := startNginx(t, upstreamsOf(t, rs.urls))

	t.Run("mcp-call", func(t *testing.T) {
		if r := mcpCall(t, "", "--url", lb.URL, "discover"); r.code != 0 || !strings.Contains(r.stdout, "era:               modern") {
			t.Errorf("discover: %+v", r)
		}
		if r := mcpCall(t, "", "--url", lb.URL, "call", "greet", "name=Ann"); r.code != 0 || r.stdout != "Hello, Ann!\n" {
			t.Errorf("greet: %+v", r)
		}
		// Progress through nginx: proxy_buffering off passes each event.
		r := mcpCall(t, "", "--url", lb.URL, "--progress", "call", "slow", "steps=3")
		if r.code != 0 || r.stdout != "done 3\n" || strings.Count(r.stderr, "progress ") != 3 {
			t.Errorf("progress: %+v", r)
		}
		if r := mcpCall(t, "", "--url", lb.URL, "call", "fail"); r.code != 1 {
			t.Errorf("fail: %+v", r)
		}
	})

	// The TypeScript SDK clients through nginx: v1 (legacy; the stateless
	// replicas take initialize without a session) and v2 (2026-07-28).
	for _, v2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("ts-sdk-v2=%v", v2), func(t *testing.T) {
			plan := []map[string]any{
				{"call": "greet", "arguments": map[string]any{"name": "Ann"}},
				{"call": "slow", "arguments": map[string]any{"steps": 3}, "progress": true},
				{"call": "fail", "arguments": map[string]any{}},
			}
			sdk := map[bool]string{false: "v1", true: "v2"}[v2]
			r := runURLClient(t, v2, lb.URL, plan, "--sdk", sdk)
			if want := map[bool]string{false: "legacy", true: "modern"}[v2]; r.connected.Era != want {
				t.Errorf("era %q, want %q", r.connected.Era, want)
			}
			if res := r.steps[0].Result; res == nil || res.Text() != "Hello, Ann!" {
				t.Errorf("greet: %+v", r.steps[0])
			}
			if res := r.steps[1].Result; res == nil || res.Text() != "done 3" {
				t.Errorf("slow: %+v", r.steps[1])
			}
			if res := r.steps[2].Result; res == nil || !res.IsError {
				t.Errorf("fail: %+v", r.steps[2])
			}
		})
	}

	t.Run("load", func(t *testing.T) {
		base := runtime.NumGoroutine()
		ctx := context.Background()
		cs, closeSession := goSDKHTTPSession(t, ctx, lb.URL)
		const n, inFlight = 10000, 32
		res := runLoad(ctx, n, inFlight, func(ctx context.Context, i int) (string, error) {
			return sdkCall(ctx, cs, "greet", map[string]any{"name": fmt.Sprint(i)})
		}, nil)
		bad := 0
		for i, r := range res {
			if want := fmt.Sprintf("Hello, %d!", i); r.err != nil || r.text != want {
				if bad++; bad <= 5 {
					t.Errorf("call %d: %q, %v; want %q", i, r.text, r.err, want)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d calls failed or were answered wrongly", bad, n)
		}
		closeSession()
		goroutineBaseline(t, base)
	})

	t.Run("replica-killed", func(t *testing.T) {
		ctx := context.Background()
		cs, closeSession := goSDKHTTPSession(t, ctx, lb.URL)
		defer closeSession()
		const n, inFlight = 600, 32
		var killedAt atomic.Int64
		var done atomic.Int64
		res := runLoad(ctx, n, inFlight, func(ctx context.Context, i int) (string, error) {
			defer done.Add(1)
			return sdkCall(ctx, cs, "slow", map[string]any{"steps": 3})
		}, func() {
			killedAt.Store(done.Load())
			_ = syscall.Kill(rs.pids[2], syscall.SIGKILL)
		})
		failed := 0
		for i, r := range res {
			if r.err != nil {
				failed++
				continue
			}
			if r.text != "done 3" {
				t.Errorf("call %d answered %q", i, r.text)
			}
		}
		// Only the calls in flight on the killed replica may fail: at
		// most inFlight of them, and none of the calls started after nginx
		// has seen the replica refuse connections.
		if failed > inFlight {
			t.Errorf("%d calls failed after one replica was killed; at most the %d in flight may", failed, inFlight)
		}
		for i := n - 100; i < n; i++ {
			if res[i].err != nil {
				t.Errorf("call %d, long after the kill, failed: %v", i, res[i].err)
			}
		}
		t.Logf("%d of %d calls failed when a replica was killed after %d", failed, n, killedAt.Load())
	})
}

// startListenerPID is startListener returning the server's pid too.
func startListenerPID(t *testing.T, argv ...string) (string, int) {
	t.Helper()
	var pid int
	url := startListenerWith(t, func(p int) { pid = p }, argv...)
	return url, pid
}
