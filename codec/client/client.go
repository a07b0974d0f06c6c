// Package client is an MCP client over one stdio connection or over
// Streamable HTTP: the one client of the project, behind mcp-call and
// mcp-route's upstreams, usable by tests and other programs. It lives below
// the binaries, beside codec/server, so that mcp-call and mcp-route need not
// import each other.
//
// A Client reads the server's frames on one goroutine and matches responses
// to requests by id, so any number of requests may be in flight and methods
// are safe for concurrent use. While it waits it also serves the server:
// a server→client ping gets {}, any other server request gets -32601 (this
// client declares no capabilities) unless Options.OnRequest serves it (and
// Options.Capabilities declares what it serves), notifications go to
// Options.OnNotification.
// (2026-07-28 has no server→client requests; the ping answer then carries
// resultType "complete" so that it still validates.)
// All framing and message checks are codec's. The protocol logic (eras,
// handshake, requests, errors) is the same over both transports; only how a
// message travels differs ([New] for stdio, [NewHTTP] and [DialHTTP] for
// Streamable HTTP, whose rules are in http.go's doc).
//
// # Eras
//
// Connect settles the protocol era (Options.Era):
//   - modern: server/discover with the modern _meta; the version used is the
//     pinned one, or the newest supported modern version the server lists.
//     An UnsupportedProtocolVersionError (-32022) is retried once with a
//     version from its data.supported list. Every later request carries
//     _meta protocolVersion, clientInfo and clientCapabilities.
//   - legacy: initialize, then notifications/initialized, on the same
//     connection.
//   - auto (the default): probe as modern, and fall back to legacy on any
//     error answer other than -32022, or when the probe gets no answer within
//     Options.ProbeTimeout, as the 2026-07-28 backward-compatibility rules
//     say (the fallback must not be keyed to one error code: legacy servers
//     answer -32601, -32600 or -32602, or stay silent). A server that lists
//     only legacy versions in its DiscoverResult is also treated as legacy.
//     A server that exits on the probe cannot be driven further on that
//     connection; [Dial] restarts it once and goes straight to initialize
//     when that can help (it read the probe, then exited with status 0 or
//     closed its stdout; not after a non-zero exit).
//
// # Errors
//
// Methods return: an error wrapping a *codec.Error for a JSON-RPC error
// answer; a *ProtocolError for what the server got wrong (a bad frame
// carrying our id, a result of the wrong shape, an unusable version);
// ErrClosed when the server closed its stdout (exited) before answering; the
// context's error when it ended first. Frames from the server that belong to
// no request and are invalid go to Options.OnProtocolError and are counted
// (ProtocolErrors), since they mean the server wrote something other than
// protocol on its stdout. Before Connect has succeeded such a frame instead
// fails Connect at once with a *ProtocolError naming the line: a server that
// writes a banner or a log line on stdout during the handshake is not
// speaking MCP there, and no era fallback or timeout would change that.
//
// # Server processes
//
// [Start] runs a server in its own process group with pipes for stdin and
// stdout; [Process.Stop] ends it as the stdio transport asks (close stdin,
// wait Command.Grace, SIGTERM the group, wait again, SIGKILL the group) and
// also kills what is left of the group after the server exits, so nothing it
// started outlives the client. [Dial] is Start plus New plus Connect. Unix
// only.
//
// # Limits
//
// Frames are capped at Options.MaxFrame (codec.DefaultMaxFrame, 16 MiB, by
// default). A longer line on a stdio server's stdout is skipped unread, up
// to its newline (codec.Reader: no more than the cap of it is held at once,
// and only its first KiB and last 256 bytes kept), so the connection stays
// in step and the server's other requests go on. When those bytes show it
// is the answer to a request still waiting ("result" or "error" among the
// first members, no "method", and the id among them or as the object's last
// member; see codec.FrameTooLargeError.ResponseID), that request fails at
// once with a *ProtocolError wrapping the *codec.FrameTooLargeError
// (errors.Is codec.ErrFrameTooLarge; its Size says how large the answer
// was); else the line is a protocol error (Options.OnProtocolError), and a
// request it answered waits for its context. Over HTTP an answer over the
// cap fails its request at once with a *ProtocolError wrapping
// codec.ErrFrameTooLarge. tools/list pagination stops with a
// *ProtocolError after 1000 pages or a repeated cursor.
//
// Against a stdio server that stops reading its stdin: a write outlives its
// caller's context (a frame is never cut short) until the pipe is closed,
// but at most MaxPendingWrites (64) writes are under way at once; a request
// that finds none free waits for one or for its context, and when the
// context ends first it was never sent (no cancellation follows). A
// notifications/cancelled is sent only when a write slot is free, and the
// answer to a server→client ping waits for one at most 10s. At most
// MaxAbandoned (4096) abandoned request ids are remembered, so that their
// late answers are ignored; past that the oldest is forgotten, and its
// late answer counts as a protocol error.
//
// With Options.WriteTimeout set, a write to a stdio server that makes no
// progress for that long (frames are written in chunks of 16 KiB; each
// chunk the server takes is progress) marks the server hung: every request
// waiting, and every later one, fails with an error wrapping
// ErrWriteStalled; stdin is closed, which ends the writes blocked on it;
// and Options.OnWriteStall is called, whose job it is to stop the server
// (a Client made by New has no process to stop).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/gopool"
	"github.com/mcpipe/mcpipe/internal/version"
)

// Eras.
const (
	EraAuto   = "auto"
	EraLegacy = "legacy"
	EraModern = "modern"
)

// DefaultProbeTimeout is how long the auto era waits for an answer to the
// server/discover probe before treating the server as legacy.
const DefaultProbeTimeout = 5 * time.Second

// ErrClosed reports that the server closed its stdout (usually: it exited)
// while a request was waiting.
var ErrClosed = errors.New("server closed the connection")

// ErrWriteStalled reports that a write to a stdio server made no progress
// for Options.WriteTimeout: the server does not read its stdin.
var ErrWriteStalled = errors.New("the server stopped reading its stdin")

// ProtocolError is something the server got wrong at the protocol level.
type ProtocolError struct {
	Msg string
	// handshake marks an invalid line during Connect: the server is not
	// speaking MCP on stdout, which no fallback to another era can mend.
	handshake bool
	// err is the cause, when there is one to unwrap (a
	// *codec.FrameTooLargeError, codec.ErrFrameTooLarge).
	err error
}

func (e *ProtocolError) Error() string { return e.Msg }

// Unwrap returns the cause: for an answer over the frame cap, an error
// wrapping codec.ErrFrameTooLarge (a *codec.FrameTooLargeError over stdio).
func (e *ProtocolError) Unwrap() error { return e.err }

func protoErrorf(format string, a ...any) *ProtocolError {
	return &ProtocolError{Msg: fmt.Sprintf(format, a...)}
}

// Options configure a Client. The zero value is usable.
type Options struct {
	// Era is EraAuto ("" too), EraLegacy or EraModern.
	Era string
	// ProtocolVersion pins the version; "" lets Connect choose. A legacy
	// version implies the legacy era, a modern one the modern era.
	ProtocolVersion string
	// ClientInfo names this client; the zero value means "mcp-call".
	ClientInfo codec.Implementation
	// ProbeTimeout bounds the wait for the auto era's discover probe;
	// 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MaxFrame caps frames read from the server; 0 means codec.DefaultMaxFrame.
	MaxFrame int
	// OnNotification, optional, is called on the read goroutine for each
	// notification from the server. It must not block for long.
	OnNotification func(*codec.Message)
	// OnProtocolError, optional, is called on the read goroutine for each
	// frame from the server that is invalid or answers no request.
	OnProtocolError func(error)
	// OnWarning, optional, gets notes that are not errors: a tool
	// definition the HTTP transport left out (x-mcp-header).
	OnWarning func(string)
	// Trace, optional, sees every frame: sent is true for what the client
	// writes, false for what it reads. It is called from several goroutines
	// and must not keep frame.
	Trace func(sent bool, frame []byte)
	// WriteTimeout, optional (stdio only; 0: off), is how long a write to
	// the server's stdin may make no progress before the server is taken
	// as hung (see the package doc).
	WriteTimeout time.Duration
	// OnWriteStall, optional, is called once, from its own goroutine, when
	// WriteTimeout ran out; err wraps ErrWriteStalled.
	OnWriteStall func(err error)
	// Capabilities, optional, are the client capabilities declared in
	// initialize (a legacy handshake; 2026-07-28 has no server→client
	// requests). nil declares none.
	Capabilities codec.ClientCapabilities
	// OnRequest, optional, answers a request from the server other than
	// ping (sampling/createMessage, elicitation/create...), each on a
	// goroutine of its own, at most MaxServerRequests at once (more are
	// answered -32603 at once): its result, or its error (a *codec.Error
	// is sent as it is, another as -32603). nil, or a nil result and
	// error, answers -32601 as without it.
	OnRequest func(m *codec.Message) (json.RawMessage, error)
}

// MaxServerRequests bounds the server→client requests Options.OnRequest
// serves at once: a server cannot grow the client's goroutines without
// bound.
const MaxServerRequests = 16

// Info is what Connect learned about the server.
type Info struct {
	Era               string // EraModern or EraLegacy
	ProtocolVersion   string // the version requests use
	ServerInfo        codec.Implementation
	Capabilities      codec.ServerCapabilities
	Instructions      string
	SupportedVersions []string // modern: the DiscoverResult's list; legacy: the negotiated version
	// Result is the DiscoverResult (modern) or InitializeResult (legacy) as
	// the server sent it.
	Result json.RawMessage
	// Probe says how the era was settled, for people ("server/discover
	// answered -32601 method not found; fell back to initialize").
	Probe string
}

// Client is one MCP client connection. See the package doc.
type Client struct {
	opts Options
	// serving holds a slot per server→client request OnRequest serves.
	serving chan struct{}
	t       transport
	// channel names where server frames come from, for the handshake
	// error: "on its stdout" (stdio) or "in an HTTP answer".
	channel string

	nextID atomic.Int64
	protoN atomic.Int64

	mu        sync.Mutex
	pending   map[string]chan reply
	abandoned map[string]bool
	// abandonedRing holds the keys abandoned, a ring of at most
	// MaxAbandoned whose oldest, at abandonedNext, is forgotten first.
	abandonedRing []string
	abandonedNext int
	info          *Info // set by Connect
	// handshakeErr is the first invalid line before Connect succeeded; it
	// fails every request of the handshake. handshakeDone is set when
	// Connect returns, so later invalid lines are only reported.
	handshakeErr  *ProtocolError
	handshakeDone bool
	// meta is modernMeta's for metaVersion.
	meta        map[string]json.RawMessage
	metaVersion string

	done chan struct{} // closed when the read loop ends (stdio) or by Close (HTTP)
	// writeSlots bounds the writes to a stdio server under way at once
	// (MaxPendingWrites); nil over HTTP, where a send ends with its ctx.
	writeSlots chan struct{}
	// stalled is the error of a write stall (Options.WriteTimeout), once
	// there was one.
	stalled atomic.Pointer[error]
}

// MaxPendingWrites bounds the writes to a stdio server under way at once.
// A write outlives its caller's context (a frame is never cut short), so a
// server that stops reading its stdin leaves each abandoned write blocked
// until the pipe is closed; past MaxPendingWrites, a request waits for a
// slot (or its context) without starting a write, and is never sent.
const MaxPendingWrites = 64

// transport carries messages between a Client and one server: stdio (a
// pipe pair) or Streamable HTTP. Frames from the server reach the Client
// through receive, on the transport's goroutines.
type transport interface {
	// send writes one message. Over HTTP it also reads the answer and
	// hands it to receive before returning.
	send(ctx context.Context, m *codec.Message) error
	// sendFailed words a send error of a request for its caller.
	sendFailed(method string, err error) error
	closeWrite() error
}

// stdioTransport writes to the server's stdin; the read loop reads its
// stdout.
type stdioTransport struct {
	w    *codec.Writer
	wc   io.Closer
	done <-chan struct{}
	// stalled, when the client has a WriteTimeout, is the error of the
	// stall that closed stdin, or nil.
	stalled func() error
}

func (t *stdioTransport) send(_ context.Context, m *codec.Message) error { return t.w.Write(m) }

func (t *stdioTransport) sendFailed(method string, err error) error {
	if t.stalled != nil {
		if serr := t.stalled(); serr != nil {
			return fmt.Errorf("%s: %w", method, serr)
		}
	}
	select {
	case <-t.done:
		return ErrClosed
	case <-time.After(100 * time.Millisecond):
		// A write error with stdout still open: the server closed its
		// stdin but lives on. Give the read loop a moment to notice an
		// exit, then report the connection as gone either way.
		return fmt.Errorf("%w: writing %s: %v", ErrClosed, method, err)
	}
}

func (t *stdioTransport) closeWrite() error {
	err := t.wc.Close()
	if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

type reply struct {
	msg *codec.Message
	err error
}

// New returns a Client reading the server's stdout from r and writing its
// stdin to w, and starts the read goroutine, which ends when r reports EOF or
// an error (close r, or make the server exit, to stop it). Call Connect next.
func New(r io.Reader, w io.WriteCloser, opts Options) *Client {
	var ww io.Writer = w
	var pw *progressWriter
	if opts.WriteTimeout > 0 {
		pw = &progressWriter{w: w}
		ww = pw
	}
	if opts.Trace != nil {
		ww = traceWriter{w: ww, trace: opts.Trace}
	}
	c := newClient(opts, "on its stdout")
	t := &stdioTransport{w: codec.NewWriter(ww), wc: w, done: c.done}
	c.t = t
	c.writeSlots = make(chan struct{}, MaxPendingWrites)
	if pw != nil {
		t.stalled = c.stallErr
		go c.watchWrites(pw, opts.WriteTimeout)
	}
	go c.readLoop(codec.NewReader(r, opts.MaxFrame))
	return c
}

// newClient fills in the defaults; the caller sets c.t.
func newClient(opts Options, channel string) *Client {
	if opts.ClientInfo.Name == "" {
		opts.ClientInfo = codec.Implementation{Name: "mcp-call", Version: version.Number}
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = codec.DefaultMaxFrame
	}
	return &Client{
		opts:      opts,
		channel:   channel,
		pending:   map[string]chan reply{},
		serving:   make(chan struct{}, MaxServerRequests),
		abandoned: map[string]bool{},
		done:      make(chan struct{}),
	}
}

// Info returns what Connect learned, or nil before it succeeded.
func (c *Client) Info() *Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Done is closed when the server's stdout has ended (stdio), or when Close
// has ended the HTTP client.
func (c *Client) Done() <-chan struct{} { return c.done }

// ProtocolErrors returns how many invalid or unmatched frames the server
// has written so far.
func (c *Client) ProtocolErrors() int { return int(c.protoN.Load()) }

// CloseWrite closes the server's stdin, the polite way to ask a stdio
// server to exit; over HTTP it ends the client as Close does. It may be
// called more than once.
func (c *Client) CloseWrite() error { return c.t.closeWrite() }

// protocolError reports a frame that is not protocol. Before Connect has
// succeeded it ends the handshake instead: a server that writes anything
// else on stdout then (a banner, a log line) is not speaking MCP on it, and
// waiting for --timeout would only hide that.
func (c *Client) protocolError(err error, frame []byte) {
	c.protoN.Add(1)
	c.mu.Lock()
	if c.info == nil && !c.handshakeDone {
		if c.handshakeErr == nil {
			msg := "the server wrote something that is not MCP " + c.channel + " during the handshake: " + err.Error()
			if frame != nil {
				msg += fmt.Sprintf("; the line: %.200q", frame)
			}
			c.handshakeErr = &ProtocolError{Msg: msg, handshake: true}
		}
		for k, ch := range c.pending {
			ch <- reply{err: c.handshakeErr}
			delete(c.pending, k)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if c.opts.OnProtocolError != nil {
		c.opts.OnProtocolError(err)
	}
}

func (c *Client) readLoop(r *codec.Reader) {
	defer func() {
		c.failPending(ErrClosed)
		close(c.done)
	}()
	for {
		frame, err := r.ReadFrame()
		if errors.Is(err, codec.ErrFrameTooLarge) {
			c.tooLarge(err)
			continue
		}
		if err != nil {
			return
		}
		c.receive(frame, fmt.Sprintf("server stdout line %d", r.Line()))
	}
}

// tooLarge handles a line from the server's stdout longer than MaxFrame,
// which the Reader skipped (the stream is in step again at the next line):
// the request it answers, when its kept first or last bytes name one, fails
// at once; else it is a protocol error.
func (c *Client) tooLarge(err error) {
	var fe *codec.FrameTooLargeError
	if errors.As(err, &fe) {
		if id := fe.ResponseID(); id != nil {
			perr := &ProtocolError{Msg: fmt.Sprintf("server stdout line %d: the answer is %d bytes, more than the %d-byte frame limit (skipped unread)", fe.Line, fe.Size, fe.Limit), err: fe}
			if c.deliver(*id, reply{err: perr}) {
				return
			}
			c.mu.Lock()
			late := c.abandoned[id.Key()]
			delete(c.abandoned, id.Key())
			c.mu.Unlock()
			if late {
				return
			}
		}
	}
	c.protocolError(fmt.Errorf("server stdout %w", err), nil)
}

// receive handles one frame from the server; src says where it came from
// ("server stdout line 3") for error messages. It may run on several
// goroutines at once (HTTP).
func (c *Client) receive(frame []byte, src string) {
	if c.opts.Trace != nil {
		c.opts.Trace(false, frame)
	}
	msgs, _, derr := codec.DecodeFrame(frame, true)
	if derr != nil {
		c.badFrame(src, frame, derr)
	}
	for _, m := range msgs {
		c.dispatch(src, frame, m)
	}
}

// badFrame reports an invalid frame; when its id is one we wait for, that
// request fails with a ProtocolError instead of waiting forever.
func (c *Client) badFrame(src string, frame []byte, err error) {
	var de *codec.DecodeError
	var be *codec.BatchError
	var list []*codec.DecodeError
	switch {
	case errors.As(err, &be):
		list = be.Errs
	case errors.As(err, &de):
		list = []*codec.DecodeError{de}
	default:
		c.protocolError(fmt.Errorf("%s: %w", src, err), frame)
		return
	}
	for _, d := range list {
		perr := protoErrorf("%s: %v", src, d.Err.Message)
		if d.ID != nil && c.deliver(*d.ID, reply{err: perr}) {
			continue
		}
		c.protocolError(perr, frame)
	}
}

func (c *Client) dispatch(src string, frame []byte, m *codec.Message) {
	switch {
	case m.IsResponse():
		if m.ID == nil {
			// An error answer to a frame whose id the server could not read:
			// nothing we sent is malformed, so this is the server's fault.
			c.protocolError(protoErrorf("%s: response without id: %s", src, errText(m)), frame)
			return
		}
		if !c.deliver(*m.ID, reply{msg: m}) {
			c.mu.Lock()
			late := c.abandoned[m.ID.Key()]
			delete(c.abandoned, m.ID.Key())
			c.mu.Unlock()
			if !late {
				c.protocolError(protoErrorf("%s: response to unknown id %s", src, clipID(m.ID)), frame)
			}
		}
	case m.IsRequest():
		c.serveRequest(m)
	default:
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(m)
		}
	}
}

// clipID is id for an error message, at most 100 bytes of it: a server
// may send an id of any length.
func clipID(id *codec.ID) string {
	s := id.String()
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func errText(m *codec.Message) string {
	if m.Error != nil {
		return m.Error.Error()
	}
	return "no error"
}

// serveRequest answers a server→client request: ping, and what
// Options.OnRequest serves.
func (c *Client) serveRequest(m *codec.Message) {
	var resp *codec.Message
	if m.Method != codec.MethodPing && c.opts.OnRequest != nil {
		select {
		case c.serving <- struct{}{}:
		default:
			c.answer(codec.NewErrorResponse(m.ID, codec.Errorf(codec.CodeInternalError, "busy: %d requests of this server are being served", MaxServerRequests)))
			return
		}
		go func() {
			defer func() { <-c.serving }()
			res, err := c.opts.OnRequest(m)
			var rpc *codec.Error
			switch {
			case err != nil && errors.As(err, &rpc):
				c.answer(codec.NewErrorResponse(m.ID, rpc))
			case err != nil:
				c.answer(codec.NewErrorResponse(m.ID, codec.Errorf(codec.CodeInternalError, "%v", err)))
			case res != nil:
				c.answer(&codec.Message{JSONRPC: "2.0", ID: m.ID, Result: res})
			default:
				c.answer(codec.NewErrorResponse(m.ID, c.unserved(m.Method)))
			}
		}()
		return
	}
	if m.Method == codec.MethodPing {
		// 2026-07-28 has no server→client requests at all, but a result
		// there must say its resultType; DecorateResult fits {} to the era.
		rev := codec.LatestLegacyRevision
		if info := c.Info(); info != nil {
			rev = info.ProtocolVersion
		}
		result, err := codec.DecorateResult(rev, codec.Implementation{}, struct{}{})
		if err != nil {
			return
		}
		resp = &codec.Message{JSONRPC: "2.0", ID: m.ID, Result: result}
	} else {
		resp = codec.NewErrorResponse(m.ID, c.unserved(m.Method))
	}
	c.answer(resp)
}

// unserved is the -32601 of a server→client request the client does not
// serve.
func (c *Client) unserved(method string) *codec.Error {
	if len(c.opts.Capabilities) == 0 {
		return codec.Errorf(codec.CodeMethodNotFound, "method not found: %s (this client declares no capabilities and serves only ping: no sampling, elicitation or roots)", method)
	}
	return codec.Errorf(codec.CodeMethodNotFound, "method not found: %s (this client serves only ping and the capabilities it declared)", method)
}

// answer writes a response to a server→client request.
func (c *Client) answer(resp *codec.Message) {
	// A write error means the server is going away; the read loop will
	// see it. A server that does not read its stdin holds the read loop
	// at most answerTimeout per request.
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	defer cancel()
	_, _ = c.write(ctx, resp)
}

// failPending ends every request waiting for an answer with err.
func (c *Client) failPending(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, k)
	}
}

// isPending says whether request id still waits for its answer.
func (c *Client) isPending(id codec.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id.Key()]
	return ok
}

func (c *Client) deliver(id codec.ID, r reply) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.pending[id.Key()]
	if !ok {
		return false
	}
	delete(c.pending, id.Key())
	ch <- r
	return true
}

// Request sends method with params and waits for the answer. In the modern
// era it adds the request _meta (protocol version, client info and
// capabilities) to params, which must then be nil or marshal to an object.
// It returns the raw result, or an error as the package doc describes.
func (c *Client) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	info := c.Info()
	if info != nil && info.Era == EraModern {
		p, err := withMeta(params, c.modernMeta(info.ProtocolVersion))
		if err != nil {
			return nil, err
		}
		params = p
	}
	return c.call(ctx, method, params, true)
}

// modernMeta is the _meta every 2026-07-28 request carries. It is made
// once per version (withMeta copies it, nothing writes to it).
func (c *Client) modernMeta(version string) map[string]json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metaVersion != version || c.meta == nil {
		c.meta, c.metaVersion = codec.ModernRequestMeta(version, c.opts.ClientInfo, nil), version
	}
	return c.meta
}

// withMeta merges meta into params._meta (params' own keys win).
func withMeta(params any, meta map[string]json.RawMessage) (json.RawMessage, error) {
	if p, ok := params.(codec.CallToolParams); ok {
		// The hot path of a gateway's forwarded call: no JSON round trip.
		merged := make(map[string]json.RawMessage, len(meta)+len(p.Meta))
		maps.Copy(merged, meta)
		maps.Copy(merged, p.Meta)
		p.Meta = merged
		return codec.Marshal(p)
	}
	obj := map[string]json.RawMessage{}
	if params != nil {
		raw, err := codec.Marshal(params)
		if err != nil {
			return nil, err
		}
		if string(raw) != "null" {
			if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("client: params must be a JSON object")
			}
		}
	}
	merged := map[string]json.RawMessage{}
	if old, ok := obj["_meta"]; ok && string(old) != "null" {
		if err := json.Unmarshal(old, &merged); err != nil {
			return nil, fmt.Errorf("client: params._meta must be a JSON object")
		}
	}
	for k, v := range meta {
		if _, ok := merged[k]; !ok {
			merged[k] = v
		}
	}
	mb, err := codec.Marshal(merged)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = mb
	return codec.Marshal(obj)
}

// call sends one request and waits. cancellable says whether to send
// notifications/cancelled when ctx ends first (never for initialize).
func (c *Client) call(ctx context.Context, method string, params any, cancellable bool) (json.RawMessage, error) {
	id := codec.IntID(c.nextID.Add(1))
	msg, err := codec.NewRequest(id, method, params)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", method, err)
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, ErrClosed
	default:
	}
	if c.handshakeErr != nil && !c.handshakeDone {
		c.mu.Unlock()
		return nil, c.handshakeErr
	}
	c.pending[id.Key()] = ch
	c.mu.Unlock()

	if started, err := c.write(ctx, msg); err != nil {
		if ctx.Err() != nil {
			// A request whose write never started was never sent: nothing
			// to cancel, no late answer to expect.
			c.forget(id, started)
			if cancellable && started {
				// The request may have gone out as ctx ended (or may still
				// go out: the abandoned write goes on), so the server is
				// told; a cancellation of an id it never saw is ignored.
				// Not waited for: the writer may be stuck behind that write.
				c.sendCancelled(id, ctx.Err(), false)
			}
			return nil, fmt.Errorf("%s: %w", method, ctx.Err())
		}
		c.forget(id, false)
		return nil, c.t.sendFailed(method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		if r.msg.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, r.msg.Error)
		}
		return r.msg.Result, nil
	case <-ctx.Done():
		c.forget(id, true)
		if cancellable {
			c.sendCancelled(id, ctx.Err(), true)
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// sendCancelled tells the server that request id is abandoned. With wait
// true it waits for the write at most answerTimeout; with wait false it
// writes from a goroutine, and only when a write slot is free at once: the
// writer may be stuck behind the request's own write, and a server that
// does not read gets no cancellation it could not read anyway.
func (c *Client) sendCancelled(id codec.ID, reason error, wait bool) {
	n, err := codec.NewNotification(codec.MethodCancelled, codec.CancelledParams{RequestID: &id, Reason: reason.Error()})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
	if wait {
		defer cancel()
		_, _ = c.write(ctx, n)
		return
	}
	if !c.acquire(nil) {
		cancel()
		return
	}
	go func() {
		defer cancel()
		defer c.release()
		_ = c.t.send(ctx, n)
	}()
}

// write sends msg, giving up when ctx ends first: a server that stops
// reading its stdin fills the pipe, and a blocked write must not outlive
// --timeout. The abandoned write ends when the pipe is closed (Stop) and
// holds one of the MaxPendingWrites slots till then. started says whether
// the write began (false: ctx ended while every slot was taken, and msg
// was not sent).
func (c *Client) write(ctx context.Context, msg *codec.Message) (started bool, err error) {
	if !c.acquire(ctx.Done()) {
		return false, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		c.release()
		return false, err
	}
	done := make(chan error, 1)
	writers.Go(func() {
		defer c.release()
		done <- c.t.send(ctx, msg)
	})
	select {
	case err := <-done:
		return true, err
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// writers sends every client's messages, on goroutines whose stacks have
// already grown to what encoding a message needs.
var writers = gopool.New()

// acquire takes a write slot, waiting until stop is closed (a nil stop:
// not at all); it reports whether it got one. Over HTTP there are no
// slots.
func (c *Client) acquire(stop <-chan struct{}) bool {
	if c.writeSlots == nil {
		return true
	}
	if stop == nil {
		select {
		case c.writeSlots <- struct{}{}:
			return true
		default:
			return false
		}
	}
	select {
	case c.writeSlots <- struct{}{}:
		return true
	case <-stop:
		return false
	}
}

func (c *Client) release() {
	if c.writeSlots != nil {
		<-c.writeSlots
	}
}

// progressChunk is the most written to a stdio server in one write call
// when Options.WriteTimeout is set: each chunk taken is progress.
const progressChunk = 16 << 10

// progressWriter writes in chunks of at most progressChunk and keeps when
// the write under way last made progress, for watchWrites. codec.Writer
// calls Write under its mutex, one frame at a time, so the chunks of a
// frame are never interleaved with another's.
type progressWriter struct {
	w     io.Writer
	since atomic.Int64 // UnixNano of the last progress of the write under way; 0: none under way
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n := 0
	defer p.since.Store(0)
	for n < len(b) {
		p.since.Store(time.Now().UnixNano())
		k, err := p.w.Write(b[n:min(len(b), n+progressChunk)])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// watchWrites takes the server as hung when a write has made no progress
// for d: every request waiting fails with ErrWriteStalled, and stdin is
// closed, which ends the writes blocked on it (their requests fail the
// same way, as do later ones). Stopping the server is the caller's
// (Options.OnWriteStall).
func (c *Client) watchWrites(p *progressWriter, d time.Duration) {
	tick := time.NewTicker(max(d/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return
		case now := <-tick.C:
			since := p.since.Load()
			if since == 0 || now.UnixNano()-since < int64(d) {
				continue
			}
			err := fmt.Errorf("%w: a write to it took no byte for %v", ErrWriteStalled, d)
			c.stalled.Store(&err)
			c.failPending(err)
			_ = c.t.closeWrite()
			if c.opts.OnWriteStall != nil {
				c.opts.OnWriteStall(err)
			}
			return
		}
	}
}

// stallErr is the error of the write stall, or nil.
func (c *Client) stallErr() error {
	if e := c.stalled.Load(); e != nil {
		return *e
	}
	return nil
}

// traceWriter shows each frame to Options.Trace; codec.Writer writes one
// whole frame, newline included, per Write call.
type traceWriter struct {
	w     io.Writer
	trace func(bool, []byte)
}

func (t traceWriter) Write(p []byte) (int, error) {
	t.trace(true, bytes.TrimSuffix(p, []byte("\n")))
	return t.w.Write(p)
}

// MaxAbandoned is how many abandoned request ids a Client remembers, so
// that a late answer to one is ignored rather than reported; past it the
// oldest is forgotten (its late answer is then a protocol error). A server
// that never answers cannot grow the map without bound.
const MaxAbandoned = 4096

// forget drops a pending request; a late answer to an abandoned one is
// then ignored instead of counted as a protocol error.
func (c *Client) forget(id codec.ID, abandoned bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id.Key())
	if !abandoned {
		return
	}
	key := id.Key()
	c.abandoned[key] = true
	if len(c.abandonedRing) < MaxAbandoned {
		c.abandonedRing = append(c.abandonedRing, key)
		return
	}
	// A key answered late is still in the ring; deleting it again is
	// harmless (ids are never reused).
	delete(c.abandoned, c.abandonedRing[c.abandonedNext])
	c.abandonedRing[c.abandonedNext] = key
	c.abandonedNext = (c.abandonedNext + 1) % MaxAbandoned
}

// notify sends a notification.
func (c *Client) notify(ctx context.Context, method string, params any) error {
	n, err := codec.NewNotification(method, params)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, n)
	return err
}

// answerTimeout bounds the client's own messages that no caller waits for:
// a ping answer, a cancellation.
const answerTimeout = 10 * time.Second
