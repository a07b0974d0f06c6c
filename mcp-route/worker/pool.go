package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
)

// Defaults for zero Limits fields and Options.
const (
	DefaultWorkers     = 2
	DefaultConcurrency = 1
	DefaultIdle        = 60 * time.Second
	DefaultMaxCalls    = 10000
	DefaultMaxRSS      = 512 << 20
	// DefaultMaxLine bounds one line of a worker's stdout: a JSON string
	// may take 6 bytes per byte of output (\u0000), plus the envelope.
	DefaultMaxLine = 6*proc.DefaultMaxOutput + 64<<10

	BackoffMin = 100 * time.Millisecond
	BackoffMax = 10 * time.Second
)

// Limits are the settings of one pool (a tool's run object). Zero fields
// take the defaults above.
type Limits struct {
	Workers     int           // workers taking calls, at most
	Concurrency int           // calls one worker takes at once
	Idle        time.Duration // an idle worker is stopped after this long
	MaxCalls    int           // a worker is retired after this many calls
	MaxRSS      int64         // a worker over this RSS after a call is retired
}

func (l *Limits) defaults() {
	if l.Workers <= 0 {
		l.Workers = DefaultWorkers
	}
	if l.Concurrency <= 0 {
		l.Concurrency = DefaultConcurrency
	}
	if l.Idle <= 0 {
		l.Idle = DefaultIdle
	}
	if l.MaxCalls <= 0 {
		l.MaxCalls = DefaultMaxCalls
	}
	if l.MaxRSS <= 0 {
		l.MaxRSS = DefaultMaxRSS
	}
}

// Spec says how to start a worker, and so which pool serves a call.
type Spec struct {
	// Cmd starts a worker (runner.Command of the tool, with the worker
	// environment); proc.Start ignores its Run-only fields.
	Cmd proc.Cmd
	// Exec is the executable with every symlink resolved: tools linked to
	// one executable share a pool when Cmd.Env, Cmd.Dir, Limits and
	// MaxLine agree too.
	Exec string
	// Stamp is the executable's identity as last seen (size, mtime,
	// inode, ...); a call with another Stamp retires the pool's workers.
	Stamp   string
	Limits  Limits
	MaxLine int // longest stdout line of a worker; 0: DefaultMaxLine
}

// key is the pool of s. It is built on every call: appends, not
// fmt's reflection.
func (s *Spec) key() string {
	n := len(s.Exec) + len(s.Cmd.Dir) + 128
	for _, e := range s.Cmd.Env {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(append(b, s.Exec...), 0)
	b = append(append(b, s.Cmd.Dir...), 0)
	for _, e := range s.Cmd.Env {
		b = append(append(b, e...), 0)
	}
	l := s.Limits
	for _, v := range []int64{int64(l.Workers), int64(l.Concurrency), int64(l.Idle), int64(l.MaxCalls), l.MaxRSS, int64(s.MaxLine)} {
		b = append(strconv.AppendInt(b, v, 10), ' ')
	}
	return string(b)
}

// Call is one tools/call for a worker.
type Call struct {
	Tool            string          // the tool's name
	Arguments       json.RawMessage // a JSON object
	ProtocolVersion string          // the revision of the request
	// Progress gets the object of each progress line of the call; nil
	// when the client asked for no progress.
	Progress func(line []byte)
	// Channel gets each tool channel line of the call (log records and
	// questions: {"id":N,"channel":LINE}, see the package doc) and the
	// function that answers it ({"answer":N,"line":ANSWER} on the
	// worker's stdin; ANSWER must be one line of JSON). It is called from
	// the worker's reader, in order, before the call's Result; nil drops
	// the lines.
	Channel   func(line []byte, reply func(answer []byte))
	Timeout   time.Duration // 0: none
	MaxOutput int64         // longer output is an isError; 0: proc.DefaultMaxOutput
}

// Kind says how a call ended.
type Kind int

const (
	Answered       Kind = iota // the worker answered output: Result.Output
	ToolError                  // the worker answered an error: Result.Failure is its text
	TimedOut                   // Call.Timeout passed
	Canceled                   // the context was done
	OutputExceeded             // the output was over Call.MaxOutput
	Died                       // the worker died, or was killed for another reason
	NotStarted                 // no worker could be started, or none is started now (backoff, shutdown)

	// undelivered: the worker died before it read the request; the call
	// goes to another worker (at most maxDelivery times).
	undelivered Kind = -1
)

// maxDelivery bounds how often a call is handed to a worker: a request a
// worker never read is safe to send again, but not forever.
const maxDelivery = 3

// Result is how a call ended. Failure is the isError text of every Kind
// but Answered.
type Result struct {
	Kind    Kind
	Output  []byte
	Failure string
	Pid     int // the worker that took the call, 0 when none did
}

// OK reports whether the worker answered output.
func (r *Result) OK() bool { return r.Kind == Answered }

// Options configure a Pools. All are optional.
type Options struct {
	Grace time.Duration // SIGTERM → SIGKILL, and how long a cancelled call may still run; 0: proc.DefaultGrace
	// Logger gets one record per event, with the attributes tool, pid,
	// exec (and outcome, calls, retry_in where they apply): Warn for a
	// crash or junk on stdout, Debug for starts, retirements and stderr
	// lines. nil logs nothing.
	Logger *slog.Logger
}

// Pools are the worker pools of one server. Its methods are safe for
// concurrent use.
type Pools struct {
	opts Options

	mu     sync.Mutex
	pools  map[string]*pool
	all    map[*worker]bool // every worker not yet reaped, retired ones too
	closed bool
	reaped sync.WaitGroup

	// The watchdog enforces Call.Timeout for the calls on workers: one
	// timer for all of them, armed for the earliest deadline it knows of
	// (wdNext, nanoseconds since epoch on the monotonic clock; 0: not
	// armed), instead of a timer per call. A call's deadline is mostly
	// later than the one armed already, and then costs one atomic load.
	epoch   time.Time
	wdNext  atomic.Int64
	wdMu    sync.Mutex
	wdTimer *time.Timer
}

// New returns an empty set of pools.
func New(opts Options) *Pools {
	if opts.Grace <= 0 {
		opts.Grace = proc.DefaultGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pools{opts: opts, pools: map[string]*pool{}, all: map[*worker]bool{}, epoch: time.Now()}
}

// Call runs c on a worker of spec's pool, starting one when needed, and
// returns when it is answered or has failed (see the package doc). It
// never returns before a worker it killed for this call is reaped.
func (ps *Pools) Call(ctx context.Context, spec Spec, c Call) *Result {
	spec.Limits.defaults()
	if spec.MaxLine <= 0 {
		spec.MaxLine = DefaultMaxLine
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = proc.DefaultMaxOutput
	}
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		return &Result{Kind: NotStarted, Failure: "canceled: server shutting down"}
	}
	key := spec.key()
	pl := ps.pools[key]
	if pl == nil {
		pl = &pool{ps: ps, limits: spec.Limits, changed: make(chan struct{}), stale: map[string]bool{}}
		ps.pools[key] = pl
	}
	ps.mu.Unlock()
	// What the call left behind that left the worker's tree (a daemon, a
	// process that joined the worker's group and lost its parent) is
	// reparented to mcp-route, the subreaper, not to the worker: kill it
	// before the call is answered, as after an exec'd call.
	defer proc.Sweep()

	var deadline time.Time
	if c.Timeout > 0 {
		deadline = time.Now().Add(c.Timeout)
	}
	body := requestBody(&c)
	for delivery := 1; ; delivery++ {
		w, p, res := pl.acquire(ctx, deadline, &spec, &c, body)
		if res != nil {
			if res.Kind == TimedOut {
				return timedOut(&c)
			}
			return res
		}
		if !deadline.IsZero() {
			ps.arm(deadline)
		}
		w.send(p.request, p)
		r := ps.await(ctx, w, p, &c)
		replies.Put(p.done) // received: empty, and nothing sends on it again
		if r.Kind != undelivered {
			return r
		}
		if delivery == maxDelivery || ctx.Err() != nil {
			r.Kind = Died
			return r
		}
		ps.opts.Logger.Debug("worker died before it read the request: sent again", slog.String("tool", c.Tool), slog.Int("pid", r.Pid))
	}
}

// timedOut is the Result of a call that timed out.
func timedOut(c *Call) *Result {
	return &Result{Kind: TimedOut, Failure: proc.Outcome{Ending: proc.TimedOut, Timeout: c.Timeout}.String()}
}

// await waits for p's answer on w, and handles the call's cancellation; the
// watchdog handles its timeout (it kills the worker, and p gets its fate).
func (ps *Pools) await(ctx context.Context, w *worker, p *pending, c *Call) *Result {
	select {
	case r := <-p.done:
		return r
	case <-ctx.Done():
	}
	// Cancelled: ask in-band, and give the worker Grace to stop the call.
	// A timeout meanwhile still kills the worker, and the call is
	// answered "canceled" (the watchdog reads p.canceled).
	w.mu.Lock()
	p.canceled = true
	w.mu.Unlock()
	w.send(fmt.Appendf(nil, "{\"cancel\":%d}\n", p.id), nil)
	canceled := &Result{Kind: Canceled, Failure: "canceled", Pid: w.pid}
	grace := time.NewTimer(ps.opts.Grace)
	defer grace.Stop()
	select {
	case <-p.done:
		return canceled
	case <-grace.C:
		w.kill(fmt.Sprintf("a cancelled call on it (%s) was still running %v later", c.Tool, ps.opts.Grace), p, canceled)
	}
	<-p.done
	return canceled
}

// arm makes sure the watchdog runs at deadline at the latest.
func (ps *Pools) arm(deadline time.Time) {
	at := int64(deadline.Sub(ps.epoch))
	if next := ps.wdNext.Load(); next != 0 && next <= at {
		return
	}
	ps.wdMu.Lock()
	defer ps.wdMu.Unlock()
	if next := ps.wdNext.Load(); next != 0 && next <= at {
		return
	}
	ps.wdNext.Store(at)
	d := time.Until(deadline)
	if ps.wdTimer == nil {
		ps.wdTimer = time.AfterFunc(d, ps.watchdog)
	} else {
		ps.wdTimer.Reset(d)
	}
}

// watchdog kills the workers of the calls past their deadline (each such
// call gets its fate: "timed out", or "canceled" when it was cancelled),
// and re-arms itself for the earliest deadline left.
func (ps *Pools) watchdog() {
	// Unarmed first: a call registered from here on arms it again, and
	// one registered before is seen by the scan below.
	ps.wdMu.Lock()
	ps.wdNext.Store(0)
	ps.wdMu.Unlock()
	ps.mu.Lock()
	all := make([]*worker, 0, len(ps.all))
	for w := range ps.all {
		all = append(all, w)
	}
	ps.mu.Unlock()
	now := time.Now()
	var earliest time.Time
	for _, w := range all {
		pl := w.pool
		pl.mu.Lock()
		w.mu.Lock()
		killed := false
		for _, p := range w.calls {
			switch {
			case p.deadline.IsZero():
			case !now.Before(p.deadline):
				fate := &Result{Kind: Canceled, Failure: "canceled"}
				if !p.canceled {
					fate = timedOut(&Call{Timeout: p.timeout})
				}
				if killed {
					p.fate = fate // one more call of a worker killed already
					continue
				}
				w.killLocked(fmt.Sprintf("a call on it (%s) timed out after %v", p.tool, p.timeout), p, fate)
				killed = true
			case earliest.IsZero() || p.deadline.Before(earliest):
				earliest = p.deadline
			}
		}
		w.mu.Unlock()
		if killed {
			pl.broadcast()
		}
		pl.mu.Unlock()
	}
	if !earliest.IsZero() {
		ps.arm(earliest)
	}
}

// Close stops every worker and waits until each is reaped. Calls after
// Close are refused.
func (ps *Pools) Close() {
	ps.mu.Lock()
	ps.closed = true
	var all []*worker
	for w := range ps.all {
		all = append(all, w)
	}
	ps.mu.Unlock()
	for _, w := range all {
		go w.stop("server shutting down")
	}
	ps.reaped.Wait()
	ps.wdMu.Lock()
	if ps.wdTimer != nil {
		ps.wdTimer.Stop()
	}
	ps.wdMu.Unlock()
}

// Running returns the pids of the workers not yet reaped, for tests and
// diagnostics.
func (ps *Pools) Running() []int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var pids []int
	for w := range ps.all {
		pids = append(pids, w.pid)
	}
	return pids
}

// pool is the workers of one Spec key.
type pool struct {
	ps     *Pools
	limits Limits

	mu      sync.Mutex
	stamp   string
	stale   map[string]bool // stamps replaced by a newer one
	workers []*worker       // taking calls: neither retired nor dead
	changed chan struct{}   // closed (and replaced) when every waiting call must look again
	waiting int             // calls waiting on changed: without any, nothing need be closed
	// queue holds the calls waiting for room, oldest first. A freed place
	// wakes one of them (wakeOne), not all: with 60 calls queued behind 2
	// workers, waking all on every answer cost 60 wake-ups and lock
	// rounds per call.
	queue     []chan struct{}
	crashes   int       // in a row
	notBefore time.Time // no worker starts before (backoff)
}

// broadcast wakes the calls waiting for a worker. pl.mu is held. With none
// waiting (most of the time) it costs nothing: no channel per answer.
func (pl *pool) broadcast() {
	if pl.waiting == 0 {
		return
	}
	close(pl.changed)
	pl.changed = make(chan struct{})
}

// wakeOne wakes the oldest call waiting for room: one place was freed.
// pl.mu is held.
func (pl *pool) wakeOne() {
	if len(pl.queue) == 0 {
		return
	}
	ch := pl.queue[0]
	pl.queue[0] = nil
	pl.queue = pl.queue[1:]
	ch <- struct{}{} // buffered, and each is woken at most once per wait
}

// wakeIfRoom passes the wake-up on when a call has taken its place and
// room is left (a new worker takes Concurrency calls). pl.mu is held.
func (pl *pool) wakeIfRoom() {
	if len(pl.queue) > 0 && pl.pick() != nil {
		pl.wakeOne()
	}
}

// unqueue takes ch out of the queue if it is still there. pl.mu is held.
func (pl *pool) unqueue(ch chan struct{}) {
	if i := slices.Index(pl.queue, ch); i >= 0 {
		pl.queue = slices.Delete(pl.queue, i, i+1)
	}
}

// acquire finds or starts a worker with room for c and registers the call
// on it; or returns why there is none.
func (pl *pool) acquire(ctx context.Context, deadline time.Time, spec *Spec, c *Call, body []byte) (*worker, *pending, *Result) {
	ps := pl.ps
	// The call's timeout while it waits here: a timer only for a call
	// that has to wait.
	var timeoutC <-chan time.Time
	var timeout *time.Timer
	var room chan struct{} // this call's place in pl.queue, while it waits
	defer func() {
		if timeout != nil {
			timeout.Stop()
		}
	}()
	for {
		pl.mu.Lock()
		if pl.stale[spec.Stamp] {
			// A call that looked its tool up before the registry saw the
			// change: the executable on disk is the new one, and so are
			// the workers it would start.
			spec.Stamp = pl.stamp
		}
		if pl.stamp != spec.Stamp {
			if len(pl.workers) > 0 {
				ps.opts.Logger.Debug("worker executable changed: new calls go to new workers", slog.String("tool", c.Tool), slog.String("exec", spec.Exec))
			}
			for _, w := range pl.workers {
				w.retired()
			}
			pl.workers = nil
			if pl.stamp != "" {
				if len(pl.stale) >= 16 {
					clear(pl.stale)
				}
				pl.stale[pl.stamp] = true
			}
			pl.stamp, pl.crashes, pl.notBefore = spec.Stamp, 0, time.Time{}
		}
		if w := pl.pick(); w != nil {
			p := w.take(c, body, deadline)
			pl.wakeIfRoom()
			pl.mu.Unlock()
			return w, p, nil
		}
		wait := pl.changed
		var backoff <-chan time.Time
		stopBackoff := func() bool { return false }
		if len(pl.workers) < pl.limits.Workers {
			if until := time.Until(pl.notBefore); until > 0 {
				if !deadline.IsZero() && pl.notBefore.After(deadline) {
					n := pl.crashes
					pl.mu.Unlock()
					return nil, nil, &Result{Kind: NotStarted, Failure: fmt.Sprintf(
						"worker restarting after %d crashes in a row (next start in %v, after this call's timeout); try again later",
						n, until.Round(time.Millisecond))}
				}
				t := time.NewTimer(until)
				stopBackoff = t.Stop
				backoff = t.C
			} else {
				w, err := pl.start(spec, c.Tool)
				if err != nil {
					pl.crashed(c.Tool, spec.Exec)
					pl.mu.Unlock()
					return nil, nil, &Result{Kind: NotStarted, Failure: "cannot start tool: " + err.Error()}
				}
				p := w.take(c, body, deadline)
				pl.wakeIfRoom()
				pl.mu.Unlock()
				return w, p, nil
			}
		}
		if timeout == nil && !deadline.IsZero() {
			timeout = time.NewTimer(time.Until(deadline))
			timeoutC = timeout.C
		}
		pl.waiting++
		if room == nil {
			room = make(chan struct{}, 1)
		}
		pl.queue = append(pl.queue, room)
		pl.mu.Unlock()
		var res *Result
		select {
		case <-room:
		case <-wait:
		case <-backoff:
		case <-timeoutC:
			res = &Result{Kind: TimedOut}
		case <-ctx.Done():
			res = &Result{Kind: Canceled, Failure: "canceled"}
		}
		stopBackoff()
		pl.mu.Lock()
		pl.waiting--
		pl.unqueue(room)
		select {
		case <-room:
			// Woken for a place as well: a call that gives up passes it
			// on; one that looks again takes it (or another's).
			if res != nil {
				pl.wakeOne()
			}
		default:
		}
		pl.mu.Unlock()
		if res != nil {
			return nil, nil, res
		}
	}
}

// pick returns the least busy worker with room for one more call, or nil.
// pl.mu is held.
func (pl *pool) pick() *worker {
	var best *worker
	bestLoad := pl.limits.Concurrency
	for _, w := range pl.workers {
		w.mu.Lock()
		load := len(w.calls)
		w.mu.Unlock()
		if load < bestLoad {
			best, bestLoad = w, load
		}
	}
	return best
}

// crashed counts a worker that died unasked (or could not start) and
// sets the backoff. pl.mu is held.
func (pl *pool) crashed(tool, exec string) {
	pl.crashes++
	if pl.crashes < 2 {
		return
	}
	d := BackoffMin << min(pl.crashes-2, 20)
	d = min(d, BackoffMax)
	pl.notBefore = time.Now().Add(d)
	pl.ps.opts.Logger.Warn("worker crashes in a row: next start delayed", slog.String("tool", tool), slog.String("exec", exec), slog.Int("crashes", pl.crashes), slog.Duration("retry_in", d))
}

// remove takes w out of the workers taking calls. pl.mu is held.
func (pl *pool) remove(w *worker) {
	for i, x := range pl.workers {
		if x == w {
			pl.workers = append(pl.workers[:i], pl.workers[i+1:]...)
			break
		}
	}
}
