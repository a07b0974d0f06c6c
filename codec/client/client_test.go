package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/fakeserver"
)

// pipeServer runs fakeserver in mode on in-process pipes and returns a
// client on them. The server ends when the client closes its stdin; the
// cleanup waits for it, so a leaked goroutine fails loudly as a hang caught
// by the test timeout.
func pipeServer(t *testing.T, mode string, opts Options) *Client {
	t.Helper()
	inR, inW := io.Pipe()   // client → server
	outR, outW := io.Pipe() // server → client
	done := make(chan error, 1)
	go func() {
		err := fakeserver.Serve(inR, outW, mode)
		// Like a process exiting: its stdout closes, its stdin is gone.
		outW.Close()
		inR.CloseWithError(io.ErrClosedPipe)
		done <- err
	}()
	c := New(outR, inW, opts)
	t.Cleanup(func() {
		c.CloseWrite()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("fake server did not end after stdin closed")
		}
		<-c.Done()
	})
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEraProbe(t *testing.T) {
	tests := []struct {
		mode, era, version string
		wantEra, wantVer   string
		wantProbe          string
	}{
		{"dual", "", "", EraModern, codec.Rev20260728, "server/discover answered"},
		{"dual", EraLegacy, "", EraLegacy, codec.LatestLegacyRevision, "no probe"},
		{"dual", EraAuto, codec.Rev20250618, EraLegacy, codec.Rev20250618, "no probe"},
		{"dual", EraModern, "", EraModern, codec.Rev20260728, "modern era requested"},
		{"legacy", "", "", EraLegacy, codec.LatestLegacyRevision, "-32601"},
		{"legacy-invalid", "", "", EraLegacy, codec.LatestLegacyRevision, "-32600"},
		{"legacy-params", "", "", EraLegacy, codec.LatestLegacyRevision, "-32602"},
		{"legacy-silent", "", "", EraLegacy, codec.LatestLegacyRevision, "no answer within"},
		{"unsupported", "", "", EraModern, codec.Rev20260728, "-32022"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+"/"+tt.era+tt.version, func(t *testing.T) {
			t.Parallel()
			c := pipeServer(t, tt.mode, Options{Era: tt.era, ProtocolVersion: tt.version, ProbeTimeout: 200 * time.Millisecond})
			ctx := ctxT(t)
			info, err := c.Connect(ctx)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if info.Era != tt.wantEra || info.ProtocolVersion != tt.wantVer {
				t.Errorf("era %s version %s, want %s %s", info.Era, info.ProtocolVersion, tt.wantEra, tt.wantVer)
			}
			if !strings.Contains(info.Probe, tt.wantProbe) {
				t.Errorf("Probe %q, want it to mention %q", info.Probe, tt.wantProbe)
			}
			if info.ServerInfo.Name != "fakeserver" {
				t.Errorf("ServerInfo %+v", info.ServerInfo)
			}
			// The connection works in the settled era.
			res, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), CallOptions{})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if res.Text() != "hi" {
				t.Errorf("Text %q", res.Text())
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
			if n := c.ProtocolErrors(); n != 0 {
				t.Errorf("%d protocol errors", n)
			}
		})
	}
}

func TestModernEraRefusesLegacyServer(t *testing.T) {
	c := pipeServer(t, "legacy", Options{Era: EraModern})
	_, err := c.Connect(ctxT(t))
	if !errors.Is(err, codec.ErrMethodNotFound) {
		t.Fatalf("Connect = %v, want a -32601 error", err)
	}
}

func TestPinnedModernVersionUnknownToServer(t *testing.T) {
	_, err := ResolveEra(EraLegacy, codec.Rev20260728)
	if err == nil {
		t.Error("ResolveEra(legacy, 2026-07-28) succeeded")
	}
	if _, err := ResolveEra("sideways", ""); err == nil {
		t.Error("ResolveEra(sideways) succeeded")
	}
	if _, err := ResolveEra("", "latest"); err == nil {
		t.Error("ResolveEra(version latest) succeeded")
	}
}

func TestProbeServerExits(t *testing.T) {
	c := pipeServer(t, "legacy-exit", Options{})
	_, err := c.Connect(ctxT(t))
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Connect = %v, want ErrClosed", err)
	}
}

func TestListToolsPaginates(t *testing.T) {
	for _, era := range []string{EraLegacy, EraModern} {
		t.Run(era, func(t *testing.T) {
			c := pipeServer(t, "dual", Options{Era: era})
			ctx := ctxT(t)
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != 12 || tools[0].Name != "echo" || tools[11].Name != "filler_3" {
				names := make([]string, len(tools))
				for i, tl := range tools {
					names[i] = tl.Name
				}
				t.Errorf("tools %v", names)
			}
		})
	}
}

func TestServerRequestsAnswered(t *testing.T) {
	c := pipeServer(t, "dual", Options{Era: EraLegacy})
	ctx := ctxT(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	res, _, err := c.CallTool(ctx, "ping_client", nil, CallOptions{})
	if err != nil || res.Text() != "client answered {}" {
		t.Errorf("ping_client: %v %v", res, err)
	}
	res, _, err = c.CallTool(ctx, "ask_roots", nil, CallOptions{})
	if err != nil || res.Text() != "client answered error -32601" {
		t.Errorf("ask_roots: %v %v", res, err)
	}
}

func TestProgressNotifications(t *testing.T) {
	var mu sync.Mutex
	var got []string
	c := pipeServer(t, "dual", Options{OnNotification: func(m *codec.Message) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.Method)
	}})
	ctx := ctxT(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CallTool(ctx, "progress", nil, CallOptions{ProgressToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != codec.MethodProgress {
		t.Errorf("notifications %v", got)
	}
}

func TestErrors(t *testing.T) {
	c := pipeServer(t, "dual", Options{})
	ctx := ctxT(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	res, _, err := c.CallTool(ctx, "fail", nil, CallOptions{})
	if err != nil || !res.IsError || res.ErrorMessage() != "it failed" {
		t.Errorf("fail: %+v %v", res, err)
	}
	_, _, err = c.CallTool(ctx, "nope", nil, CallOptions{})
	if !errors.Is(err, codec.ErrInvalidParams) {
		t.Errorf("unknown tool: %v, want -32602", err)
	}
	_, err = c.Request(ctx, "resources/list", nil)
	if !errors.Is(err, codec.ErrMethodNotFound) {
		t.Errorf("resources/list: %v, want -32601", err)
	}
	_, _, err = c.CallTool(ctx, "crash", nil, CallOptions{})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("crash: %v, want ErrClosed", err)
	}
	if _, _, err := c.CallTool(ctx, "echo", nil, CallOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("after crash: %v, want ErrClosed", err)
	}
}

func TestNoiseCounted(t *testing.T) {
	var reports []string
	var mu sync.Mutex
	c := pipeServer(t, "noise", Options{OnProtocolError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, err.Error())
	}})
	ctx := ctxT(t)
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"x"}`), CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if c.ProtocolErrors() < 2 {
		t.Errorf("ProtocolErrors = %d, want ≥ 2", c.ProtocolErrors())
	}
	mu.Lock()
	defer mu.Unlock()
	// Line 1 is the discover answer; the noise starts after it.
	if len(reports) == 0 || !strings.Contains(reports[0], "server stdout line 2") {
		t.Errorf("reports %q", reports)
	}
}

// TestNoiseDuringHandshake: a server that writes something other than MCP
// on stdout before it has answered the handshake fails Connect at once,
// with the line, in every era (no fallback, no wait for the context).
func TestNoiseDuringHandshake(t *testing.T) {
	for _, era := range []string{EraAuto, EraLegacy, EraModern} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			io.WriteString(outW, "Server v1.2 listening on stdio\n")
			io.Copy(io.Discard, inR) // reads on, answers nothing
			outW.Close()
		}()
		var reported []error
		c := New(outR, inW, Options{Era: era, OnProtocolError: func(err error) { reported = append(reported, err) }})
		_, err := c.Connect(ctxT(t))
		var pe *ProtocolError
		if !errors.As(err, &pe) || errors.Is(err, context.DeadlineExceeded) ||
			!strings.Contains(err.Error(), "server stdout line 1") || !strings.Contains(err.Error(), `"Server v1.2 listening on stdio"`) {
			t.Errorf("era %s: Connect = %v, want a ProtocolError naming line 1 and its text", era, err)
		}
		c.CloseWrite()
		<-c.Done()
		if len(reported) != 0 {
			t.Errorf("era %s: the line was also reported as later noise: %v", era, reported)
		}
	}
}

func TestContextCancelSendsCancelled(t *testing.T) {
	// A server that reads but never answers: the request must end with the
	// context, and a notifications/cancelled must follow it.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer outW.Close()
	c := New(outR, inW, Options{Era: EraLegacy})
	got := make(chan string, 4)
	go func() {
		r := codec.NewReader(inR, 0)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				return
			}
			m, err := codec.DecodeMessage(f)
			if err == nil {
				got <- m.Method
			}
		}
	}()
	// Pretend the handshake happened.
	c.info = &Info{Era: EraLegacy, ProtocolVersion: codec.LatestLegacyRevision}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Request(ctx, codec.MethodToolsList, nil)
		errc <- err
	}()
	if m := <-got; m != codec.MethodToolsList {
		t.Fatalf("first message %q", m)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Request = %v, want context.Canceled", err)
	}
	if m := <-got; m != codec.MethodCancelled {
		t.Errorf("then %q, want notifications/cancelled", m)
	}
	inW.Close()
	outW.Close()
	<-c.Done()
}

func TestWithMeta(t *testing.T) {
	raw, err := withMeta(codec.CallToolParams{Name: "x", Meta: map[string]json.RawMessage{"progressToken": json.RawMessage(`1`)}},
		map[string]json.RawMessage{codec.MetaProtocolVersion: json.RawMessage(`"2026-07-28"`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1},"name":"x"}`
	if !sameJSON(raw, want) {
		t.Errorf("got %s\nwant %s", raw, want)
	}
	// Any other params go through JSON; the params' own _meta keys win.
	raw, err = withMeta(map[string]any{"cursor": "c", "_meta": map[string]any{"a": 1}},
		map[string]json.RawMessage{"a": json.RawMessage(`2`), "b": json.RawMessage(`3`)})
	if err != nil || !sameJSON(raw, `{"cursor":"c","_meta":{"a":1,"b":3}}`) {
		t.Errorf("map params: %s %v", raw, err)
	}
	raw, err = withMeta(codec.CallToolParams{Name: "x", Meta: map[string]json.RawMessage{"a": json.RawMessage(`1`)}},
		map[string]json.RawMessage{"a": json.RawMessage(`2`)})
	if err != nil || !sameJSON(raw, `{"name":"x","_meta":{"a":1}}`) {
		t.Errorf("CallToolParams' own _meta key: %s %v", raw, err)
	}
}

// sameJSON compares JSON values, whatever the order of object keys.
func sameJSON(a []byte, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestWriteBlockedByServerTimesOut(t *testing.T) {
	// A server that never reads its stdin: a request bigger than the pipe
	// buffer blocks in write, and the context must still end it.
	inR, inW := io.Pipe() // io.Pipe has no buffer: every write blocks
	outR, outW := io.Pipe()
	c := New(outR, inW, Options{})
	c.info = &Info{Era: EraLegacy, ProtocolVersion: codec.LatestLegacyRevision}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Request(ctx, codec.MethodToolsList, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Request = %v, want DeadlineExceeded", err)
	}
	inR.Close()
	outW.Close()
	<-c.Done()
}

// TestAnswerOverFrame: a server that answers with a line longer than
// MaxFrame, its id first or last, gets that request failed at once with an
// error naming the size (not a wait for the context); a line that long
// with no id to be read is a protocol error. The line is skipped, and the
// answers after it, to another request in flight and to the next one, are
// read.
func TestAnswerOverFrame(t *testing.T) {
	const limit = 1000
	pad := strings.Repeat("x", 3*limit)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	received := make(chan string, 10)
	go func() {
		defer outW.Close()
		r := codec.NewReader(inR, 0)
		var held string // the id of "held", answered after the next big one
		for {
			f, err := r.ReadFrame()
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(f, &m)
			received <- m.Method
			id := string(m.ID)
			var lines []string
			switch m.Method {
			case "held":
				held = id
			case "early":
				lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"result":{"t":"`+pad+`"}}`)
			case "late":
				lines = append(lines, `{"result":{"t":"`+pad+`"},"jsonrpc":"2.0","id":`+id+`}`)
			case "junk":
				lines = append(lines, pad, `{"jsonrpc":"2.0","id":`+id+`,"result":{"after":"junk"}}`)
			default:
				lines = append(lines, `{"jsonrpc":"2.0","id":`+id+`,"result":{"ok":true}}`)
			}
			if held != "" && m.Method != "held" {
				lines = append(lines, `{"jsonrpc":"2.0","id":`+held+`,"result":{"held":true}}`)
				held = ""
			}
			io.WriteString(outW, strings.Join(lines, "\n")+"\n")
		}
	}()
	var mu sync.Mutex
	var reports []string
	c := New(outR, inW, Options{MaxFrame: limit, OnProtocolError: func(err error) {
		mu.Lock()
		reports = append(reports, err.Error())
		mu.Unlock()
	}})
	c.info = &Info{Era: EraLegacy, ProtocolVersion: codec.LatestLegacyRevision}
	t.Cleanup(func() {
		c.CloseWrite()
		<-c.Done()
	})
	ctx := ctxT(t)

	heldDone := make(chan error, 1)
	go func() {
		raw, err := c.Request(ctx, "held", nil)
		if err == nil && string(raw) != `{"held":true}` {
			err = errors.New("held: " + string(raw))
		}
		heldDone <- err
	}()
	<-received
	for _, method := range []string{"early", "late"} {
		_, err := c.Request(ctx, method, nil)
		var fe *codec.FrameTooLargeError
		var pe *ProtocolError
		if !errors.As(err, &fe) || !errors.As(err, &pe) || fe.Limit != limit || fe.Size < 3*limit || !strings.Contains(err.Error(), "frame limit") {
			t.Errorf("%s: %v, want a ProtocolError wrapping a FrameTooLargeError", method, err)
		}
		<-received
		if method == "early" {
			if err := <-heldDone; err != nil {
				t.Errorf("the request in flight beside it: %v", err)
			}
		}
	}
	if raw, err := c.Request(ctx, "junk", nil); err != nil || string(raw) != `{"after":"junk"}` {
		t.Errorf("the answer after a junk line: %s %v", raw, err)
	}
	if raw, err := c.Request(ctx, "ok", nil); err != nil || string(raw) != `{"ok":true}` {
		t.Errorf("the next request: %s %v", raw, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || !strings.Contains(reports[0], "server stdout line") || !strings.Contains(reports[0], "frame too large") || c.ProtocolErrors() != 1 {
		t.Errorf("protocol errors %q (%d), want one for the junk line", reports, c.ProtocolErrors())
	}
}

// TestWriteStall: with WriteTimeout, a server that reads nothing of its
// stdin fails the request stuck in its write, the one waiting behind it
// and any later one with ErrWriteStalled, long before their contexts end,
// and OnWriteStall is called once.
func TestWriteStall(t *testing.T) {
	inR, inW := io.Pipe() // io.Pipe has no buffer: every write waits for a read
	outR, outW := io.Pipe()
	stalls := make(chan error, 2)
	c := New(outR, inW, Options{WriteTimeout: 100 * time.Millisecond, OnWriteStall: func(err error) { stalls <- err }})
	c.info = &Info{Era: EraLegacy, ProtocolVersion: codec.LatestLegacyRevision}
	ctx := ctxT(t)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := c.Request(ctx, codec.MethodToolsList, nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrWriteStalled) {
			t.Errorf("Request = %v, want ErrWriteStalled", err)
		}
	}
	if err := <-stalls; !errors.Is(err, ErrWriteStalled) {
		t.Errorf("OnWriteStall(%v)", err)
	}
	if _, err := c.Request(ctx, codec.MethodToolsList, nil); !errors.Is(err, ErrWriteStalled) {
		t.Errorf("a later Request = %v, want ErrWriteStalled", err)
	}
	if len(stalls) != 0 {
		t.Error("OnWriteStall called twice")
	}
	inR.Close()
	outW.Close()
	<-c.Done()
}
