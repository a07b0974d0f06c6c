package router

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// listenLine is a 2026-07-28 subscriptions/listen request.
func listenLine(id, filter string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + modernMeta() + `,"notifications":` + filter + `}}`
}

func modernListLine(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{` + modernMeta() + `}}`
}

// subMsg is a server line of a subscription: the notification's params or
// the listen result, decoded.
type subMsg struct {
	msg
	notifications map[string]any  // params.notifications of an acknowledgement
	subID         json.RawMessage // _meta subscriptionId of the params or the result
	hasMeta       bool            // params or result carried _meta
}

// recvSub reads the next line, checks it against the 2026-07-28 schema
// (the generic check and the definition of its kind), and decodes it.
func recvSub(h *harness) subMsg {
	h.t.Helper()
	return decodeSub(h.t, h.recv())
}

func decodeSub(t *testing.T, l []byte) subMsg {
	t.Helper()
	var m subMsg
	if err := json.Unmarshal(l, &m.msg); err != nil {
		t.Fatalf("bad line %s: %v", l, err)
	}
	body := m.Params
	def := ""
	switch {
	case m.Method == codec.MethodSubscriptionsAcknowledged:
		def = "SubscriptionsAcknowledgedNotification"
	case m.Method == codec.MethodToolsListChanged:
		def = "ToolListChangedNotification"
	case m.Method == "" && m.Result != nil:
		def, body = "SubscriptionsListenResultResponse", m.Result
	}
	if def != "" {
		t.Run("schema", func(t *testing.T) {
			spectest.CheckServerMessage(t, codec.Rev20260728, codec.MethodSubscriptionsListen, l)
			spectest.Validate(t, codec.Rev20260728, def, l)
		})
	}
	var b struct {
		Notifications map[string]any             `json:"notifications"`
		Meta          map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(body, &b)
	m.notifications, m.hasMeta = b.Notifications, b.Meta != nil
	m.subID = b.Meta[codec.MetaSubscriptionID]
	return m
}

// TestSubscriptionLifecycle: acknowledged with what is honoured, a tool
// list change stamped with the subscription id, answered at shutdown.
func TestSubscriptionLifecycle(t *testing.T) {
	dir := helloDir(t)
	h := newHarness(t, dir, nil)
	h.rev = codec.Rev20260728
	h.send(listenLine(`"listen-1"`, `{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///x"]}`))
	ack := recvSub(h)
	if ack.Method != codec.MethodSubscriptionsAcknowledged || string(ack.subID) != `"listen-1"` {
		t.Fatalf("want the acknowledgement for listen-1, got %+v", ack)
	}
	if len(ack.notifications) != 1 || ack.notifications["toolsListChanged"] != true {
		t.Errorf("honoured %v, want only toolsListChanged", ack.notifications)
	}
	// The first read of the tools runs in the background and tools/list
	// waits for it: without this list, the tool added below could land
	// before that read, and there would be no change to announce.
	h.send(modernListLine("0"))
	if m := h.recvMsg("tools/list"); string(m.ID) != "0" {
		t.Fatalf("want the tools/list answer, got %+v", m)
	}
	// No polling here: tools/list re-reads the directory and finds the
	// change, which goes out on the subscription before the list.
	tool(t, dir, "added", `echo added`, simpleDef(""))
	h.send(modernListLine("1"))
	n := recvSub(h)
	if n.Method != codec.MethodToolsListChanged || string(n.subID) != `"listen-1"` {
		t.Fatalf("want list_changed for listen-1, got %+v", n)
	}
	if m := h.recvMsg("tools/list"); string(m.ID) != "1" {
		t.Fatalf("want the tools/list answer, got %+v", m)
	}
	// Nothing changed: no notification before this list.
	h.send(modernListLine("2"))
	if m := h.recvMsg("tools/list"); string(m.ID) != "2" {
		t.Fatalf("want the tools/list answer, got %+v", m)
	}
	lines := h.closeAndDrain()
	if len(lines) != 1 {
		t.Fatalf("at shutdown want one line (the listen answer), got %q", lines)
	}
	r := decodeSub(t, lines[0])
	if string(r.ID) != `"listen-1"` || r.Error != nil || string(r.subID) != `"listen-1"` {
		t.Fatalf("listen answer %s", lines[0])
	}
	var res struct {
		ResultType string `json:"resultType"`
	}
	json.Unmarshal(r.Result, &res)
	if res.ResultType != codec.ResultTypeComplete {
		t.Errorf("resultType %q", res.ResultType)
	}
	assertServerInfo(t, r.Result)
}

// TestSubscriptionFanOut: every subscription that asked for tool changes
// hears of one, each with its own id (byte for byte); the legacy session on
// the same stream gets its plain notification; a subscription that did not
// ask is told nothing.
func TestSubscriptionFanOut(t *testing.T) {
	dir := helloDir(t)
	h := newHarness(t, dir, func(o *Options) { o.Poll = 20 * time.Millisecond })
	h.initialize(codec.Rev20251125)
	h.rev = ""
	// The tools/list proves notifications/initialized was handled and
	// waits for the first load, so the change below is seen by the poll.
	h.send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	h.recvMsg("tools/list")
	h.send(listenLine(`"a"`, `{"toolsListChanged":true}`))
	h.send(listenLine(`7`, `{"toolsListChanged":true}`))
	h.send(listenLine(`"quiet"`, `{"resourcesListChanged":true}`))
	for _, want := range []string{`"a"`, `7`} {
		if m := recvSub(h); m.Method != codec.MethodSubscriptionsAcknowledged || string(m.subID) != want {
			t.Fatalf("want the acknowledgement for %s, got %+v", want, m)
		}
	}
	// Nothing to keep open for: acknowledged with nothing, answered at once.
	if m := recvSub(h); m.Method != codec.MethodSubscriptionsAcknowledged || string(m.subID) != `"quiet"` || len(m.notifications) != 0 {
		t.Fatalf("want an empty acknowledgement for quiet, got %+v", m)
	}
	if m := recvSub(h); string(m.ID) != `"quiet"` || m.Result == nil || string(m.subID) != `"quiet"` {
		t.Fatalf("want the answer to quiet, got %+v", m)
	}

	tool(t, dir, "added", `echo added`, simpleDef(""))
	var got []string
	for range 3 {
		l := h.recv()
		var m msg
		json.Unmarshal(l, &m)
		if m.Method != codec.MethodToolsListChanged {
			t.Fatalf("want list_changed, got %s", l)
		}
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Meta == nil {
			checkSchema(t, codec.Rev20251125, "", l)
			got = append(got, "legacy")
			continue
		}
		decodeSub(t, l)
		got = append(got, string(p.Meta[codec.MetaSubscriptionID]))
	}
	slices.Sort(got)
	if want := []string{`"a"`, `7`, `legacy`}; !slices.Equal(got, want) {
		t.Errorf("notified %v, want %v", got, want)
	}
	lines := h.closeAndDrain()
	var answered []string
	for _, l := range lines {
		m := decodeSub(t, l)
		answered = append(answered, string(m.ID))
	}
	slices.Sort(answered)
	if want := []string{`"a"`, `7`}; !slices.Equal(answered, want) {
		t.Errorf("answered at shutdown %v (%q), want %v", answered, lines, want)
	}
}

// TestSubscriptionCancel: a cancelled subscription is told nothing more and
// never answered; its id may then be used again.
func TestSubscriptionCancel(t *testing.T) {
	dir := helloDir(t)
	h := newHarness(t, dir, nil)
	h.rev = codec.Rev20260728
	h.send(listenLine(`"l"`, `{"toolsListChanged":true}`))
	recvSub(h)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l","reason":"done"}}`)
	tool(t, dir, "added", `echo added`, simpleDef(""))
	h.send(modernListLine("1"))
	if m := h.recvMsg("tools/list"); string(m.ID) != "1" {
		t.Fatalf("a cancelled subscription was notified: %+v", m)
	}
	// The id is free again.
	h.send(listenLine(`"l"`, `{"toolsListChanged":true}`))
	if m := recvSub(h); m.Method != codec.MethodSubscriptionsAcknowledged {
		t.Fatalf("want a new acknowledgement, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}`)
	h.send(modernListLine("2"))
	h.recvMsg("tools/list")
	for _, l := range h.closeAndDrain() {
		t.Errorf("nothing may follow a cancelled subscription, got %s", l)
	}
}

// TestSubscriptionRefused: the errors a listen can get, and the stream goes on.
func TestSubscriptionRefused(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.initialize(codec.Rev20251125)
	// A legacy session has no such method.
	h.send(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	if m := h.recvMsg(""); m.Error == nil || m.Error.Code != codec.CodeMethodNotFound || string(m.ID) != "1" {
		t.Errorf("legacy listen: want -32601, got %+v", m)
	}
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + modernMeta() + `}}`)
	if m := h.recvMsg(""); m.Error == nil || m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("no notifications: want -32602, got %+v", m)
	}
	h.send(listenLine(`"twice"`, `{"toolsListChanged":true}`))
	recvSub(h)
	h.send(listenLine(`"twice"`, `{"toolsListChanged":true}`))
	if m := h.recvMsg(""); m.Error == nil || m.Error.Code != codec.CodeInvalidRequest || string(m.ID) != `"twice"` {
		t.Errorf("id in use: want -32600, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"},"notifications":{}}}`)
	if m := h.recvMsg(""); m.Error == nil || m.Error.Code != codec.CodeUnsupportedVersion {
		t.Errorf("unknown version: want -32022, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + modernMeta() + `}}`)
	if m := h.recvMsg("server/discover"); m.Error != nil || string(m.ID) != "4" {
		t.Errorf("stream did not go on: %+v", m)
	}
}

// TestSubscriptionEndsOnSignal: when ctx is done (SIGTERM in mcp-route),
// an open subscription is answered before the pending calls are waited
// for, and a call killed after the grace is still answered.
func TestSubscriptionEndsOnSignal(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "hang", `echo >&3 '{"progress":1}'; trap '' TERM; sleep 30`, simpleDef(""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, inR, outW, Options{
			Registry:   registry.New(registry.Options{Dirs: []string{dir}, DescribeEnv: []string{"PATH=/usr/bin:/bin"}}),
			ServerInfo: codec.Implementation{Name: "test-route", Version: "1.2.3"},
			Root:       filepath.Clean(t.TempDir()),
			Env:        []string{"PATH=/usr/bin:/bin"},
			Grace:      100 * time.Millisecond,
			Poll:       -1,
		})
		outW.Close()
	}()
	lines := make(chan []byte, 10)
	go func() {
		r := codec.NewReader(outR, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	next := func() []byte {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("server output ended")
			}
			return l
		case <-time.After(recvTimeout):
			t.Fatal("no line from the server")
			return nil
		}
	}
	io.WriteString(inW, listenLine(`"s"`, `{"toolsListChanged":true}`)+"\n")
	if m := decodeSub(t, next()); m.Method != codec.MethodSubscriptionsAcknowledged {
		t.Fatalf("want the acknowledgement, got %+v", m)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"hang",`+modernMeta()[:len(modernMeta())-1]+`,"progressToken":1}}}`+"\n")
	next() // progress: the tool runs
	cancel()
	if m := decodeSub(t, next()); string(m.ID) != `"s"` || string(m.subID) != `"s"` {
		t.Fatalf("want the listen answer first, got %+v", m)
	}
	l := next()
	checkSchema(t, codec.Rev20260728, "tools/call", l)
	var m msg
	json.Unmarshal(l, &m)
	if string(m.ID) != `"c"` || !callResult(t, m).IsError {
		t.Errorf("want the call's shutdown result, got %s", l)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(recvTimeout):
		t.Fatal("Serve did not return after ctx was done")
	}
	if l, ok := <-lines; ok {
		t.Errorf("unexpected line after shutdown: %s", l)
	}
}
