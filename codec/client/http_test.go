package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// fakeHTTP is a Streamable HTTP server for the transport's rules: it records
// the headers of every request and answers with answer(method, msg, w).
type fakeHTTP struct {
	mu   sync.Mutex
	seen []http.Header // per request, with "X-Method" set to the HTTP method + MCP method
	srv  *httptest.Server
}

func newFakeHTTP(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, m *codec.Message)) *fakeHTTP {
	f := &fakeHTTP{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m codec.Message
		_ = json.Unmarshal(body, &m)
		h := r.Header.Clone()
		h.Set("X-Method", r.Method+" "+m.Method)
		f.mu.Lock()
		f.seen = append(f.seen, h)
		f.mu.Unlock()
		answer(w, r, &m)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHTTP) requests() []http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]http.Header(nil), f.seen...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func result(id *codec.ID, v any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": v}
}

func TestHTTPLegacySession(t *testing.T) {
	f := newFakeHTTP(t, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case m.Method == codec.MethodDiscover:
			http.Error(w, "Bad Request: missing session id", http.StatusBadRequest)
		case m.Method == codec.MethodInitialize:
			w.Header().Set("Mcp-Session-Id", "sess-1")
			writeJSON(w, 200, result(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "fake", "version": "1"}}))
		case m.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		case m.Method == codec.MethodPing:
			// SSE, with a keepalive comment and CRLF line ends.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, ": keepalive\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\r\n\r\n", m.ID)
		}
	})
	hdr := http.Header{"Authorization": {"Bearer tok"}}
	conn, info, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{Header: hdr}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != EraLegacy || !strings.Contains(info.Probe, "HTTP 400") {
		t.Errorf("info: %+v", info)
	}
	if err := conn.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	reqs := f.requests()
	var got []string
	for _, h := range reqs {
		got = append(got, fmt.Sprintf("%s sid=%s v=%s auth=%s", h.Get("X-Method"), h.Get("Mcp-Session-Id"), h.Get("Mcp-Protocol-Version"), h.Get("Authorization")))
	}
	want := []string{
		"POST server/discover sid= v=2026-07-28 auth=Bearer tok",
		"POST initialize sid= v= auth=Bearer tok",
		"POST notifications/initialized sid=sess-1 v=2025-06-18 auth=Bearer tok",
		"POST ping sid=sess-1 v=2025-06-18 auth=Bearer tok",
		"DELETE  sid=sess-1 v=2025-06-18 auth=Bearer tok",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if a := reqs[0].Get("Accept"); a != "application/json, text/event-stream" {
		t.Errorf("Accept %q", a)
	}
	select {
	case <-conn.Done():
	default:
		t.Error("Done not closed after Close")
	}
}

// modernServer answers discover, tools/list (tools) and tools/call (echo of
// the name) as a 2026-07-28 server would.
func modernServer(tools string, call func(w http.ResponseWriter, r *http.Request, m *codec.Message)) func(http.ResponseWriter, *http.Request, *codec.Message) {
	return func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		switch m.Method {
		case codec.MethodDiscover:
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}}))
		case codec.MethodToolsList:
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "tools": json.RawMessage(tools)}))
		default:
			call(w, r, m)
		}
	}
}

func TestHTTPModernHeaders(t *testing.T) {
	tools := `[
	 {"name":"q","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"opt":{"type":"boolean","x-mcp-header":"Opt"}}}},
	 {"name":"bad","inputSchema":{"type":"object","properties":{"f":{"type":"number","x-mcp-header":"F"}}}},
	 {"name":"nested","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"X"}}}}}}}
	]`
	f := newFakeHTTP(t, modernServer(tools, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "ok"}}}))
	}))
	var warnings []string
	conn, info, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{}, Options{OnWarning: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if info.Era != EraModern {
		t.Fatalf("era %s", info.Era)
	}
	listed, err := conn.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The spec: a definition with an invalid x-mcp-header is left out,
	// with a warning naming it; the valid one stays.
	if len(listed) != 1 || listed[0].Name != "q" || len(warnings) != 2 ||
		!strings.Contains(warnings[0], `"bad"`) || !strings.Contains(warnings[0], "type number") ||
		!strings.Contains(warnings[1], `"nested"`) || !strings.Contains(warnings[1], "properties alone") {
		t.Fatalf("tools %+v, warnings %q", listed, warnings)
	}
	args := json.RawMessage(`{"region":"Hello, 世界","n":42.0,"opt":false}`)
	if _, _, err := conn.CallTool(context.Background(), "q", args, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := conn.CallTool(context.Background(), "ünï", json.RawMessage(`{"region":null}`), CallOptions{}); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	call := reqs[len(reqs)-2]
	for k, want := range map[string]string{
		"Mcp-Protocol-Version": "2026-07-28",
		"Mcp-Method":           "tools/call",
		"Mcp-Name":             "q",
		"Mcp-Param-Region":     "=?base64?SGVsbG8sIOS4lueVjA==?=", // the spec's own example
		"Mcp-Param-N":          "42",
		"Mcp-Param-Opt":        "false",
		"Mcp-Session-Id":       "",
	} {
		if got := call.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	last := reqs[len(reqs)-1]
	if got := last.Get("Mcp-Name"); got != "=?base64?w7xuw68=?=" {
		t.Errorf("Mcp-Name of a non-ASCII name: %q", got)
	}
	if _, ok := last["Mcp-Param-Region"]; ok {
		t.Errorf("a null argument got a header: %v", last)
	}
}

func TestHTTPErrors(t *testing.T) {
	var mode string
	f := newFakeHTTP(t, modernServer(`[{"name":"t","inputSchema":{"type":"object"}}]`, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		switch mode {
		case "mismatch":
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32020, "message": "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"}})
		case "noid":
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "parse error"}})
		case "401":
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			http.Error(w, "missing token", http.StatusUnauthorized)
		case "401rpc", "403rpc":
			// A JSON-RPC error in the body does not hide the status.
			writeJSON(w, map[string]int{"401rpc": 401, "403rpc": 403}[mode], map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32600, "message": "unauthorized: send a token"}})
		case "502":
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		case "cut":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		case "202":
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	conn, _, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(m string) error {
		mode = m
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _, err := conn.CallTool(ctx, "t", nil, CallOptions{})
		return err
	}
	var rpc *codec.Error
	if err := call("mismatch"); !errors.As(err, &rpc) || rpc.Code != -32020 {
		t.Errorf("header mismatch: %v", err)
	}
	if err := call("noid"); !errors.As(err, &rpc) || rpc.Code != -32700 {
		t.Errorf("error without id: %v", err)
	}
	var he *HTTPError
	if err := call("401"); !errors.As(err, &he) || he.StatusCode != 401 || !strings.Contains(err.Error(), `WWW-Authenticate: Bearer realm="mcp"`) || errors.Is(err, ErrUnreachable) {
		t.Errorf("401: %v", err)
	}
	for _, m := range []string{"401rpc", "403rpc"} {
		if err := call(m); !errors.As(err, &he) || he.StatusCode != map[string]int{"401rpc": 401, "403rpc": 403}[m] || !strings.Contains(err.Error(), "unauthorized: send a token") || errors.As(err, &rpc) {
			t.Errorf("%s: %v, want an HTTPError with the body", m, err)
		}
	}
	if err := call("502"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("502: %v", err)
	}
	if err := call("cut"); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "ended before the response") {
		t.Errorf("stream cut: %v", err)
	}
	var pe *ProtocolError
	if err := call("202"); !errors.As(err, &pe) {
		t.Errorf("202 to a request: %v", err)
	}
	// After all that, the connection still serves.
	mode = "mismatch"
	if err := call("mismatch"); !errors.As(err, &rpc) {
		t.Errorf("afterwards: %v", err)
	}
}

func TestNewHTTPRefusesBadURL(t *testing.T) {
	for _, u := range []string{"ftp://x/mcp", "localhost:8080/mcp", "http:///mcp"} {
		if _, err := NewHTTP(u, HTTPOptions{}, Options{}); err == nil || !strings.Contains(err.Error(), "want http://") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, err := NewHTTP("http://127.0.0.1:1/mcp", HTTPOptions{}, Options{}); err != nil {
		t.Errorf("a good URL: %v", err)
	}
}

// Many calls in flight on one Client: each POST's answer (SSE with a
// progress notification, or JSON) reaches its own caller.
func TestHTTPConcurrentCalls(t *testing.T) {
	f := newFakeHTTP(t, modernServer(`[{"name":"t","inputSchema":{"type":"object"}}]`, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		var p struct {
			Arguments struct{ N int } `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		res := result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": fmt.Sprint(p.Arguments.N)}}})
		if p.Arguments.N%2 == 0 {
			writeJSON(w, 200, res)
			return
		}
		b, _ := json.Marshal(res)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%d,\"progress\":1}}\n\n: keepalive\n\ndata: %s\n\n", p.Arguments.N, b)
	}))
	var progress sync.Map
	conn, _, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{}, Options{OnNotification: func(m *codec.Message) {
		var p codec.ProgressParams
		_ = json.Unmarshal(m.Params, &p)
		progress.Store(fmt.Sprint(p.ProgressToken), true)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _, err := conn.CallTool(context.Background(), "t", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), CallOptions{ProgressToken: i})
			switch {
			case err != nil:
				errs <- err
			case res.Text() != fmt.Sprint(i):
				errs <- fmt.Errorf("call %d answered %q", i, res.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	progress.Range(func(any, any) bool { n++; return true })
	if n != 100 {
		t.Errorf("progress for %d calls, want the 100 answered over SSE", n)
	}
}

// legacyWithStream answers a 2025-06-18 session; its GET stream is get.
func legacyWithStream(get func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, *codec.Message) {
	return func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		switch {
		case r.Method == http.MethodGet:
			get(w, r)
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case m.Method == codec.MethodDiscover:
			http.Error(w, "Bad Request: missing session id", http.StatusBadRequest)
		case m.Method == codec.MethodInitialize:
			w.Header().Set("Mcp-Session-Id", "sess-9")
			writeJSON(w, 200, result(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}}, "serverInfo": map[string]any{"name": "fake", "version": "1"}}))
		case m.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		}
	}
}

// A legacy server announces a change outside any request, on the GET
// stream: with StandaloneStream the client hears it, even when the server
// ends the stream and a reopened one carries the news.
func TestHTTPStandaloneStream(t *testing.T) {
	var gets sync.Mutex
	n := 0
	f := newFakeHTTP(t, legacyWithStream(func(w http.ResponseWriter, r *http.Request) {
		gets.Lock()
		n++
		first := n == 1
		gets.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		if first {
			return // the server drops the first stream at once
		}
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	heard := make(chan string, 4)
	conn, _, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{StandaloneStream: true}, Options{
		OnNotification: func(m *codec.Message) { heard <- m.Method },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case m := <-heard:
		if m != "notifications/tools/list_changed" {
			t.Errorf("heard %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification from the GET stream within 10s")
	}
	for _, h := range f.requests() {
		if strings.HasPrefix(h.Get("X-Method"), "GET") {
			if h.Get("Mcp-Session-Id") != "sess-9" || h.Get("Mcp-Protocol-Version") != "2025-06-18" || h.Get("Accept") != "text/event-stream" {
				t.Errorf("GET headers: sid=%q v=%q accept=%q", h.Get("Mcp-Session-Id"), h.Get("Mcp-Protocol-Version"), h.Get("Accept"))
			}
		}
	}
}

// A server without a GET stream answers 405: the client asks once, not in
// a loop, and works as before; without StandaloneStream it never asks.
func TestHTTPStandaloneStreamRefused(t *testing.T) {
	for _, want := range []bool{true, false} {
		f := newFakeHTTP(t, legacyWithStream(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusMethodNotAllowed)
		}))
		var mu sync.Mutex
		var warned []string
		conn, _, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{StandaloneStream: want}, Options{
			OnWarning: func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() },
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // past two retry waits
		conn.Close()
		gets := 0
		for _, h := range f.requests() {
			if strings.HasPrefix(h.Get("X-Method"), "GET") {
				gets++
			}
		}
		if wantGets := map[bool]int{true: 1, false: 0}[want]; gets != wantGets {
			t.Errorf("StandaloneStream=%v: %d GETs, want %d", want, gets, wantGets)
		}
		mu.Lock()
		if len(warned) > 0 {
			t.Errorf("StandaloneStream=%v: warnings %q for a 405", want, warned)
		}
		mu.Unlock()
	}
}

// A hostile or broken server that answers every GET with an empty stream
// and hangs up is not hammered: the waits between tries double (250 ms,
// 500 ms, 1 s, ...), so 1.5 s hold at most 4 GETs, however fast the
// server answers; calls keep working meanwhile.
func TestHTTPStandaloneStreamBacksOff(t *testing.T) {
	f := newFakeHTTP(t, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		if r.Method == http.MethodPost && m.Method == codec.MethodPing {
			writeJSON(w, 200, result(m.ID, map[string]any{}))
			return
		}
		legacyWithStream(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
		})(w, r, m)
	})
	conn, _, err := DialHTTP(context.Background(), f.srv.URL, HTTPOptions{StandaloneStream: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := conn.Ping(context.Background()); err != nil {
		t.Errorf("ping while the GET stream flaps: %v", err)
	}
	conn.Close()
	gets := 0
	for _, h := range f.requests() {
		if strings.HasPrefix(h.Get("X-Method"), "GET") {
			gets++
		}
	}
	if gets > 4 { // TestHTTPStandaloneStream shows that GETs are made at all
		t.Errorf("%d GETs in 1.5s from a server that hangs up at once; want at most 4", gets)
	}
}

// TestHTTPRedirectNotFollowed: an endpoint that redirects, to another
// origin or to plain http, gets the request and its headers only; the
// caller gets an error naming where it pointed, and the target sees
// nothing (neither the secret header nor the body). The same endpoint
// without the redirect serves.
func TestHTTPRedirectNotFollowed(t *testing.T) {
	target := newFakeHTTP(t, modernServer(`[{"name":"t","inputSchema":{"type":"object"}}]`, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
		writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "content": []any{}}))
	}))
	hdr := http.Header{"X-Api-Key": {"k-secret"}}
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirector := newFakeHTTP(t, func(w http.ResponseWriter, r *http.Request, m *codec.Message) {
			http.Redirect(w, r, target.srv.URL+"/mcp", status)
		})
		_, _, err := DialHTTP(context.Background(), redirector.srv.URL, HTTPOptions{Header: hdr}, Options{})
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != status || !strings.Contains(err.Error(), `redirect to "`+target.srv.URL+`/mcp" not followed`) {
			t.Errorf("%d: %v, want an HTTPError naming the Location", status, err)
		}
		if got := redirector.requests(); len(got) != 1 || got[0].Get("X-Api-Key") != "k-secret" {
			t.Errorf("%d: the endpoint got %v, want the one request", status, got)
		}
	}
	if got := target.requests(); len(got) != 0 {
		t.Fatalf("the redirect target got %d requests: %v", len(got), got)
	}
	conn, _, err := DialHTTP(context.Background(), target.srv.URL, HTTPOptions{Header: hdr}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, _, err := conn.CallTool(context.Background(), "t", nil, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := target.requests(); len(got) < 2 || got[len(got)-1].Get("X-Api-Key") != "k-secret" {
		t.Errorf("the endpoint itself: %v", got)
	}
}
