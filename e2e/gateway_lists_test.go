package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// What passes through the gateway besides calls: list changes in both
// eras, progress and cancellation, and an upstream over Streamable HTTP
// (see gateway_test.go for the setting).

// TestGatewayListChanged: a list change upstream reaches the client, for
// every pairing of eras: the upstream legacy (notifications/tools/list_changed)
// or modern (on its subscriptions/listen stream), and the client legacy or
// modern (the same, from mcp-route). The upstreams: the Go SDK's server,
// which adds a tool when asked (addtool), and a nested mcp-route, to which
// a tool is added on disk.
func TestGatewayListChanged(t *testing.T) {
	for _, up := range []string{"gosdk-modern", "gosdk-legacy", "nested"} {
		for _, rev := range []string{"", codec.Rev20251125} {
			t.Run(up+"/client-"+cmpOr(rev, "modern"), func(t *testing.T) {
				ctx := ctxTimeout(t)
				dir := gatewayDir(t)
				changed := make(chan struct{}, 16)
				copts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					changed <- struct{}{}
				}}
				var args []string
				var tools string
				switch up {
				case "gosdk-modern":
					args = upstreamFlag("up", goSDKServer(t))
				case "gosdk-legacy":
					args = upstreamFlag("up", goSDKServer(t), "-legacy")
				case "nested":
					var argv []string
					argv, tools, _ = nestedRoute(t, dir)
					args = upstreamFlag("up", argv...)
				}
				g := startGateway(t, ctx, dir, rev, copts, args...)
				want := "up__hello"
				if up == "nested" {
					g.waitTools(ctx, "up__echo")
					if err := os.Rename(filepath.Join(tools, ".hello"), filepath.Join(tools, "hello")); err != nil {
						t.Fatal(err)
					}
				} else {
					g.waitTools(ctx, "up__addtool")
					if problem := wantText("added hello")(g.call(ctx, "up__addtool", map[string]any{"name": "hello"})); problem != "" {
						t.Fatalf("addtool: %s", problem)
					}
				}
				// Drain what the first load may have announced; then the
				// change must be announced.
				listed := false
				for !listed {
					select {
					case <-changed:
					case <-ctx.Done():
						t.Fatalf("no list change announced after %s gained a tool", up)
					}
					listed = slices.Contains(names(g.tools(ctx)), want)
				}
				wantHello := "hello\n"
				if up != "nested" {
					wantHello = "hello here"
				}
				if problem := wantText(wantHello)(g.call(ctx, want, nil)); problem != "" {
					t.Errorf("%s: %s", want, problem)
				}
				g.close()
			})
		}
	}
}

// TestGatewayProgressCancel: progress from an upstream reaches the client
// with the client's token, for two calls at once; a call the client cancels
// is cancelled upstream (the nested mcp-route kills the tool's process) and
// not answered; the connection goes on.
func TestGatewayProgressCancel(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			var mu sync.Mutex
			progress := map[any][]float64{}
			cancelCall := func() {} // of the call to cancel at its first progress
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				tok := req.Params.ProgressToken
				progress[tok] = append(progress[tok], req.Params.Progress)
				if tok == "hang" || tok == "slow-cancel" {
					cancelCall()
				}
			}}
			argv, _, innerRoot := nestedRoute(t, dir)
			// The inner hang tool says where it runs, so its end can be seen.
			hangPIDFile := filepath.Join(innerRoot, "hang.pid")
			hangScript := filepath.Join(filepath.Dir(innerRoot), "tools", "hang")
			proctest.WriteExecutable(t, hangScript, []byte("#!/bin/sh\necho $$ > \"$MCP_ROOT/hang.pid\"\n"+
				"if (: >&3) 2>/dev/null; then echo '{\"progress\":0,\"message\":\"started\"}' >&3; fi\nsleep 60\n"))
			g := startGateway(t, ctx, dir, rev, copts, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), upstreamFlag("inner", argv...))...)
			g.waitTools(ctx, "gosdk__slow", "inner__steps", "inner__hang")

			// Two calls with progress at once: each token gets its own.
			var wg sync.WaitGroup
			for _, tok := range []string{"a", "b"} {
				wg.Go(func() {
					p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 3}}
					p.SetProgressToken(tok)
					res, err := g.cs.CallTool(ctx, p)
					if problem := wantText("done 3")(goSDKOutcome(t, res, err)); problem != "" {
						t.Errorf("gosdk__slow %s: %s", tok, problem)
					}
				})
			}
			wg.Wait()
			p := &mcp.CallToolParams{Name: "inner__steps"}
			p.SetProgressToken(7)
			res, err := g.cs.CallTool(ctx, p)
			if problem := wantText("done\n")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("inner__steps: %s", problem)
			}
			// Progress sent before an answer may be read after it: wait.
			proctest.Eventually(t, func() string {
				mu.Lock()
				defer mu.Unlock()
				for _, tok := range []any{"a", "b", float64(7)} {
					if !slices.Equal(progress[tok], []float64{1, 2, 3}) {
						return fmt.Sprintf("progress %v, want 1 2 3 for each of a, b, 7", progress)
					}
				}
				return ""
			})

			// Cancel through the hop: the Go SDK server's slow, and the
			// inner mcp-route's hang, whose process must end.
			for _, c := range []struct{ tool, token string }{{"gosdk__slow", "slow-cancel"}, {"inner__hang", "hang"}} {
				callCtx, cancel := context.WithCancel(ctx)
				mu.Lock()
				cancelCall = cancel
				mu.Unlock()
				p := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}}
				if c.tool == "gosdk__slow" {
					p.Arguments = map[string]any{"steps": 100000}
				}
				p.SetProgressToken(c.token)
				if res, err := g.cs.CallTool(callCtx, p); !errors.Is(err, context.Canceled) {
					t.Errorf("%s: got %v %v, want the call cancelled", c.tool, goSDKOutcome(t, res, err), err)
				}
				cancel()
			}
			hangPID := proctest.WaitPIDFile(t, hangPIDFile)
			proctest.WaitGone(t, hangPID)
			if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
				t.Errorf("gosdk__greet after the cancellations: %s", problem)
			}
			if problem := wantText("after")(g.call(ctx, "inner__echo", map[string]any{"text": "after"})); problem != "" {
				t.Errorf("inner__echo after the cancellations: %s", problem)
			}
			g.close()
			msgs := goSDKWire(t, g.wire.String())
			checkCancelledToken(t, msgs, "slow-cancel")
			checkCancelledToken(t, msgs, "hang")
		})
	}
}

// checkCancelledToken is checkCancelled for the tools/call with progress
// token tok (a JSON string).
func checkCancelledToken(t *testing.T, msgs []wireMsg, tok string) {
	t.Helper()
	var id json.RawMessage
	for _, m := range msgs {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if !m.fromServer && json.Unmarshal(m.line, &req) == nil && req.Method == "tools/call" && req.Params.Meta.ProgressToken == tok {
			id = req.ID
		}
	}
	if id == nil {
		t.Fatalf("no tools/call with progress token %q on the wire", tok)
	}
	cancelled := false
	for _, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(m.line, &msg) != nil {
			continue
		}
		switch {
		case !m.fromServer && msg.Method == "notifications/cancelled" && string(msg.Params.RequestID) == string(id):
			cancelled = true
		case m.fromServer && msg.Method == "" && string(msg.ID) == string(id):
			t.Errorf("mcp-route answered the cancelled call %s (token %q): %s", id, tok, m.line)
		}
	}
	if !cancelled {
		t.Errorf("the client sent no notifications/cancelled for %s (token %q)", id, tok)
	}
}

// TestGatewayListChangedBeforeListen: a 2026-07-28 upstream that adds a
// tool after mcp-route's first tools/list but before mcp-route's
// subscriptions/listen takes effect (gosdk-server -late-tool) announces it
// on no stream mcp-route has. Only a list taken once the listen is
// acknowledged (notifications/subscriptions/acknowledged) can see it;
// without one the tool is never served. A nested mcp-route whose tool
// appeared right after the outer one listed it showed this as a lost list
// change on a loaded machine.
func TestGatewayListChangedBeforeListen(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	// The fixture's counterpart: a client of its own that lists again
	// after its listen is up sees the tool.
	direct := exec.Command(goSDKServer(t), "-late-tool", "late")
	direct.Env = baseEnv()
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-e2e", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: direct}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for listed := false; !listed; time.Sleep(50 * time.Millisecond) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil || ctx.Err() != nil {
			t.Fatalf("gosdk-server -late-tool: tools/list: %v", err)
		}
		listed = slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "late" })
	}
	cs.Close()

	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("up", goSDKServer(t), "-late-tool", "late")...)
	g.waitTools(ctx, "up__greet")
	// Far above what a re-list takes; the tool was added within 100ms of
	// the listen.
	deadline := time.Now().Add(15 * time.Second)
	for !slices.Contains(names(g.tools(ctx)), "up__late") {
		if time.Now().After(deadline) {
			t.Fatalf("up__late, added upstream before its listen took effect, not listed after 15s: %v", g.toolNames(ctx))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if problem := wantText("late here")(g.call(ctx, "up__late", nil)); problem != "" {
		t.Errorf("up__late: %s", problem)
	}
	g.close()
}

// TestGatewayHTTPUpstream: the Go SDK's server over Streamable HTTP
// (gosdk-server --http, with sessions and stateless) mounted as
// NAME=http://127.0.0.1:PORT/mcp: the same calls as over stdio, progress
// with the client's token, and a tool the server adds announced to the
// client. The SDK's server with sessions speaks only the legacy revisions,
// and sends notifications/tools/list_changed on the session's standalone
// GET stream (Streamable HTTP's channel for what belongs to no request);
// the stateless one is modern and sends it on the subscriptions/listen
// stream.
func TestGatewayHTTPUpstream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"stateful", nil},
		{"stateless", []string{"--stateless"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			url := startListener(t, append([]string{goSDKServer(t), "--http", "127.0.0.1:0"}, tc.flags...)...)
			var mu sync.Mutex
			var steps []float64
			changed := make(chan struct{}, 16)
			copts := &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					if req.Params.ProgressToken == "web" {
						steps = append(steps, req.Params.Progress)
					}
				},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			}
			g := startGateway(t, ctx, dir, "", copts, "--upstream", "web="+url)
			checkGosdkThrough(t, ctx, g, "web")
			p := &mcp.CallToolParams{Name: "web__slow", Arguments: map[string]any{"steps": 3}}
			p.SetProgressToken("web")
			res, err := g.cs.CallTool(ctx, p)
			if problem := wantText("done 3")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("web__slow: %s", problem)
			}
			proctest.Eventually(t, func() string {
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(steps, []float64{1, 2, 3}) {
					return fmt.Sprintf("progress %v, want 1 2 3", steps)
				}
				return ""
			})
			if problem := wantText("added hello")(g.call(ctx, "web__addtool", map[string]any{"name": "hello"})); problem != "" {
				t.Fatalf("addtool: %s", problem)
			}
			// Far above what a re-list takes.
			deadline := time.After(15 * time.Second)
			for listed := false; !listed; {
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("no list change announced within 15s after the HTTP upstream gained a tool; listed: %v", g.toolNames(ctx))
				}
				listed = slices.Contains(names(g.tools(ctx)), "web__hello")
			}
			if problem := wantText("hello here")(g.call(ctx, "web__hello", nil)); problem != "" {
				t.Errorf("web__hello: %s", problem)
			}
			g.close()
		})
	}
}
