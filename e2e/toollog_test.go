package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// A tool's log records (the tool channel, fd 3) reach the client as
// notifications/message at or above the level it asked for: with
// logging/setLevel in a legacy session, per request with _meta logLevel in
// 2026-07-28, and nothing when it asked for none.

// chattyTool logs at three levels, one record with a logger of its own,
// and one record whose level is no LoggingLevel (dropped, logged).
const chattyTool = `echo '{"level":"debug","data":"fine detail"}' >&3
echo '{"level":"info","message":"started","logger":"db"}' >&3
echo '{"level":"warning","data":{"disk":"low"}}' >&3
echo '{"level":"loud","data":"x"}' >&3
echo done`

// logNotes returns the notifications/message params in notes.
func logNotes(t *testing.T, notes []*codec.Message) []codec.LoggingMessageParams {
	t.Helper()
	var out []codec.LoggingMessageParams
	for _, m := range notes {
		if m.Method != codec.MethodLoggingMessage {
			continue
		}
		var p codec.LoggingMessageParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatalf("notifications/message params %s: %v", m.Params, err)
		}
		out = append(out, p)
	}
	return out
}

func levelsOf(ps []codec.LoggingMessageParams) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Level+" "+p.Logger+" "+string(p.Data))
	}
	return out
}

func TestToolLoggingStdio(t *testing.T) {
	f := newFixture(t)
	f.tool("chatty", def("chatty", "", ""), chattyTool)
	s := f.start()
	init := s.initialize(codec.Rev20250618)
	if string(init.Capabilities.Logging) != "{}" {
		t.Errorf("initialize capabilities.logging = %s, want {}", init.Capabilities.Logging)
	}
	// No level set: no record.
	wantOK(t, s.callTool("chatty", nil), "done")
	if got := logNotes(t, s.notes); len(got) != 0 {
		t.Errorf("records before logging/setLevel: %v", levelsOf(got))
	}
	// A level that is no LoggingLevel is refused, naming the choices.
	s.raw(`{"jsonrpc":"2.0","id":"loud","method":"logging/setLevel","params":{"level":"loud"}}`)
	if e := s.rpcError(codec.StringID("loud")); e.Code != codec.CodeInvalidParams || !strings.Contains(e.Message, "warning") {
		t.Errorf("setLevel loud: %d %s", e.Code, e.Message)
	}
	var empty map[string]any
	s.result(s.request(s.rev, codec.MethodLoggingSetLevel, map[string]any{"level": "info"}), &empty)
	if len(empty) != 0 {
		t.Errorf("setLevel result %v, want {}", empty)
	}
	s.notes = nil
	wantOK(t, s.callTool("chatty", nil), "done")
	want := []string{`info chatty/db "started"`, `warning chatty {"disk":"low"}`}
	if got := levelsOf(logNotes(t, s.notes)); !slices.Equal(got, want) {
		t.Errorf("at info: records %q, want %q", got, want)
	}
	if !strings.Contains(s.stderr.String(), "channel line ignored") {
		t.Errorf("the record with level loud was not reported in the log:\n%s", s.stderr.String())
	}
	// 2026-07-28: the level is the request's; without one, no record.
	s.notes = nil
	var r codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "chatty",
		"_meta": map[string]any{codec.MetaLogLevel: "warning"}}), &r)
	if got := levelsOf(logNotes(t, s.notes)); !slices.Equal(got, want[1:]) {
		t.Errorf("modern at warning: records %q, want %q", got, want[1:])
	}
	s.notes = nil
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "chatty"}), &r)
	if got := logNotes(t, s.notes); len(got) != 0 {
		t.Errorf("modern without logLevel: records %v", levelsOf(got))
	}
	// logging/setLevel is gone from 2026-07-28.
	s.raw(`{"jsonrpc":"2.0","id":"m","method":"logging/setLevel","params":{"level":"debug","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if e := s.rpcError(codec.StringID("m")); e.Code != codec.CodeMethodNotFound {
		t.Errorf("modern setLevel: %d %s, want -32601", e.Code, e.Message)
	}
}

// A flood of records is cut at router.MaxLogRecords per call, and the call
// still answers.
func TestToolLoggingFlood(t *testing.T) {
	f := newFixture(t)
	// The sleep: the channel is drained for --drain only once the tool
	// exits, and a slow machine may not have read 1500 lines by then.
	f.tool("flood", def("flood", "", ""), `i=0; while [ $i -lt 1500 ]; do echo '{"level":"error","data":"x"}'; i=$((i+1)); done >&3
sleep 2
echo done`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	var empty map[string]any
	s.result(s.request(s.rev, codec.MethodLoggingSetLevel, map[string]any{"level": "debug"}), &empty)
	wantOK(t, s.callTool("flood", nil), "done")
	if n := len(logNotes(t, s.notes)); n != 1000 {
		t.Errorf("%d records, want the first 1000", n)
	}
	// The record is written before the answer, but reaches the test's
	// buffer through a pipe of its own: it may come a moment later.
	proctest.Eventually(t, func() string {
		if l := s.stderr.String(); !strings.Contains(l, `msg="call: log records past the limit dropped" tool=flood`) || !strings.Contains(l, "dropped=500 limit=1000") {
			return "no log line about the dropped records:\n" + l
		}
		return ""
	})
}

// logCollector gathers what the Go SDK client's LoggingMessageHandler gets.
type logCollector struct {
	mu   sync.Mutex
	recs []string
}

func (c *logCollector) handler(_ context.Context, r *mcp.LoggingMessageRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(r.Params.Data)
	c.recs = append(c.recs, string(r.Params.Level)+" "+r.Params.Logger+" "+string(b))
}

func (c *logCollector) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.recs
	c.recs = nil
	return out
}

// The Go SDK client, over stdio and over --http: the level set by one
// request applies to the calls after it (over HTTP: to the later POSTs of
// the session), and the records arrive before the call's result.
func TestToolLoggingGoSDK(t *testing.T) {
	f := newFixture(t)
	f.tool("chatty", def("chatty", "", ""), chattyTool)
	want := []string{`info chatty/db "started"`, `warning chatty {"disk":"low"}`}
	connect := map[string]func(t *testing.T, ctx context.Context, copts *mcp.ClientOptions) *mcp.ClientSession{
		"stdio": func(t *testing.T, ctx context.Context, copts *mcp.ClientOptions) *mcp.ClientSession {
			cs, _, _, err := goSDKRoute(t, ctx, f.tools, f.root, copts, &mcp.ClientSessionOptions{ProtocolVersion: codec.LatestLegacyRevision})
			if err != nil {
				t.Fatal(err)
			}
			return cs
		},
		"http": func(t *testing.T, ctx context.Context, copts *mcp.ClientOptions) *mcp.ClientSession {
			return goSDKHTTP(t, ctx, startReplicaHTTP(t, f.tools, f.root).url, copts, codec.LatestLegacyRevision)
		},
	}
	for name, conn := range connect {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			defer cancel()
			var logs logCollector
			cs := conn(t, ctx, &mcp.ClientOptions{LoggingMessageHandler: logs.handler})
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chatty"}); err != nil {
				t.Fatal(err)
			}
			if got := logs.take(); len(got) != 0 {
				t.Errorf("records before setLevel: %q", got)
			}
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chatty"})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			// The records were sent before the result; the handler may run
			// a moment later.
			deadline := time.Now().Add(5 * time.Second)
			var got []string
			for len(got) < len(want) && time.Now().Before(deadline) {
				got = append(got, logs.take()...)
				time.Sleep(10 * time.Millisecond)
			}
			if !slices.Equal(got, want) {
				t.Errorf("records %q, want %q", got, want)
			}
		})
	}
}

// startRouteHTTP starts one mcp-route --http replica with a session key
// of its own and extra flags.
func startReplicaHTTP(t *testing.T, tools, root string, extra ...string) *routeReplica {
	t.Helper()
	key := filepath.Join(t.TempDir(), "session-key")
	k := make([]byte, 48)
	rand.Read(k)
	if err := os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startRouteReplica(t, tools, root, key, extra...)
}

// goSDKHTTP connects the Go SDK client over Streamable HTTP in a legacy
// revision (rev "" for its default).
func goSDKHTTP(t *testing.T, ctx context.Context, url string, copts *mcp.ClientOptions, rev string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-gosdk", Version: "1.0.0"}, copts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("Go SDK client: connect to %s: %v", url, err)
	}
	return cs
}
