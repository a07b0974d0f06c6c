package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
)

// A tool asks the user (elicitation) or the model (sampling) through its
// channel: the question on fd 3, the answer on fd 4. mcp-route asks the
// client on the call's own stream, and refuses, with a clear answer to
// the tool, what the client did not declare.

// askTools writes the asking tools: each prints the answer line it read.
func askTools(f *fixture) {
	f.tool("ask_name", def("ask_name", "", ""), `printf '%s\n' '{"ask":"elicitation/create","id":"q1","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}' >&3
read -r answer <&4
printf 'answer: %s' "$answer"`)
	f.tool("ask_model", def("ask_model", "", ""), `printf '%s\n' '{"ask":"sampling/createMessage","id":7,"params":{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":20}}' >&3
read -r answer <&4
printf 'answer: %s' "$answer"`)
	f.tool("ask_url", def("ask_url", "", ""), `printf '%s\n' '{"ask":"elicitation/create","params":{"mode":"url","message":"Sign in","url":"https://example.com/login","elicitationId":"e1"}}' >&3
read -r answer <&4
printf 'answer: %s' "$answer"`)
	f.tool("ask_bad", def("ask_bad", "", ""), `printf '%s\n' '{"ask":"elicitation/create","params":{"requestedSchema":{}}}' >&3
read -r answer <&4
printf 'answer: %s' "$answer"`)
}

// askingClient answers every question and counts them.
type askingClient struct {
	elicits, samples atomic.Int32
}

func (a *askingClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			a.elicits.Add(1)
			if r.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			a.samples.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "hi there"}}, nil
		},
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
			Sampling:    &mcp.SamplingCapabilities{},
		},
	}
}

func callText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError || len(res.Content) == 0 {
		b, _ := json.Marshal(res)
		t.Fatalf("call %s: %s", name, b)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestToolAsksGoSDK(t *testing.T) {
	f := newFixture(t)
	askTools(f)
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
			var a askingClient
			cs := conn(t, ctx, a.options())
			defer cs.Close()
			if got, want := callText(t, ctx, cs, "ask_name"), `answer: {"id":"q1","result":{"action":"accept","content":{"name":"Ada"}}}`; got != want {
				t.Errorf("elicitation: %s, want %s", got, want)
			}
			got := callText(t, ctx, cs, "ask_model")
			if !strings.HasPrefix(got, `answer: {"id":7,"result":{`) || !strings.Contains(got, `"hi there"`) || !strings.Contains(got, `"model":"test-model"`) {
				t.Errorf("sampling: %s", got)
			}
			if got, want := callText(t, ctx, cs, "ask_url"), `answer: {"result":{"action":"decline"}}`; got != want {
				t.Errorf("url elicitation: %s, want %s", got, want)
			}
			// A question that is not valid MCP never reaches the client.
			if got := callText(t, ctx, cs, "ask_bad"); !strings.Contains(got, `"error":"the question is not valid: `) || !strings.Contains(got, "message") {
				t.Errorf("bad question: %s", got)
			}
			if e, s := a.elicits.Load(), a.samples.Load(); e != 2 || s != 1 {
				t.Errorf("the client was asked %d elicitations and %d samplings, want 2 and 1", e, s)
			}
		})
	}
}

// A client that declared neither capability is asked nothing, and the
// tool is told why; a form-only client is not asked in url mode.
func TestToolAsksRefused(t *testing.T) {
	f := newFixture(t)
	askTools(f)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	// No handlers: the SDK declares neither capability.
	cs, wire, _, err := goSDKRoute(t, ctx, f.tools, f.root, nil, &mcp.ClientSessionOptions{ProtocolVersion: codec.LatestLegacyRevision})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for tool, want := range map[string]string{
		"ask_name":  `answer: {"id":"q1","error":"cannot ask the client for elicitation (form mode): the client did not declare that capability"}`,
		"ask_model": `answer: {"id":7,"error":"cannot ask the client for sampling: the client did not declare that capability"}`,
	} {
		if got := callText(t, ctx, cs, tool); got != want {
			t.Errorf("%s: %s, want %s", tool, got, want)
		}
	}
	if w := wire.String(); strings.Contains(w, codec.MethodElicit) || strings.Contains(w, codec.MethodCreateMessage) {
		t.Errorf("the client was asked although it declared nothing:\n%s", w)
	}

	// Over the raw stdio harness: a form-only client, 2025-06-18 (no url
	// mode in that revision), and a 2026-07-28 request.
	s := f.start()
	s.rev = codec.Rev20250618
	s.nextID++
	id := codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodInitialize, s.rev}
	init, _ := codec.NewRequest(id, codec.MethodInitialize, map[string]any{
		"protocolVersion": codec.Rev20250618,
		"capabilities":    map[string]any{"elicitation": map[string]any{}},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1.0.0"},
	})
	s.send(init, s.rev)
	var ir codec.InitializeResult
	s.result(id, &ir)
	s.notify(codec.MethodInitialized, nil)
	wantOK(t, s.callTool("ask_url", nil), "cannot ask the client for elicitation (url mode): the session's protocol revision 2025-06-18 does not have it")
	var r codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "ask_name",
		"_meta": map[string]any{codec.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{}}}}), &r)
	wantOK(t, &r, "input_required result, which mcp-route does not offer yet")
}

// The answer to a question over HTTP is routed by session: an answer
// POSTed by another session, or without one, reaches nothing, and the
// tool gets the answer of the session whose call asked.
func TestToolAskHTTPAnswerBoundToSession(t *testing.T) {
	f := newFixture(t)
	askTools(f)
	url := startReplicaHTTP(t, f.tools, f.root).url
	post := func(sid string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", codec.LatestLegacyRevision)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	session := func() string {
		t.Helper()
		resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+codec.LatestLegacyRevision+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize: no session id (%s)", resp.Status)
		}
		resp = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp.Body.Close()
		return sid
	}
	a, b := session(), session()
	call := post(a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_name"}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	next := func() *codec.Message {
		t.Helper()
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("SSE stream of the call ended: %v", err)
			}
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				var m codec.Message
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				return &m
			}
		}
	}
	q := next()
	if q.Method != codec.MethodElicit || q.ID == nil {
		t.Fatalf("first event %+v, want an elicitation/create request", q)
	}
	answer := func(name string) string {
		id, _ := json.Marshal(q.ID)
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"name":"` + name + `"}}}`
	}
	for _, sid := range []string{b, ""} {
		resp := post(sid, answer("Mallory"))
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("answer from session %q: %s, want 202", sid, resp.Status)
		}
	}
	resp := post(a, answer("Ada"))
	resp.Body.Close()
	m := next()
	var r codec.CallToolResult
	if m.ID == nil || json.Unmarshal(m.Result, &r) != nil {
		t.Fatalf("second event %+v, want the call's result", m)
	}
	wantOK(t, &r, `"name":"Ada"`)
	if strings.Contains(text(&r), "Mallory") {
		t.Errorf("another session's answer reached the tool: %s", text(&r))
	}
	// A replayed answer, after the question was answered, reaches nothing.
	resp = post(a, answer("Mallory"))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("replayed answer: %s", resp.Status)
	}
}

// A worker (run.mode worker) logs and asks through its protocol:
// {"id":N,"channel":LINE} out, {"answer":N,"line":ANSWER} in. This one is
// a shell loop serving one call at a time.
func TestWorkerLogsAndAsks(t *testing.T) {
	f := newFixture(t)
	f.tool("wtool", def("wtool", "", `{"mode":"worker"}`), `while IFS= read -r line; do
  id=${line#\{\"id\":}; id=${id%%,*}
  printf '{"id":%s,"channel":{"level":"warning","data":"from a worker"}}\n' "$id"
  printf '{"id":%s,"channel":{"ask":"elicitation/create","id":1,"params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}\n' "$id"
  IFS= read -r answer
  esc=$(printf '%s' "$answer" | sed 's/\\/\\\\/g; s/"/\\"/g')
  printf '{"id":%s,"output":"%s"}\n' "$id" "$esc"
done`)
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var a askingClient
	var logs logCollector
	copts := a.options()
	copts.LoggingMessageHandler = logs.handler
	cs, _, _, err := goSDKRoute(t, ctx, f.tools, f.root, copts, &mcp.ClientSessionOptions{ProtocolVersion: codec.LatestLegacyRevision})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ { // the second call goes to the same worker
		got := callText(t, ctx, cs, "wtool")
		if !strings.HasPrefix(got, `{"answer":`) || !strings.HasSuffix(got, `,"line":{"id":1,"result":{"action":"accept","content":{"name":"Ada"}}}}`) {
			t.Errorf("call %d: %s", i, got)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	var recs []string
	for len(recs) < 2 && time.Now().Before(deadline) {
		recs = append(recs, logs.take()...)
		time.Sleep(10 * time.Millisecond)
	}
	if len(recs) != 2 || recs[0] != `warning wtool "from a worker"` {
		t.Errorf("records %q, want two from the worker", recs)
	}
}
