package worker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
)

// pending is one call on a worker, from take until its Result is sent.
type pending struct {
	id        int64
	tool      string
	progress  func([]byte)
	channel   func(line []byte, reply func(answer []byte))
	maxOutput int64
	request   []byte       // the request line, newline included
	written   atomic.Bool  // the request went into the worker's stdin
	done      chan *Result // gets exactly one Result; from replies, given back by Pools.Call
	fate      *Result      // the call's Result if the worker dies: why it was killed for this call

	// Under worker.mu: when the call times out (zero: never; the
	// watchdog of Pools enforces it), and whether it was cancelled (a
	// timeout then answers it "canceled").
	deadline time.Time
	canceled bool
	timeout  time.Duration // Call.Timeout, for the texts
}

// replies recycles the reply channels of pending calls: a call on a worker
// allocates no channel. A channel goes back once its one Result has been
// received, so it is empty, and no sender is left: the Result is sent once,
// by whoever took the call out of worker.calls.
var replies = sync.Pool{New: func() any { return make(chan *Result, 1) }}

// worker is one worker process and the calls it has in flight.
type worker struct {
	pool    *pool
	tool    string // the tool whose call started it, for the log
	exec    string
	pid     int
	p       *proc.Process
	maxLine int
	statm   *os.File // its /proc/PID/statm, read by the reader goroutine only; nil when it could not be opened

	mu        sync.Mutex // after pool.mu when both are held
	calls     map[int64]*pending
	nextID    int64
	taken     int
	retiring  bool   // takes no new call; stopped once it has none
	asked     bool   // mcp-route stopped or killed it: its end is no crash
	misbehave bool   // killed for junk or a closed stdin: its end counts as a crash
	killedFor string // why mcp-route killed it, for its other calls
	// idleSince is when its last call was answered (its start, before
	// any). The idle timer is armed once per worker and re-armed when it
	// fires early, so an answered call costs no timer (see idleCheck).
	idleSince time.Time
	idle      *time.Timer

	qmu         sync.Mutex
	queue       []queued
	lastWritten int64 // the id of the call whose request was written last
	writeFailed bool  // a write to stdin failed
	qsig        chan struct{}
	readerDone  chan struct{}
	writerDone  chan struct{} // closed when write returns
}

var errClosed = errors.New("server shutting down")

// start starts a worker for pl. pl.mu is held.
func (pl *pool) start(spec *Spec, tool string) (*worker, error) {
	ps := pl.ps
	w := &worker{
		pool: pl, tool: tool, exec: spec.Exec, maxLine: spec.MaxLine,
		calls: map[int64]*pending{}, qsig: make(chan struct{}, 1), readerDone: make(chan struct{}), writerDone: make(chan struct{}),
	}
	log := &stderrLog{logger: ps.opts.Logger, tool: tool}
	cmd := spec.Cmd
	cmd.StderrTo = log
	p, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	w.p, w.pid = p, p.Pid()
	// Opened once: a read per answered call then costs one pread, not a
	// path walk, and can never read another process that reused the pid.
	if f, err := os.Open("/proc/" + strconv.Itoa(w.pid) + "/statm"); err == nil {
		w.statm = f
	}
	log.setPid(w.pid)
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		p.Terminate(ps.opts.Grace)
		return nil, errClosed
	}
	ps.all[w] = true
	ps.reaped.Add(1)
	ps.mu.Unlock()
	pl.workers = append(pl.workers, w)
	w.idleSince = time.Now()
	w.idle = time.AfterFunc(pl.limits.Idle, w.idleCheck)
	go w.write()
	go w.read()
	go w.watch()
	ps.opts.Logger.Debug("worker started", slog.String("tool", tool), slog.String("exec", spec.Exec), slog.Int("pid", w.pid))
	return w, nil
}

// requestBody is c's request line without its id, which take puts in
// front: {"tool":...,"arguments":...,"protocolVersion":...,"progress":...}.
// It is built once per call, before any lock is taken, by appends rather
// than by json.Marshal's reflection. The arguments are compacted: one line,
// whatever the client sent; arguments that are not valid JSON become {}.
func requestBody(c *Call) []byte {
	b := make([]byte, 0, len(c.Arguments)+len(c.Tool)+len(c.ProtocolVersion)+64)
	b = append(b, `{"tool":`...)
	b = appendJSONString(b, c.Tool)
	b = append(b, `,"arguments":`...)
	args := bytes.TrimSpace(c.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, args); err != nil {
		buf.Truncate(len(b))
		buf.WriteString("{}")
	}
	b = buf.Bytes()
	b = append(b, `,"protocolVersion":`...)
	b = appendJSONString(b, c.ProtocolVersion)
	b = append(b, `,"progress":`...)
	b = strconv.AppendBool(b, c.Progress != nil)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: as it is between quotes
// when it is plain printable ASCII (a tool name, a revision), else as
// encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// take registers c on w, to time out at deadline (zero: never); body is
// its requestBody. pl.mu is held.
func (w *worker) take(c *Call, body []byte, deadline time.Time) *pending {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextID++
	p := &pending{id: w.nextID, tool: c.Tool, progress: c.Progress, channel: c.Channel, maxOutput: c.MaxOutput, done: replies.Get().(chan *Result), deadline: deadline, timeout: c.Timeout}
	p.request = make([]byte, 0, len(body)+24)
	p.request = append(strconv.AppendInt(append(p.request, `{"id":`...), p.id, 10), ',')
	p.request = append(append(p.request, body[1:]...), '\n')
	w.calls[p.id] = p
	w.taken++
	if w.taken >= w.pool.limits.MaxCalls && !w.retiring {
		w.retiring = true
		w.pool.remove(w)
		w.pool.ps.opts.Logger.Debug("worker retired: call limit", slog.String("tool", w.tool), slog.Int("pid", w.pid), slog.Int("calls", w.taken))
	}
	return p
}

// queued is a line for the worker's stdin: a request (p set) or a cancel.
type queued struct {
	line []byte
	p    *pending
}

// send queues one line for the worker's stdin; it never blocks. p is the
// call when the line is its request.
func (w *worker) send(line []byte, p *pending) {
	w.qmu.Lock()
	w.queue = append(w.queue, queued{line, p})
	w.qmu.Unlock()
	select {
	case w.qsig <- struct{}{}:
	default:
	}
}

// write writes the queued lines in order. A worker that stops reading
// blocks only this goroutine; killing it closes the pipe.
func (w *worker) write() {
	defer close(w.writerDone)
	stdin := w.p.Stdin()
	for {
		select {
		case <-w.qsig:
		case <-w.p.Done():
			return
		}
		w.qmu.Lock()
		q := w.queue
		w.queue = nil
		w.qmu.Unlock()
		for _, q := range q {
			// Marked before the write: a request that may have reached
			// the worker is never sent again (see watch).
			if q.p != nil {
				q.p.written.Store(true)
				w.qmu.Lock()
				w.lastWritten = q.p.id
				w.qmu.Unlock()
			}
			if _, err := stdin.Write(q.line); err != nil {
				// At most part of the line went in: no request.
				if q.p != nil {
					q.p.written.Store(false)
				}
				w.qmu.Lock()
				w.writeFailed = true
				w.qmu.Unlock()
				// Most often the worker has just died (its calls are
				// then failed, or retried when it never read them); one
				// that closed its stdin alive is ended here.
				w.mu.Lock()
				asked := w.asked
				w.mu.Unlock()
				if !asked {
					go w.p.Terminate(w.pool.ps.opts.Grace)
				}
				return
			}
		}
	}
}

// read reads the worker's stdout until EOF or junk.
func (w *worker) read() {
	defer close(w.readerDone)
	br := bufio.NewReaderSize(w.p.Stdout(), 64<<10)
	for {
		line, err := readLine(br, w.maxLine)
		if errors.Is(err, errLineTooLong) {
			w.junk(line, fmt.Sprintf("a line longer than %d bytes", w.maxLine))
			return
		}
		if err != nil {
			if len(line) > 0 {
				w.junk(line, "an unterminated line")
				return
			}
			w.ended()
			return
		}
		if why := w.handle(line); why != "" {
			w.junk(line, why)
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns one line without its newline; past max bytes it
// returns what it has and errLineTooLong.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return append(line, chunk[:min(len(chunk), 200)]...), errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			line = append(line, chunk...)
			continue
		}
		if err != nil {
			return append(line, chunk...), err
		}
		if line == nil {
			return chunk[:len(chunk)-1], nil // valid until the next read: handle copies what it keeps
		}
		return append(line, chunk[:len(chunk)-1]...), nil
	}
}

// answer is a line of the worker's stdout.
type answer struct {
	ID       int64           `json:"id"`
	Output   *string         `json:"output"`
	Error    *string         `json:"error"`
	Progress json.RawMessage `json:"progress"`
	Channel  json.RawMessage `json:"channel"`
}

// answerLine is the stdin line that answers call id's channel line:
// {"answer":ID,"line":ANSWER}.
func answerLine(id int64, answer []byte) []byte {
	b := strconv.AppendInt([]byte(`{"answer":`), id, 10)
	b = append(append(b, `,"line":`...), answer...)
	return append(b, '}', '\n')
}

// handle dispatches one stdout line; it returns why the line is junk, or "".
func (w *worker) handle(line []byte) string {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 || line[0] != '{' {
		return "not a JSON object"
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		return "not a JSON object: " + err.Error()
	}
	progress := len(a.Progress) > 0 && string(a.Progress) != "null"
	channel := len(a.Channel) > 0 && string(a.Channel) != "null"
	n := 0
	for _, set := range []bool{a.Output != nil, a.Error != nil, progress, channel} {
		if set {
			n++
		}
	}
	if a.ID <= 0 {
		return "no positive id"
	}
	if n != 1 {
		return "not exactly one of output, error, progress and channel"
	}
	w.mu.Lock()
	p := w.calls[a.ID]
	if p != nil && !progress && !channel {
		delete(w.calls, a.ID)
	}
	w.mu.Unlock()
	if p == nil {
		return fmt.Sprintf("id %d is not a call in flight", a.ID)
	}
	if progress {
		if p.progress != nil {
			p.progress(a.Progress)
		}
		return ""
	}
	if channel {
		if p.channel != nil {
			id := p.id
			p.channel(a.Channel, func(answer []byte) { w.send(answerLine(id, answer), nil) })
		}
		return ""
	}
	var r *Result
	switch {
	case a.Error != nil:
		msg := *a.Error
		if strings.TrimSpace(msg) == "" {
			msg = "the tool reported an error without a message"
		}
		r = &Result{Kind: ToolError, Failure: msg}
	case int64(len(*a.Output)) > p.maxOutput:
		r = &Result{Kind: OutputExceeded, Failure: proc.Outcome{Ending: proc.OutputExceeded, Limit: p.maxOutput}.String()}
	default:
		r = &Result{Kind: Answered, Output: []byte(*a.Output)}
	}
	w.answered(p, r)
	return ""
}

// answered finishes p with r: the worker answered it. It retires a worker
// over its RSS cap and notes when one is left without calls.
func (w *worker) answered(p *pending, r *Result) {
	r.Pid = w.pid
	pl := w.pool
	over := false
	if rss, ok := residentBytes(w.statm); ok && rss > pl.limits.MaxRSS {
		over = true
		pl.ps.opts.Logger.Debug("worker retired: RSS over the limit", slog.String("tool", w.tool), slog.Int("pid", w.pid), slog.Int64("rss", int64(rss)), slog.Int64("max_rss", int64(pl.limits.MaxRSS)))
	}
	stop := false
	pl.mu.Lock()
	pl.crashes, pl.notBefore = 0, time.Time{}
	w.mu.Lock()
	if over && !w.retiring {
		w.retiring = true
		pl.remove(w)
	}
	if len(w.calls) == 0 && !w.asked {
		if w.retiring {
			stop = true
		} else {
			w.idleSince = time.Now()
		}
	}
	w.mu.Unlock()
	pl.wakeOne() // one place freed (a worker retired here starts anew)
	pl.mu.Unlock()
	p.done <- r
	if stop {
		go w.stop("")
	}
}

// idleCheck runs when the idle timer fires: it stops a worker that had no
// call for Limits.Idle, and otherwise re-arms the timer for when it may
// have been idle that long.
func (w *worker) idleCheck() {
	pl := w.pool
	pl.mu.Lock()
	w.mu.Lock()
	if w.retiring || w.asked {
		w.mu.Unlock()
		pl.mu.Unlock()
		return
	}
	if wait := pl.limits.Idle - time.Since(w.idleSince); len(w.calls) > 0 || wait > 0 {
		if len(w.calls) > 0 {
			wait = pl.limits.Idle // it is idle at the earliest when this call is answered
		}
		w.idle.Reset(wait)
		w.mu.Unlock()
		pl.mu.Unlock()
		return
	}
	w.retiring = true
	pl.remove(w)
	w.mu.Unlock()
	pl.broadcast()
	pl.mu.Unlock()
	pl.ps.opts.Logger.Debug("worker stopped: idle", slog.String("tool", w.tool), slog.Int("pid", w.pid), slog.Duration("idle", pl.limits.Idle))
	w.stop("")
}

// retired takes w out of service: it is stopped now when it has no call,
// else once its calls are answered. pl.mu is held; the caller takes w out
// of pl.workers.
func (w *worker) retired() {
	w.mu.Lock()
	w.retiring = true
	idle := len(w.calls) == 0
	w.mu.Unlock()
	if idle {
		go w.stop("")
	}
}

// stop ends the worker gently (stdin closed, then the SIGTERM → SIGKILL
// ladder); why is what its calls in flight, if any, are told.
func (w *worker) stop(why string) {
	w.mu.Lock()
	w.asked = true
	if w.killedFor == "" && why != "" {
		w.killedFor = why
	}
	w.mu.Unlock()
	w.p.Stop(w.pool.ps.opts.Grace)
}

// kill ends the worker now (SIGTERM to its group, SIGKILL Grace later),
// for reason; p, when not nil, is the call it is killed for, which gets
// fate instead.
func (w *worker) kill(reason string, p *pending, fate *Result) {
	pl := w.pool
	pl.mu.Lock()
	w.mu.Lock()
	w.killLocked(reason, p, fate)
	w.mu.Unlock()
	pl.broadcast()
	pl.mu.Unlock()
}

// killLocked is kill with pl.mu and w.mu held; the caller broadcasts.
func (w *worker) killLocked(reason string, p *pending, fate *Result) {
	if p != nil {
		p.fate = fate
	}
	if w.killedFor == "" {
		w.killedFor = reason
	}
	w.asked = true
	if !w.retiring {
		w.retiring = true
		w.pool.remove(w)
	}
	go w.p.Terminate(w.pool.ps.opts.Grace)
}

// misbehaved kills a worker that broke the protocol; its end counts as a
// crash for the backoff.
func (w *worker) misbehaved(reason string) {
	w.mu.Lock()
	w.misbehave = true
	w.mu.Unlock()
	w.kill(reason, nil, nil)
}

// junk kills a worker that wrote line, which is not a response, and logs
// the tool and the line's first bytes.
func (w *worker) junk(line []byte, why string) {
	quoted := quoteCapped(line, 120)
	w.mu.Lock()
	var tools []string
	for _, p := range w.calls {
		tools = append(tools, p.tool)
	}
	w.mu.Unlock()
	slices.Sort(tools)
	w.pool.ps.opts.Logger.Warn("worker wrote junk on stdout: killed, its calls in flight fail",
		slog.String("tool", w.tool), slog.String("exec", w.exec), slog.Int("pid", w.pid), slog.String("why", why),
		slog.String("line", quoted), slog.Int("calls", len(tools)), slog.String("tools", strings.Join(slices.Compact(tools), ",")))
	w.misbehaved("it wrote something other than a response on stdout: " + quoteCapped(line, 80))
}

// ended takes a worker whose stdout reached EOF (it is exiting) out of
// service at once, before it is reaped.
func (w *worker) ended() {
	pl := w.pool
	pl.mu.Lock()
	w.mu.Lock()
	if !w.retiring {
		w.retiring = true
		pl.remove(w)
	}
	w.mu.Unlock()
	pl.broadcast()
	pl.mu.Unlock()
}

// watch waits for the worker's end and fails its calls in flight; a call
// whose request the worker never read is handed back for another worker.
func (w *worker) watch() {
	<-w.p.Done()
	// Ask the pipe before anything closes it: bytes left unread mean the
	// last request written never reached the worker.
	consumed, known := w.p.StdinConsumed()
	w.qmu.Lock()
	unread := w.lastWritten
	if !known || consumed || w.writeFailed {
		// A failed write also reads as "not consumed": then nothing
		// written before it can be told unread.
		unread = 0
	}
	w.qmu.Unlock()
	// Answers written just before the exit are still in the pipe.
	select {
	case <-w.readerDone:
	case <-time.After(proc.DefaultDrain):
	}
	w.p.Stop(w.pool.ps.opts.Grace) // done already: this closes stdout, which ends the reader
	<-w.readerDone
	// And stdin, which ends a write still under way: only then does each
	// call's written flag say for good whether its request went out (a
	// write that failed on the dead worker clears it again).
	<-w.writerDone
	if w.statm != nil {
		w.statm.Close()
	}
	outcome := w.p.Wait()

	pl, ps := w.pool, w.pool.ps
	pl.mu.Lock()
	pl.remove(w)
	w.mu.Lock()
	calls := w.calls
	w.calls = map[int64]*pending{}
	crash := !w.asked || w.misbehave
	killedFor := w.killedFor
	w.retiring = true // dead: the idle timer leaves it alone
	w.idle.Stop()
	w.mu.Unlock()
	if crash {
		pl.crashed(w.tool, w.exec)
	}
	pl.broadcast()
	pl.mu.Unlock()

	died := "worker died: " + outcome.String()
	if tail := proc.StderrTail(w.p.StderrTail(), 1000); tail != "" {
		died += ": " + tail
	}
	switch {
	case crash && killedFor == "":
		ps.opts.Logger.Warn("worker died: its calls in flight fail", slog.String("tool", w.tool), slog.String("exec", w.exec), slog.Int("pid", w.pid), slog.String("outcome", outcome.String()), slog.Int("calls", len(calls)))
	case len(calls) > 0:
		ps.opts.Logger.Debug("worker ended: its calls in flight fail", slog.String("tool", w.tool), slog.Int("pid", w.pid), slog.String("why", killedFor), slog.String("outcome", outcome.String()), slog.Int("calls", len(calls)))
	default:
		ps.opts.Logger.Debug("worker ended", slog.String("tool", w.tool), slog.Int("pid", w.pid), slog.String("outcome", outcome.String()))
	}
	ids := make([]int64, 0, len(calls))
	for id := range calls {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := calls[id]
		r := p.fate
		switch {
		case r != nil:
		case !p.written.Load() || p.id == unread:
			r = &Result{Kind: undelivered, Failure: died}
		case killedFor != "":
			r = &Result{Kind: Died, Failure: "worker killed: " + killedFor}
		default:
			r = &Result{Kind: Died, Failure: died}
		}
		r.Pid = w.pid
		p.done <- r
	}
	ps.mu.Lock()
	delete(ps.all, w)
	ps.mu.Unlock()
	ps.reaped.Done()
}

var pageSize = os.Getpagesize()

// quoteCapped quotes the first n bytes of b, escaped, "..." when cut.
func quoteCapped(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}

// stderrLog logs a worker's stderr, one debug line per line written.
type stderrLog struct {
	logger *slog.Logger
	tool   string
	mu     sync.Mutex
	pid    int // 0 until the worker started
	buf    []byte
}

func (l *stderrLog) setPid(pid int) {
	l.mu.Lock()
	l.pid = pid
	l.mu.Unlock()
}

// line logs one line of the worker's stderr. l.mu is held.
func (l *stderrLog) line(b []byte) {
	l.logger.Debug("worker stderr", slog.String("tool", l.tool), slog.Int("pid", l.pid), slog.String("line", clip(b)))
}

func (l *stderrLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.line(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 4096 {
		l.line(l.buf)
		l.buf = l.buf[:0]
	}
	return len(b), nil
}

func clip(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "..."
	}
	return string(b)
}
