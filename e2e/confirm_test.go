package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/router"
)

// mcp-route --confirm: a call of a gated tool runs only once the user
// approved it by elicitation; declined, unanswered, or a client that
// cannot be asked: isError, and nothing ran (the file the tool would
// write is not there).

// confirmTools writes "wipe" (no annotations: destructive by the MCP
// defaults), which writes ran-TAG in the root, and "look" (read-only).
func confirmTools(f *fixture) {
	f.tool("wipe", def("wipe", `{"type":"object","properties":{"tag":{"type":"string"}},"required":["tag"]}`, ""), `echo wiped > "ran-$MCP_ARG_TAG"
echo "wiped $MCP_ARG_TAG"`)
	f.tool("look", def("look", "", "", `"annotations":{"readOnlyHint":true}`), `echo looked`)
}

func ran(f *fixture, tag string) bool {
	_, err := os.Stat(filepath.Join(f.root, "ran-"+tag))
	return err == nil
}

// approver answers approval questions with action, keeping each message.
type approver struct {
	action  string
	approve bool
	mu      sync.Mutex
	asked   []string
}

func (a *approver) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.mu.Lock()
		a.asked = append(a.asked, r.Params.Message)
		a.mu.Unlock()
		res := &mcp.ElicitResult{Action: a.action}
		if a.action == "accept" {
			res.Content = map[string]any{"approve": a.approve}
		}
		return res, nil
	}}
}

func TestConfirmGoSDK(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFixture(t)
			confirmTools(f)
			connect := func(ctx context.Context, copts *mcp.ClientOptions) *mcp.ClientSession {
				if transport == "http" {
					return goSDKHTTP(t, ctx, startRouteHTTP(t, f.tools, f.root, "--confirm", "destructive").url, copts, codec.LatestLegacyRevision)
				}
				cs, _, _, err := goSDKRoute(t, ctx, f.tools, f.root, copts, &mcp.ClientSessionOptions{ProtocolVersion: codec.LatestLegacyRevision}, "--confirm", "destructive")
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			for _, tc := range []struct {
				name    string
				client  *approver // nil: no elicitation handler, so no capability
				tag     string
				wantRun bool
				want    string
			}{
				{"approves", &approver{action: "accept", approve: true}, "a", true, "wiped a"},
				{"declines", &approver{action: "decline"}, "b", false, "not run: tool wipe needs the user's approval (--confirm), and the user answered decline"},
				{"cancels", &approver{action: "cancel"}, "c", false, "the user answered cancel"},
				{"accepts-without-approving", &approver{action: "accept", approve: false}, "d", false, "the user did not approve it"},
				{"cannot-elicit", nil, "e", false, "this client cannot be asked: it did not declare the elicitation capability"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), waitLong)
					defer cancel()
					var copts *mcp.ClientOptions
					if tc.client != nil {
						copts = tc.client.options()
					}
					cs := connect(ctx, copts)
					defer cs.Close()
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wipe", Arguments: map[string]any{"tag": tc.tag}})
					if err != nil {
						t.Fatal(err)
					}
					got := res.Content[0].(*mcp.TextContent).Text
					if res.IsError == tc.wantRun || !strings.Contains(got, tc.want) {
						t.Errorf("result isError=%v %q, want isError=%v with %q", res.IsError, got, !tc.wantRun, tc.want)
					}
					if ran(f, tc.tag) != tc.wantRun {
						t.Errorf("the tool ran: %v, want %v", ran(f, tc.tag), tc.wantRun)
					}
					if tc.client != nil {
						digest := router.ArgsDigest("wipe", []byte(`{"tag":"`+tc.tag+`"}`))
						if len(tc.client.asked) != 1 || !strings.Contains(tc.client.asked[0], "wipe") ||
							!strings.Contains(tc.client.asked[0], `{"tag":"`+tc.tag+`"}`) || !strings.Contains(tc.client.asked[0], digest) {
							t.Errorf("questions %q: want one naming wipe, its arguments and %s", tc.client.asked, digest)
						}
					}
					// A read-only tool is not gated.
					if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "look"}); err != nil {
						t.Fatal(err)
					}
					if tc.client != nil && len(tc.client.asked) != 1 {
						t.Errorf("the read-only tool was gated: %q", tc.client.asked)
					}
				})
			}
		})
	}
}

// A 2026-07-28 request cannot be asked (no input_required yet): isError,
// nothing ran. --confirm names a tool: only it is gated.
func TestConfirmModernAndNamed(t *testing.T) {
	f := newFixture(t)
	confirmTools(f)
	s := f.start("--confirm", "look")
	var r codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "look",
		"_meta": map[string]any{codec.MetaClientCapabilities: map[string]any{"elicitation": map[string]any{}}}}), &r)
	wantErr(t, &r, "not run: tool look needs the user's approval", "input_required")
	var r2 codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "wipe", "arguments": map[string]any{"tag": "m"}}), &r2)
	wantOK(t, &r2, "wiped m")
	if !strings.Contains(s.stderr.String(), "call not approved: nothing ran") {
		t.Errorf("the refusal is not logged:\n%s", s.stderr.String())
	}
}

// Over HTTP an approval is the answer to one question of one session:
// replayed for a later call (other arguments), from another session, or
// after the question expired, it runs nothing.
func TestConfirmHTTPApprovalBound(t *testing.T) {
	f := newFixture(t)
	confirmTools(f)
	url := startRouteHTTP(t, f.tools, f.root, "--confirm", "wipe", "--confirm-timeout", "2s").url
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
		resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+codec.LatestLegacyRevision+`","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"e2e","version":"1"}}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
		return sid
	}
	type stream struct {
		resp *http.Response
		r    *bufio.Reader
	}
	call := func(sid, id, tag string) *stream {
		resp := post(sid, `{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"wipe","arguments":{"tag":"`+tag+`"}}}`)
		t.Cleanup(func() { resp.Body.Close() })
		return &stream{resp, bufio.NewReader(resp.Body)}
	}
	next := func(s *stream) *codec.Message {
		t.Helper()
		for {
			line, err := s.r.ReadString('\n')
			if err != nil {
				t.Fatalf("SSE stream ended: %v", err)
			}
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				var m codec.Message
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatal(err)
				}
				return &m
			}
		}
	}
	answer := func(q *codec.Message, approve bool) string {
		id, _ := json.Marshal(q.ID)
		a := "false"
		if approve {
			a = "true"
		}
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"approve":` + a + `}}}`
	}
	result := func(s *stream) *codec.CallToolResult {
		t.Helper()
		m := next(s)
		var r codec.CallToolResult
		if m.Method != "" || json.Unmarshal(m.Result, &r) != nil {
			t.Fatalf("got %+v, want the call's result", m)
		}
		return &r
	}
	a, b := session(), session()

	// Call 1 (tag one) is approved and runs.
	s1 := call(a, "c1", "one")
	q1 := next(s1)
	if q1.Method != codec.MethodElicit || !strings.Contains(string(q1.Params), `{\"tag\":\"one\"}`) {
		t.Fatalf("first event %+v, want the approval question for tag one", q1)
	}
	post(a, answer(q1, true)).Body.Close()
	wantOK(t, result(s1), "wiped one")

	// Call 2 (tag two): the approval of call 1 replayed, and an approval
	// from session b for call 2's own question, run nothing; call 2's
	// question then expires.
	s2 := call(a, "c2", "two")
	q2 := next(s2)
	post(a, answer(q1, true)).Body.Close()
	post(b, answer(q2, true)).Body.Close()
	r := result(s2)
	wantErr(t, r, "not run", "no answer came within 2s")
	if ran(f, "two") {
		t.Error("call 2 ran on a replayed or foreign approval")
	}
	// Its approval, once expired, is an answer nobody waits for.
	if resp := post(a, answer(q2, true)); resp.StatusCode != http.StatusAccepted {
		t.Errorf("late approval: %s", resp.Status)
	}
	if ran(f, "two") {
		t.Error("call 2 ran on an approval that came after its question expired")
	}
}
