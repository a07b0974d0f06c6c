package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/spectest"
)

// mcp-route under the official SDK clients, as a host would run it:
//   - the Go SDK client (github.com/modelcontextprotocol/go-sdk/mcp), in
//     this process, always: its default connect (server/discover, so the
//     modern era) and a legacy initialize at every legacy revision;
//   - the TypeScript SDK clients, @modelcontextprotocol/sdk (v1) and
//     @modelcontextprotocol/client (v2, versionNegotiation "auto" and
//     "legacy"), through interop/route-clients/client.mjs, when
//     MCP_INTEROP_NODE_DIR names an npm prefix filled by
//     interop/setup-node.sh (skipped otherwise).
//
// Each client lists the tools of interopRouteTools and runs
// interopRouteCalls on one connection: text, JSON and described tools, a
// tool killed by a signal, a bad argument and an unknown tool, each followed
// by a call that must still work, then calls in flight at once. Other tests
// add a tool while connected (list_changed), report progress and cancel a
// hanging call, and page through tools/list. Every message mcp-route sent on
// the connection is checked against the schema of the revision in use.

// interopRouteTools writes the tools every client sees into a new tools
// directory, and returns it and a root directory for mcp-route. It also
// leaves the tool "hello" ready to appear: its sidecar, and its script under
// the hidden name .hello (hidden files are no tools), which a rename
// publishes.
func interopRouteTools(t *testing.T) (tools, root string) {
	t.Helper()
	d := t.TempDir()
	tools, root = filepath.Join(d, "tools"), filepath.Join(d, "root")
	files := []struct {
		name string
		mode os.FileMode
		body string
	}{
		{"echo.json", 0o644, `{"name":"echo","title":"Echo","description":"Echo text back.",` +
			`"annotations":{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false},` +
			`"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}`},
		{"echo", 0o755, `printf '%s' "$MCP_ARG_TEXT"`},
		{"square.json", 0o644, `{"name":"square","description":"Square an integer.",` +
			`"inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},` +
			`"outputSchema":{"type":"object","properties":{"n":{"type":"integer"},"square":{"type":"integer"}},"required":["n","square"]},` +
			`"run":{"result":"json"}}`},
		{"square", 0o755, `printf '{"n":%d,"square":%d}' "$MCP_ARG_N" $((MCP_ARG_N * MCP_ARG_N))`},
		// No sidecar: its definition comes from --mcp-describe.
		{"greet", 0o755, `if [ "$1" = --mcp-describe ]; then
	echo '{"name":"greet","description":"Greet someone.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}'
	exit 0
fi
printf 'Hello, %s!' "$MCP_ARG_NAME"`},
		{"crash.json", 0o644, `{"name":"crash","description":"Die by SIGSEGV.","inputSchema":{"type":"object"}}`},
		{"crash", 0o755, `echo "about to crash" >&2
kill -SEGV $$`},
		// Progress on fd 3, when the client asked for it (fd 3 is open).
		{"steps.json", 0o644, `{"name":"steps","description":"Report progress.","inputSchema":{"type":"object"}}`},
		{"steps", 0o755, `if (: >&3) 2>/dev/null; then
	for i in 1 2 3; do printf '{"progress":%d,"total":3,"message":"step %d"}\n' $i $i >&3; done
fi
echo done`},
		// Says it started (so a client can cancel it then), and hangs.
		{"hang.json", 0o644, `{"name":"hang","description":"Hang until cancelled.","inputSchema":{"type":"object"}}`},
		{"hang", 0o755, `if (: >&3) 2>/dev/null; then echo '{"progress":0,"message":"started"}' >&3; fi
sleep 60`},
		{"hello.json", 0o644, `{"name":"hello","description":"Say hello.","inputSchema":{"type":"object"}}`},
		{".hello", 0o755, `echo hello`},
	}
	for _, dir := range []string{tools, root} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		body := f.body
		if f.mode&0o100 != 0 {
			body = "#!/bin/sh\n" + body + "\n"
		}
		if err := os.WriteFile(filepath.Join(tools, f.name), []byte(body), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return tools, root
}

// interopRouteToolNames are the tools of interopRouteTools, in the order
// mcp-route lists them.
var interopRouteToolNames = []string{"crash", "echo", "greet", "hang", "square", "steps"}

// An outcome is what a client got from one tools/call: a result, or a
// JSON-RPC error (code 0 when the client gave none).
type outcome struct {
	result  *codec.CallToolResult
	code    int
	message string
}

func (o outcome) String() string {
	if o.result == nil {
		return fmt.Sprintf("error %d %q", o.code, o.message)
	}
	b, _ := json.Marshal(o.result)
	return string(b)
}

// firstText is the text of the first content block, "" without one.
func (o outcome) firstText() string {
	if o.result == nil || len(o.result.Content) == 0 {
		return ""
	}
	return o.result.Content[0].Text
}

type interopCall struct {
	name string
	args map[string]any
	// check returns what is wrong with the outcome, or "".
	check func(outcome) string
}

func wantText(want string) func(outcome) string {
	return func(o outcome) string {
		if o.result == nil || o.result.IsError || len(o.result.Content) != 1 ||
			o.result.Content[0].Type != "text" || o.result.Content[0].Text != want {
			return fmt.Sprintf("want one text block %q", want)
		}
		return ""
	}
}

func wantIsError(parts ...string) func(outcome) string {
	return func(o outcome) string {
		if o.result == nil || !o.result.IsError {
			return "want an isError result"
		}
		for _, p := range parts {
			if !strings.Contains(o.firstText(), p) {
				return fmt.Sprintf("want an isError text with %q", p)
			}
		}
		return ""
	}
}

// interopRouteCalls is the sequence every client runs on one connection.
// The calls after a failure prove the connection survived it.
func interopRouteCalls() []interopCall {
	const odd = "héllo ✓ \"quoted\" \\ back\tslash"
	return []interopCall{
		{"echo", map[string]any{"text": odd}, wantText(odd)},
		{"square", map[string]any{"n": 7}, func(o outcome) string {
			var got struct{ N, Square int }
			if o.result == nil || o.result.IsError || json.Unmarshal(o.result.StructuredContent, &got) != nil ||
				got.N != 7 || got.Square != 49 {
				return "want structuredContent {n:7, square:49}"
			}
			if !json.Valid([]byte(o.firstText())) {
				return "want the JSON as text too"
			}
			return ""
		}},
		{"greet", map[string]any{"name": "Ann"}, wantText("Hello, Ann!")},
		{"crash", nil, wantIsError("SIGSEGV", "about to crash")},
		{"echo", map[string]any{"text": "after the crash"}, wantText("after the crash")},
		// Checked against inputSchema before anything runs (SEP-1303).
		{"echo", map[string]any{"text": 5}, wantIsError("text")},
		{"nope", nil, func(o outcome) string {
			if o.result != nil || o.code != int(codec.CodeInvalidParams) {
				return "want a JSON-RPC error -32602"
			}
			return ""
		}},
		{"greet", map[string]any{"name": "Bo"}, wantText("Hello, Bo!")},
	}
}

// interopParallel is how many echo calls are put in flight at once.
const interopParallel = 8

func parallelText(i int) string { return fmt.Sprintf("call %d in flight", i) }

// checkOutcomes checks the outcomes of interopRouteCalls, in order, then
// interopParallel echoes of parallelText.
func checkOutcomes(t *testing.T, calls []interopCall, got, parallel []outcome) {
	t.Helper()
	if len(got) != len(calls) {
		t.Fatalf("%d outcomes for %d calls", len(got), len(calls))
	}
	for i, c := range calls {
		if problem := c.check(got[i]); problem != "" {
			t.Errorf("call %d %s %v: %s; got %v", i, c.name, c.args, problem, got[i])
		}
	}
	if len(parallel) != interopParallel {
		t.Fatalf("%d outcomes for %d calls in flight", len(parallel), interopParallel)
	}
	for i, o := range parallel {
		if problem := wantText(parallelText(i))(o); problem != "" {
			t.Errorf("call %d in flight: %s; got %v", i, problem, o)
		}
	}
}

// A wireMsg is one message on a client's connection to mcp-route.
type wireMsg struct {
	fromServer bool
	line       []byte
}

// checkWire checks every message mcp-route sent against the schema of the
// revision in use: an answer by the method and revision of the request it
// answers. In a modern session that is the request's _meta protocol
// version; a request without one there (the Go SDK's ping) is a legacy
// message, answered as such, and checked in the newest legacy revision.
func checkWire(t *testing.T, rev string, msgs []wireMsg) {
	t.Helper()
	type sent struct{ method, rev string }
	requests := map[string]sent{} // request id (as JSON) → what it was
	var n int
	// Two passes: the requests first. A logging transport may log a
	// request after the answer to it (the Go SDK's LoggingTransport logs
	// a write once it has returned, and the answer can be read and logged
	// in between), and the answer must still be checked in its request's
	// revision.
	for pass := 0; pass < 2; pass++ {
		for _, m := range msgs {
			if m.fromServer != (pass == 1) {
				continue
			}
			var head struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal(m.line, &head); err != nil {
				t.Errorf("wire: not JSON (%v): %s", err, m.line)
				continue
			}
			if !m.fromServer {
				if head.ID != nil && head.Method != "" {
					r := rev
					if codec.IsModernRevision(rev) {
						r = codec.LatestLegacyRevision
						if v, ok := head.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); ok {
							r = v
						}
					}
					requests[string(head.ID)] = sent{head.Method, r}
				}
				continue
			}
			n++
			at := sent{rev: rev}
			if head.Method == "" {
				if r, ok := requests[string(head.ID)]; ok {
					at = r
				}
			}
			if err := spectest.CheckServerMessageErr(t, at.rev, at.method, m.line); err != nil {
				t.Errorf("mcp-route sent a message invalid in %s: %v\n%s", at.rev, err, m.line)
			}
		}
	}
	if n == 0 {
		t.Errorf("no server message seen on the wire")
	}
}

// wireCall returns the tools/call request the client sent for tool, or
// fails the test.
func wireCall(t *testing.T, msgs []wireMsg, tool string) (id, progressToken json.RawMessage) {
	t.Helper()
	for _, m := range msgs {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if !m.fromServer && json.Unmarshal(m.line, &req) == nil && req.Method == "tools/call" && req.Params.Name == tool {
			return req.ID, req.Params.Meta.ProgressToken
		}
	}
	t.Fatalf("no tools/call %s on the wire", tool)
	return nil, nil
}

// wireProgress returns the progress values mcp-route sent for the call of
// tool, in order. They are read off the wire, not from the client's
// progress callback: the TypeScript SDK runs notification handlers a
// microtask late, and drops progress that arrives in the same read as the
// response (its handler is gone by then).
func wireProgress(t *testing.T, msgs []wireMsg, tool string) []float64 {
	t.Helper()
	_, token := wireCall(t, msgs, tool)
	if token == nil {
		t.Fatalf("the client sent no progressToken for %s", tool)
	}
	var got []float64
	for _, m := range msgs {
		var n struct {
			Method string `json:"method"`
			Params struct {
				ProgressToken json.RawMessage `json:"progressToken"`
				Progress      float64         `json:"progress"`
			} `json:"params"`
		}
		if m.fromServer && json.Unmarshal(m.line, &n) == nil && n.Method == "notifications/progress" &&
			bytes.Equal(n.Params.ProgressToken, token) {
			got = append(got, n.Params.Progress)
		}
	}
	return got
}

// checkCancelled checks that the client cancelled its call of tool with
// notifications/cancelled and that mcp-route then sent nothing for it.
func checkCancelled(t *testing.T, msgs []wireMsg, tool string) {
	t.Helper()
	id, _ := wireCall(t, msgs, tool)
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
		case !m.fromServer && msg.Method == "notifications/cancelled" && bytes.Equal(msg.Params.RequestID, id):
			cancelled = true
		case m.fromServer && bytes.Equal(msg.ID, id):
			// Before the cancellation the call cannot have been answered:
			// the tool hangs.
			t.Errorf("mcp-route answered the cancelled call %s (%s): %s", id, tool, m.line)
		}
	}
	if !cancelled {
		t.Errorf("the client sent no notifications/cancelled for %s (%s)", id, tool)
	}
}

// goSDKRoute connects the Go SDK client to a new mcp-route on tools and
// root. It returns the session, the wire log (the SDK's LoggingTransport,
// which logs each message as the SDK encodes it) and mcp-route's stderr.
// Cleanup ends mcp-route if the test did not close the session.
func goSDKRoute(t *testing.T, ctx context.Context, tools, root string, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions, args ...string) (*mcp.ClientSession, *proctest.Buffer, *proctest.Buffer, error) {
	t.Helper()
	cmd := exec.Command(routeBin(t), append([]string{"--tools", tools, "--root", root, "--poll", "100ms"}, args...)...)
	cmd.Dir = root
	cmd.Env = baseEnv()
	stderr, wire := &proctest.Buffer{}, &proctest.Buffer{}
	cmd.Stderr = stderr
	transport := &mcp.LoggingTransport{
		// Close waits this long for mcp-route to exit on EOF before it
		// signals: long, so that an exit on EOF is what the test sees.
		Transport: &mcp.CommandTransport{Command: cmd, TerminateDuration: waitLong},
		Writer:    wire,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "interop-gosdk", Version: "1.0.0"}, copts)
	cs, err := client.Connect(ctx, transport, sopts)
	if cmd.Process != nil {
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
			}
			if t.Failed() {
				t.Logf("mcp-route stderr:\n%s", stderr.String())
			}
		})
	}
	return cs, wire, stderr, err
}

// goSDKWire parses a LoggingTransport log.
func goSDKWire(t *testing.T, log string) []wireMsg {
	t.Helper()
	var msgs []wireMsg
	for line := range strings.Lines(log) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "read: "):
			msgs = append(msgs, wireMsg{true, []byte(strings.TrimPrefix(line, "read: "))})
		case strings.HasPrefix(line, "write: "):
			msgs = append(msgs, wireMsg{false, []byte(strings.TrimPrefix(line, "write: "))})
		case strings.HasPrefix(line, "read error: "):
			// The read loop ending: mcp-route exited (EOF), or Close
			// closed the pipe under it. A bad message from mcp-route
			// would fail the calls themselves.
		default:
			t.Errorf("go-sdk wire: %s", line)
		}
	}
	return msgs
}

// goSDKOutcome turns what CallTool returned into an outcome.
func goSDKOutcome(t *testing.T, res *mcp.CallToolResult, err error) outcome {
	t.Helper()
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			return outcome{code: int(werr.Code), message: werr.Message}
		}
		return outcome{message: err.Error()}
	}
	// Through JSON, so both SDKs' results are checked by the same code.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r codec.CallToolResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return outcome{result: &r}
}

// checkEchoTool checks that the echo tool came through with its title
// (from 2025-06-18) and annotations (from 2025-03-26), as far as revision
// rev has them.
func checkEchoTool(t *testing.T, rev string, tools []codec.Tool) {
	t.Helper()
	i := slices.IndexFunc(tools, func(tool codec.Tool) bool { return tool.Name == "echo" })
	if i < 0 {
		t.Fatalf("no echo tool")
	}
	e := tools[i]
	hasAnnotations := e.Annotations != nil && e.Annotations.ReadOnlyHint != nil && *e.Annotations.ReadOnlyHint
	if e.Description != "Echo text back." || !json.Valid(e.InputSchema) ||
		hasAnnotations != (rev >= codec.Rev20250326) || (e.Title == "Echo") != (rev >= codec.Rev20250618) {
		t.Errorf("echo tool in %s: %+v", rev, e)
	}
}

// goSDKTools turns the Go SDK's tools into codec's, through JSON.
func goSDKTools(t *testing.T, tools []*mcp.Tool) []codec.Tool {
	t.Helper()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	var out []codec.Tool
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return out
}

func TestInteropRouteGoSDK(t *testing.T) {
	for _, tc := range []struct {
		name    string
		request string // ClientSessionOptions.ProtocolVersion; "" is the SDK's default
		want    string // the version the session must negotiate
	}{
		{"default", "", codec.Rev20260728},
		{"2025-11-25", codec.Rev20251125, codec.Rev20251125},
		{"2025-06-18", codec.Rev20250618, codec.Rev20250618},
		{"2025-03-26", codec.Rev20250326, codec.Rev20250326},
		{"2024-11-05", codec.Rev20241105, codec.Rev20241105},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, root := interopRouteTools(t)
			ctx := ctxTimeout(t)
			cs, wire, stderr, err := goSDKRoute(t, ctx, tools, root, nil, &mcp.ClientSessionOptions{ProtocolVersion: tc.request})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			init := cs.InitializeResult()
			if init.ProtocolVersion != tc.want || init.ServerInfo == nil || init.ServerInfo.Name != "mcp-route" {
				t.Errorf("negotiated %q with %+v, want %s with mcp-route", init.ProtocolVersion, init.ServerInfo, tc.want)
			}
			t.Logf("go-sdk %s: negotiated %s", tc.name, init.ProtocolVersion)
			// What ClientOptions.KeepAlive sends; in the modern era too
			// (as a plain ping, which mcp-route answers at any time).
			if err := cs.Ping(ctx, nil); err != nil {
				t.Errorf("ping: %v", err)
			}
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range lt.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, interopRouteToolNames) {
				t.Errorf("tools %v, want %v", names, interopRouteToolNames)
			}
			checkEchoTool(t, init.ProtocolVersion, goSDKTools(t, lt.Tools))
			calls := interopRouteCalls()
			var got []outcome
			for _, c := range calls {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
				got = append(got, goSDKOutcome(t, res, err))
			}
			parallel := make([]outcome, interopParallel)
			var wg sync.WaitGroup
			for i := range parallel {
				wg.Go(func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": parallelText(i)}})
					parallel[i] = goSDKOutcome(t, res, err)
				})
			}
			wg.Wait()
			checkOutcomes(t, calls, got, parallel)
			// Close closes mcp-route's stdin and waits: it must exit 0.
			if err := cs.Close(); err != nil {
				t.Errorf("close: mcp-route did not exit cleanly on EOF: %v\n%s", err, stderr.String())
			}
			checkWire(t, init.ProtocolVersion, goSDKWire(t, wire.String()))
		})
	}
}

// TestInteropRouteGoSDKListChanged: a Go SDK host with a tool list handler
// (as real hosts register) adds a tool while connected. A legacy session
// hears of it through notifications/tools/list_changed; a modern one through
// the same notification on the subscriptions/listen stream the SDK opens
// when it connects (mcp-route advertises tools.listChanged in its
// DiscoverResult).
func TestInteropRouteGoSDKListChanged(t *testing.T) {
	for _, tc := range []struct {
		name, request string
		notify        bool // whether the handler must be called
	}{
		{"legacy", codec.Rev20251125, true},
		{"modern", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, root := interopRouteTools(t)
			ctx := ctxTimeout(t)
			changed := make(chan struct{}, 16)
			copts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}}
			cs, _, _, err := goSDKRoute(t, ctx, tools, root, copts, &mcp.ClientSessionOptions{ProtocolVersion: tc.request})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			// mcp-route reads its tools in the background; tools/list waits
			// for that first read. Without this, a busy machine can let the
			// rename below land before the first read, and there is then no
			// change to announce.
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if err := os.Rename(filepath.Join(tools, ".hello"), filepath.Join(tools, "hello")); err != nil {
				t.Fatal(err)
			}
			if tc.notify {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatal("no notifications/tools/list_changed after a tool was added")
				}
			}
			// A modern client sees the change only by asking again, and the
			// SDK serves tools/list from its cache for the server's ttlMs:
			// poll, with a pause that only spaces the tries out.
			var lt *mcp.ListToolsResult
			for {
				lt, err = cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				if slices.ContainsFunc(lt.Tools, func(tool *mcp.Tool) bool { return tool.Name == "hello" }) {
					break
				}
				if tc.notify || ctx.Err() != nil {
					t.Fatalf("hello not listed after the change: %v", lt.Tools)
				}
				time.Sleep(100 * time.Millisecond)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hello"})
			if problem := wantText("hello\n")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("hello: %s", problem)
			}
		})
	}
}

// TestInteropRouteGoSDKPages: with two tools a page, the SDK's Tools
// iterator follows nextCursor through every page, in both eras.
func TestInteropRouteGoSDKPages(t *testing.T) {
	for _, tc := range []struct{ name, request string }{
		{"default", ""},
		{"2025-11-25", codec.Rev20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, root := interopRouteTools(t)
			ctx := ctxTimeout(t)
			cs, wire, _, err := goSDKRoute(t, ctx, tools, root, nil, &mcp.ClientSessionOptions{ProtocolVersion: tc.request}, "--page-size", "2")
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatalf("tools: %v", err)
				}
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, interopRouteToolNames) {
				t.Errorf("tools %v, want %v", names, interopRouteToolNames)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			msgs := goSDKWire(t, wire.String())
			if n := strings.Count(wire.String(), `"method":"tools/list"`); n != 3 {
				t.Errorf("%d tools/list requests for 6 tools 2 a page, want 3", n)
			}
			checkWire(t, cs.InitializeResult().ProtocolVersion, msgs)
		})
	}
}

// TestInteropRouteGoSDKProgressCancel: progress on fd 3 reaches the Go SDK's
// progress handler, and a call the client cancels (its context ends) is
// killed, not answered, and the connection goes on.
func TestInteropRouteGoSDKProgressCancel(t *testing.T) {
	for _, tc := range []struct{ name, request string }{
		{"default", ""},
		{"2025-11-25", codec.Rev20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, root := interopRouteTools(t)
			ctx := ctxTimeout(t)
			steps := make(chan float64, 16)
			hangCtx, cancelHang := context.WithCancel(ctx)
			defer cancelHang()
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				switch req.Params.ProgressToken {
				case "steps":
					steps <- req.Params.Progress
				case "hang":
					cancelHang() // it started: cancel it
				}
			}}
			cs, wire, _, err := goSDKRoute(t, ctx, tools, root, copts, &mcp.ClientSessionOptions{ProtocolVersion: tc.request})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			p := &mcp.CallToolParams{Name: "steps"}
			p.SetProgressToken("steps")
			res, err := cs.CallTool(ctx, p)
			if problem := wantText("done\n")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("steps: %s", problem)
			}
			var got []float64
			for len(got) < 3 {
				select {
				case v := <-steps:
					got = append(got, v)
				case <-ctx.Done():
					t.Fatalf("progress: got %v, want 1 2 3", got)
				}
			}
			if !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress %v, want 1 2 3", got)
			}
			p = &mcp.CallToolParams{Name: "hang"}
			p.SetProgressToken("hang")
			if res, err := cs.CallTool(hangCtx, p); !errors.Is(err, context.Canceled) {
				t.Errorf("hang: got %v %v, want the call cancelled", goSDKOutcome(t, res, err), err)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after cancel"}})
			if problem := wantText("after cancel")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("echo after cancel: %s", problem)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			msgs := goSDKWire(t, wire.String())
			checkCancelled(t, msgs, "hang")
			checkWire(t, cs.InitializeResult().ProtocolVersion, msgs)
		})
	}
}

// routeClientsDir returns the npm prefix with the TypeScript SDK clients
// and the client script, or skips. v2 says whether the v2 client is wanted.
func routeClientsDir(t *testing.T, v2 bool) (nodeDir, script string) {
	t.Helper()
	nodeDir = os.Getenv("MCP_INTEROP_NODE_DIR")
	if nodeDir == "" {
		t.Skip("MCP_INTEROP_NODE_DIR not set: run e2e/interop/setup-node.sh DIR and set it to DIR to test mcp-route under the TypeScript SDK clients")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("MCP_INTEROP_NODE_DIR is set but node is not in PATH: %v", err)
	}
	pkg := "sdk"
	if v2 {
		pkg = "client"
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
		if v2 {
			// setup-node.sh installs nothing on a Node older than 20.
			t.Skipf("MCP_INTEROP_NODE_DIR=%s has no @modelcontextprotocol/client (needs Node 20+; run e2e/interop/setup-node.sh %s): %v", nodeDir, nodeDir, err)
		}
		t.Fatalf("MCP_INTEROP_NODE_DIR=%s has no @modelcontextprotocol/sdk (run e2e/interop/setup-node.sh %s): %v", nodeDir, nodeDir, err)
	}
	script, err := filepath.Abs("interop/route-clients/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("client script: %v", err)
	}
	return nodeDir, script
}

// nodeRun is what client.mjs printed.
type nodeRun struct {
	connected struct {
		Era             string               `json:"era"`
		ProtocolVersion string               `json:"protocolVersion"`
		ServerInfo      codec.Implementation `json:"serverInfo"`
		Capabilities    json.RawMessage      `json:"capabilities"`
		Discover        json.RawMessage      `json:"discover"`
	}
	tools        []codec.Tool
	steps        map[int]nodeStep
	clientErrors []string // what the SDK reported through onerror
	wire         []wireMsg
	closed       bool
	stderr       string // mcp-route's
}

type nodeStep struct {
	Result  *codec.CallToolResult `json:"result"`
	Pong    bool                  `json:"pong"`
	Error   *nodeError            `json:"error"`
	Results []nodeStep            `json:"results"`
	Tools   []codec.Tool          `json:"tools"`
	Renamed bool                  `json:"renamed"`
	Pages   int                   `json:"pages"`
	Changed *bool                 `json:"changed"`
}

type nodeError struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
}

func (s nodeStep) outcome() outcome {
	if s.Error != nil {
		o := outcome{message: s.Error.Message}
		if s.Error.Code != nil {
			o.code = *s.Error.Code
		}
		return o
	}
	return outcome{result: s.Result}
}

// runRouteClient runs client.mjs with flags on a new mcp-route serving
// tools, the steps of plan on one connection, and returns what it printed.
// A hung client fails the test: the run is bounded, and its process group
// (node, mcp-route and the probe sibling) killed.
func runRouteClient(t *testing.T, v2 bool, tools string, plan []map[string]any, flags ...string) *nodeRun {
	t.Helper()
	nodeDir, script := routeClientsDir(t, v2)
	ctx := ctxTimeout(t)
	// The root is interopRouteTools' sibling of tools: a root holding the
	// tools (the default, the client's working directory) is refused.
	root := filepath.Join(filepath.Dir(tools), "root")
	args := append(append([]string{script, "--route-arg", "--root", "--route-arg", root}, flags...), routeBin(t), tools)
	return runNodeClient(t, ctx, nodeDir, filepath.Dir(tools), args, plan, flags)
}

// runURLClient runs client.mjs --url url (a Streamable HTTP endpoint) with
// the steps of plan, as runRouteClient does.
func runURLClient(t *testing.T, v2 bool, url string, plan []map[string]any, flags ...string) *nodeRun {
	t.Helper()
	nodeDir, script := routeClientsDir(t, v2)
	args := append(append([]string{script}, flags...), "--url", url)
	return runNodeClient(t, ctxTimeout(t), nodeDir, t.TempDir(), args, plan, flags)
}

func runNodeClient(t *testing.T, ctx context.Context, nodeDir, dir string, args []string, plan []map[string]any, flags []string) *nodeRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "MCP_INTEROP_NODE_DIR="+nodeDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	in, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	r := &nodeRun{steps: map[int]nodeStep{}}
	var fatal string
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Connected json.RawMessage `json:"connected"`
			Tools     []codec.Tool    `json:"tools"`
			Step      *int            `json:"step"`
			Wire      string          `json:"wire"`
			Message   json.RawMessage `json:"message"`
			Closed    bool            `json:"closed"`
			Stderr    string          `json:"stderr"`
			Fatal     string          `json:"fatal"`
			Client    string          `json:"clientError"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("client.mjs printed a bad line (%v): %s", err, sc.Bytes())
		}
		switch {
		case line.Fatal != "":
			fatal, r.stderr = line.Fatal, line.Stderr
		case line.Client != "":
			r.clientErrors = append(r.clientErrors, line.Client)
		case line.Wire != "":
			r.wire = append(r.wire, wireMsg{line.Wire == "in", line.Message})
		case line.Connected != nil:
			if err := json.Unmarshal(line.Connected, &r.connected); err != nil {
				t.Fatalf("connected: %v", err)
			}
		case line.Step != nil:
			var s nodeStep
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatalf("step: %v: %s", err, sc.Bytes())
			}
			r.steps[*line.Step] = s
		case line.Closed:
			r.closed, r.stderr = true, line.Stderr
		case line.Tools != nil:
			r.tools = line.Tools
		}
	}
	if fatal != "" || runErr != nil || !r.closed {
		t.Fatalf("client.mjs %v: %v %s\nnode stderr:\n%s\nmcp-route stderr:\n%s", flags, runErr, fatal, stderr.String(), r.stderr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mcp-route stderr:\n%s", r.stderr)
		}
	})
	for _, e := range r.clientErrors {
		switch {
		case strings.HasPrefix(e, "Received a progress notification for an unknown token"):
			// The SDK's own race, not mcp-route's: it runs notification
			// handlers a microtask late and has dropped the call's progress
			// handler when its response came in the same read.
		case strings.HasPrefix(e, "SSE stream disconnected: AbortError"):
			// Over HTTP, the v1 SDK aborting its own GET stream on close.
		default:
			t.Errorf("the client reported an error: %s", e)
		}
	}
	return r
}

// nodePlan is interopRouteCalls and the calls in flight as a client.mjs
// plan, and the index of the parallel step.
func nodePlan(calls []interopCall) ([]map[string]any, int) {
	var plan []map[string]any
	for _, c := range calls {
		plan = append(plan, map[string]any{"call": c.name, "arguments": c.args})
	}
	var par []map[string]any
	for i := range interopParallel {
		par = append(par, map[string]any{"call": "echo", "arguments": map[string]any{"text": parallelText(i)}})
	}
	return append(plan, map[string]any{"parallel": par}), len(plan)
}

func TestInteropRouteTypeScript(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v2       bool
		flags    []string
		era, rev string // what the connection must negotiate
	}{
		// v1 always initializes, with its newest revision.
		{"sdk-v1", false, []string{"--sdk", "v1"}, "legacy", codec.Rev20251125},
		// v2 auto probes with server/discover and must pick the modern era.
		{"client-v2-auto", true, []string{"--sdk", "v2", "--mode", "auto"}, "modern", codec.Rev20260728},
		{"client-v2-legacy", true, []string{"--sdk", "v2", "--mode", "legacy"}, "legacy", codec.Rev20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, _ := interopRouteTools(t)
			calls := interopRouteCalls()
			plan, par := nodePlan(calls)
			r := runRouteClient(t, tc.v2, tools, plan, tc.flags...)
			c := r.connected
			t.Logf("%s: era %s, protocol version %s", tc.name, c.Era, c.ProtocolVersion)
			if c.Era != tc.era || c.ProtocolVersion != tc.rev || c.ServerInfo.Name != "mcp-route" {
				t.Errorf("connected %+v, want era %s, version %s, mcp-route", c, tc.era, tc.rev)
			}
			if tc.era == "modern" {
				// The probe ran on a sibling process, off the wire log:
				// check the DiscoverResult the client kept.
				if err := spectest.Check(t, codec.Rev20260728, "DiscoverResult", c.Discover); err != nil {
					t.Errorf("DiscoverResult invalid: %v\n%s", err, c.Discover)
				}
				var d struct{ SupportedVersions []string }
				if json.Unmarshal(c.Discover, &d) != nil || !slices.Equal(d.SupportedVersions, codec.Revisions) {
					t.Errorf("discover: supportedVersions %v, want %v", d.SupportedVersions, codec.Revisions)
				}
			}
			var names []string
			for _, tool := range r.tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, interopRouteToolNames) {
				t.Errorf("tools %v, want %v", names, interopRouteToolNames)
			}
			checkEchoTool(t, c.ProtocolVersion, r.tools)
			var got, parallel []outcome
			for i := range calls {
				got = append(got, r.steps[i].outcome())
			}
			for _, s := range r.steps[par].Results {
				parallel = append(parallel, s.outcome())
			}
			checkOutcomes(t, calls, got, parallel)
			checkWire(t, c.ProtocolVersion, r.wire)
		})
	}
}

// TestInteropRouteTypeScriptListChanged: a TypeScript host with a tool
// list handler (as real hosts register) adds a tool while connected. A
// legacy session hears of it through notifications/tools/list_changed; a
// modern one through the same notification on the subscriptions/listen
// stream the v2 client opens for its listChanged handler.
func TestInteropRouteTypeScriptListChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		v2     bool
		flags  []string
		notify bool // whether the handler must be called
	}{
		{"sdk-v1", false, []string{"--sdk", "v1"}, true},
		{"client-v2-legacy", true, []string{"--sdk", "v2", "--mode", "legacy"}, true},
		{"client-v2-auto", true, []string{"--sdk", "v2", "--mode", "auto"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, _ := interopRouteTools(t)
			wait := int(waitLong / time.Millisecond)
			plan := []map[string]any{{"rename": []string{".hello", "hello"}}}
			if tc.notify {
				plan = append(plan, map[string]any{"waitListChanged": wait})
			} else {
				plan = append(plan, map[string]any{"listUntil": "hello", "timeoutMs": wait})
			}
			plan = append(plan, map[string]any{"call": "hello"}, map[string]any{"call": "crash"}, map[string]any{"call": "hello"})
			r := runRouteClient(t, tc.v2, tools, plan, append(tc.flags, "--list-changed")...)
			s := r.steps[1]
			if tc.notify && (s.Changed == nil || !*s.Changed) {
				t.Fatalf("the listChanged handler was not called after a tool was added: %+v", s)
			}
			if !slices.ContainsFunc(s.Tools, func(tool codec.Tool) bool { return tool.Name == "hello" }) {
				t.Errorf("hello not listed after the change: %+v", s.Tools)
			}
			for i, check := range []func(outcome) string{wantText("hello\n"), wantIsError("SIGSEGV"), wantText("hello\n")} {
				if problem := check(r.steps[2+i].outcome()); problem != "" {
					t.Errorf("step %d: %s; got %v", 2+i, problem, r.steps[2+i].outcome())
				}
			}
			checkWire(t, r.connected.ProtocolVersion, r.wire)
		})
	}
}

// TestInteropRouteTypeScriptProgressCancel: progress on fd 3 reaches the
// TypeScript clients, and a call the client aborts (at its first progress
// notification) is killed, not answered, and the connection goes on.
func TestInteropRouteTypeScriptProgressCancel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v2    bool
		flags []string
		ping  bool // 2026-07-28 has no ping: v2 refuses to send it
	}{
		{"sdk-v1", false, []string{"--sdk", "v1"}, true},
		{"client-v2-auto", true, []string{"--sdk", "v2", "--mode", "auto"}, false},
		{"client-v2-legacy", true, []string{"--sdk", "v2", "--mode", "legacy"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, _ := interopRouteTools(t)
			plan := []map[string]any{
				{"call": "steps", "progress": true},
				{"call": "hang", "cancelOnProgress": true},
				{"call": "echo", "arguments": map[string]any{"text": "after cancel"}},
			}
			if tc.ping {
				plan = append(plan, map[string]any{"ping": true})
			}
			r := runRouteClient(t, tc.v2, tools, plan, tc.flags...)
			if problem := wantText("done\n")(r.steps[0].outcome()); problem != "" {
				t.Errorf("steps: %s; got %v", problem, r.steps[0].outcome())
			}
			if got := wireProgress(t, r.wire, "steps"); !slices.Equal(got, []float64{1, 2, 3}) {
				t.Errorf("progress %v, want 1 2 3", got)
			}
			if s := r.steps[1]; s.Error == nil {
				t.Errorf("hang: got %v, want the call aborted", s.outcome())
			}
			if problem := wantText("after cancel")(r.steps[2].outcome()); problem != "" {
				t.Errorf("echo after cancel: %s; got %v", problem, r.steps[2].outcome())
			}
			if tc.ping && !r.steps[3].Pong {
				t.Errorf("ping: %+v", r.steps[3])
			}
			checkCancelled(t, r.wire, "hang")
			checkWire(t, r.connected.ProtocolVersion, r.wire)
		})
	}
}

// TestInteropRouteTypeScriptPages: with two tools a page, the TypeScript
// clients get every tool by following nextCursor (v2 gathers the pages
// itself).
func TestInteropRouteTypeScriptPages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v2    bool
		flags []string
		pages int // listAll's requests: v2's first listTools gathers them all
	}{
		{"sdk-v1", false, []string{"--sdk", "v1"}, 3},
		{"client-v2-auto", true, []string{"--sdk", "v2", "--mode", "auto"}, 1},
		{"client-v2-legacy", true, []string{"--sdk", "v2", "--mode", "legacy"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, _ := interopRouteTools(t)
			plan := []map[string]any{{"listAll": true}, {"call": "greet", "arguments": map[string]any{"name": "Cy"}}}
			r := runRouteClient(t, tc.v2, tools, plan, append(tc.flags, "--route-arg", "--page-size", "--route-arg", "2")...)
			var names []string
			for _, tool := range r.steps[0].Tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, interopRouteToolNames) || r.steps[0].Pages != tc.pages {
				t.Errorf("tools %v in %d pages, want %v in %d", names, r.steps[0].Pages, interopRouteToolNames, tc.pages)
			}
			if problem := wantText("Hello, Cy!")(r.steps[1].outcome()); problem != "" {
				t.Errorf("greet: %s; got %v", problem, r.steps[1].outcome())
			}
			checkWire(t, r.connected.ProtocolVersion, r.wire)
		})
	}
}
