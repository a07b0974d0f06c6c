package httpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/server"
)

// exchange is the server.Conn of one HTTP request: Read gives the request
// body once, then waits until every request in it has been answered (then
// io.EOF: the conversation ends with nothing in flight), for a
// notifications/cancelled routed to it, for the client to go away
// (ErrOutputClosed: the core cancels everything at once) or for the drain.
//
// Answers go out as one JSON body when the conversation ends, or as an SSE
// stream, chosen when the first message that needs it comes (a progress
// notification, a subscription's notification) or when the answer is late
// (keepalive): then comment lines keep proxies from timing the stream out.
// A GET stream (stream is true from the start) has no pending requests and
// ends only with the client or the drain.
type exchange struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	clientCtx context.Context
	body      []byte
	sseOK     bool // the client accepts text/event-stream
	keepalive time.Duration
	// forward tells which notifications this exchange carries: progress
	// always; list changes only on a GET stream or a subscription.
	carriesLists bool
	// sid is the legacy session the exchange belongs to ("" for none):
	// SessionID tells the Backend, which keys resource subscriptions by it.
	sid string

	read   bool        // the body was given out
	inject chan []byte // frames routed here from other requests (cancellation, answers)
	// ask, when set, registers a request to the client before it goes
	// out (back.go); its error refuses it. nil: no request can go out.
	ask func(id *codec.ID) error

	mu      sync.Mutex
	pending map[string]bool // request ids not answered yet
	done    chan struct{}   // closed when pending empties
	isDone  bool
	sse     bool // headers sent as text/event-stream
	header  func(http.Header)
	out     []*codec.Message // JSON mode: the answers, in order
	batch   bool             // JSON mode: answer with an array
	dead    bool             // a write failed or the exchange closed: nothing more goes out
	broken  chan struct{}    // closed when a write failed: the client is gone (or stopped reading)
	closed  chan struct{}
	closeMu sync.Once
	// keepaliveTimer sends the next keepalive comment (startKeepalive).
	keepaliveTimer *time.Timer
}

func newExchange(w http.ResponseWriter, r *http.Request, body []byte, pending map[string]bool, keepalive time.Duration) *exchange {
	x := &exchange{
		w:         w,
		rc:        http.NewResponseController(w),
		clientCtx: r.Context(),
		body:      body,
		sseOK:     accepts(r, "text/event-stream"),
		keepalive: keepalive,
		inject:    make(chan []byte, 8),
		pending:   pending,
		done:      make(chan struct{}),
		closed:    make(chan struct{}),
		broken:    make(chan struct{}),
	}
	if len(pending) == 0 && body != nil {
		x.isDone = true
		close(x.done)
	}
	return x
}

// startKeepalive switches a request still unanswered after the keepalive
// interval to SSE and sends a comment every interval until the exchange
// closes. A timer, not a goroutine: most requests are answered long
// before the first interval, and then cost no goroutine at all.
func (x *exchange) startKeepalive() {
	if x.keepalive <= 0 || !x.sseOK {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead {
		return
	}
	x.keepaliveTimer = time.AfterFunc(x.keepalive, x.sendKeepalive)
}

func (x *exchange) sendKeepalive() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead || x.clientCtx.Err() != nil {
		return
	}
	x.toSSE()
	x.emit([]byte(": keepalive\n\n"))
	x.keepaliveTimer.Reset(x.keepalive)
}

func (x *exchange) Read(ctx context.Context) ([]byte, error) {
	if !x.read {
		x.read = true
		if x.body != nil {
			return x.body, nil
		}
	}
	// A routed cancellation first: it empties pending, which closes done
	// right after it was queued, and must still reach the core.
	select {
	case f := <-x.inject:
		return f, nil
	default:
	}
	select {
	case f := <-x.inject:
		return f, nil
	case <-x.done:
		return nil, io.EOF
	case <-x.clientCtx.Done():
		return nil, fmt.Errorf("%w: the HTTP client went away", server.ErrOutputClosed)
	case <-x.broken:
		// A keepalive comment could not be written (the client stopped
		// reading, past the write deadline): the conversation ends now,
		// not at its next message.
		return nil, fmt.Errorf("%w: a write to the HTTP client failed", server.ErrOutputClosed)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-x.closed:
		return nil, errors.New("httpserve: read on a closed exchange")
	}
}

func (x *exchange) Write(_ context.Context, m *codec.Message) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead {
		return server.ErrOutputClosed
	}
	if m.IsResponse() {
		x.answered(m)
		if x.sse {
			return x.event(m)
		}
		x.out = append(x.out, m)
		return nil
	}
	if m.IsRequest() {
		// A question to the client: on this request's SSE stream, its
		// answer routed back by the session (back.go).
		if x.ask == nil || x.isDone {
			return server.ErrNoBackChannel
		}
		if err := x.ask(m.ID); err != nil {
			return err
		}
		x.toSSE()
		return x.event(m)
	}
	// A notification: only over SSE.
	if !x.carries(m) || !x.sseOK || x.isDone && !x.sse {
		return nil
	}
	x.toSSE()
	return x.event(m)
}

func (x *exchange) WriteBatch(_ context.Context, msgs []*codec.Message) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead {
		return server.ErrOutputClosed
	}
	for _, m := range msgs {
		x.answered(m)
	}
	if x.sse {
		b, err := json.Marshal(msgs)
		if err != nil {
			return err
		}
		return x.emit(sseData(b))
	}
	x.out = append(x.out, msgs...)
	x.batch = true
	return nil
}

// carries tells whether notification m belongs on this exchange.
// SessionID is the Mcp-Session-Id of the exchange's session, "" for a
// request without one: a Backend keeps what outlives one POST (resource
// subscriptions) by it.
func (x *exchange) SessionID() string { return x.sid }

func (x *exchange) carries(m *codec.Message) bool {
	// Notifications of no request (list changes, resource updates) go on
	// a GET stream or a subscription, never on another request's stream.
	if strings.HasSuffix(m.Method, "/list_changed") || m.Method == "notifications/resources/updated" {
		return x.carriesLists
	}
	return true
}

// answered takes m's id off the pending set; x.mu is held.
func (x *exchange) answered(m *codec.Message) {
	if m.ID != nil {
		delete(x.pending, m.ID.Key())
	}
	x.checkDone()
}

func (x *exchange) checkDone() {
	if len(x.pending) == 0 && !x.isDone && x.body != nil {
		x.isDone = true
		close(x.done)
	}
}

// forget takes a cancelled request off the pending set: the core sends
// nothing for it.
func (x *exchange) forget(key string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.pending, key)
	x.checkDone()
}

// toSSE sends the SSE headers once; x.mu is held.
func (x *exchange) toSSE() {
	if x.sse {
		return
	}
	x.sse = true
	h := x.w.Header()
	if x.header != nil {
		x.header(h)
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer this response
	x.w.WriteHeader(http.StatusOK)
	x.rc.Flush()
}

func sseData(b []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("event: message\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	return buf.Bytes()
}

// event writes m as one SSE event; x.mu is held.
func (x *exchange) event(m *codec.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return x.emit(sseData(b))
}

// emit writes and flushes; x.mu is held. A failed write means the client
// is gone, or stopped reading (the write deadline passed).
func (x *exchange) emit(b []byte) error {
	if x.dead {
		return server.ErrOutputClosed
	}
	_, err := x.w.Write(b)
	if err == nil {
		err = x.rc.Flush()
	}
	if err != nil {
		x.dead = true
		close(x.broken)
		return fmt.Errorf("%w: %w", server.ErrOutputClosed, err)
	}
	return nil
}

// Close ends the exchange: nothing more is written through it (a list
// change racing the end of its conversation finds it closed), and the HTTP
// handler may return.
func (x *exchange) Close() error {
	x.closeMu.Do(func() {
		x.mu.Lock()
		x.dead = true
		if x.keepaliveTimer != nil {
			x.keepaliveTimer.Stop()
		}
		x.mu.Unlock()
		close(x.closed)
	})
	return nil
}

// answers returns what JSON mode gathered, and whether the exchange went
// SSE (then everything was written already).
func (x *exchange) answers() (out []*codec.Message, batch, sse bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.out, x.batch, x.sse
}

// accepts reports whether r's Accept header lists mediaType (or a
// wildcard for it).
func accepts(r *http.Request, mediaType string) bool {
	major, _, _ := strings.Cut(mediaType, "/")
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			t, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			t = strings.TrimSpace(strings.ToLower(t))
			if t == mediaType || t == "*/*" || t == major+"/*" {
				return true
			}
		}
	}
	return false
}
