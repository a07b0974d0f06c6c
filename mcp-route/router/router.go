// Package router is mcp-route's tool routing: it serves tools/list and
// tools/call from the tool executables of a registry.Registry, run under
// package runner, as methods of one codec/server conversation. The protocol
// itself (both eras, server/discover, initialize, ping, batches, the
// in-flight table and notifications/cancelled, subscriptions/listen,
// shutdown) is codec/server's; see its package doc.
//
// tools/list is paginated (Options.PageSize per page) with an opaque cursor
// naming the last tool of the previous page, so a reload between pages
// neither repeats nor skips a tool that stayed; a cursor that does not
// decode is -32602. Results for 2026-07-28 requests carry ttlMs (the poll
// interval; 0 without polling) and cacheScope.
//
// tools/call: an unknown tool or malformed params is -32602 (the error, and
// so the log, quote at most 200 bytes of an unknown name: a client's 1 MB
// name does not make a 1 MB log line); arguments that
// do not match the tool's inputSchema get an isError result naming the field,
// and nothing runs. Otherwise the tool runs with at most Options.MaxProcs
// processes at a time (the rest wait in arrival order of their goroutines),
// and each response is written when its call finishes. At most
// Options.MaxQueue calls wait: a tools/call beyond that is answered at once
// with an isError result "server busy: N calls queued; try again later"
// (before its params are looked at), so a client flooding tools/call cannot
// grow the server's memory without bound. A tool result rather than a
// JSON-RPC error: the refusal reaches the model, which can retry, the way
// every other failure of a call does. A notifications/cancelled for a
// pending call kills its process group and suppresses its response. Lines
// the tool writes to fd 3 become notifications/progress when the request
// carried _meta.progressToken; malformed ones are logged and dropped.
//
// A tool whose run.mode is "worker" runs on a persistent worker of package
// mcp-route/worker instead of a process per call: same checks, same result
// modes and caps, same progress, cancellation and timeout rules (see that
// package's doc). Each call in flight holds one of the Options.MaxProcs
// slots, exec'd or on a worker; idle workers hold none. The pools live as
// long as Serve: when it returns every worker has been stopped and reaped.
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
// Upstream MCP servers (Options.Upstreams, package mcp-route/upstream) add
// their tools as NAME__TOOL: tools/list merges them with the local ones,
// sorted and paginated alike (waiting for an upstream's first list at most
// its --upstream-timeout), and a tools/call of one is forwarded. A
// forwarded call holds no MaxProcs slot (it starts no process, and a slow
// upstream must not starve the local tools) but counts for MaxQueue
// admission, and is observed with started false. A name both a local tool
// and an upstream tool claim is served by neither: it is left out of
// tools/list with one log line, and a call of it gets an isError result
// saying so. An upstream's list change reaches the clients like a local
// one. Their resources, resource templates and prompts are served beside
// the local surface the same way (upsurface.go).
//
// The tool directories are polled (Options.Poll), and re-read by each
// tools/list: the re-read (which may run a new tool's --mcp-describe) runs
// on that request's goroutine, so ping, server/discover and every other
// request are answered meanwhile. When the advertised list changes, the
// conversation's ListChanged sends notifications/tools/list_changed to an
// initialized legacy session and to every open 2026-07-28
// subscriptions/listen that asked for it. The first load runs in the
// background; tools/list and tools/call wait for it.
//
// Shutdown (codec/server): when the input ends or ctx is done, reading and
// the poll stop, queued and running calls get Options.Grace to finish and
// their responses are written, then the rest are killed (their requests get
// an isError result "canceled: server shutting down"). When the client
// closes its end of the output, every call is killed at once: nothing could
// carry its answer. Serve writes nothing but protocol messages to its
// output; events go to Options.Logger, one record each: Warn for what an
// operator must see (failures worth a look, errors), Debug for routine
// events (a call that went
// fine, initialize, shutdown), one line each. A call's records carry the
// attributes tool, id (the JSON-RPC request id, as a string) and, over
// HTTP, session (a digest of the Mcp-Session-Id, never the id); its end
// record ("call ended", "call failed", "call: bad result") adds outcome
// (as Observe's) and elapsed, and upstream for an upstream's tool.
//
// Serve may be called concurrently with distinct streams; one call serves one
// stream. New returns a Router whose tools, MaxProcs slots, MaxQueue
// admission and worker pools are shared by every conversation of
// Router.Serve: the Streamable HTTP transport (mcp-route/httpserve) serves
// one conversation per HTTP request on it, and list changes go to every
// conversation open at the time. The goroutine reading the input can outlive Serve when the input
// never returns from Read (a terminal); closing the input ends it.
package router

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
	"github.com/mcpipe/mcpipe/internal/proc"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/surface"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
	"github.com/mcpipe/mcpipe/mcp-route/worker"
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
	Registry   *registry.Registry          // required; Serve loads it (Reload) in the background
	ServerInfo codec.Implementation        // required: name and version
	Root       string                      // required: cwd of every tool, MCP_ROOT
	Env        []string                    // required: the base environment of every tool ("NAME=value")
	LookupEnv  func(string) (string, bool) // optional: the router's environment, for run.passEnv; nil means none
	Timeout    time.Duration               // optional: per-call timeout (a tool's run.timeout wins)
	MaxOutput  int64                       // optional: stdout cap (a tool's run.maxOutput wins)
	MaxProcs   int                         // optional: tool processes at once
	MaxQueue   int                         // optional: calls that may wait for a process slot; < 0: none may wait
	Grace      time.Duration               // optional: SIGTERM→SIGKILL delay, and shutdown wait
	MaxFrame   int                         // optional: input frame cap, codec.DefaultMaxFrame
	PageSize   int                         // optional: tools per tools/list page
	Poll       time.Duration               // optional: tool directory poll interval; < 0 disables polling
	Spawn      func(*exec.Cmd) error       // optional: starts every tool process (runner.Spec.Spawn: the confinement); nil: cmd.Start
	Limits     proc.Limits                 // optional: limits of each tool process tree, a call's or a worker's (a tool's run.limit* wins per field)
	// Confirm, optional, is the approval gate (--confirm): the calls it
	// names run only once the user approved them (confirm.go).
	Confirm *Confirm
	// StateKey, optional, authenticates the requestState of 2026-07-28
	// approvals (confirm_modern.go): replicas that share it continue each
	// other's. nil: a random key of this process.
	StateKey []byte
	// Upstreams, optional, are the upstream MCP servers whose tools are
	// served as NAME__TOOL beside the local ones (package
	// mcp-route/upstream). The caller starts and closes the Set.
	Upstreams *upstream.Set
	// Surface, optional, is the resources and prompts served beside the
	// tools (package mcp-route/surface; see surface.go). New loads it
	// and polls it with the tool directories.
	Surface *surface.Set
	// Observe, optional, is told of every finished tools/call that ran
	// or was refused busy: the tool, the outcome (ok, tool_error, timeout,
	// canceled, busy, failed), the time it took, whether a process was
	// started for it and whether that process was stopped (cancelled,
	// timed out, over the output cap). For metrics.
	Observe func(tool, outcome string, elapsed time.Duration, started, killed bool)
	Logger  *slog.Logger // optional: Warn: events an operator must see (timeouts, kills, output caps, bad results, errors); Debug: routine events (a call ok, initialize, shutdown); nil logs nothing
	// Loaded, optional, is called once, on the loading goroutine, when the
	// first load of the tools is done and before tools/list or tools/call
	// are served (mcp-route's stdio server drops to one processor there:
	// the load compiles schemas in parallel, serving does not need to).
	Loaded func()
	// Explain, optional, reads a failed call's isError text (its outcome
	// and the end of its stderr) for a path the confinement refused
	// (confinement.Confinement.ExplainFailure): the sentence is added to
	// the text, and a Warn record with the attributes says it to the
	// operator, even for a failure that is otherwise routine.
	Explain func(failure string) (note string, attrs []slog.Attr, ok bool)
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
}

// Router is the tool routing shared by every conversation of one process:
// the registry's first load and poll, the MaxProcs process slots, the
// MaxQueue admission and the worker pools. A stdio server has one
// conversation (Serve, ServeConn); the Streamable HTTP transport starts one
// per HTTP request (Router.Serve), all routed to the same tools, slots and
// workers. Build it with New; Close it once every conversation has ended.
type Router struct {
	opts   Options
	sem    chan struct{} // MaxProcs slots
	loaded chan struct{} // closed after the first Registry.Reload
	// workers are the pools of the tools in worker mode, stopped by Close.
	workers *worker.Pools

	specMu sync.Mutex
	specs  map[*registry.Tool]worker.Spec // see workerSpec
	// admitted counts the tools/call requests running or waiting for a
	// slot, across conversations: MaxProcs+MaxQueue at most.
	admitted atomic.Int64

	mu    sync.Mutex
	convs map[*core.Server]struct{} // the conversations being served: ListChanged goes to each
	// clashes are the names both a local and an upstream tool claim,
	// already logged.
	clashes map[string]bool
	// subs are the resource subscriptions by subscriber (subscriberOf),
	// and subscriber the key of each conversation being served.
	subs       map[any]map[string]bool
	subscriber map[*core.Server]any
	// subsUsed is when each subscriber last subscribed: when the table
	// is full, the one idle longest with no conversation open is evicted.
	subsUsed map[any]time.Time

	stopLoad, stopPoll context.CancelFunc
	watch              sync.WaitGroup
	closeOnce          sync.Once
}

// server is the Router under the name the handlers were written with.
type server = Router

// New returns a Router and starts loading the tools in the background
// (tools/list and tools/call wait for the first load; Ready tells when it
// is done), then polls the tool directories until ctx is done or Close.
func New(ctx context.Context, opts Options) (*Router, error) {
	if opts.Registry == nil {
		return nil, errors.New("router: no Registry")
	}
	opts.defaults()
	if len(opts.StateKey) == 0 {
		opts.StateKey = make([]byte, 32)
		rand.Read(opts.StateKey)
	}
	s := &Router{
		opts:   opts,
		sem:    make(chan struct{}, opts.MaxProcs),
		loaded: make(chan struct{}),
		convs:  map[*core.Server]struct{}{},
		specs:  map[*registry.Tool]worker.Spec{},
	}
	s.workers = worker.New(worker.Options{Grace: opts.Grace, Logger: opts.Logger})
	if opts.Upstreams != nil {
		opts.Upstreams.OnChange(s.listChanged)
		opts.Upstreams.OnSurfaceChange(s.surfaceListChanged)
		opts.Upstreams.OnResourceUpdated(s.resourceUpdated)
	}
	if opts.Surface != nil {
		opts.Surface.SetRun(s.runSurface)
	}
	// The first load may run --mcp-describe for every tool; requests that
	// do not need the tools (server/discover, initialize, ping) are served
	// meanwhile, and tools/list and tools/call wait for it (s.loaded). The
	// load goes on while requests in flight may still need it, until Close.
	loadCtx, stopLoad := context.WithCancel(context.WithoutCancel(ctx))
	pollCtx, stopPoll := context.WithCancel(ctx)
	s.stopLoad, s.stopPoll = stopLoad, stopPoll
	s.watch.Add(1)
	go func() {
		defer s.watch.Done()
		opts.Registry.Reload(loadCtx)
		s.checkConfirmNames()
		s.watchSurface(pollCtx)
		if opts.Loaded != nil {
			opts.Loaded()
		}
		close(s.loaded)
		if opts.Poll > 0 {
			opts.Registry.Watch(pollCtx, opts.Poll, s.listChanged)
		}
	}()
	return s, nil
}

// Ready reports whether the first load of the tools is done.
func (s *Router) Ready() bool {
	select {
	case <-s.loaded:
		return true
	default:
		return false
	}
}

// Load returns the tools/call requests running and those waiting for a
// process slot, across conversations.
func (s *Router) Load() (running, queued int) {
	running = len(s.sem)
	return running, max(int(s.admitted.Load())-running, 0)
}

// InputSchema returns the inputSchema of the tool called name, nil when
// there is no such tool (the HTTP transport checks Mcp-Param-* headers
// against the arguments it marks with x-mcp-header).
func (s *Router) InputSchema(name string) json.RawMessage {
	if t := s.opts.Registry.Lookup(name); t != nil {
		return t.Def.InputSchema
	}
	if s.opts.Upstreams != nil && s.opts.Upstreams.Has(name) {
		if t := s.opts.Upstreams.Lookup(context.Background(), name); t != nil {
			return t.Def.InputSchema
		}
	}
	return nil
}

// SetObserver sets Options.Observe; call it before the first conversation.
func (s *Router) SetObserver(f func(tool, outcome string, elapsed time.Duration, started, killed bool)) {
	s.opts.Observe = f
}

// StopPolling stops watching the tool directories: the process is shutting
// down, no list will be asked for again.
func (s *Router) StopPolling() { s.stopPoll() }

// Close stops the poll and the load, and every worker; call it once every
// conversation has ended (their calls have been answered or given up).
func (s *Router) Close() {
	s.closeOnce.Do(func() {
		s.workers.Close()
		s.stopPoll()
		s.stopLoad()
		s.watch.Wait()
	})
}

// Serve serves one conversation on conn with the router's tools; session is
// the legacy session it continues (codec.ResumeSession), nil for a new
// one. conn is closed when Serve returns.
func (s *Router) Serve(ctx context.Context, conn core.Conn, session *codec.Session) error {
	conv := core.New(core.Options{
		ServerInfo:   s.opts.ServerInfo,
		Capabilities: s.capabilities(),
		DiscoverTTL:  time.Duration(DiscoverTTL) * time.Millisecond,
		Grace:        s.opts.Grace,
		Logger:       s.opts.Logger,
		Session:      session,
	})
	conv.HandleFunc(codec.MethodToolsList, s.list)
	key := subscriberOf(conv, conn)
	conv.Handle(codec.MethodToolsCall, core.Method{
		// Who called: an upstream's question goes only to the client
		// whose call it can be for (upstream.WithAsker).
		Handler: func(ctx context.Context, req *core.Request) (any, error) {
			return s.call(context.WithValue(ctx, clientKey{}, key), req)
		},
		Limit:  s.limit(),
		Refuse: s.busy,
	})
	s.registerSurface(conv)
	s.mu.Lock()
	s.convs[conv] = struct{}{}
	if s.subscriber == nil {
		s.subscriber = map[*core.Server]any{}
	}
	s.subscriber[conv] = key
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.convs, conv)
		delete(s.subscriber, conv)
		if key == any(conv) {
			delete(s.subs, key)
			delete(s.subsUsed, key)
		}
		s.mu.Unlock()
	}()
	return conv.Serve(withSession(ctx, conn), conn)
}

// limit is how many tools/call requests may be admitted at once.
func (s *Router) limit() int { return s.opts.MaxProcs + max(s.opts.MaxQueue, 0) }

// Serve serves one MCP stream: requests from in, messages to out. See the
// package doc. It returns nil after an orderly shutdown (input ended, output
// closed or ctx done), or an error when Options are unusable. When in is a
// pipe (an *os.File), it is read through a non-blocking description of
// the same pipe opened for Serve alone, closed when Serve returns; the
// caller's descriptor and its flags are left as they are.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	in, closeIn := pollableInput(in)
	defer closeIn()
	out, closeOut := pollableOutput(out)
	defer closeOut()
	return ServeConn(ctx, core.NewStreamConn(in, out, opts.MaxFrame), opts)
}

// ServeConn is Serve on any transport; opts.MaxFrame is the transport's
// business and is ignored here. conn is closed when ServeConn returns. The
// tool directories are polled until the conversation stops reading.
func ServeConn(ctx context.Context, conn core.Conn, opts Options) error {
	s, err := New(ctx, opts)
	if err != nil {
		conn.Close()
		return err
	}
	// The poll stops when the conversation stops reading: it watches the
	// conn's reads through a wrapper that tells when they end.
	err = s.Serve(ctx, &pollStopper{Conn: conn, stop: s.stopPoll}, nil)
	// Every call has been answered or given up: no worker has one left.
	s.Close()
	return err
}

// pollStopper stops the poll once Read fails: the conversation is over.
type pollStopper struct {
	core.Conn
	stop func()
}

func (p *pollStopper) Read(ctx context.Context) ([]byte, error) {
	b, err := p.Conn.Read(ctx)
	if err != nil && !errors.Is(err, codec.ErrFrameTooLarge) {
		p.stop()
	}
	return b, err
}

// listChanged tells every conversation that the tool list changed.
func (s *Router) listChanged() {
	s.mu.Lock()
	convs := make([]*core.Server, 0, len(s.convs))
	for c := range s.convs {
		convs = append(convs, c)
	}
	s.mu.Unlock()
	for _, c := range convs {
		c.ListChanged(codec.MethodToolsListChanged)
	}
}

// busy answers a tools/call beyond MaxProcs running and MaxQueue waiting,
// before its params are looked at; the log says so once per busy spell.
func (s *server) busy(inFlight int, first bool) (any, error) {
	// Admitted calls hold a slot or wait for one.
	queued := max(inFlight-len(s.sem), 0)
	if first {
		s.opts.Logger.Warn("server busy: refusing further calls until one finishes", slog.Int("running", len(s.sem)), slog.Int("queued", queued))
	}
	return codec.ErrorResult(fmt.Sprintf("server busy: %d calls queued; try again later", queued)), nil
}

// waitLoaded waits for the first load of the tools, or for ctx.
func (s *server) waitLoaded(ctx context.Context) error {
	select {
	case <-s.loaded:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// list answers tools/list: one page, after a reload check. The reload may
// run --mcp-describe for a new tool: it runs on this request's goroutine,
// never on the read loop.
func (s *server) list(ctx context.Context, req *core.Request) (any, error) {
	var p codec.ListToolsParams
	if params := req.Params; len(params) > 0 && string(params) != "null" {
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
	if err := s.waitLoaded(ctx); err != nil {
		return nil, codec.Errorf(codec.CodeInternalError, "canceled: %v", err)
	}
	// The registry cancels a load only at shutdown (registry.Reload): a
	// client that cancels its tools/list does not cut the re-read short
	// for the requests waiting behind it.
	reloadCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), core.ErrShutdown) {
			stop()
		}
	})()
	if s.opts.Registry.Reload(reloadCtx) {
		s.listChanged()
	}
	rev := req.Revision
	all := s.served(ctx)
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(all, after, func(t codec.Tool, name string) int {
			return strings.Compare(t.Name, name)
		})
		if start < len(all) && all[start].Name == after {
			start++
		}
	}
	end := min(start+s.opts.PageSize, len(all))
	res := codec.ListToolsResult{Tools: make([]codec.Tool, 0, end-start)}
	for _, t := range all[start:end] {
		// Older revisions get only the members they define.
		res.Tools = append(res.Tools, codec.ToolFor(rev, t))
	}
	if end < len(all) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + all[end-1].Name))
	}
	// ttlMs is the poll interval: the list may change that often. Without
	// polling, every tools/list re-reads the directories: cache nothing.
	ttl := max(int64(s.opts.Poll/time.Millisecond), 0)
	res.TTLMs = &ttl
	res.CacheScope = codec.CacheScopePublic
	return res, nil
}

// served is every tool served, sorted by name: the local ones and the
// upstreams' (which waits at most --upstream-timeout, see
// upstream.Set.List). A name both a local tool and an upstream tool claim
// is served by neither, and logged once per clash: which one the client
// meant cannot be known, and serving either would hide the other.
func (s *server) served(ctx context.Context) []codec.Tool {
	local := s.opts.Registry.Tools()
	if s.opts.Upstreams == nil {
		out := make([]codec.Tool, len(local))
		for i, t := range local {
			out[i] = t.Def
		}
		return out
	}
	ups := s.opts.Upstreams.List(ctx)
	out := make([]codec.Tool, 0, len(local)+len(ups))
	i, j := 0, 0
	for i < len(local) || j < len(ups) {
		switch {
		case j == len(ups) || (i < len(local) && local[i].Def.Name < ups[j].Def.Name):
			out = append(out, local[i].Def)
			i++
		case i == len(local) || ups[j].Def.Name < local[i].Def.Name:
			out = append(out, ups[j].Def)
			j++
		default:
			s.clash(local[i].Def.Name, ups[j])
			i++
			j++
		}
	}
	return out
}

// clash logs, once, a name both a local tool and an upstream tool claim.
func (s *server) clash(name string, t *upstream.Tool) {
	s.mu.Lock()
	seen := s.clashes[name]
	if s.clashes == nil {
		s.clashes = map[string]bool{}
	}
	s.clashes[name] = true
	s.mu.Unlock()
	if !seen {
		s.opts.Logger.Warn("tool left out", slog.String("tool", name), slog.String("upstream", t.Upstream.Name()), slog.String("why", clashText(name, t)))
	}
}

func clashText(name string, t *upstream.Tool) string {
	return fmt.Sprintf("both a local tool and upstream %s's tool %q are named %s; neither is served until one is renamed", t.Upstream.Name(), t.Name, name)
}

const cursorPrefix = "after:"

// logCall logs one event of the call id of tool: the record carries tool,
// id (the JSON-RPC request id), session (over HTTP) and attrs.
func (s *server) logCall(ctx context.Context, level slog.Level, msg, tool string, id codec.ID, attrs ...slog.Attr) {
	l := s.opts.Logger
	if !l.Enabled(ctx, level) {
		return
	}
	a := make([]slog.Attr, 0, 3+len(attrs))
	a = append(a, slog.String("tool", tool), slog.String("id", id.Value()))
	if sess, _ := ctx.Value(sessionKey{}).(string); sess != "" {
		a = append(a, slog.String("session", sess))
	}
	l.LogAttrs(ctx, level, msg, append(a, attrs...)...)
}

// sessionKey is the context key of the session attribute of a
// conversation's records.
type sessionKey struct{}

// withSession returns ctx carrying the session of conn, when it has one
// (HTTP), for the call records: a digest of the Mcp-Session-Id, not the
// id itself, which authenticates the session and would give a reader of
// the log its use.
func withSession(ctx context.Context, conn core.Conn) context.Context {
	sc, ok := conn.(interface{ SessionID() string })
	if !ok || sc.SessionID() == "" {
		return ctx
	}
	sum := sha256.Sum256([]byte(sc.SessionID()))
	return context.WithValue(ctx, sessionKey{}, hex.EncodeToString(sum[:8]))
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}
