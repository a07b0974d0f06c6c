package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/gopool"
)

// Defaults for zero Options fields.
const (
	DefaultGrace = 2 * time.Second
	// DefaultDiscoverTTL is the ttlMs of server/discover: capabilities never
	// change while a conversation lasts.
	DefaultDiscoverTTL = time.Hour
)

// Errors a handler sees as its ctx's cause, or returns.
var (
	// ErrCancelled: the client sent notifications/cancelled for the
	// request; whatever the handler returns is not sent.
	ErrCancelled = errors.New("server: request cancelled by the client")
	// ErrShutdown: the conversation is over and the grace period has run
	// out (or the output is gone); the handler's answer is still sent when
	// it can be.
	ErrShutdown = errors.New("server: shutting down")
	// ErrNoResponse, returned by a handler, sends no answer at all.
	ErrNoResponse = errors.New("server: no response")
	// ErrClosed is returned by Request.Call once the conversation has ended.
	ErrClosed = errors.New("server: conversation closed")
)

// HandlerFunc serves one request on its own goroutine. ctx is cancelled
// when the client cancels the request (cause ErrCancelled) or shutdown gives
// up waiting (cause ErrShutdown); a handler must then return promptly. The
// result is decorated for req.Revision (codec.NewResultFor); an error that
// is a *codec.Error goes out as that JSON-RPC error, ErrNoResponse sends
// nothing, and any other error is -32603.
type HandlerFunc func(ctx context.Context, req *Request) (result any, err error)

// Method is an entry of the method table.
type Method struct {
	Handler HandlerFunc // required
	// Limit caps the requests of this method in flight (0: no cap). A
	// request beyond it is answered at once, on the read loop, with what
	// Refuse returns (given the count in flight and whether this is the
	// first refusal since the last admitted request), before its params
	// are looked at; without Refuse, -32603 "server busy".
	Limit  int
	Refuse func(inFlight int, first bool) (result any, err error)
}

// Options configure a Server. Fields marked optional have a default.
type Options struct {
	ServerInfo   codec.Implementation     // required: name and version, in every result
	Capabilities codec.ServerCapabilities // optional: what initialize and server/discover advertise
	Instructions string                   // optional: initialize's and server/discover's instructions
	DiscoverTTL  time.Duration            // optional: server/discover ttlMs
	Grace        time.Duration            // optional: how long shutdown waits for requests in flight
	// Session is the legacy session the conversation continues
	// (codec.ResumeSession), for a transport that carries one session
	// over many conversations. Optional: nil starts a new one, which
	// initialize negotiates.
	Session *codec.Session
	// Logger gets one record per event: Warn for what an operator must see
	// (errors, refusals, a lost output), Debug for routine events
	// (initialize, cancellations, subscriptions, shutdown). Optional: nil
	// logs nothing.
	Logger *slog.Logger
}

// builtin methods: served by the core unless a handler replaces ping or
// server/discover.
var builtin = map[string]bool{
	codec.MethodInitialize:          true,
	codec.MethodPing:                true,
	codec.MethodDiscover:            true,
	codec.MethodSubscriptionsListen: true,
}

// Server serves one MCP conversation: build it with New, register methods
// with Handle, then call Serve once. See the package doc.
type Server struct {
	opts    Options
	methods map[string]Method
	sess    *codec.Session
	conn    Conn

	served    atomic.Bool
	closing   chan struct{} // closed when the read loop has ended
	stopRead  context.CancelCauseFunc
	writeCtx  context.Context // done when Serve returns
	handlers  sync.WaitGroup
	handlerCx context.Context // parent of every handler's ctx
	killAll   context.CancelCauseFunc
	writeLog  sync.Once

	mu           sync.Mutex
	inflight     map[string]*Request // by codec.ID.Key
	counts       map[string]int      // requests in flight by method
	refusing     map[string]bool     // a Limit is being hit (log once)
	outgoing     map[string]chan *codec.Message
	outputDead   bool
	abortErr     error
	changedEarly []string // list_changed methods before notifications/initialized

	subs subscriptions
}

// New returns a Server with the built-in methods only.
func New(opts Options) *Server {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.DiscoverTTL <= 0 {
		opts.DiscoverTTL = DefaultDiscoverTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	sess := opts.Session
	if sess == nil {
		sess = codec.NewSession()
	}
	s := &Server{
		opts:     opts,
		methods:  map[string]Method{},
		sess:     sess,
		closing:  make(chan struct{}),
		inflight: map[string]*Request{},
		counts:   map[string]int{},
		refusing: map[string]bool{},
		outgoing: map[string]chan *codec.Message{},
	}
	if opts.Capabilities.Logging != nil {
		s.methods[codec.MethodLoggingSetLevel] = Method{Handler: s.setLevel}
	}
	return s
}

// Handle registers m for requests named method; call it before Serve. It
// replaces a previous entry, and the built-in ping and server/discover. It
// panics for initialize and subscriptions/listen, which the core owns, and
// for a method without a Handler.
func (s *Server) Handle(method string, m Method) {
	if m.Handler == nil || method == codec.MethodInitialize || method == codec.MethodSubscriptionsListen {
		panic("server: Handle " + method + ": not a method a handler may serve")
	}
	if s.served.Load() {
		panic("server: Handle after Serve")
	}
	s.methods[method] = m
}

// HandleFunc is Handle with no Limit.
func (s *Server) HandleFunc(method string, h HandlerFunc) { s.Handle(method, Method{Handler: h}) }

// Session returns the conversation's legacy session (negotiated revision,
// initialized).
func (s *Server) Session() *codec.Session { return s.sess }

// Closing is closed when the conversation stops reading: the input ended,
// ctx is done, the output is gone or Abort was called. Work that feeds the
// conversation (a directory watch) should stop then.
func (s *Server) Closing() <-chan struct{} { return s.closing }

// Abort ends the conversation at once: reading stops, every request in
// flight is cancelled (cause ErrShutdown) without a grace period, and Serve
// returns err. Only the first call counts.
func (s *Server) Abort(err error) {
	s.mu.Lock()
	if s.abortErr == nil {
		s.abortErr = err
	}
	stop := s.stopRead
	s.mu.Unlock()
	if stop != nil {
		stop(fmt.Errorf("aborted: %w", err))
	}
}

// Serve serves the conversation on conn until the input ends, ctx is done,
// the output is gone or Abort is called, then shuts down (see the package
// doc), closes conn and returns: nil, or Abort's error. It may be called
// once per Server.
func (s *Server) Serve(ctx context.Context, conn Conn) error {
	if s.served.Swap(true) {
		return errors.New("server: Serve called twice")
	}
	s.conn = conn
	readCtx, stopRead := context.WithCancelCause(ctx)
	var endWrites context.CancelFunc
	s.writeCtx, endWrites = context.WithCancel(context.WithoutCancel(ctx))
	s.handlerCx, s.killAll = context.WithCancelCause(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.stopRead = stopRead
	aborted := s.abortErr
	s.mu.Unlock()
	if aborted != nil {
		stopRead(aborted)
	}

	reason := "input closed"
	for {
		data, err := conn.Read(readCtx)
		if err == nil {
			s.frame(data)
			continue
		}
		if errors.Is(err, codec.ErrFrameTooLarge) {
			s.opts.Logger.Warn("frame too large", slog.Any("error", err))
			s.write(codec.NewErrorResponse(nil, codec.AsError(err)))
			continue
		}
		switch cause := context.Cause(readCtx); {
		case ctx.Err() != nil:
			reason = "stopped: " + context.Cause(ctx).Error()
		case cause != nil:
			reason = cause.Error()
		case errors.Is(err, ErrOutputClosed):
			s.outputGone(err)
			reason = err.Error()
		case !errors.Is(err, io.EOF):
			reason = "read error: " + err.Error()
		}
		break
	}
	stopRead(nil)
	s.shutdown(reason)
	endWrites()
	conn.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abortErr
}

// shutdown answers the open subscriptions, waits up to Grace for the
// requests in flight (not at all when the output is gone or Abort was
// called), then cancels the rest and waits for their handlers.
func (s *Server) shutdown(reason string) {
	close(s.closing)
	s.endSubscriptions()
	s.mu.Lock()
	n := len(s.inflight)
	now := s.outputDead || s.abortErr != nil
	s.mu.Unlock()
	s.opts.Logger.Debug("shutting down", slog.String("why", reason), slog.Int("pending", n))
	if n == 0 {
		// The usual end of an HTTP request's conversation: every request
		// answered, the handlers returning (none is cancelled, so there is
		// nothing to give a grace).
		s.handlers.Wait()
		return
	}
	done := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(done)
	}()
	if !now {
		t := time.NewTimer(s.opts.Grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		s.opts.Logger.Warn("grace period over: cancelling the remaining requests")
	}
	s.killAll(ErrShutdown)
	<-done
}

// outputGone ends the conversation: nothing written can reach the client.
func (s *Server) outputGone(err error) {
	s.mu.Lock()
	first := !s.outputDead
	s.outputDead = true
	stop := s.stopRead
	s.mu.Unlock()
	if first {
		s.opts.Logger.Warn("output gone: shutting down", slog.Any("error", err))
		s.killAll(ErrShutdown) // their answers would go nowhere
		if stop != nil {
			stop(err)
		}
	}
}

// write sends one message. A lost output ends the conversation; any other
// failure loses this message and is logged once.
func (s *Server) write(m *codec.Message) error {
	err := s.conn.Write(s.writeCtx, m)
	s.writeFailed(err)
	return err
}

func (s *Server) writeFailed(err error) {
	switch {
	case err == nil:
	case errors.Is(err, ErrOutputClosed):
		s.outputGone(err)
	default:
		s.writeLog.Do(func() { s.opts.Logger.Warn("write failed", slog.Any("error", err)) })
	}
}

// frame decodes and dispatches one input frame.
func (s *Server) frame(data []byte) {
	msgs, batch, err := codec.DecodeFrame(data, s.sess.AllowBatch())
	var de *codec.DecodeError
	if errors.As(err, &de) && msgs == nil {
		s.opts.Logger.Warn("bad frame", slog.Any("error", de))
		if !s.refuseBatch(data, de) {
			s.write(de.Response())
		}
		return
	}
	if !batch {
		for _, m := range msgs {
			s.dispatch(m, func(r *codec.Message) {
				if r != nil {
					s.write(r)
				}
			})
		}
		return
	}
	// A batch: one array of responses once every request has answered.
	var extra []*codec.Message
	var be *codec.BatchError
	if errors.As(err, &be) {
		for _, e := range be.Errs {
			s.opts.Logger.Warn("bad batch element", slog.Int("index", e.Index), slog.Any("error", e))
			extra = append(extra, e.Response())
		}
	}
	b := &batchReply{s: s, out: extra}
	for _, m := range msgs {
		if m.IsRequest() {
			b.want++
		}
	}
	if b.want == 0 && len(b.out) > 0 {
		b.send()
	}
	for _, m := range msgs {
		s.dispatch(m, b.add)
	}
}

// refuseBatch answers a batch refused outside 2025-03-26 with one error per
// request in it, each with its id: an error response without an id does
// not validate in the revisions up to 2025-06-18. It reports false when
// data is not such a batch or holds no request with a readable id.
func (s *Server) refuseBatch(data []byte, de *codec.DecodeError) bool {
	if de.Err.Code != codec.CodeInvalidRequest || s.sess.AllowBatch() {
		return false
	}
	msgs, batch, _ := codec.DecodeFrame(data, true)
	if !batch {
		return false
	}
	answered := false
	for _, m := range msgs {
		if m.IsRequest() {
			s.write(codec.NewErrorResponse(m.ID, de.Err))
			answered = true
		}
	}
	return answered
}

// batchReply gathers the responses of one batch and writes them as one
// array when the last request has answered.
type batchReply struct {
	s    *Server
	mu   sync.Mutex
	want int // requests in the batch
	got  int
	out  []*codec.Message
}

func (b *batchReply) add(m *codec.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got++
	if m != nil {
		b.out = append(b.out, m)
	}
	if b.got == b.want {
		b.send()
	}
}

// send writes the gathered responses; nothing when there are none (a
// batch of notifications, or of cancelled requests, gets no answer).
func (b *batchReply) send() {
	if len(b.out) == 0 {
		return
	}
	b.s.writeFailed(b.s.conn.WriteBatch(b.s.writeCtx, b.out))
}

// dispatch routes one message; it runs on the read loop and never waits.
// reply is called exactly once for a request (nil: send nothing) and never
// for anything else.
func (s *Server) dispatch(m *codec.Message, reply func(*codec.Message)) {
	if m.IsResponse() {
		s.response(m)
		return
	}
	rev, cerr := s.sess.Classify(m)
	if !m.IsRequest() {
		s.notification(m, cerr)
		return
	}
	req := &Request{ID: *m.ID, Method: m.Method, Params: m.Params, Revision: rev, srv: s, reply: reply}
	if cerr != nil && cerr.Code == codec.CodeUnsupportedVersion {
		s.respond(req, nil, cerr)
		return
	}
	method, registered := s.methods[m.Method]
	if !registered && !builtin[m.Method] || m.Method == codec.MethodInitialize && codec.IsModernRevision(rev) {
		s.respond(req, nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: %q", m.Method))
		return
	}
	if cerr != nil {
		s.respond(req, nil, cerr)
		return
	}
	if registered {
		s.start(req, method)
		return
	}
	// The built-ins: answered here, they wait for nothing.
	switch m.Method {
	case codec.MethodInitialize:
		s.opts.Logger.Debug("initialize: protocol version negotiated", slog.String("protocol", rev))
		s.rememberCapabilities(m.Params)
		s.respond(req, codec.InitializeResult{
			ProtocolVersion: rev,
			Capabilities:    s.opts.Capabilities,
			ServerInfo:      s.opts.ServerInfo,
			Instructions:    s.opts.Instructions,
		}, nil)
	case codec.MethodPing:
		s.respond(req, struct{}{}, nil)
	case codec.MethodDiscover:
		s.respond(req, codec.DiscoverResult{
			ResultType:        codec.ResultTypeComplete,
			SupportedVersions: slices.Clone(codec.Revisions),
			Capabilities:      s.opts.Capabilities,
			Instructions:      s.opts.Instructions,
			TTLMs:             int64(s.opts.DiscoverTTL / time.Millisecond),
			CacheScope:        codec.CacheScopePublic,
		}, nil)
	case codec.MethodSubscriptionsListen:
		s.listen(req)
	}
}

// start registers req in flight and runs its handler on a goroutine, or
// refuses it (an id in use, the method's Limit). It reports whether the
// handler was started.
func (s *Server) start(req *Request, method Method) bool {
	key := req.ID.Key()
	s.mu.Lock()
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		s.respond(req, nil, codec.Errorf(codec.CodeInvalidRequest, "invalid request: id %s is already in use by a pending request", req.ID))
		return false
	}
	if n := s.counts[req.Method]; method.Limit > 0 && n >= method.Limit {
		first := !s.refusing[req.Method]
		s.refusing[req.Method] = true
		s.mu.Unlock()
		if method.Refuse == nil {
			if first {
				s.opts.Logger.Warn("requests in flight at the limit: refusing more until one finishes", slog.String("method", req.Method), slog.Int("in_flight", n))
			}
			s.respond(req, nil, codec.Errorf(codec.CodeInternalError, "server busy: %d %s requests in flight; try again later", n, req.Method))
			return false
		}
		res, err := method.Refuse(n, first)
		s.respond(req, res, err)
		return false
	}
	s.refusing[req.Method] = false
	ctx, cancel := context.WithCancelCause(s.handlerCx)
	req.cancel = cancel
	s.inflight[key] = req
	s.counts[req.Method]++
	s.mu.Unlock()
	s.handlers.Add(1)
	handlerGoroutines.Go(func() {
		defer s.handlers.Done()
		res, err := method.Handler(ctx, req)
		s.mu.Lock()
		delete(s.inflight, key)
		s.counts[req.Method]--
		s.mu.Unlock()
		cancel(nil)
		s.respond(req, res, err)
	})
	return true
}

// handlerGoroutines runs every conversation's handlers, on goroutines whose
// stacks have already grown to what a handler needs.
var handlerGoroutines = gopool.New()

// respond answers req once: the first call wins, and nothing is sent for a
// request the client cancelled.
func (s *Server) respond(req *Request, result any, err error) {
	req.once.Do(func() {
		s.mu.Lock()
		cancelled := req.cancelled
		s.mu.Unlock()
		if cancelled || errors.Is(err, ErrNoResponse) {
			req.reply(nil)
			return
		}
		var resp *codec.Message
		if err == nil {
			var merr error
			if resp, merr = codec.NewResultFor(req.Revision, s.opts.ServerInfo, req.ID, result); merr != nil {
				err = merr
			}
		}
		if err != nil {
			var e *codec.Error
			if !errors.As(err, &e) {
				e = codec.Errorf(codec.CodeInternalError, "internal error: %v", err)
			}
			s.opts.Logger.Warn("request failed", slog.String("id", req.ID.Value()), slog.String("method", req.Method), slog.Any("error", e))
			resp = codec.NewErrorResponse(&req.ID, e)
		}
		req.reply(resp)
	})
}

// notification handles a client notification; nothing is ever answered.
func (s *Server) notification(m *codec.Message, cerr *codec.Error) {
	if cerr != nil {
		s.opts.Logger.Warn("notification failed", slog.String("method", m.Method), slog.Any("error", cerr))
		return
	}
	switch m.Method {
	case codec.MethodInitialized:
		s.opts.Logger.Debug("client initialized", slog.String("protocol", s.sess.Revision()))
		s.mu.Lock()
		early := s.changedEarly
		s.changedEarly = nil
		s.mu.Unlock()
		for _, method := range early {
			s.legacyListChanged(method) // the subscriptions heard of it already
		}
	case codec.MethodCancelled:
		var p codec.CancelledParams
		if err := json.Unmarshal(m.Params, &p); err != nil || p.RequestID == nil {
			s.opts.Logger.Warn("notifications/cancelled: bad params", slog.String("params", clip(m.Params)))
			return
		}
		key := p.RequestID.Key()
		// Taken out of the open subscriptions first: nothing more goes
		// out for a cancelled one.
		if s.takeSubscription(key) != nil {
			s.opts.Logger.Debug("subscription cancelled by the client", slog.String("id", p.RequestID.Value()), slog.String("reason", p.Reason))
		}
		s.mu.Lock()
		req := s.inflight[key]
		if req != nil {
			req.cancelled = true
		}
		s.mu.Unlock()
		if req == nil {
			s.opts.Logger.Debug("notifications/cancelled: no such request in flight", slog.String("id", p.RequestID.Value()))
			return
		}
		s.opts.Logger.Debug("request cancelled by the client", slog.String("id", p.RequestID.Value()), slog.String("method", req.Method), slog.String("reason", p.Reason))
		req.cancel(ErrCancelled)
	default:
		s.opts.Logger.Debug("ignored a notification", slog.String("method", m.Method))
	}
}

// response routes a client's response to the Request.Call waiting for it.
func (s *Server) response(m *codec.Message) {
	var ch chan *codec.Message
	if m.ID != nil {
		s.mu.Lock()
		ch = s.outgoing[m.ID.Key()]
		delete(s.outgoing, m.ID.Key())
		s.mu.Unlock()
	}
	if ch == nil {
		s.opts.Logger.Debug("ignored a response from the client: no request of ours has that id", slog.String("id", fmt.Sprint(m.ID)))
		return
	}
	ch <- m // buffered: never blocks
}

// ListChanged tells the client that the list method names
// (codec.MethodToolsListChanged, …) changed: an initialized legacy session
// gets the notification (a session between initialize and
// notifications/initialized gets it once initialized), and so does every
// open 2026-07-28 subscription that asked for it, stamped with its
// subscriptionId. After Closing, it does nothing.
func (s *Server) ListChanged(method string) {
	select {
	case <-s.closing:
		return
	default:
	}
	s.notifySubscriptions(method)
	s.legacyListChanged(method)
}

// legacyListChanged sends method to an initialized legacy session, or
// keeps it for notifications/initialized.
func (s *Server) legacyListChanged(method string) {
	// s.mu orders this check against the notifications/initialized handler's.
	s.mu.Lock()
	if !s.sess.Initialized() {
		if s.sess.Revision() != "" && !slices.Contains(s.changedEarly, method) {
			s.changedEarly = append(s.changedEarly, method)
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if m, err := codec.NewNotification(method, nil); err == nil {
		s.write(m)
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
