package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// mcp-route --http replicas sharing one session key behind nginx
// round-robin, no sticky sessions: the proof of scale-out. The
// clients are mcp-call, the official Go SDK client (each revision it
// speaks) and the TypeScript SDK clients (when MCP_INTEROP_NODE_DIR is
// set); the tools are examples/tools (echo, steps for progress, sleep to
// cancel, crash).

// routeReplica is one mcp-route --http the test started.
type routeReplica struct {
	url    string
	cmd    *exec.Cmd
	stderr *proctest.Buffer
	exited chan struct{}
}

var servingRE = regexp.MustCompile(`serving MCP at (http://\S+?)"?$`)

// startRouteReplica starts mcp-route --http (and extra flags) on a free loopback port and
// waits for its "serving MCP at URL" line. Cleanup kills it if the test
// has not ended it.
func startRouteReplica(t *testing.T, tools, root, key string, extra ...string) *routeReplica {
	t.Helper()
	cmd := exec.Command(routeBin(t), append([]string{"--http", "127.0.0.1:0", "--tools", tools, "--root", root,
		"--session-key-file", key, "--grace", "10s"}, extra...)...)
	cmd.Env = baseEnv()
	cmd.Dir = root
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := &routeReplica{cmd: cmd, stderr: &proctest.Buffer{}, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.exited) }()
	urlc := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			r.stderr.Write([]byte(line + "\n"))
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
		pr.Close()
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = cmd.Process.Kill()
			<-r.exited
		}
		if t.Failed() {
			t.Logf("replica %s stderr:\n%s", r.url, tail([]byte(r.stderr.String()), 3000))
		}
	})
	select {
	case r.url = <-urlc:
		return r
	case <-r.exited:
		<-readDone
		t.Fatalf("mcp-route --http exited before serving (%v):\n%s", r.cmd.ProcessState, r.stderr.String())
	case <-time.After(waitLong):
		t.Fatalf("mcp-route --http did not say where it serves within %v:\n%s", waitLong, r.stderr.String())
	}
	return nil
}

// noToolsLeft waits until none of the replicas has a child process (a
// tool) left.
func noToolsLeft(t *testing.T, reps []*routeReplica) {
	t.Helper()
	proctest.Eventually(t, func() string {
		for _, r := range reps {
			select {
			case <-r.exited:
				continue
			default:
			}
			if kids := proctest.Children(t, r.cmd.Process.Pid); len(kids) > 0 {
				return fmt.Sprintf("replica %s still has processes: %s", r.url, proctest.Describe(kids))
			}
		}
		return ""
	})
}

func TestScaleOutRoute(t *testing.T) {
	nginxBin(t) // skips early, before the replicas start
	tools, err := filepath.Abs("../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	key := filepath.Join(t.TempDir(), "session-key")
	// A key file as the README makes one: text (raw random bytes would
	// lose their leading or trailing whitespace bytes to the trim).
	k := make([]byte, 48)
	rand.Read(k)
	if err := os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reps []*routeReplica
	var urls []string
	for i := 0; i < 3; i++ {
		r := startRouteReplica(t, tools, root, key)
		reps = append(reps, r)
		urls = append(urls, r.url)
	}
	lb := startNginx(t, upstreamsOf(t, urls))

	t.Run("mcp-call", func(t *testing.T) {
		for _, era := range []string{"modern", "legacy"} {
			run := func(stdin string, argv ...string) callOut {
				return mcpCall(t, stdin, append([]string{"--url", lb.URL, "--era", era}, argv...)...)
			}
			if r := run("", "discover"); r.code != 0 || !strings.Contains(r.stdout, "era:               "+era) {
				t.Errorf("%s discover: %+v", era, r)
			}
			// One connection, many requests: in the legacy era one
			// session whose requests round-robin over the replicas.
			r := run("echo text=a\necho text=b\necho text=c\necho text=d\nsteps steps=2\necho text=e\n", "script")
			if r.code != 0 || r.stdout != "a\nb\nc\nd\ndone: 2 steps\ne\n" {
				t.Errorf("%s script: %+v", era, r)
			}
			r = run("", "--progress", "call", "steps", "steps=3")
			if r.code != 0 || r.stdout != "done: 3 steps\n" || strings.Count(r.stderr, "mcp-call: progress ") != 3 {
				t.Errorf("%s progress: %+v", era, r)
			}
			if r := run("", "call", "crash", "how=signal"); r.code != 1 || !strings.Contains(r.stderr, "SIGSEGV") {
				t.Errorf("%s crash: %+v", era, r)
			}
			// Abandoning a call stops its tool on whichever replica ran it.
			if r := run("", "--timeout", "1s", "call", "sleep", "seconds=60"); r.code != 3 {
				t.Errorf("%s cancel: %+v", era, r)
			}
			noToolsLeft(t, reps)
		}
	})

	for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run("go-sdk-"+rev, func(t *testing.T) {
			ctx := context.Background()
			var progress atomic.Int64
			client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-gosdk", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Errorf("negotiated %s, want %s", got, rev)
			}
			lt, err := cs.ListTools(ctx, nil)
			if err != nil || len(lt.Tools) != 5 {
				t.Fatalf("tools/list: %v, %d tools", err, len(lt.Tools))
			}
			for i := 0; i < 6; i++ { // crosses every replica
				if text, err := sdkCall(ctx, cs, "echo", map[string]any{"text": fmt.Sprint(i)}); err != nil || text != fmt.Sprint(i)+"\n" {
					t.Errorf("echo %d: %q, %v", i, text, err)
				}
			}
			params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("p1")
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				t.Errorf("steps: %v %+v", err, res)
			}
			// The SDK may run notification handlers after the call
			// returned: wait for them, bounded.
			proctest.Eventually(t, func() string {
				if n := progress.Load(); n != 3 {
					return fmt.Sprintf("%d progress notifications, want 3", n)
				}
				return ""
			})
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{"how": "exit"}}); err != nil || !res.IsError {
				t.Errorf("crash: %v %+v", err, res)
			}
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"seconds": 60}})
			cancel()
			if err == nil {
				t.Errorf("sleep 60 answered within 1s")
			}
			noToolsLeft(t, reps)
			// The session still serves after the cancellation.
			if text, err := sdkCall(ctx, cs, "echo", map[string]any{"text": "after"}); err != nil || text != "after\n" {
				t.Errorf("echo after cancel: %q, %v", text, err)
			}
		})
	}

	for _, v2 := range []bool{false, true} {
		sdk := map[bool]string{false: "v1", true: "v2"}[v2]
		t.Run("ts-sdk-"+sdk, func(t *testing.T) {
			plan := []map[string]any{
				{"call": "echo", "arguments": map[string]any{"text": "hi"}},
				{"call": "steps", "arguments": map[string]any{"steps": 3}, "progress": true},
				{"call": "steps", "arguments": map[string]any{"steps": 30, "delay": 1}, "progress": true, "cancelOnProgress": true},
				{"call": "crash", "arguments": map[string]any{"how": "signal"}},
				{"call": "echo", "arguments": map[string]any{"text": "after"}},
			}
			r := runURLClient(t, v2, lb.URL, plan, "--sdk", sdk)
			if want := map[bool]string{false: "legacy", true: "modern"}[v2]; r.connected.Era != want {
				t.Errorf("era %q, want %q", r.connected.Era, want)
			}
			if len(r.tools) != 5 {
				t.Errorf("%d tools, want 5", len(r.tools))
			}
			if res := r.steps[0].Result; res == nil || res.Text() != "hi\n" {
				t.Errorf("echo: %+v", r.steps[0])
			}
			if res := r.steps[1].Result; res == nil || res.Text() != "done: 3 steps\n" {
				t.Errorf("steps: %+v", r.steps[1])
			}
			if s := r.steps[2]; s.Error == nil {
				t.Errorf("cancelled call answered: %+v", s)
			}
			if res := r.steps[3].Result; res == nil || !res.IsError {
				t.Errorf("crash: %+v", r.steps[3])
			}
			if res := r.steps[4].Result; res == nil || res.Text() != "after\n" {
				t.Errorf("echo after: %+v", r.steps[4])
			}
			noToolsLeft(t, reps)
		})
	}

	t.Run("load", func(t *testing.T) {
		base := runtime.NumGoroutine()
		ctx := context.Background()
		cs, closeSession := goSDKHTTPSession(t, ctx, lb.URL)
		const n, inFlight = 10000, 32
		start := time.Now()
		res := runLoad(ctx, n, inFlight, func(ctx context.Context, i int) (string, error) {
			return sdkCall(ctx, cs, "echo", map[string]any{"text": fmt.Sprint(i)})
		}, nil)
		bad := 0
		for i, r := range res {
			if r.err != nil || r.text != fmt.Sprint(i)+"\n" {
				if bad++; bad <= 5 {
					t.Errorf("call %d: %q, %v", i, r.text, r.err)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d calls failed or were answered wrongly", bad, n)
		}
		t.Logf("%d calls, %d in flight, through nginx to 3 replicas: %v (%.0f calls/s)", n, inFlight, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
		closeSession()
		goroutineBaseline(t, base)
		noToolsLeft(t, reps)
	})

	// sleep seconds=1 keeps calls in flight on every replica when one is
	// killed halfway.
	const n, inFlight = 200, 32
	sleepCall := func(cs *mcp.ClientSession) func(ctx context.Context, i int) (string, error) {
		return func(ctx context.Context, i int) (string, error) {
			return sdkCall(ctx, cs, "sleep", map[string]any{"seconds": 1})
		}
	}

	// A replica drained by SIGTERM: TestScaleOutRouteDrain.

	t.Run("replica-killed", func(t *testing.T) {
		ctx := context.Background()
		cs, closeSession := goSDKHTTPSession(t, ctx, lb.URL)
		defer closeSession()
		killed := reps[2]
		res := runLoad(ctx, n, inFlight, sleepCall(cs), func() {
			_ = killed.cmd.Process.Kill()
		})
		failed := 0
		for _, r := range res {
			if r.err != nil {
				failed++
			}
		}
		// Only the calls in flight on the killed replica may fail: at most
		// inFlight, and none of the last ones, started after nginx saw it
		// refuse connections.
		if failed > inFlight {
			t.Errorf("%d calls failed after one replica was killed; at most the %d in flight may", failed, inFlight)
		}
		for i := n - inFlight; i < n; i++ {
			if res[i].err != nil {
				t.Errorf("call %d, long after the kill, failed: %v", i, res[i].err)
			}
		}
		t.Logf("%d of %d calls failed when a replica was killed", failed, n)
		noToolsLeft(t, reps)
	})
}
