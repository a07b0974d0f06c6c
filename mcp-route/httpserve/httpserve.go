// Package httpserve is mcp-route's Streamable HTTP transport: it serves the
// MCP endpoint /mcp, plus /healthz, /readyz and /metrics, and hands every
// MCP message to the server core (codec/server) through a [server.Conn] of
// its own; it has no protocol logic of its own beyond what HTTP adds
// (headers, sessions, status codes).
//
// # Contract
//
// Each POST to /mcp is one conversation of the core (Backend.Serve): its
// body is the conversation's one input frame, and the conversation ends
// once every request in it has been answered. The answer is one JSON body
// (an array for a 2025-03-26 batch), or an SSE stream (Content-Type
// text/event-stream, Cache-Control: no-store, X-Accel-Buffering: no) when
// the client accepts one and the request needs it: a progress notification
// or a subscriptions/listen's notifications, or an answer later than
// Options.Keepalive, after which a comment line goes out every Keepalive
// so that no proxy times the stream out. A body of notifications or
// responses only gets 202 and no body.
//
// Revisions 2025-03-26, 2025-06-18 and 2025-11-25 use sessions. initialize
// gets an Mcp-Session-Id: a token that holds the negotiated revision, the
// client's info and capabilities and an expiry (issue time + SessionTTL),
// authenticated with HMAC-SHA256 under SessionKey. Nothing is stored: any
// replica with the same key serves any request of the session, and memory
// does not grow with the number of sessions. A later request needs the
// id (400 without it) and an MCP-Protocol-Version header naming a
// revision that has sessions, 2025-03-26, 2025-06-18 or 2025-11-25, not
// necessarily the negotiated one: the spec asks for 400 only for an
// invalid or unsupported version, and the request is served in the
// negotiated revision all the same (400 for any other value, or none; a
// 2025-03-26 session may omit it, that revision did not define it); an id that is forged, from another key or expired
// gets 404, and the client initializes again. The TTL is absolute from
// initialize: a token cannot be re-issued mid-session. DELETE with a valid
// id answers 204: the id stays valid until it expires, there being no
// store to revoke it in (a client that wants it dead forgets it). GET with
// a valid id opens the session's stream, which carries the list_changed
// notifications and notifications/resources/updated (those never go on a
// POST's stream); the Backend learns a POST's or GET's session from its
// Conn's SessionID method. 2024-11-05 is stdio only: an
// initialize asking for it gets 2025-11-25, the newest legacy revision,
// as the spec's negotiation says.
//
// Revision 2026-07-28 is stateless: a request whose _meta names it needs
// MCP-Protocol-Version and Mcp-Method equal to the body's, and Mcp-Name
// equal to params.name (tools/call, prompts/get) or params.uri
// (resources/read); a missing or different one gets 400 with a -32020
// HeaderMismatchError. Any revision: a request that carries
// Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name or an
// Mcp-Param-NAME more than once gets 400 (-32600) naming the header, and
// nothing runs: only one of the values would be checked against the
// body. GET and DELETE without a session get 405.
// A tools/call whose tool's inputSchema marks arguments with
// "x-mcp-header": NAME (Backend.InputSchema, when the Backend has it) needs
// Mcp-Param-NAME equal to each such argument present (numbers compared by
// value; a =?base64?...?= value is decoded first), and none for an absent
// one; otherwise 400 with -32020 as well.
//
// Streams: long-lived streams, GET streams and subscriptions/listen, are
// capped at Options.MaxStreams open at once: one more gets 503 with
// Retry-After and a JSON-RPC error naming --http-max-streams (calls are
// not counted: their own limits are the core's). A session has at most one
// GET stream on a replica: a second gets 409 Conflict, as the TS and
// Python SDK servers answer (the spec lets a client hold several, and
// forbids the server to send a message on more than one; one is all a
// client needs). The cap is per replica: with no shared store, a session
// may hold a GET stream on each replica, each counted against that
// replica's cap. Resumption is not offered: events carry no id, a GET's
// Last-Event-ID is ignored (it opens a new stream; nothing missed is
// replayed), and a cut POST stream cancels its request.
//
// Cancellation: a client that goes away cancels its requests (the core
// stops their tools: TERM, grace, KILL). notifications/cancelled in a
// later POST of the same session reaches the request when it runs in this
// process; on another replica it is dropped (202 all the same), and the
// request runs to its end.
//
// Security: the Host header of every request but /healthz and /readyz
// must be a loopback name (localhost, a loopback address such as 127.0.0.1
// or [::1], any port) or one of Options.AllowHosts (NAME, any port, or
// NAME:PORT; "*" any), unless Options.AnyHost: 421 Misdirected Request
// otherwise. A page that DNS rebinding points at this server sends its own
// host name, so it cannot read /mcp or /metrics. /healthz and /readyz say
// only "ok" or "ready" and are asked by probes under any name (a pod's
// IP), so they are not checked. Options.Tokens (bearer tokens) are
// required on every request but /healthz and /readyz when set: 401 with
// WWW-Authenticate otherwise.
// A request with an Origin header that is neither a loopback origin nor in
// Options.AllowOrigins gets 403 (DNS rebinding). A body over MaxBody gets
// 413; a POST body not in within BodyTimeout gets 408 and the connection
// is closed (the server has no overall read timeout, which would end SSE
// streams); one that ends short (the client half-closed) gets 400 and the
// connection is closed. Malformed JSON gets 400 with -32700.
//
// Listen speaks HTTP/1.1 only, over TLS too (a client that offers HTTP/2
// gets HTTP/1.1): an HTTP/2 stream's write deadline resets the stream
// when it fires, write or no write, so every call longer than
// WriteTimeout would be answered RST_STREAM.
//
// A client that stops reading, or reads too slowly, is cut off (the
// server has no overall write timeout either, for the same reason). Two
// bounds, the earlier wins:
//   - Per write: each write of a response (a JSON body 32 KiB at a time,
//     an SSE event, a keepalive comment, a GET stream's notification, a
//     flush) gets Options.WriteTimeout to complete.
//   - Minimum rate: the body must go out at Options.MinRate, with
//     WriteTimeout of grace. A JSON body (one write) of N bytes must be
//     out within WriteTimeout + N/MinRate of its first byte. On an SSE
//     stream the rate applies to each event (and keepalive comment) from
//     when it is written, not to the stream's lifetime: a stream idle for
//     an hour between events owes nothing for the hour. Events written
//     back to back queue up (the second is due after the first). Without
//     this bound a client reading 32 KiB every WriteTimeout - 1s would keep
//     a 16 MiB result, its handler and its conversation for hours.
//
// A write past its deadline fails, the conversation ends as when the
// client goes away (its requests are cancelled and their tools stopped; a
// stream's slot is freed), and the connection is closed. A reader that
// takes what there is at MinRate or faster gets everything, however big
// the answer or long the stream. Bytes the kernel's socket buffers took
// count as sent: every client gets that head start (some MiB).
//
// DefaultMinRate, 64 KiB/s (512 kbit/s), is below what any broadband or
// mobile data link carries, so a real client, however slow its link, is
// not cut; one at half of it still gets answers up to
// WriteTimeout × MinRate (about 2 MiB at the defaults) plus the kernel's
// head start, which covers nearly every tool result. A trickling attacker
// holds a 16 MiB result for at most 30 s + 256 s instead of hours. Behind
// a proxy that buffers responses (nginx does for JSON bodies), the proxy is
// the client, and it reads at LAN speed.
//
// Drain (Listen does it on SIGTERM) loses no call behind a proxy that
// only knows its replicas from a static list, as nginx's round-robin
// upstream does: /readyz turns 503 at once; no new connection is accepted;
// every request that reaches the handler is served, new POSTs included,
// with Connection: close; the conversations in flight end the core's way
// (their requests get the core's grace to answer, subscriptions and GET
// streams end cleanly, a new GET stream gets 503).
//
// Why it takes that shape: a proxy resends a request to another replica
// only when it knows the first one did not get it. nginx resends a POST
// (tools/call is not idempotent) only when the connect failed or the
// request could not be written; once written, any failure (a reset, a
// 503) is the client's answer, since the call may have run. Three ways
// a draining replica loses calls, and what is done instead:
//   - Answering new POSTs 503: nginx does not resend them (only with
//     proxy_next_upstream http_503 non_idempotent, which also resends a
//     call whose replica died mid-call, running it twice). So a POST that
//     reaches the handler is served, whatever the drain.
//   - Closing an idle kept-alive connection: the proxy may be writing a
//     POST on it at that moment, and gets a reset (nginx: "recv() failed
//     (104: Connection reset by peer) while reading response header from
//     upstream", 502). No closing of idle connections can avoid that race,
//     so the proxy must not keep connections to the replicas (the
//     examples/deploy nginx template has no upstream keepalive: each
//     request connects anew, and only a connection the replica answered
//     with Connection: close is ever closed by the replica).
//   - Closing the listener: the kernel resets the connections still in
//     its accept queue, whose requests the proxy has already written.
//     Listen first makes the listening socket drop new SYNs (a socket
//     filter, Linux), lets the handshakes under way complete and be
//     accepted, and closes the listener once its queue is empty; the
//     proxy's SYN, sent again after 1 s, is then refused, and the proxy
//     tries another replica: nothing was sent.
//
// A client that keeps a connection to the replica itself (no proxy, or a
// proxy with keepalive) may still see its POST on an idle connection
// reset when the drain closes it (Go's net/http resends a POST only when
// it had written none of it).
package httpserve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/server"
)

// Defaults for zero Options fields.
const (
	DefaultSessionTTL = 24 * time.Hour
	DefaultKeepalive  = 15 * time.Second
	DefaultMaxBody    = codec.DefaultMaxFrame
	// DefaultBodyTimeout bounds how long a request body may take to
	// arrive, like the server's 30 s for the headers.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds how long one write of a response (at
	// most 32 KiB of a body, an SSE event, a flush) may take: a client
	// that stops reading is cut off after it.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMinRate is the least rate, in bytes per second, at which a
	// client must take a response body (with DefaultWriteTimeout of
	// grace; see the package doc for why 64 KiB/s).
	DefaultMinRate = 64 << 10
	// DefaultMaxStreams caps the long-lived streams (GET streams and
	// subscriptions/listen) open at once: each holds a connection, a file
	// descriptor and a few goroutines for as long as the client likes.
	DefaultMaxStreams = 1000
	// Path is the MCP endpoint.
	Path = "/mcp"
)

// HTTP header names: codec's, the one copy client and server share.
const (
	HeaderSession  = codec.HeaderSession
	HeaderVersion  = codec.HeaderProtocolVersion
	HeaderMethod   = codec.HeaderMethod
	HeaderName     = codec.HeaderName
	codeHeaderMism = -32020 // HeaderMismatchError
)

// Backend serves conversations: mcp-route's router.Router.
type Backend interface {
	// Serve serves one conversation on conn, continuing session (nil: a
	// new one); it closes conn when it returns.
	Serve(ctx context.Context, conn server.Conn, session *codec.Session) error
	// Ready reports whether the tools are loaded.
	Ready() bool
}

// Options configure a Handler. Fields marked optional have a default.
type Options struct {
	Backend      Backend       // required
	SessionKey   []byte        // optional: the HMAC key of session ids; nil: a random key of this process
	SessionTTL   time.Duration // optional: a session's lifetime from initialize
	Tokens       []string      // optional: bearer tokens, one of which every request must carry
	AllowOrigins []string      // optional: Origin values accepted besides loopback ones
	AllowHosts   []string      // optional: Host names (NAME or NAME:PORT) accepted besides loopback ones; "*" any
	AnyHost      bool          // optional: accept any Host (a bind beyond loopback, reached by names the server cannot know)
	MaxBody      int64         // optional: request body cap in bytes
	BodyTimeout  time.Duration // optional: how long a POST body may take to arrive
	WriteTimeout time.Duration // optional: how long one write of a response may take before the connection is closed
	MinRate      int64         // optional: bytes per second a response body (an SSE event) must go out at, after WriteTimeout of grace
	Keepalive    time.Duration // optional: when a late answer turns SSE, and the comment interval
	MaxStreams   int           // optional: GET streams and subscriptions/listen open at once
	Metrics      *Metrics      // optional: /metrics; nil serves 404 there
	Logger       *slog.Logger  // optional: Warn for refusals worth a look, Debug for routine events
}

// Handler is the HTTP handler of mcp-route --http.
type Handler struct {
	opts     Options
	key      []byte
	draining atomic.Bool
	drainCtx context.Context
	drain    context.CancelFunc
	now      func() time.Time

	mu         sync.Mutex
	live       map[string]*exchange // session id + request id → its exchange, while it runs
	streams    int                  // long-lived streams open (GET, subscriptions/listen)
	getStreams map[string]bool      // session ids with a GET stream open here
	back       backChannel          // questions to clients, log levels (back.go)
}

// New returns a Handler.
func New(opts Options) (*Handler, error) {
	if opts.Backend == nil {
		return nil, errors.New("httpserve: no Backend")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.Keepalive <= 0 {
		opts.Keepalive = DefaultKeepalive
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.MinRate <= 0 {
		opts.MinRate = DefaultMinRate
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, key: opts.SessionKey, now: time.Now, live: map[string]*exchange{}, getStreams: map[string]bool{}}
	if len(h.key) == 0 {
		h.key = randomKey()
	}
	h.drainCtx, h.drain = context.WithCancel(context.Background())
	return h, nil
}

// serve runs one conversation of r; the drain shuts it down. Its
// handlers see the caller (server.CallerOf): a digest of r's bearer
// token when Tokens are set, else anonymous.
func (h *Handler) serve(r *http.Request, x *exchange, sess *codec.Session) {
	h.opts.Backend.Serve(server.WithCaller(h.drainCtx, h.caller(r)), x, sess)
}

// Drain starts the drain (see the package doc): /readyz turns 503, a new
// GET stream gets 503, every answer says Connection: close, and every
// conversation in flight is shut down the core's way (its requests get
// the grace to answer); a POST that still arrives is served. Taking no
// new connection is Listen's part. It returns at once.
func (h *Handler) Drain() {
	// Set before it is said: a reader of the log may ask /readyz at once.
	h.draining.Store(true)
	h.opts.Logger.Info("draining: /readyz is 503, no new connection is taken, the requests under way are answered")
	h.drain()
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w = newDeadlineWriter(w, h.opts.WriteTimeout, h.opts.MinRate)
	if h.draining.Load() {
		// Served, but the connection ends with this answer: the client
		// (the proxy) sends nothing more on it.
		w.Header().Set("Connection", "close")
	}
	switch r.URL.Path {
	case "/healthz":
		io.WriteString(w, "ok\n")
		return
	case "/readyz":
		switch {
		case h.draining.Load():
			http.Error(w, "draining", http.StatusServiceUnavailable)
		case !h.opts.Backend.Ready():
			http.Error(w, "loading tools", http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ready\n")
		}
		return
	}
	if !h.opts.AnyHost && !h.hostAllowed(r.Host) {
		h.opts.Logger.Warn("refused a request for another Host (DNS rebinding?)", slog.String("host", codec.QuoteClip(r.Host, 200)), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr))
		httpError(w, http.StatusMisdirectedRequest, nil, codec.CodeInvalidRequest,
			fmt.Sprintf("misdirected request: Host %s is not served here: not a loopback name (localhost, 127.0.0.1, [::1]) nor in --allow-host", codec.QuoteClip(r.Host, 200)))
		return
	}
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcp-route"`)
		httpError(w, http.StatusUnauthorized, nil, codec.CodeInvalidRequest, "unauthorized: send Authorization: Bearer TOKEN with a token of --http-token-file")
		return
	}
	switch r.URL.Path {
	case "/metrics":
		if h.opts.Metrics == nil {
			http.NotFound(w, r)
			return
		}
		h.opts.Metrics.ServeHTTP(w, r)
		return
	case Path:
	default:
		http.NotFound(w, r)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !h.originAllowed(o) {
		h.opts.Logger.Warn("refused an Origin: not loopback, not in --allow-origin", slog.String("origin", codec.QuoteClip(o, 200)), slog.String("remote", r.RemoteAddr))
		httpError(w, http.StatusForbidden, nil, codec.CodeInvalidRequest, fmt.Sprintf("forbidden: Origin %q is not allowed (see --allow-origin)", o))
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, nil, codec.CodeInvalidRequest, "method not allowed: "+r.Method)
	}
}

func (h *Handler) authorized(r *http.Request) bool {
	if len(h.opts.Tokens) == 0 {
		return true
	}
	// The scheme name is case-insensitive (RFC 9110, 11.1).
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	match := 0
	for _, t := range h.opts.Tokens {
		match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
	}
	return match == 1
}

// originAllowed: loopback origins (a page served from this machine), and
// those listed. A DNS-rebinding page has its attacker's host name here.
func (h *Handler) originAllowed(o string) bool {
	if slices.Contains(h.opts.AllowOrigins, o) || slices.Contains(h.opts.AllowOrigins, "*") {
		return true
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed: a loopback name or address, with any port, and the
// AllowHosts. A page that DNS rebinding points at this server was loaded
// from its attacker's host name, and the browser sends that name here.
func (h *Handler) hostAllowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, a := range h.opts.AllowHosts {
		if a == "*" || strings.EqualFold(a, host) || strings.EqualFold(a, hostport) {
			return true
		}
	}
	return false
}

// session checks r's Mcp-Session-Id and MCP-Protocol-Version; it answers
// the request itself and returns nil when they do not do.
func (h *Handler) session(w http.ResponseWriter, r *http.Request, id string) *claims {
	c, err := verify(h.key, id, h.now())
	if err != nil {
		h.opts.Logger.Debug("session refused", sessionAttr(id), slog.Any("error", err))
		httpError(w, http.StatusNotFound, nil, codec.CodeInvalidRequest, "session not found: "+err.Error()+"; send initialize for a new session")
		return nil
	}
	if err := codec.CheckSessionVersionHeader(r.Header.Get(HeaderVersion), c.Rev); err != nil {
		httpError(w, http.StatusBadRequest, nil, codec.CodeInvalidRequest, "bad request: "+err.Error())
		return nil
	}
	return c
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	// The server has no ReadTimeout (it would end SSE streams): the body
	// gets a deadline of its own, or a sender trickling it would hold a
	// connection and a goroutine for ever. The deadline is lifted once the
	// body is in, for the read that notices the client going away.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			httpError(w, http.StatusRequestEntityTooLarge, nil, codec.CodeInvalidRequest,
				fmt.Sprintf("request body too large: the limit is %d bytes (--max-frame)", mbe.Limit))
		case errors.As(err, &ne) && ne.Timeout():
			h.opts.Logger.Warn("request body not in within --http-body-timeout: refused", slog.String("remote", r.RemoteAddr), slog.Duration("timeout", h.opts.BodyTimeout))
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusRequestTimeout, nil, codec.CodeInvalidRequest,
				fmt.Sprintf("request timeout: the body did not arrive within %s (--http-body-timeout)", h.opts.BodyTimeout))
		default:
			// The body ended short (a client that half-closed, or went
			// away: then this write fails, harmlessly). Nothing ran; an
			// empty 200, what net/http sends when the handler writes
			// nothing, would say otherwise.
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusBadRequest, nil, codec.CodeInvalidRequest, "request body incomplete: "+err.Error())
		}
		return
	}
	msgs, batch, derr := codec.DecodeFrame(body, true)
	var de *codec.DecodeError
	if errors.As(derr, &de) && msgs == nil {
		writeJSON(w, http.StatusBadRequest, de.Response())
		return
	}
	var id *codec.ID
	if !batch && len(msgs) == 1 {
		id = msgs[0].ID
	}
	if !h.singleHeaders(w, r, id) {
		return
	}
	pending := map[string]bool{}
	var first *codec.Message
	for _, m := range msgs {
		if first == nil {
			first = m
		}
		if m.IsRequest() {
			pending[m.ID.Key()] = true
		}
	}
	if first == nil { // a batch of nothing usable: the core answers its errors
		first = &codec.Message{}
	}

	var sess *codec.Session
	var sc *claims
	sid := r.Header.Get(HeaderSession)
	initialize := !batch && first.Method == codec.MethodInitialize && first.IsRequest()
	rev, modern := codec.RequestRevision(first.Params)
	modern = modern && codec.IsModernRevision(rev)
	switch {
	case sid != "" && !initialize:
		c := h.session(w, r, sid)
		if c == nil {
			return
		}
		sess, sc = h.resume(sid, c), c
	case initialize:
		sid = ""
		if rewritten, ok := skip20241105(first); ok {
			body = rewritten
		}
	case modern && !batch:
		if !h.modernHeaders(w, r, first, rev) {
			return
		}
	case !batch && (first.Method == codec.MethodPing || first.Method == codec.MethodDiscover):
		// Answered without a session.
	case len(pending) == 0:
		// Notifications or responses without a session: nothing to route.
		w.WriteHeader(http.StatusAccepted)
		return
	default:
		httpError(w, http.StatusBadRequest, first.ID, codec.CodeInvalidRequest,
			fmt.Sprintf("bad request: no %s header: send initialize first, or a %s request with _meta[%q]", HeaderSession, codec.LatestRevision, codec.MetaProtocolVersion))
		return
	}

	if len(pending) == 0 {
		// Notifications and responses: cancellations go to their request
		// when it runs here; the rest needs nothing of a session token.
		for _, m := range msgs {
			switch {
			case m.Method == codec.MethodCancelled:
				h.routeCancel(sid, m)
			case m.IsResponse():
				h.routeAnswer(sid, m)
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}

	x := newExchange(w, r, body, pending, h.opts.Keepalive)
	x.sid = sid
	x.carriesLists = first.Method == codec.MethodSubscriptionsListen
	if x.carriesLists {
		if !h.openStream(w, first.ID, "") {
			return
		}
		defer h.closeStream("")
	}
	if sid != "" {
		h.register(sid, x)
		defer h.unregister(sid, x)
	}
	x.ask = h.asking(sid, x)
	defer h.forgetAsks(x)
	if !initialize { // its answer carries the session id header: JSON only
		x.startKeepalive()
	}
	h.serve(r, x, sess)
	if sc != nil {
		h.keepLevel(sid, sc, sess)
	}
	out, isBatch, sse := x.answers()
	if sse {
		return
	}
	if initialize && len(out) == 1 {
		if id := h.newSession(first, out[0]); id != "" {
			w.Header().Set(HeaderSession, id)
		}
	}
	switch {
	case len(out) == 0:
		w.WriteHeader(http.StatusAccepted)
	case isBatch || len(out) > 1: // a batch, or one refused request by request
		writeJSON(w, http.StatusOK, out)
	default:
		writeJSON(w, http.StatusOK, out[0])
	}
}

// skip20241105 rewrites an initialize asking for 2024-11-05, a revision
// without Streamable HTTP, to ask for the newest legacy one: the core's
// negotiation then answers that, as the spec says a server does for a
// version it does not support.
func skip20241105(m *codec.Message) ([]byte, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil || string(p["protocolVersion"]) != `"`+codec.Rev20241105+`"` {
		return nil, false
	}
	p["protocolVersion"], _ = json.Marshal(codec.LatestLegacyRevision)
	params, err := json.Marshal(p)
	if err != nil {
		return nil, false
	}
	m2 := *m
	m2.Params = params
	b, err := json.Marshal(&m2)
	return b, err == nil
}

// newSession issues the session id for a successful initialize.
func (h *Handler) newSession(req, resp *codec.Message) string {
	if resp.Error != nil {
		return ""
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || !codec.IsLegacyRevision(res.ProtocolVersion) {
		return ""
	}
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ClientInfo   json.RawMessage `json:"clientInfo"`
	}
	json.Unmarshal(req.Params, &p)
	now := h.now()
	if h.opts.Metrics != nil {
		h.opts.Metrics.sessions.Inc()
	}
	return issue(h.key, claims{
		Rev:     res.ProtocolVersion,
		Issued:  now.Unix(),
		Expires: now.Add(h.opts.SessionTTL).Unix(),
		Client:  p.ClientInfo,
		Caps:    p.Capabilities,
	})
}

// modernHeaders checks a 2026-07-28 request's headers against its body.
func (h *Handler) modernHeaders(w http.ResponseWriter, r *http.Request, m *codec.Message, rev string) bool {
	mismatch := func(header, got, want string) bool {
		msg := fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value '%s'", header, got, want)
		if got == "" {
			msg = fmt.Sprintf("Header mismatch: missing required %s header (body value '%s')", header, want)
		}
		httpError(w, http.StatusBadRequest, m.ID, codeHeaderMism, msg)
		return false
	}
	if got := r.Header.Get(HeaderVersion); got != rev {
		return mismatch(HeaderVersion, got, rev)
	}
	if got := r.Header.Get(HeaderMethod); got != m.Method {
		return mismatch(HeaderMethod, got, m.Method)
	}
	name := paramString(m.Params, "name")
	want := ""
	if p := codec.NameParam(m.Method); p != "" {
		want = paramString(m.Params, p)
	}
	// The client encodes a name that is not plain ASCII
	// (codec.EncodeHeaderValue): compare what it stands for.
	if got := r.Header.Get(HeaderName); want != "" {
		if dec, err := codec.DecodeHeaderValue(got); err != nil || dec != want {
			return mismatch(HeaderName, got, want)
		}
	}
	if sc, ok := h.opts.Backend.(schemas); ok && m.Method == codec.MethodToolsCall && name != "" {
		// Before the first load there is no schema to check against, and
		// an unchecked call would run once the load ends: wait for it, as
		// the call itself would.
		if !waitReady(r.Context(), h.opts.Backend) {
			return false // the client went away
		}
		if msg := checkParams(r.Header, sc.InputSchema(name), m.Params); msg != "" {
			httpError(w, http.StatusBadRequest, m.ID, codeHeaderMism, msg)
			return false
		}
	}
	return true
}

// singleHeaders refuses (400) a request that carries one of the MCP
// headers more than once, naming it, and returns false: the check of the
// body against the headers reads the first, and a proxy or a log may
// believe the other.
func (h *Handler) singleHeaders(w http.ResponseWriter, r *http.Request, id *codec.ID) bool {
	name, n := "", 0
	for _, k := range codec.SingleHeaders {
		if len(r.Header[k]) > 1 {
			name, n = k, len(r.Header[k])
			break
		}
	}
	if name == "" {
		for k, v := range r.Header {
			if len(v) > 1 && strings.HasPrefix(k, codec.HeaderParamPrefix) && (name == "" || k < name) {
				name, n = k, len(v)
			}
		}
	}
	if name == "" {
		return true
	}
	h.opts.Logger.Warn("refused a request with a repeated header", slog.String("header", name), slog.Int("times", n), slog.String("remote", r.RemoteAddr))
	httpError(w, http.StatusBadRequest, id, codec.CodeInvalidRequest,
		fmt.Sprintf("bad request: header %s appears %d times: send it once", name, n))
	return false
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !h.singleHeaders(w, r, nil) {
		return
	}
	sid := r.Header.Get(HeaderSession)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, nil, codec.CodeInvalidRequest,
			"method not allowed: GET opens a legacy session's stream and needs "+HeaderSession+"; 2026-07-28 has no GET stream")
		return
	}
	c := h.session(w, r, sid)
	if c == nil {
		return
	}
	if !accepts(r, "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, nil, codec.CodeInvalidRequest, "not acceptable: the GET stream is text/event-stream")
		return
	}
	if h.draining.Load() {
		httpError(w, http.StatusServiceUnavailable, nil, codec.CodeInternalError, "server draining")
		return
	}
	if !h.openStream(w, nil, sid) {
		return
	}
	defer h.closeStream(sid)
	sess, _ := codec.ResumeSession(c.Rev)
	x := newExchange(w, r, nil, nil, h.opts.Keepalive)
	x.sid = sid
	x.carriesLists = true
	x.mu.Lock()
	x.toSSE()
	x.mu.Unlock()
	x.startKeepalive()
	h.serve(r, x, sess)
}

// openStream takes a slot for a long-lived stream, a GET stream of
// session sid or (sid "") a subscriptions/listen; when there is none it
// answers the request itself and returns false: 409 for a second GET
// stream of a session here, 503 when MaxStreams are open.
func (h *Handler) openStream(w http.ResponseWriter, id *codec.ID, sid string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sid != "" && h.getStreams[sid] {
		h.opts.Logger.Debug("refused a second GET stream of a session", sessionAttr(sid))
		httpError(w, http.StatusConflict, id, codec.CodeInvalidRequest,
			"conflict: this session already has a GET stream open here (one per session): keep using it, or close it first")
		return false
	}
	if h.streams >= h.opts.MaxStreams {
		h.opts.Logger.Warn("refused a stream: the limit is open (--http-max-streams)", slog.Int("open", h.streams))
		w.Header().Set("Retry-After", "5")
		httpError(w, http.StatusServiceUnavailable, id, codec.CodeInternalError,
			fmt.Sprintf("too many streams: %d GET streams and subscriptions are open, the server's limit (--http-max-streams); try again later", h.streams))
		return false
	}
	h.streams++
	if sid != "" {
		h.getStreams[sid] = true
	}
	if h.opts.Metrics != nil {
		h.opts.Metrics.streams.Inc()
	}
	return true
}

func (h *Handler) closeStream(sid string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams--
	delete(h.getStreams, sid)
	if h.opts.Metrics != nil {
		h.opts.Metrics.streams.Dec()
	}
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	if !h.singleHeaders(w, r, nil) {
		return
	}
	sid := r.Header.Get(HeaderSession)
	if sid == "" {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, nil, codec.CodeInvalidRequest, "method not allowed: DELETE ends a legacy session and needs "+HeaderSession)
		return
	}
	if h.session(w, r, sid) == nil {
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// register and unregister track an exchange's requests while it runs, so
// that a notifications/cancelled of the same session can reach them.
func (h *Handler) register(sid string, x *exchange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range x.pending {
		h.live[sid+"\x00"+k] = x
	}
}

func (h *Handler) unregister(sid string, x *exchange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, v := range h.live {
		if v == x && strings.HasPrefix(k, sid+"\x00") {
			delete(h.live, k)
		}
	}
}

func (h *Handler) routeCancel(sid string, m *codec.Message) {
	var p codec.CancelledParams
	if sid == "" || json.Unmarshal(m.Params, &p) != nil || p.RequestID == nil {
		return
	}
	key := p.RequestID.Key()
	h.mu.Lock()
	x := h.live[sid+"\x00"+key]
	h.mu.Unlock()
	if x == nil {
		h.opts.Logger.Debug("notifications/cancelled: not running on this replica", slog.String("id", p.RequestID.Value()), sessionAttr(sid))
		return
	}
	frame, err := json.Marshal(m)
	if err != nil {
		return
	}
	select {
	case x.inject <- frame:
		x.forget(key)
	default:
	}
}

// httpError answers with status and a JSON-RPC error body.
func httpError(w http.ResponseWriter, status int, id *codec.ID, code int, msg string) {
	writeJSON(w, status, codec.NewErrorResponse(id, codec.Errorf(code, "%s", msg)))
}

// writeJSON answers with status and msg (a *codec.Message, or a batch of
// them) as a JSON body, encoded as the codec encodes a frame: messages the
// codec built need no second pass to check or compact them.
func writeJSON(w http.ResponseWriter, status int, msg any) {
	var body bytes.Buffer
	cw := codec.NewWriter(&body)
	var err error
	if batch, ok := msg.([]*codec.Message); ok {
		err = cw.WriteBatch(batch)
	} else {
		err = cw.Write(msg)
	}
	if err != nil {
		status = http.StatusInternalServerError
		body.Reset()
		body.WriteString(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error: encoding the answer"}}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body.Bytes())
}

// sessionAttr is the session attribute of a record: a digest of the
// Mcp-Session-Id (the router's records carry the same), not the id, which
// authenticates the session and would give a reader of the log its use.
func sessionAttr(sid string) slog.Attr {
	sum := sha256.Sum256([]byte(sid))
	return slog.String("session", hex.EncodeToString(sum[:8]))
}

// waitReady waits until b has loaded its tools, or ctx is done (false).
func waitReady(ctx context.Context, b Backend) bool {
	for !b.Ready() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}
