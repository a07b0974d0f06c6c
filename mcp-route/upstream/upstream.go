package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/internal/confine"
)

// state is where an upstream's supervision is.
type state int

const (
	starting   state = iota // a process is being started and connected
	up                      // connected and listed: calls are forwarded
	restarting              // waiting for the next start after a death or a failed start
	down                    // MaxFailures failed starts in a row: retried at MaxBackoff
	stopped                 // Close
)

// Upstream is one supervised upstream server. Its methods are safe for
// concurrent use.
type Upstream struct {
	spec   Spec
	opts   *Options
	notify func() // the Set's: the tool list changed
	// notifySurface is the Set's: the resources (res) or prompts (prs)
	// changed.
	notifySurface func(res, prs bool)
	// updated is the Set's: the upstream sent notifications/resources/updated.
	updated func(u *Upstream, own string)
	relist  chan struct{}
	tokens  atomic.Int64
	// waitedOut is set when a List waited ListTimeout for the first list
	// in vain: no request waits for it again.
	waitedOut atomic.Bool

	mu       sync.Mutex
	st       state
	changed  chan struct{} // closed and replaced at every state change
	conn     *link
	retryAt  time.Time
	lastErr  string
	failures int // failed starts in a row
	// connected: a start has listed its tools once; Spec.FirstConnect
	// no longer applies.
	connected bool
	tools     []codec.Tool // the last good list, as the upstream gave it
	left      []leftOut    // what listTools left out of it
	listed    chan struct{}
	listOnce  sync.Once
	progress  map[string]chan codec.ProgressParams // our token → the call's progress queue
	noise     noiseLimit                           // the protocol errors logged
	errNoise  noiseLimit                           // the stderr lines logged (max MaxStderrLines)
	acked     chan struct{}                        // closed by the acknowledgement of the listen being opened
	surf      surfaceLists                         // the last resources, templates and prompts listed
	askers    askers                               // the calls in flight whose client may be asked (--upstream-allow)
}

// listenAckWait bounds the wait for a modern upstream's acknowledgement of
// subscriptions/listen before its first tools/list.
const listenAckWait = 5 * time.Second

func newUpstream(spec Spec, opts *Options, notify func()) *Upstream {
	return &Upstream{
		spec:          spec,
		opts:          opts,
		notify:        notify,
		notifySurface: func(bool, bool) {},
		relist:        make(chan struct{}, 1),
		changed:       make(chan struct{}),
		listed:        make(chan struct{}),
		progress:      map[string]chan codec.ProgressParams{},
		errNoise:      noiseLimit{max: MaxStderrLines},
	}
}

// Name is the upstream's NAME.
func (u *Upstream) Name() string { return u.spec.Name }

// Spec is how the upstream is started.
func (u *Upstream) Spec() Spec { return u.spec }

// Tools returns the last good tool list, as the upstream gave it (names
// unprefixed, nothing filtered), or nil before the first one.
func (u *Upstream) Tools() []codec.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slicesClone(u.tools)
}

// WaitListed waits until the upstream has listed its tools once, or its
// first start has failed (the error says why), or ctx is done.
func (u *Upstream) WaitListed(ctx context.Context) error {
	select {
	case <-u.listed:
	case <-ctx.Done():
		return fmt.Errorf("upstream %s: no tool list yet: %w", u.spec.Name, context.Cause(ctx))
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.tools == nil && u.lastErr != "" {
		return fmt.Errorf("upstream %s: %s", u.spec.Name, u.lastErr)
	}
	return nil
}

func (u *Upstream) setState(st state, retryAt time.Time, why string) {
	u.mu.Lock()
	u.st, u.retryAt = st, retryAt
	if why != "" {
		u.lastErr = why
	}
	close(u.changed)
	u.changed = make(chan struct{})
	u.mu.Unlock()
}

// connectTimeout bounds one start: Spec.FirstConnect until a start has
// succeeded, when set, else ConnectTimeout.
func (u *Upstream) connectTimeout() time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.spec.FirstConnect > 0 && !u.connected {
		return u.spec.FirstConnect
	}
	return u.opts.ConnectTimeout
}

// listTimeout is how long a request waits for the first list:
// Spec.FirstList when set, else ListTimeout.
func (u *Upstream) listTimeout() time.Duration {
	if u.spec.FirstList > 0 {
		return u.spec.FirstList
	}
	return u.opts.ListTimeout
}

func (u *Upstream) markListed() { u.listOnce.Do(func() { close(u.listed) }) }

// pending says whether a request should wait for the first list.
func (u *Upstream) pending() bool {
	select {
	case <-u.listed:
		return false
	default:
		return !u.waitedOut.Load()
	}
}

// run supervises the upstream until ctx is done: start, connect, list,
// serve until it dies, back off, again.
func (u *Upstream) run(ctx context.Context) {
	defer u.setState(stopped, time.Time{}, "")
	attempt := 0 // for the backoff: starts since the last stable run
	for {
		u.setState(starting, time.Time{}, "")
		conn, err := u.connect(ctx)
		if ctx.Err() != nil {
			if conn != nil {
				conn.close()
			}
			return
		}
		if err != nil {
			u.mu.Lock()
			u.failures++
			failures := u.failures
			u.mu.Unlock()
			attempt++
			wait := u.backoff(attempt)
			st := restarting
			if failures >= u.opts.MaxFailures {
				st, wait = down, jitter(u.opts.MaxBackoff)
				u.opts.Logger.Warn("upstream is down: failed starts in a row", slog.String("upstream", u.spec.Name), slog.Int("failures", failures), slog.Any("error", err), slog.Duration("retry_every", u.opts.MaxBackoff))
			} else {
				u.opts.Logger.Warn("upstream failed to start", slog.String("upstream", u.spec.Name), slog.Int("failures", failures), slog.Any("error", err), slog.Duration("retry_in", wait.Round(time.Millisecond)))
			}
			u.setState(st, time.Now().Add(wait), err.Error())
			u.markListed()
			if !sleep(ctx, wait) {
				return
			}
			continue
		}
		started := time.Now()
		u.mu.Lock()
		u.failures = 0
		u.connected = true
		u.conn = conn
		u.mu.Unlock()
		u.setState(up, time.Time{}, "")
		u.markListed()
		cause := u.serve(ctx, conn)
		u.mu.Lock()
		u.conn = nil
		u.mu.Unlock()
		if ctx.Err() != nil {
			conn.close()
			return
		}
		if time.Since(started) >= 2*u.opts.MaxBackoff {
			attempt = 0 // it ran long enough: start over at MinBackoff
		}
		attempt++
		wait := u.backoff(attempt)
		u.setState(restarting, time.Now().Add(wait), cause)
		if conn.isStalled() {
			u.opts.Logger.Warn("upstream is hung: stopping it, restarting", slog.String("upstream", u.spec.Name), slog.String("why", cause), slog.Duration("retry_in", wait.Round(time.Millisecond)))
		} else {
			u.opts.Logger.Warn("upstream died: restarting", slog.String("upstream", u.spec.Name), slog.String("why", cause), slog.Duration("retry_in", wait.Round(time.Millisecond)))
		}
		conn.close()
		if !sleep(ctx, wait) {
			return
		}
	}
}

// link is one connection to the upstream and what its stderr left.
type link struct {
	*client.Conn
	stderr *tail
	stop   context.CancelFunc // ends what serves this connection alone (the listen)
	// stalled is closed when a write to a stdio upstream made no progress
	// for StallTimeout (client.ErrWriteStalled): it is taken as hung.
	stalled chan struct{}
	caps    codec.ServerCapabilities // what the upstream declared
}

// isStalled says whether the upstream was taken as hung.
func (l *link) isStalled() bool {
	select {
	case <-l.stalled:
		return true
	default:
		return false
	}
}

// close ends the connection: the upstream is stopped (or its HTTP session
// ended) and its subscription given up.
func (l *link) close() {
	l.stop()
	l.Conn.Close()
}

// connect starts the upstream, connects with the auto era and lists its
// tools, within ConnectTimeout.
func (u *Upstream) connect(ctx context.Context) (*link, error) {
	timeout := u.connectTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	copts := client.Options{
		ClientInfo:      u.opts.ClientInfo,
		ProbeTimeout:    min(client.DefaultProbeTimeout, timeout/2),
		OnNotification:  u.onNotification,
		OnProtocolError: u.protocolError,
	}
	if len(u.spec.Allow) > 0 {
		copts.Capabilities = u.capabilities()
	}
	copts.OnRequest = u.onRequest
	var conn *client.Conn
	var info *client.Info
	var err error
	stalled := make(chan struct{})
	stderr := &tail{}
	if u.opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		stderr.log = u.stderrLine
	}
	if u.spec.URL != "" {
		conn, info, err = client.DialHTTP(cctx, u.spec.URL, client.HTTPOptions{StandaloneStream: true, Header: u.spec.Header}, copts)
	} else {
		env := slices.Concat(u.opts.Env, u.spec.Env)
		if env == nil {
			env = []string{} // client.Command: nil would be ours
		}
		spawn := u.opts.Spawn
		if u.spec.Spawn != nil {
			spawn = u.spec.Spawn
		}
		copts.WriteTimeout = u.opts.StallTimeout
		var once sync.Once // Dial may start the process twice
		copts.OnWriteStall = func(error) { once.Do(func() { close(stalled) }) }
		conn, info, err = client.Dial(cctx, client.Command{
			Argv:   u.spec.Argv,
			Env:    env,
			Dir:    u.opts.Dir,
			Stderr: stderr,
			Grace:  u.opts.Grace,
			Spawn:  spawn,
		}, copts)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no answer to the handshake within %v", timeout)
		}
		return nil, u.withStderr(err.Error(), stderr)
	}
	lctx, stop := context.WithCancel(ctx)
	l := &link{Conn: conn, stderr: stderr, stop: stop, stalled: stalled, caps: info.Capabilities}
	if info.Era == client.EraModern {
		// Subscribe before the first list, and wait for the
		// acknowledgement: a change between the list and the
		// subscription would otherwise be missed for good.
		acked := make(chan struct{})
		u.mu.Lock()
		u.acked = acked
		u.mu.Unlock()
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			u.listen(lctx, l)
		}()
		select {
		case <-acked:
		case <-ended: // refused: the upstream may still send plain notifications
		case <-time.After(min(listenAckWait, timeout)):
			u.opts.Logger.Debug("upstream: no acknowledgement of subscriptions/listen", slog.String("upstream", u.spec.Name), slog.Duration("waited", min(listenAckWait, timeout)))
		case <-cctx.Done():
		}
	}
	tools, left, err := u.listTools(cctx, conn.Client)
	if err != nil {
		l.close()
		return nil, u.withStderr("tools/list: "+err.Error(), stderr)
	}
	u.opts.Logger.Debug("upstream connected", slog.String("upstream", u.spec.Name), slog.String("era", fmt.Sprint(info.Era)), slog.String("protocol", info.ProtocolVersion), slog.String("probe", fmt.Sprint(info.Probe)), slog.Int("tools", len(tools)))
	// The surface first: an upstream first seen under --pin has its
	// resources and prompts pinned with its tools (none if none are
	// listed yet), so they must be listed when its tools are.
	u.setSurface(u.listSurface(cctx, conn.Client, info.Capabilities))
	u.setTools(tools, left)
	return l, nil
}

// RelistInterval is the least time between two re-lists of an upstream:
// a storm of list_changed costs one tools/list a second at most.
const RelistInterval = time.Second

// serve waits for the upstream to die (the cause) or ctx, and re-lists its
// tools when it says they changed: at once when the last list is
// RelistInterval old, else when it is; the changes announced meanwhile are
// all seen by that one list (a change announced while a list is under way
// makes another).
func (u *Upstream) serve(ctx context.Context, l *link) string {
	last := time.Now() // connect has just listed
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-l.Done():
			return l.cause(u, time.Second)
		case <-l.stalled:
			return u.withStderr(fmt.Sprintf("it read nothing of its stdin for %v", u.opts.StallTimeout), l.stderr).Error()
		case <-u.relist:
			if wait := RelistInterval - time.Since(last); wait > 0 {
				if due == nil {
					due = time.After(wait)
				}
				continue
			}
		case <-due:
		}
		due = nil
		last = time.Now()
		lctx, cancel := context.WithTimeout(ctx, u.opts.ConnectTimeout)
		tools, left, err := u.listTools(lctx, l.Client)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ""
		case err != nil:
			u.opts.Logger.Warn("upstream: re-listing its tools after list_changed failed: keeping the last good list", slog.String("upstream", u.spec.Name), slog.Any("error", err))
		default:
			u.setTools(tools, left)
		}
		lctx, cancel = context.WithTimeout(ctx, u.opts.ConnectTimeout)
		surf := u.listSurface(lctx, l.Client, l.caps)
		cancel()
		if ctx.Err() != nil {
			return ""
		}
		u.setSurface(surf)
	}
}

// listen opens a 2026-07-28 subscriptions/listen for tool list changes; its
// notifications arrive through onNotification like legacy ones. It ends
// with the connection.
func (u *Upstream) listen(ctx context.Context, l *link) {
	params := codec.SubscriptionsListenParams{Notifications: &codec.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true}}
	_, err := l.Request(ctx, codec.MethodSubscriptionsListen, params)
	if err != nil && ctx.Err() == nil && !errors.Is(err, client.ErrClosed) {
		u.opts.Logger.Debug("upstream: subscriptions/listen failed: its tool list is re-read only on a plain notifications/tools/list_changed", slog.String("upstream", u.spec.Name), slog.Any("error", err))
	}
}

// onNotification runs on the client's read goroutine.
func (u *Upstream) onNotification(m *codec.Message) {
	switch m.Method {
	case codec.MethodToolsListChanged, methodResourcesListChanged, methodPromptsListChanged:
		select {
		case u.relist <- struct{}{}:
		default: // one re-list is pending already
		}
	case methodResourcesUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) == nil && checkOwnURI(p.URI) == "" && u.updated != nil {
			u.updated(u, p.URI)
		}
	case codec.MethodSubscriptionsAcknowledged:
		u.mu.Lock()
		if u.acked != nil {
			close(u.acked)
			u.acked = nil
		}
		u.mu.Unlock()
	case codec.MethodProgress:
		var p codec.ProgressParams
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		u.mu.Lock()
		q := u.progress[string(bytes.TrimSpace(p.ProgressToken))]
		u.mu.Unlock()
		if q == nil {
			return
		}
		p.ProgressToken, p.Meta = nil, nil
		if len(p.Message) > MaxProgressMessage {
			p.Message = codec.Clip(p.Message, MaxProgressMessage)
		}
		select {
		case q <- p:
		default: // the call's client is slow: progress is lossy
		}
	}
}

// Bounds on the log lines an upstream's protocol errors make.
const (
	MaxNoiseLines = 10          // per NoiseWindow
	NoiseWindow   = time.Minute // the window of MaxNoiseLines
	MaxNoiseLine  = 300         // bytes of one error's text
)

// protocolError logs a frame of the upstream that is not protocol (an
// invalid line, an answer to no request): at most MaxNoiseLines per
// NoiseWindow, each clipped to MaxNoiseLine bytes, and the rest counted, so
// that an upstream writing junk cannot flood mcp-route's log.
func (u *Upstream) protocolError(err error) {
	u.logLimited(&u.noise, slog.LevelWarn, "protocol errors", "upstream protocol error", codec.Clip(err.Error(), MaxNoiseLine))
}

// logLimited logs line (as msg's line attribute) at level while lim
// allows; past its budget one record says the rest of what are counted,
// and the count is logged when the next window begins.
func (u *Upstream) logLimited(lim *noiseLimit, level slog.Level, what, msg, line string) {
	ok, first, dropped := lim.allow(time.Now())
	l, ctx := u.opts.Logger, context.Background()
	if dropped > 0 {
		l.Log(ctx, level, "upstream: lines not logged", slog.String("upstream", u.spec.Name), slog.String("what", what), slog.Int("dropped", dropped), slog.Duration("window", NoiseWindow))
	}
	switch {
	case ok:
		l.Log(ctx, level, msg, slog.String("upstream", u.spec.Name), slog.String("line", line))
	case first:
		l.Log(ctx, level, "upstream: too many lines: the rest are counted, not logged", slog.String("upstream", u.spec.Name), slog.String("what", what), slog.Int("limit", lim.limit()), slog.Duration("window", NoiseWindow))
	}
}

// Bounds on the --verbose log lines an upstream's stderr makes.
const (
	MaxStderrLines = 100  // per NoiseWindow
	MaxStderrLine  = 1024 // bytes of one line
)

// stderrLine logs a line of the upstream's stderr (--verbose): at most
// MaxStderrLines per NoiseWindow, each cut to MaxStderrLine bytes, the rest
// counted as protocol errors are, so that an upstream writing its stderr
// in a loop cannot flood mcp-route's log. The tail kept for the "died"
// messages is not affected.
func (u *Upstream) stderrLine(line string) {
	u.logLimited(&u.errNoise, slog.LevelDebug, "stderr lines", "upstream stderr", codec.Clip(line, MaxStderrLine))
}

// noiseLimit lets max (0: MaxNoiseLines) events through per NoiseWindow.
type noiseLimit struct {
	mu      sync.Mutex
	max     int
	start   time.Time
	n       int
	dropped int
}

// limit is the events let through per window.
func (l *noiseLimit) limit() int {
	if l.max == 0 {
		return MaxNoiseLines
	}
	return l.max
}

// allow says whether the event at now is logged, whether it is the first
// one of its window that is not, and how many were not logged in the
// window it ends (once, when a new window begins).
func (l *noiseLimit) allow(now time.Time) (ok, first bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.start) >= NoiseWindow {
		dropped = l.dropped
		l.start, l.n, l.dropped = now, 0, 0
	}
	l.n++
	if l.n <= l.limit() {
		return true, false, dropped
	}
	l.dropped++
	return false, l.dropped == 1, dropped
}

// Bounds on an upstream's tool list.
const (
	// MaxToolDef is the largest tool definition served, in bytes as the
	// upstream sent it.
	MaxToolDef = 1 << 20
	// DefaultMaxListBytes is the default Options.MaxListBytes: half of
	// codec.DefaultMaxFrame, the frame a client reads by default, leaving
	// the rest for the local tools.
	DefaultMaxListBytes = codec.DefaultMaxFrame / 2
)

// leftOut is a tool listTools left out, and why (for the Set's log).
type leftOut struct{ name, why string }

// listTools reads the upstream's tool list, leaving out a definition
// larger than MaxToolDef and, once the definitions kept add up to
// MaxListBytes, every later one: what it keeps, and so the memory a list
// takes, is bounded, however many pages the upstream sends.
func (u *Upstream) listTools(ctx context.Context, c *client.Client) ([]codec.Tool, []leftOut, error) {
	var left []leftOut
	total, over := 0, 0
	raws, err := c.ListToolsRawFunc(ctx, func(raw json.RawMessage) bool {
		switch {
		case len(raw) > MaxToolDef:
			var head struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &head)
			left = append(left, leftOut{head.Name, fmt.Sprintf("its definition is %d bytes, more than %d (1 MiB)", len(raw), MaxToolDef)})
			return false
		case total+len(raw) > u.opts.MaxListBytes:
			over++
			return false
		}
		total += len(raw)
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	if over > 0 {
		left = append(left, leftOut{"", fmt.Sprintf("%d tools left out: its list passes %d bytes (the tool definitions mcp-route serves must fit a client's frame)", over, u.opts.MaxListBytes)})
	}
	tools := make([]codec.Tool, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &tools[i]); err != nil {
			return nil, nil, fmt.Errorf("tools/list: tool %d is not a Tool: %v", i, err)
		}
	}
	return tools, left, nil
}

// listing is the last good list and what listTools left out of it.
func (u *Upstream) listing() ([]codec.Tool, []leftOut) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools, u.left
}

// setTools keeps a new good list and tells the Set when it differs.
func (u *Upstream) setTools(tools []codec.Tool, left []leftOut) {
	if tools == nil {
		tools = []codec.Tool{}
	}
	u.mu.Lock()
	same := u.tools != nil && reflect.DeepEqual(u.tools, tools) && reflect.DeepEqual(u.left, left)
	u.tools, u.left = tools, left
	u.mu.Unlock()
	if !same {
		u.notify()
	}
}

// cause says how the upstream ended, waiting up to wait for its exit
// status, with the tail of its stderr. The wait is short in practice: the
// stdout that just closed is closed by the exit, and the exit status is
// known once the process is reaped; only a process that closes its stdout
// and lives on makes it wait in full.
func (l *link) cause(u *Upstream, wait time.Duration) string {
	if l.Proc == nil {
		return "the connection closed"
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-l.Proc.Exited():
	case <-t.C:
	}
	msg := l.Proc.State()
	if msg == "running" {
		msg = "it closed its stdout"
	}
	return u.withStderr(msg, l.stderr).Error()
}

// Call forwards one tools/call of tool (unprefixed) and returns the result
// for the downstream request of revision rev, its outcome for metrics (ok,
// tool_error, timeout, canceled, failed), or the upstream's JSON-RPC error,
// passed on as it is.
func (u *Upstream) Call(ctx context.Context, tool string, args json.RawMessage, rev string, progress func(codec.ProgressParams)) (any, string, error) {
	cctx, cancel := context.WithTimeout(ctx, u.opts.CallTimeout)
	defer cancel()
	l, refusal := u.await(cctx)
	if l == nil {
		if refusal == "" {
			return u.ended(ctx, tool)
		}
		return codec.ErrorResult(refusal), "failed", nil
	}
	defer u.askers.add(ctx)()
	p := codec.CallToolParams{Name: tool, Arguments: args}
	var queue chan codec.ProgressParams
	if progress != nil {
		token := strconv.AppendQuote(nil, "mcp-route-"+strconv.FormatInt(u.tokens.Add(1), 10))
		queue = make(chan codec.ProgressParams, MaxQueuedProgress)
		u.mu.Lock()
		u.progress[string(token)] = queue
		u.mu.Unlock()
		defer func() {
			u.mu.Lock()
			delete(u.progress, string(token))
			u.mu.Unlock()
		}()
		p.Meta = map[string]json.RawMessage{codec.MetaProgressToken: token}
	}
	raw, err := relay(cctx, l, p, queue, progress)
	if err != nil {
		var rpc *codec.Error
		switch {
		case errors.As(err, &rpc):
			if n := int64(len(rpc.Message) + len(rpc.Data)); n > u.opts.MaxOutput {
				return codec.ErrorResult(fmt.Sprintf("upstream %s: %s: its error of %d bytes exceeds --max-output (%d bytes); it began: %s", u.spec.Name, tool, n, u.opts.MaxOutput, codec.QuoteClip(rpc.Message, 200))), "failed", nil
			}
			return nil, "tool_error", rpc
		case errors.Is(err, codec.ErrFrameTooLarge):
			return codec.ErrorResult(u.tooLarge(tool, err)), "failed", nil
		case cctx.Err() != nil:
			return u.ended(ctx, tool)
		case errors.Is(err, client.ErrWriteStalled):
			return codec.ErrorResult(fmt.Sprintf("upstream %s is hung: it read nothing of its stdin for %v; restarting it", u.spec.Name, u.opts.StallTimeout)), "failed", nil
		case errors.Is(err, client.ErrClosed):
			return codec.ErrorResult(fmt.Sprintf("upstream %s died: %s", u.spec.Name, l.cause(u, time.Second))), "failed", nil
		}
		var herr *client.HTTPError
		if l.Proc == nil && (errors.Is(err, client.ErrUnreachable) || (errors.As(err, &herr) && herr.StatusCode == http.StatusNotFound)) {
			// An HTTP upstream gone away, or its session with it: end
			// this connection, and the supervisor makes a new one after
			// its backoff, as for a process that died.
			l.CloseWrite()
			return codec.ErrorResult(fmt.Sprintf("upstream %s is unreachable: %v; reconnecting", u.spec.Name, err)), "failed", nil
		}
		return codec.ErrorResult(fmt.Sprintf("upstream %s: %v", u.spec.Name, err)), "failed", nil
	}
	if n := int64(len(raw)); n > u.opts.MaxOutput {
		return codec.ErrorResult(fmt.Sprintf("upstream %s: %s: its result of %d bytes exceeds --max-output (%d bytes)", u.spec.Name, tool, n, u.opts.MaxOutput)), "failed", nil
	}
	if why := foreignContent(raw); why != "" {
		return codec.ErrorResult(fmt.Sprintf("upstream %s: %s: %s", u.spec.Name, tool, why)), "failed", nil
	}
	res, isError, err := fit(rev, raw)
	if err != nil {
		return codec.ErrorResult(fmt.Sprintf("upstream %s: %s: %v", u.spec.Name, tool, err)), "failed", nil
	}
	if isError {
		return res, "tool_error", nil
	}
	return res, "ok", nil
}

// tooLarge words an answer longer than the frame codec/client reads (the
// client skipped it unread) as the --max-output refusal it also is, unless
// --max-output is the larger.
func (u *Upstream) tooLarge(tool string, err error) string {
	size, limit := "", int64(codec.DefaultMaxFrame)
	var fe *codec.FrameTooLargeError
	if errors.As(err, &fe) {
		size, limit = fmt.Sprintf(" of %d bytes", fe.Size), int64(fe.Limit)
	} else {
		size = fmt.Sprintf(" of more than %d bytes", limit)
	}
	if u.opts.MaxOutput < limit {
		return fmt.Sprintf("upstream %s: %s: its result%s exceeds --max-output (%d bytes)", u.spec.Name, tool, size, u.opts.MaxOutput)
	}
	return fmt.Sprintf("upstream %s: %s: its result%s exceeds the largest frame mcp-route reads (%d bytes)", u.spec.Name, tool, size, limit)
}

// Bounds on the progress an upstream sends for one call.
const (
	MaxQueuedProgress  = 64   // notifications waiting for the call's client; more are dropped
	MaxProgressMessage = 1024 // bytes of a notification's message; the rest is cut
)

// relay sends the call and waits for its answer. Its progress, queued by
// onNotification on the client's read goroutine, is passed on from here,
// the call's own goroutine: a client slow to take it (an HTTP client that
// does not read its stream) holds up its own call, not the read goroutine
// every call of the upstream is answered through. What is still queued
// when the answer comes goes first.
func relay(ctx context.Context, l *link, p codec.CallToolParams, queue chan codec.ProgressParams, progress func(codec.ProgressParams)) (json.RawMessage, error) {
	if queue == nil {
		return l.Request(ctx, codec.MethodToolsCall, p)
	}
	type answer struct {
		raw json.RawMessage
		err error
	}
	done := make(chan answer, 1)
	go func() {
		raw, err := l.Request(ctx, codec.MethodToolsCall, p)
		done <- answer{raw, err}
	}()
	for {
		select {
		case pp := <-queue:
			progress(pp)
		case a := <-done:
			for range len(queue) {
				progress(<-queue)
			}
			return a.raw, a.err
		}
	}
}

// ended is the result of a call whose context ended: the per-call timeout,
// or the downstream request's cancellation or shutdown.
func (u *Upstream) ended(ctx context.Context, tool string) (any, string, error) {
	if ctx.Err() != nil {
		return codec.ErrorResult("canceled: " + context.Cause(ctx).Error()), "canceled", nil
	}
	return codec.ErrorResult(fmt.Sprintf("upstream %s: %s timed out after %v", u.spec.Name, tool, u.opts.CallTimeout)), "timeout", nil
}

// await returns the live connection, waiting while the upstream starts (at
// most ListTimeout: a start that hangs must not hold calls for their whole
// timeout); nil and the isError text when it is restarting, down or still
// starting, nil and "" when ctx ended first.
func (u *Upstream) await(ctx context.Context) (*link, string) {
	var bound <-chan time.Time
	for {
		u.mu.Lock()
		st, l, changed, retryAt, why, failures := u.st, u.conn, u.changed, u.retryAt, u.lastErr, u.failures
		u.mu.Unlock()
		switch st {
		case up:
			if l != nil {
				return l, ""
			}
		case restarting:
			return nil, fmt.Sprintf("upstream %s is restarting; retry in %s", u.spec.Name, until(retryAt))
		case down:
			return nil, fmt.Sprintf("upstream %s is down after %d failed starts (%s); next start in %s", u.spec.Name, failures, why, until(retryAt))
		case stopped:
			return nil, fmt.Sprintf("upstream %s is stopped: server shutting down", u.spec.Name)
		}
		if bound == nil {
			t := time.NewTimer(u.opts.ListTimeout)
			defer t.Stop()
			bound = t.C
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ""
		case <-bound:
			return nil, fmt.Sprintf("upstream %s is starting and not ready after %v; retry later", u.spec.Name, u.opts.ListTimeout)
		}
	}
}

// until is the time to t in whole seconds, at least 1s.
func until(t time.Time) string {
	s := max(int64((time.Until(t)+time.Second-1)/time.Second), 1)
	return strconv.FormatInt(s, 10) + "s"
}

// fit prepares an upstream's CallToolResult for the downstream revision:
// structuredContent, isError, content and every other member are kept as
// the upstream gave them; resultType and the upstream's serverInfo in _meta
// are dropped (the router's own are put in), and a content type the
// downstream revision lacks becomes text (codec.CallToolResultFor), as for
// local tools.
func fit(rev string, raw json.RawMessage) (any, bool, error) {
	// One pass over the members (the frame was validated as it was read).
	notResult := fmt.Errorf("result is not a CallToolResult")
	members, ok := codec.Members(raw)
	if !ok {
		return nil, false, notResult
	}
	var head struct {
		ResultType string
		Content    json.RawMessage
		IsError    bool
		Meta       json.RawMessage
	}
	if v, ok := members["resultType"]; ok && string(v) != "null" {
		if head.ResultType, ok = codec.StringValue(v); !ok {
			return nil, false, notResult
		}
	}
	if v, ok := members["isError"]; ok {
		switch string(v) {
		case "true":
			head.IsError = true
		case "false", "null":
		default:
			return nil, false, notResult
		}
	}
	head.Content, head.Meta = members["content"], members["_meta"]
	if head.ResultType != "" && head.ResultType != codec.ResultTypeComplete {
		return nil, false, fmt.Errorf("the upstream asked for more (resultType %q), which mcp-route cannot relay", head.ResultType)
	}
	if len(head.Content) == 0 {
		return nil, false, fmt.Errorf("result has no content")
	}
	if rev < codec.Rev20251125 {
		var r codec.CallToolResult
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, false, fmt.Errorf("result is not a CallToolResult: %v", err)
		}
		r.ResultType, r.Meta = "", nil
		return codec.CallToolResultFor(rev, &r), head.IsError, nil
	}
	if !bytes.Contains(head.Meta, []byte(codec.MetaServerInfo)) {
		// The common case, passed on as it came: the core's
		// codec.DecorateResult sets resultType for the client's revision
		// (a legacy client gets none, a modern one "complete").
		return raw, head.IsError, nil
	}
	// Most servers put their serverInfo in every result's _meta (the Go
	// SDK does): drop it, and resultType, by splicing the members.
	delete(members, "resultType")
	if meta, ok := codec.Members(head.Meta); ok {
		delete(meta, codec.MetaServerInfo)
		if len(meta) == 0 {
			delete(members, "_meta")
		} else {
			members["_meta"] = object(meta)
		}
	}
	return object(members), head.IsError, nil
}

// object is the JSON object of members, sorted by name as encoding/json
// writes a map.
func object(members map[string]json.RawMessage) json.RawMessage {
	n := 2
	for k, v := range members {
		n += len(k) + len(v) + 4
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			out = append(out, ',')
		}
		name, _ := json.Marshal(k) // a string always marshals
		out = append(out, name...)
		out = append(out, ':')
		out = append(out, members[k]...)
	}
	return append(out, '}')
}

// backoff is the wait before start number attempt+1: MinBackoff doubled
// per attempt, capped at MaxBackoff, with ±20% jitter.
func (u *Upstream) backoff(attempt int) time.Duration {
	d := u.opts.MinBackoff
	for i := 1; i < attempt && d < u.opts.MaxBackoff; i++ {
		d *= 2
	}
	return jitter(min(d, u.opts.MaxBackoff))
}

func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// sleep waits d and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// tail keeps the last bytes of an upstream's stderr, and passes each line
// to log when set (the --verbose log).
type tail struct {
	mu      sync.Mutex
	buf     []byte
	log     func(line string)
	partial []byte
}

const tailSize = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-tailSize:]...)
	}
	if t.log != nil {
		t.partial = append(t.partial, p...)
		for {
			i := bytes.IndexByte(t.partial, '\n')
			if i < 0 {
				break
			}
			t.log(string(t.partial[:i]))
			t.partial = t.partial[i+1:]
		}
		if len(t.partial) > tailSize {
			t.log(string(t.partial) + "...")
			t.partial = nil
		}
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
}

// withStderr is msg with the stderr tail, if any. A confined upstream
// that is refused a file says so in its own words, and launchers add
// advice that misleads under confinement (npm: "Your cache folder
// contains root-owned files ... sudo chown"): when the tail reports a file
// the confinement refused (confine.Explain, the tools' explainer), msg
// says so and names the flag that grants it, and the tail is cut to the
// lines about it.
func (u *Upstream) withStderr(msg string, t *tail) error {
	if s := t.String(); s != "" {
		if u.spec.Rules != nil {
			if d, ok := confine.Explain(s, u.spec.Rules()); ok {
				msg, s = msg+"; "+d.String(), d.Lines
			}
		}
		if len(s) > 500 {
			s = "..." + s[len(s)-500:]
		}
		msg += "; stderr: " + s
	}
	return errors.New(msg)
}

func slicesClone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append([]T(nil), s...)
}
