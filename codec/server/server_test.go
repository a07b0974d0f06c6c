package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/servertest"
)

// wait bounds every wait for the server: a hung server fails the test.
const wait = servertest.Wait

// conv is one conversation with a Server over in-memory pipes.
type conv struct {
	*servertest.Pipe
	t   *testing.T
	srv *Server
}

// start serves srv (built by setup) over in-memory pipes.
func start(t *testing.T, opts Options, setup func(*Server)) *conv {
	t.Helper()
	log := &servertest.Log{}
	opts.ServerInfo = codec.Implementation{Name: "core-test", Version: "1"}
	opts.Logger = log.Logger()
	c := &conv{t: t, srv: New(opts)}
	if setup != nil {
		setup(c.srv)
	}
	c.Pipe = servertest.Start(t, log, func(in io.Reader, out io.Writer) error {
		return c.srv.Serve(context.Background(), NewStreamConn(in, out, 0))
	})
	return c
}

type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *codec.Error    `json:"error"`
}

func (c *conv) recv() msg {
	c.t.Helper()
	l := c.Recv()
	var m msg
	if err := json.Unmarshal(l, &m); err != nil {
		c.t.Fatalf("bad line %s: %v", l, err)
	}
	return m
}

// drain closes the input and returns every remaining line.
func (c *conv) drain() []msg {
	c.t.Helper()
	var out []msg
	for _, l := range c.CloseAndDrain() {
		var m msg
		json.Unmarshal(l, &m)
		out = append(out, m)
	}
	return out
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

func req(id, method string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + meta + `}}`
}

// blocking registers "block": it reports its ctx's cause on causes and
// answers "released" when release is closed.
func blocking(release chan struct{}, causes chan error) func(*Server) {
	return func(s *Server) {
		s.HandleFunc("block", func(ctx context.Context, r *Request) (any, error) {
			select {
			case <-release:
				return map[string]string{"said": "released"}, nil
			case <-ctx.Done():
				causes <- context.Cause(ctx)
				return map[string]string{"said": "stopped"}, nil
			}
		})
	}
}

// TestPingWhileAHandlerWaits: a request whose handler waits does not hold
// up a ping or a server/discover read after it.
func TestPingWhileAHandlerWaits(t *testing.T) {
	release := make(chan struct{})
	c := start(t, Options{}, blocking(release, make(chan error, 1)))
	c.Send(req("1", "block"), req("2", "ping"), req("3", "server/discover"))
	for _, want := range []string{"2", "3"} {
		if m := c.recv(); string(m.ID) != want || m.Error != nil {
			t.Fatalf("want the answer to %s first, got %+v", want, m)
		}
	}
	close(release)
	if m := c.recv(); string(m.ID) != "1" || !strings.Contains(string(m.Result), "released") {
		t.Fatalf("want the blocked request's answer, got %+v", m)
	}
}

// TestCancel: notifications/cancelled cancels the handler's ctx with
// ErrCancelled, nothing is answered, and the id may be used again.
func TestCancel(t *testing.T) {
	causes := make(chan error, 2)
	c := start(t, Options{}, blocking(make(chan struct{}), causes))
	c.Send(req(`"a"`, "block"), req(`"a"`, "block"))
	if m := c.recv(); m.Error == nil || m.Error.Code != codec.CodeInvalidRequest || string(m.ID) != `"a"` {
		t.Fatalf("an id in flight: want -32600, got %+v", m)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"enough"}}`)
	select {
	case err := <-causes:
		if !errors.Is(err, ErrCancelled) {
			t.Errorf("cause %v, want ErrCancelled", err)
		}
	case <-time.After(wait):
		t.Fatal("the handler's ctx was not cancelled")
	}
	c.Send(req("2", "ping"))
	if m := c.recv(); string(m.ID) != "2" {
		t.Fatalf("want the ping answer (nothing for the cancelled request), got %+v", m)
	}
	// A fresh id: "a" leaves the in-flight set only after its handler
	// returned, which may still be under way (then a second "a" is refused
	// as in flight and its cancel finds nothing: this test hung in CI).
	c.Send(req(`"b"`, "block"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
	select {
	case <-causes:
	case <-time.After(wait):
		t.Fatal("a request cancelled right behind it: the handler's ctx was not cancelled")
	}
	if rest := c.drain(); len(rest) != 0 {
		t.Errorf("lines after cancelled requests: %+v", rest)
	}
}

// TestLimit: beyond a Method's Limit a request is refused at once with
// Refuse's answer; first is true once per busy spell.
func TestLimit(t *testing.T) {
	release := make(chan struct{})
	var firsts []bool
	c := start(t, Options{}, func(s *Server) {
		blocking(release, make(chan error, 1))(s)
		m := s.methods["block"]
		m.Limit = 1
		m.Refuse = func(n int, first bool) (any, error) {
			firsts = append(firsts, first) // the read loop: no lock needed
			return nil, codec.Errorf(codec.CodeInternalError, "busy: %d in flight", n)
		}
		s.Handle("block", m)
	})
	c.Send(req("1", "block"), req("2", "block"), req("3", "block"))
	for _, id := range []string{"2", "3"} {
		if m := c.recv(); string(m.ID) != id || m.Error == nil || m.Error.Message != "busy: 1 in flight" {
			t.Fatalf("want %s refused, got %+v", id, m)
		}
	}
	close(release)
	if m := c.recv(); string(m.ID) != "1" {
		t.Fatalf("want the admitted request's answer, got %+v", m)
	}
	c.drain()
	if fmt.Sprint(firsts) != "[true false]" {
		t.Errorf("first flags %v, want [true false]", firsts)
	}
}

// TestShutdownGrace: at EOF a request that finishes within the grace is
// answered; one that does not has its ctx cancelled with ErrShutdown and
// its answer is still written.
func TestShutdownGrace(t *testing.T) {
	causes := make(chan error, 1)
	c := start(t, Options{Grace: 100 * time.Millisecond}, func(s *Server) {
		blocking(make(chan struct{}), causes)(s)
		s.HandleFunc("quick", func(ctx context.Context, r *Request) (any, error) {
			time.Sleep(20 * time.Millisecond)
			return struct{}{}, nil
		})
	})
	c.Send(req("1", "block"), req("2", "quick"))
	got := map[string]string{}
	for _, m := range c.drain() {
		got[string(m.ID)] = string(m.Result)
	}
	if len(got) != 2 || !strings.Contains(got["1"], "stopped") || got["2"] == "" {
		t.Errorf("answers at shutdown %v", got)
	}
	if err := <-causes; !errors.Is(err, ErrShutdown) {
		t.Errorf("cause %v, want ErrShutdown", err)
	}
}

// TestOutputClosed: when the client closes its end of an output pipe, the
// conversation ends at once, whatever the grace: the handlers' ctx is
// cancelled (ErrShutdown) and Serve returns nil. The input stays open.
func TestOutputClosed(t *testing.T) {
	causes := make(chan error, 1)
	s := New(Options{ServerInfo: codec.Implementation{Name: "t", Version: "1"}, Grace: time.Hour})
	blocking(make(chan struct{}), causes)(s)
	s.HandleFunc("started", func(ctx context.Context, r *Request) (any, error) { return struct{}{}, nil })
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outW.Close()
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), NewStreamConn(inR, outW, 0)) }()
	io.WriteString(inW, req("1", "block")+"\n"+req("2", "started")+"\n")
	r := codec.NewReader(outR, 0)
	if l, err := r.ReadFrame(); err != nil || !strings.Contains(string(l), `"id":2`) {
		t.Fatalf("want the answer to 2, got %s %v", l, err)
	}
	outR.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return after the output was closed")
	}
	if err := <-causes; !errors.Is(err, ErrShutdown) {
		t.Errorf("cause %v, want ErrShutdown", err)
	}
}

// failingWriter fails every write, as a closed socket would.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestWriteFailureEndsTheConversation: an output that fails a write (not a
// watched pipe) ends the conversation too; the log says why, once.
func TestWriteFailureEndsTheConversation(t *testing.T) {
	log := &servertest.Log{}
	s := New(Options{
		ServerInfo: codec.Implementation{Name: "t", Version: "1"},
		Logger:     log.Logger(),
	})
	inR, inW := io.Pipe()
	defer inW.Close()
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), NewStreamConn(inR, failingWriter{}, 0)) }()
	io.WriteString(inW, req("1", "ping")+"\n")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Serve did not return after a write failed")
	}
	var important []string
	for _, l := range log.Lines() {
		if !strings.HasPrefix(l, "debug: ") {
			important = append(important, l)
		}
	}
	if len(important) != 1 || !strings.Contains(important[0], "output closed: connection reset") {
		t.Errorf("log %q", important)
	}
}

// TestCallTheClient: Request.Call sends a request to the client and gets
// the response the read loop routes back by id.
func TestCallTheClient(t *testing.T) {
	c := start(t, Options{}, func(s *Server) {
		s.HandleFunc("ask", func(ctx context.Context, r *Request) (any, error) {
			ans, err := r.Call(ctx, "roots/list", nil)
			if err != nil {
				return nil, err
			}
			return map[string]json.RawMessage{"client": ans.Result}, nil
		})
	})
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.Send(`{"jsonrpc":"2.0","id":2,"method":"ask"}`)
	q := c.recv()
	if q.Method != "roots/list" || len(q.ID) == 0 {
		t.Fatalf("want a roots/list request, got %+v", q)
	}
	c.Send(`{"jsonrpc":"2.0","id":99,"result":{}}`) // answers nothing of ours
	c.Send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"roots":[]}}`)
	if m := c.recv(); string(m.ID) != "2" || string(m.Result) != `{"client":{"roots":[]}}` {
		t.Fatalf("want the answer carrying the client's, got %+v", m)
	}
}

// TestAbort: Abort ends the conversation without a grace and Serve returns
// its error.
func TestAbort(t *testing.T) {
	boom := errors.New("boom")
	c := start(t, Options{Grace: time.Hour}, func(s *Server) {
		s.HandleFunc("quit", func(ctx context.Context, r *Request) (any, error) {
			s.Abort(boom)
			return nil, ErrNoResponse
		})
	})
	c.Send(req("1", "quit"))
	if err := c.Wait(); !errors.Is(err, boom) {
		t.Errorf("Serve: %v, want boom", err)
	}
}

// TestListChangedBeforeInitialized: a legacy session hears of a change made
// between initialize and notifications/initialized once initialized; a
// modern subscription hears of it stamped with its id.
func TestListChangedBeforeInitialized(t *testing.T) {
	c := start(t, Options{Capabilities: codec.ServerCapabilities{Tools: &codec.ToolsCapability{ListChanged: true}}}, nil)
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.recv()
	c.Send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	if m := c.recv(); m.Method != codec.MethodSubscriptionsAcknowledged || strings.Contains(string(m.Params), "prompts") {
		t.Fatalf("want an acknowledgement of tools only, got %+v %s", m, m.Params)
	}
	c.srv.ListChanged(codec.MethodToolsListChanged)
	if m := c.recv(); m.Method != codec.MethodToolsListChanged || !strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":"l"`) {
		t.Fatalf("want the subscription's notification, got %+v", m)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if m := c.recv(); m.Method != codec.MethodToolsListChanged || m.Params != nil {
		t.Fatalf("want the legacy notification once initialized, got %+v", m)
	}
	rest := c.drain()
	if len(rest) != 1 || string(rest[0].ID) != `"l"` {
		t.Errorf("at shutdown want the listen answer, got %+v", rest)
	}
}

func TestHandleRefusesCoreMethods(t *testing.T) {
	for _, m := range []string{codec.MethodInitialize, codec.MethodSubscriptionsListen} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handle(%s) did not panic", m)
				}
			}()
			New(Options{}).HandleFunc(m, func(context.Context, *Request) (any, error) { return nil, nil })
		}()
	}
}
