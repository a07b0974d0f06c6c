// Package router is mcp-route's MCP server: it reads newline-framed
// JSON-RPC from a client, answers in the client's protocol era, and routes
// tools/call to the tool executables of a registry.Registry, supervised by
// package runner.
//
// Protocol (DESIGN.md, "Protocol eras"): every revision of codec.Revisions.
// Legacy clients initialize (the version is negotiated by codec.Session) and
// may then list and call tools; a request other than ping, initialize and
// server/discover before initialize, without a modern _meta protocol
// version, gets a JSON-RPC error. Modern (2026-07-28) requests carry their
// version in _meta and are served statelessly at any time; an unknown
// version gets -32022. server/discover is answered at any time. Results for
// modern requests carry resultType "complete" and _meta serverInfo (via
// codec.DecorateResult); tools/list adds ttlMs and cacheScope there. JSON-RPC
// batches are accepted only in a session that negotiated 2025-03-26. A bad
// frame gets an error response and the stream goes on.
//
// tools/list is paginated (Options.PageSize per page) with an opaque cursor
// naming the last tool of the previous page, so a reload between pages
// neither repeats nor skips a tool that stayed; a cursor that does not
// decode is -32602.
//
// tools/call: an unknown tool or malformed params is -32602; arguments that
// do not match the tool's inputSchema get an isError result naming the field,
// and nothing runs. Otherwise the tool runs with at most Options.MaxProcs
// processes at a time (the rest wait in arrival order of their goroutines),
// and each response is written when its call finishes. At most
// Options.MaxQueue calls wait: a tools/call beyond that is answered at once
// with an isError result "server busy: N calls queued; try again later"
// (before its params are looked at), so a client flooding tools/call cannot
// grow the server's memory without bound. A tool result rather than a
// JSON-RPC error: the refusal reaches the model, which can retry, the way
// every other failure of a call does. A
// notifications/cancelled for a pending call kills its process group and
// suppresses its response. Lines the tool writes to fd 3 become
// notifications/progress when the request carried _meta.progressToken;
// malformed ones are logged and dropped.
//
// Result modes: "text" — stdout, which must be valid UTF-8 (otherwise the
// call is an isError result: we refuse to guess an encoding or silently alter
// output), is one text block, byte for byte; "json" — stdout is one JSON
// value, sent as structuredContent and as its compact text (checked against
// outputSchema when the tool has one; legacy revisions whose schema wants an
// object get a non-object value as text only); "mcp" — stdout is a whole
// CallToolResult, checked for shape (and structuredContent against
// outputSchema). Any failure becomes an isError result with a short text.
//
// The tool directories are polled (Options.Poll, and before each tools/list);
// when the advertised list changes, an initialized legacy session gets
// notifications/tools/list_changed, and so does every open 2026-07-28
// subscriptions/listen that asked for toolsListChanged, stamped with its
// subscriptionId (see subscribe.go: acknowledgement, cancellation, and the
// answer at shutdown). Modern clients without one see the new list on their
// next tools/list.
//
// Shutdown: when the input ends or ctx is done, Serve stops reading, lets
// queued and running calls finish for Options.Grace and writes their
// responses, then kills the rest (their requests get an isError result
// "canceled: server shutting down") and returns nil. Serve writes nothing but
// protocol messages to its output; events go to Options.Logf (what an operator
// must see: failures worth a look, errors) and Options.Debugf (routine events:
// a call that went fine, initialize, shutdown), one line each.
//
// Serve may be called concurrently with distinct streams; one call serves one
// stream. The goroutine reading the input can outlive Serve when the input
// never returns from Read (a terminal); closing the input ends it.
package router

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// Defaults for zero Options fields.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 1 << 20
	DefaultMaxProcs  = 8
	DefaultMaxQueue  = 256
	DefaultGrace     = 2 * time.Second
	DefaultPageSize  = 100
	DefaultPoll      = time.Second
	// DiscoverTTL is the ttlMs of server/discover: capabilities never change
	// while the server runs.
	DiscoverTTL = int64(time.Hour / time.Millisecond)
)

// Options configure Serve. Fields marked optional have a default.
type Options struct {
	Registry   *registry.Registry               // required; Serve loads it (Reload) in the background
	ServerInfo codec.Implementation             // required: name and version
	Root       string                           // required: cwd of every tool, MCP_ROOT
	Env        []string                         // required: the base environment of every tool ("NAME=value")
	LookupEnv  func(string) (string, bool)      // optional: the router's environment, for run.passEnv; nil means none
	Timeout    time.Duration                    // optional: per-call timeout (a tool's run.timeout wins)
	MaxOutput  int64                            // optional: stdout cap (a tool's run.maxOutput wins)
	MaxProcs   int                              // optional: tool processes at once
	MaxQueue   int                              // optional: calls that may wait for a process slot; < 0: none may wait
	Grace      time.Duration                    // optional: SIGTERM→SIGKILL delay, and shutdown wait
	MaxFrame   int                              // optional: input frame cap, codec.DefaultMaxFrame
	PageSize   int                              // optional: tools per tools/list page
	Poll       time.Duration                    // optional: tool directory poll interval; < 0 disables polling
	Logf       func(format string, args ...any) // optional: one line per event an operator must see (timeouts, kills, output caps, bad results, errors)
	Debugf     func(format string, args ...any) // optional: one line per routine event (a call ok, initialize, shutdown); nil drops them
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxProcs <= 0 {
		o.MaxProcs = DefaultMaxProcs
	}
	if o.MaxQueue == 0 {
		o.MaxQueue = DefaultMaxQueue
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Debugf == nil {
		o.Debugf = func(string, ...any) {}
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
}

// server is the state of one Serve call.
type server struct {
	opts Options
	w    *codec.Writer
	sess *codec.Session
	sem  chan struct{} // MaxProcs slots

	loaded chan struct{} // closed after the first Registry.Reload

	subs subscriptions // open subscriptions/listen requests (subscribe.go)

	callsCtx     context.Context // canceled when shutdown gives up waiting
	killCalls    context.CancelFunc
	calls        sync.WaitGroup
	mu           sync.Mutex
	inflight     map[string]*pending // by codec.ID.Key
	shuttingDown bool
	writeFailed  bool
	changedEarly bool // the tool list changed before notifications/initialized
	busyLogged   bool // calls are being refused and the log said so
}

// pending is a tools/call that has not been answered.
type pending struct {
	cancel    context.CancelFunc
	cancelled bool // by the client: send nothing
}

// Serve serves one MCP stream: requests from in, messages to out. See the
// package doc. It returns nil after an orderly shutdown (input ended or ctx
// done), or an error when Options are unusable.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Registry == nil {
		return errors.New("router: no Registry")
	}
	opts.defaults()
	s := &server{
		opts:     opts,
		w:        codec.NewWriter(out),
		sess:     codec.NewSession(),
		sem:      make(chan struct{}, opts.MaxProcs),
		inflight: map[string]*pending{},
	}
	s.callsCtx, s.killCalls = context.WithCancel(context.Background())
	defer s.killCalls()

	// The first load may run --mcp-describe for every tool; requests that
	// do not need the tools (server/discover, initialize, ping) are served
	// meanwhile, and tools/list and tools/call wait for it (s.loaded).
	s.loaded = make(chan struct{})
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		opts.Registry.Reload(watchCtx)
		close(s.loaded)
		if opts.Poll > 0 {
			opts.Registry.Watch(watchCtx, opts.Poll, s.listChanged)
		}
	}()

	type frame struct {
		data []byte
		err  error
	}
	frames := make(chan frame)
	stopRead := make(chan struct{})
	go func() {
		r := codec.NewReader(in, opts.MaxFrame)
		for {
			data, err := r.ReadFrame()
			select {
			case frames <- frame{data, err}:
			case <-stopRead:
				return
			}
			if err != nil && !errors.Is(err, codec.ErrFrameTooLarge) {
				return
			}
		}
	}()

	reason := "input closed"
loop:
	for {
		select {
		case <-ctx.Done():
			reason = "signal"
			break loop
		case f := <-frames:
			if f.err != nil {
				if errors.Is(f.err, codec.ErrFrameTooLarge) {
					s.opts.Logf("frame too large: %v", f.err)
					s.write(codec.NewErrorResponse(nil, codec.AsError(f.err)))
					continue
				}
				if !errors.Is(f.err, io.EOF) {
					reason = "read error: " + f.err.Error()
				}
				break loop
			}
			s.frame(ctx, f.data)
		}
	}
	close(stopRead)
	stopWatch()
	watch.Wait()
	s.shutdown(reason)
	return nil
}

// shutdown waits up to Grace for pending calls, then kills the rest.
func (s *server) shutdown(reason string) {
	s.endSubscriptions()
	s.mu.Lock()
	s.shuttingDown = true
	n := len(s.inflight)
	s.mu.Unlock()
	s.opts.Debugf("shutting down (%s): %d calls pending", reason, n)
	done := make(chan struct{})
	go func() {
		s.calls.Wait()
		close(done)
	}()
	t := time.NewTimer(s.opts.Grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	s.opts.Logf("grace period over: killing the remaining calls")
	s.killCalls()
	<-done
}

// write sends one message; a failed write is logged once (the client is
// gone; we keep draining so every call still ends cleanly).
func (s *server) write(m *codec.Message) {
	if err := s.w.Write(m); err != nil {
		s.mu.Lock()
		first := !s.writeFailed
		s.writeFailed = true
		s.mu.Unlock()
		if first {
			s.opts.Logf("write: %v", err)
		}
	}
}

// listChanged tells a legacy session and the modern subscriptions that the
// tool list changed.
func (s *server) listChanged() {
	s.toolsChanged()
	// A legacy session between
	// initialize and notifications/initialized (before which a server sends
	// no notifications) hears about it once initialized; s.mu orders this
	// check against the notification handler's.
	s.mu.Lock()
	if !s.sess.Initialized() {
		if s.sess.Revision() != "" {
			s.changedEarly = true
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	m, err := codec.NewNotification(codec.MethodToolsListChanged, nil)
	if err == nil {
		s.write(m)
	}
}

// frame decodes and dispatches one input line.
func (s *server) frame(ctx context.Context, data []byte) {
	msgs, batch, err := codec.DecodeFrame(data, s.sess.AllowBatch())
	var de *codec.DecodeError
	if errors.As(err, &de) && msgs == nil {
		s.opts.Logf("bad frame: %v", de)
		if !s.refuseBatch(data, de) {
			s.write(de.Response())
		}
		return
	}
	if !batch {
		for _, m := range msgs {
			s.handle(ctx, m, func(r *codec.Message) {
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
			s.opts.Logf("bad batch element %d: %v", e.Index, e)
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
		s.handle(ctx, m, b.add)
	}
}

// refuseBatch answers a batch refused outside 2025-03-26 with one error per
// request in it, each with its id: an error response without an id does
// not validate in the revisions up to 2025-06-18. It reports false when
// data is not such a batch or holds no request with a readable id.
func (s *server) refuseBatch(data []byte, de *codec.DecodeError) bool {
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
// array when the last request has answered (calls answer asynchronously).
type batchReply struct {
	s    *server
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
// batch of notifications, or of cancelled calls, gets no answer).
func (b *batchReply) send() {
	if len(b.out) == 0 {
		return
	}
	if err := b.s.w.WriteBatch(b.out); err != nil {
		b.s.opts.Logf("write: %v", err)
	}
}

// methods this server serves; anything else is -32601.
var methods = map[string]bool{
	codec.MethodInitialize:  true,
	codec.MethodInitialized: true,
	codec.MethodPing:        true,
	codec.MethodDiscover:    true,
	codec.MethodToolsList:   true,
	codec.MethodToolsCall:   true,
	codec.MethodCancelled:   true,
	codec.MethodProgress:    true,

	codec.MethodSubscriptionsListen: true,
}

// handle dispatches one message. reply must be called exactly once for a
// request (nil: send nothing, e.g. a cancelled call) and never for anything
// else.
func (s *server) handle(ctx context.Context, m *codec.Message, reply func(*codec.Message)) {
	if m.IsResponse() {
		s.opts.Debugf("ignored a response from the client (id %v): this server sends no requests", m.ID)
		return
	}
	rev, cerr := s.sess.Classify(m)
	if !m.IsRequest() {
		s.notification(m, cerr)
		return
	}
	id := *m.ID
	fail := func(e *codec.Error) {
		s.opts.Logf("request %s %s: %v", id, m.Method, e)
		reply(codec.NewErrorResponse(&id, e))
	}
	if cerr != nil && cerr.Code == codec.CodeUnsupportedVersion {
		fail(cerr)
		return
	}
	if !methods[m.Method] || m.Method == codec.MethodCancelled || m.Method == codec.MethodProgress || m.Method == codec.MethodInitialized ||
		(m.Method == codec.MethodInitialize && codec.IsModernRevision(rev)) {
		fail(codec.Errorf(codec.CodeMethodNotFound, "method not found: %q", m.Method))
		return
	}
	if cerr != nil {
		fail(cerr)
		return
	}
	ok := func(result any) {
		resp, err := codec.NewResultFor(rev, s.opts.ServerInfo, id, result)
		if err != nil {
			fail(codec.Errorf(codec.CodeInternalError, "internal error: %v", err))
			return
		}
		reply(resp)
	}
	switch m.Method {
	case codec.MethodInitialize:
		s.opts.Debugf("initialize: protocol version %s", rev)
		ok(codec.InitializeResult{
			ProtocolVersion: rev,
			Capabilities:    s.capabilities(),
			ServerInfo:      s.opts.ServerInfo,
		})
	case codec.MethodPing:
		ok(struct{}{})
	case codec.MethodDiscover:
		ok(codec.DiscoverResult{
			ResultType:        codec.ResultTypeComplete,
			SupportedVersions: slices.Clone(codec.Revisions),
			Capabilities:      s.capabilities(),
			TTLMs:             DiscoverTTL,
			CacheScope:        codec.CacheScopePublic,
		})
	case codec.MethodToolsList:
		<-s.loaded
		res, err := s.list(ctx, rev, m.Params)
		if err != nil {
			fail(err)
			return
		}
		ok(res)
	case codec.MethodToolsCall:
		<-s.loaded
		if busy := s.busy(); busy != "" {
			ok(codec.ErrorResult(busy))
			return
		}
		s.call(rev, id, m.Params, ok, fail, reply)
	case codec.MethodSubscriptionsListen:
		s.listen(rev, id, m.Params, ok, fail, reply)
	}
}

// busy returns the text of the result refusing a tools/call when
// MaxProcs calls run and MaxQueue more wait, else "". Only the read loop
// adds calls (s.call registers them in s.inflight before returning), so
// the count cannot grow between this check and the call it admits.
func (s *server) busy() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	maxQueue := max(s.opts.MaxQueue, 0)
	if len(s.inflight) < s.opts.MaxProcs+maxQueue {
		s.busyLogged = false
		return ""
	}
	// Admitted calls hold a slot or wait for one.
	queued := max(len(s.inflight)-len(s.sem), 0)
	if !s.busyLogged { // once per busy spell, not once per refused call
		s.busyLogged = true
		s.opts.Logf("server busy: %d calls running, %d queued: refusing further calls until one finishes", len(s.sem), queued)
	}
	return fmt.Sprintf("server busy: %d calls queued; try again later", queued)
}

func (s *server) capabilities() codec.ServerCapabilities {
	return codec.ServerCapabilities{Tools: &codec.ToolsCapability{ListChanged: true}}
}

// notification handles a client notification; nothing is ever answered.
func (s *server) notification(m *codec.Message, cerr *codec.Error) {
	if cerr != nil {
		s.opts.Logf("notification %s: %v", m.Method, cerr)
		return
	}
	switch m.Method {
	case codec.MethodInitialized:
		s.opts.Debugf("client initialized (protocol version %s)", s.sess.Revision())
		s.mu.Lock()
		early := s.changedEarly
		s.changedEarly = false
		s.mu.Unlock()
		if early {
			s.listChanged()
		}
	case codec.MethodCancelled:
		var p codec.CancelledParams
		if err := json.Unmarshal(m.Params, &p); err != nil || p.RequestID == nil {
			s.opts.Logf("notifications/cancelled: bad params: %s", clip(m.Params))
			return
		}
		if s.cancelSubscription(*p.RequestID, p.Reason) {
			return
		}
		s.mu.Lock()
		pc := s.inflight[p.RequestID.Key()]
		if pc != nil {
			pc.cancelled = true
		}
		s.mu.Unlock()
		if pc == nil {
			s.opts.Debugf("notifications/cancelled for %s: no such call in flight", p.RequestID)
			return
		}
		s.opts.Debugf("call %s cancelled by the client: %s", p.RequestID, p.Reason)
		pc.cancel()
	default:
		s.opts.Debugf("ignored notification %s", m.Method)
	}
}

// list answers tools/list: one page, after a reload check.
func (s *server) list(ctx context.Context, rev string, params json.RawMessage) (any, *codec.Error) {
	var p codec.ListToolsParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	after := ""
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown cursor %q", p.Cursor)
		}
		after = strings.TrimPrefix(string(b), cursorPrefix)
	}
	if s.opts.Registry.Reload(ctx) {
		s.listChanged()
	}
	all := s.opts.Registry.Tools()
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(all, after, func(t *registry.Tool, name string) int {
			return strings.Compare(t.Def.Name, name)
		})
		if start < len(all) && all[start].Def.Name == after {
			start++
		}
	}
	end := min(start+s.opts.PageSize, len(all))
	res := codec.ListToolsResult{Tools: make([]codec.Tool, 0, end-start)}
	for _, t := range all[start:end] {
		// Older revisions get only the members they define.
		res.Tools = append(res.Tools, codec.ToolFor(rev, t.Def))
	}
	if end < len(all) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + all[end-1].Def.Name))
	}
	// ttlMs is the poll interval: the list may change that often. Without
	// polling, every tools/list re-reads the directories: cache nothing.
	ttl := max(int64(s.opts.Poll/time.Millisecond), 0)
	res.TTLMs = &ttl
	res.CacheScope = codec.CacheScopePublic
	return res, nil
}

const cursorPrefix = "after:"

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
