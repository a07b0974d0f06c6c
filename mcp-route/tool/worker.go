package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/internal/rawpipe"
	"github.com/mcpipe/mcpipe/internal/toolenv"
	"github.com/mcpipe/mcpipe/mcp-route/tooldef"
)

// Run modes for Run.Mode: whether mcp-route runs one process per call
// (the default) or keeps workers that serve calls over a pipe.
const (
	ModeExec   = tooldef.ModeExec
	ModeWorker = tooldef.ModeWorker
)

// EnvWorker is the variable mcp-route sets to "1" in a worker's
// environment: the program is to serve the worker protocol on stdin and
// stdout instead of running one call.
const EnvWorker = "MCP_WORKER"

// Worker limits.
const (
	// MaxRequest is the longest request line a worker reads: the
	// arguments (at most MaxArgs) and the envelope. A longer line is
	// skipped and reported on stderr.
	MaxRequest = MaxArgs + 64<<10
	// MaxWorkerOutput is the most a call may write in a worker, unless
	// its run.maxOutput is larger: the output is held in memory until the
	// call ends, where an exec'd call streams it to mcp-route, which stops
	// it at its cap. More fails the call.
	MaxWorkerOutput = 64 << 20
	// WorkerGrace is how long a worker that is stopping early (a handler
	// panicked, its context ended, its answers cannot be written) waits for
	// its other calls, whose contexts it cancelled, before it exits anyway.
	WorkerGrace = 5 * time.Second
)

// Exit statuses of a worker that stops early; at EOF on stdin, with every
// call answered, it is 0.
const (
	workerStopped  = 1 // the process context ended, or requests could not be read or answers written
	workerPanicked = 2 // a handler panicked
)

// request is one line of the worker's stdin: a call, or a cancel.
type request struct {
	ID              json.RawMessage `json:"id"`
	Cancel          json.RawMessage `json:"cancel"`
	Tool            string          `json:"tool"`
	Arguments       json.RawMessage `json:"arguments"`
	ProtocolVersion string          `json:"protocolVersion"`
	Progress        bool            `json:"progress"`
	Answer          json.RawMessage `json:"answer"` // the call whose question Line answers
	Line            json.RawMessage `json:"line"`
}

// answer is one line of the worker's stdout. Exactly one of Output, Error
// and Progress is set.
type answer struct {
	ID       json.RawMessage `json:"id"`
	Output   *string         `json:"output,omitempty"`
	Error    string          `json:"error,omitempty"`
	Progress json.RawMessage `json:"progress,omitempty"`
	Channel  json.RawMessage `json:"channel,omitempty"`
}

// isWorker reports whether p is to serve the worker protocol: MCP_WORKER
// is "1" and nothing but the tool was named on the command line (so that
// --mcp-describe and --help keep working in a worker's environment).
func isWorker(p Process, rest []string) bool {
	return len(rest) == 0 && p.Getenv(EnvWorker) == "1"
}

// worker serves the worker protocol for one process.
type worker struct {
	p      Process
	lookup func(name string) (Tool, bool)
	names  []string // the tools served, for the unknown-tool error

	ctx    context.Context // every call's parent; cancelled when stopping
	cancel context.CancelFunc

	out    sync.Mutex // one answer line at a time
	stdout io.Writer

	mu       sync.Mutex
	inFlight map[string]context.CancelFunc // by the id's JSON text
	answers  map[string]chanAnswers        // the answers to each call's questions, by id
	calls    sync.WaitGroup

	stopOnce sync.Once
	stopped  chan struct{} // closed when the worker must stop reading
	status   atomic.Int32  // the exit status once stopped
}

// serve runs the worker protocol on p until stdin reaches EOF (status 0),
// p.Context ends, requests cannot be read or answers written (1), or a
// handler panics (2).
// lookup finds the tool a request names; names lists them for errors.
func serve(p Process, lookup func(string) (Tool, bool), names []string) int {
	ctx, cancel := context.WithCancel(p.Context)
	defer cancel()
	w := &worker{
		p:        p,
		lookup:   lookup,
		names:    names,
		ctx:      ctx,
		cancel:   cancel,
		stdout:   p.Stdout,
		inFlight: map[string]context.CancelFunc{},
		answers:  map[string]chanAnswers{},
		stopped:  make(chan struct{}),
	}
	readDone := make(chan error, 1)
	go w.read(readDone)
	select {
	case err := <-readDone:
		// EOF: finish what runs, however long it takes; mcp-route
		// decides when that is too long.
		w.calls.Wait()
		code := int(w.status.Load())
		if err != nil {
			fmt.Fprintf(p.Stderr, "worker: reading requests: %v\n", err)
			code = max(code, workerStopped)
		}
		return code
	case <-p.Context.Done():
		w.stop(workerStopped, "the process context ended: "+context.Cause(p.Context).Error())
	case <-w.stopped:
	}
	// Stopping early: the calls were cancelled; give them a moment to
	// answer, then go.
	done := make(chan struct{})
	go func() { w.calls.Wait(); close(done) }()
	t := time.NewTimer(WorkerGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		fmt.Fprintf(p.Stderr, "worker: exiting with calls still running after %v\n", WorkerGrace)
	}
	return int(w.status.Load())
}

// stop makes the worker stop reading and cancels every call; the first
// reason and status win.
func (w *worker) stop(status int32, reason string) {
	w.stopOnce.Do(func() {
		w.status.Store(status)
		fmt.Fprintf(w.p.Stderr, "worker: stopping: %s\n", reason)
		w.mu.Lock() // no call starts once stopped is closed (see handle)
		close(w.stopped)
		w.mu.Unlock()
		w.cancel()
	})
}

// read handles each request line until EOF or an error, which it sends to
// done (nil for EOF), or until the worker stops. A line longer than
// MaxRequest is skipped with a message on stderr.
//
// A call runs on the goroutine that read its request (see runInline).
func (w *worker) read(done chan<- error) {
	w.readFrom(bufio.NewReaderSize(w.p.Stdin, 64<<10), done)
}

func (w *worker) readFrom(r *bufio.Reader, done chan<- error) {
	for {
		var line []byte
		tooLong := false
		var err error
		for {
			var frag []byte
			frag, err = r.ReadSlice('\n')
			if !tooLong && len(line)+len(frag) <= MaxRequest {
				line = append(line, frag...)
			} else {
				tooLong, line = true, nil
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		select {
		case <-w.stopped:
			return
		default:
		}
		if tooLong {
			fmt.Fprintf(w.p.Stderr, "worker: request line skipped: longer than %d bytes\n", MaxRequest)
		} else if len(bytes.TrimSpace(line)) > 0 {
			if run := w.handle(line); run != nil {
				if err != nil {
					go run() // the last line: this goroutine reports the end
				} else if !w.runInline(r, done, run) {
					return // another goroutine reads now
				}
			}
		}
		if err == io.EOF {
			done <- nil
			return
		}
		if err != nil {
			done <- err
			return
		}
	}
}

// inlineFor is how long a call runs on the reading goroutine before a new
// goroutine takes over the reading.
const inlineFor = 250 * time.Microsecond

// runInline runs a call on the goroutine that read its request, and
// reports whether that goroutine is still the reader afterwards. A call
// still running after inlineFor hands the reading on to a new goroutine,
// so that the calls after it, and cancels, are read while it runs.
//
// Why: a call started on a new goroutine at once waits to be scheduled,
// and wakes another thread on the way: about 40µs a call on a busy 2-core
// machine (measured with stock fs_read), where most calls take less. A
// quick call keeps the next line waiting at most inlineFor.
func (w *worker) runInline(r *bufio.Reader, done chan<- error, run func()) bool {
	const (
		running = iota
		finished
		handedOn
	)
	var state atomic.Int32
	t := time.AfterFunc(inlineFor, func() {
		if state.CompareAndSwap(running, handedOn) {
			w.readFrom(r, done)
		}
	})
	run()
	t.Stop()
	return state.CompareAndSwap(running, finished)
}

// handle takes one request line: it returns the call the line asks for,
// registered and ready to run, or nil when there is none to run (a
// cancel, a request answered or skipped at once). A line that cannot be
// answered (no id) is reported on stderr only: stdout carries answers to
// ids mcp-route sent, nothing else.
func (w *worker) handle(line []byte) (run func()) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		fmt.Fprintf(w.p.Stderr, "worker: request skipped: not a JSON object (%v); want {\"id\":N,\"tool\":NAME,\"arguments\":{...}} or {\"cancel\":N}: %q\n", err, clip(line))
		return nil
	}
	if isSet(req.Answer) {
		var id bytes.Buffer
		json.Compact(&id, req.Answer)
		w.mu.Lock()
		ch := w.answers[id.String()]
		w.mu.Unlock()
		if ch != nil && isSet(req.Line) {
			select {
			case ch <- append([]byte(nil), req.Line...):
			default: // nobody asked that many questions
			}
		}
		return nil
	}
	if isSet(req.Cancel) {
		var id bytes.Buffer
		json.Compact(&id, req.Cancel) // valid: it was unmarshalled
		w.mu.Lock()
		cancel := w.inFlight[id.String()]
		w.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil
	}
	if !isSet(req.ID) || (req.ID[0] != '"' && req.ID[0] != '-' && (req.ID[0] < '0' || req.ID[0] > '9')) {
		fmt.Fprintf(w.p.Stderr, "worker: request skipped: \"id\" is missing or not a number or string: %q\n", clip(line))
		return nil
	}
	var id bytes.Buffer
	json.Compact(&id, req.ID) // valid: it was unmarshalled
	req.ID = id.Bytes()
	key := string(req.ID)
	w.mu.Lock()
	_, dup := w.inFlight[key]
	w.mu.Unlock()
	if dup {
		fmt.Fprintf(w.p.Stderr, "worker: request skipped: id %s is already in flight\n", key)
		return nil
	}
	t, ok := w.lookup(req.Tool)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q (this worker serves %s)", req.Tool, strings.Join(w.names, ", "))
		if req.Tool == "" {
			msg = fmt.Sprintf("the request names no tool (this worker serves %s)", strings.Join(w.names, ", "))
		}
		w.send(answer{ID: req.ID, Error: msg})
		return nil
	}
	name := req.Tool
	if name == "" {
		name = t.Name
	}
	args := bytes.TrimSpace(req.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = []byte("{}")
	case args[0] != '{':
		w.send(answer{ID: req.ID, Error: name + ": the arguments are not a JSON object"})
		return nil
	}
	ctx, cancel := context.WithCancel(w.ctx)
	w.mu.Lock()
	select {
	case <-w.stopped:
		w.mu.Unlock()
		cancel()
		return nil
	default:
	}
	w.inFlight[key] = cancel
	answers := make(chanAnswers, 4)
	w.answers[key] = answers
	w.calls.Add(1)
	w.mu.Unlock()
	return func() {
		defer w.calls.Done()
		defer func() {
			w.mu.Lock()
			delete(w.inFlight, key)
			delete(w.answers, key)
			w.mu.Unlock()
			cancel()
		}()
		w.call(ctx, req, name, t, args, answers)
	}
}

// call runs one request and answers it. Everything the call sees is its
// own: the arguments, an environment with its MCP_TOOL,
// MCP_PROTOCOL_VERSION and MCP_ARG_* over the worker's, its progress wish
// and its output buffer.
func (w *worker) call(ctx context.Context, req request, name string, t Tool, args []byte, answers chanAnswers) {
	limit := int64(MaxWorkerOutput)
	if t.Run != nil && t.Run.MaxOutput > limit {
		limit = t.Run.MaxOutput
	}
	out := &capBuffer{max: limit}
	var answered atomic.Bool
	var progress io.Writer
	if req.Progress {
		progress = progressLine{w: w, id: req.ID, answered: &answered}
	}
	c := &Call{
		ctx:      ctx,
		name:     t.Name,
		args:     args,
		env:      callEnv(w.p.Getenv, name, req.ProtocolVersion, args),
		progress: progress,
		channel:  channelLine{w: w, id: req.ID, answered: &answered},
		answers:  answers,
		stdout:   out,
		stderr:   w.p.Stderr,
	}
	panicked, err := runHandler(t, c, w.p.Stderr)
	c.mu.Lock() // a goroutine the handler left behind writes no more
	answered.Store(true)
	switch {
	case err == nil && out.over:
		err = fmt.Errorf("output exceeded %d bytes (the most a worker holds for one call)", limit)
	case err == nil && !utf8.Valid(out.b.Bytes()):
		// An answer is a JSON string, which cannot carry it; refused
		// rather than altered, as mcp-route refuses a text result.
		err = fmt.Errorf("output is not valid UTF-8 (byte %d); use result mode json or mcp with base64 content for binary data", invalidUTF8At(out.b.Bytes()))
	case err == nil:
		s := out.b.String()
		c.mu.Unlock()
		w.send(answer{ID: req.ID, Output: &s})
		return
	}
	c.mu.Unlock()
	w.send(answer{ID: req.ID, Error: name + ": " + err.Error()})
	if panicked {
		// The handler's state may be broken: answer, then let mcp-route
		// start a fresh worker.
		w.stop(workerPanicked, fmt.Sprintf("call %s (%s) panicked", req.ID, name))
	}
}

// send writes one answer line; a write error stops the worker, whose
// answers can no longer reach mcp-route.
func (w *worker) send(a answer) {
	b, err := marshal(a)
	if err != nil { // only a progress body that is not JSON, which progressLine prevents
		fmt.Fprintf(w.p.Stderr, "worker: answer %s not sent: %v\n", a.ID, err)
		return
	}
	w.out.Lock()
	_, err = w.stdout.Write(append(b, '\n'))
	w.out.Unlock()
	if err != nil {
		w.stop(workerStopped, "writing answers: "+err.Error())
	}
}

// progressLine is a Call's progress channel in a worker: each line
// Call.Progress writes becomes {"id":ID,"progress":LINE}, until the call
// is answered.
type progressLine struct {
	w        *worker
	id       json.RawMessage
	answered *atomic.Bool
}

func (p progressLine) Write(line []byte) (int, error) {
	body := bytes.TrimSpace(line)
	if p.answered.Load() || !json.Valid(body) {
		return len(line), nil
	}
	p.w.send(answer{ID: p.id, Progress: body})
	return len(line), nil
}

// channelLine is a Call's tool channel in a worker: each line becomes
// {"id":ID,"channel":LINE}, until the call is answered.
type channelLine struct {
	w        *worker
	id       json.RawMessage
	answered *atomic.Bool
}

func (p channelLine) Write(line []byte) (int, error) {
	body := bytes.TrimSpace(line)
	if p.answered.Load() || !json.Valid(body) {
		return len(line), nil
	}
	p.w.send(answer{ID: p.id, Channel: body})
	return len(line), nil
}

// callEnv is a call's environment in a worker: the router's per-call
// variables from the request, MCP_ARG_* from this call's arguments only,
// and the rest from the worker's environment.
func callEnv(base func(string) string, tool, protocolVersion string, args []byte) func(string) string {
	argEnv := sync.OnceValue(func() map[string]string { return toolenv.ArgEnv(args) })
	return func(k string) string {
		switch {
		case k == EnvTool:
			return tool
		case k == EnvProtocolVersion:
			return protocolVersion
		case strings.HasPrefix(k, "MCP_ARG_"):
			return argEnv()[k]
		}
		return base(k)
	}
}

// capBuffer keeps what a call writes, up to max bytes; past that writes
// fail and over is set.
type capBuffer struct {
	b    bytes.Buffer
	max  int64
	over bool
}

var errOutputCap = errors.New("tool: output exceeds the worker's cap")

func (c *capBuffer) Write(p []byte) (int, error) {
	if c.over || int64(c.b.Len())+int64(len(p)) > c.max {
		c.over = true
		return 0, errOutputCap
	}
	return c.b.Write(p)
}

// invalidUTF8At returns the offset of the first byte of b that is not
// valid UTF-8.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// isSet reports whether a member was present and not null.
func isSet(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// clip shortens a line for a log message.
func clip(b []byte) []byte {
	const n = 200
	if len(b) > n {
		return append(b[:n:n], "..."...)
	}
	return b
}

// workerProcs runs the worker process on one processor (GOMAXPROCS 1)
// unless the GOMAXPROCS variable says otherwise. A worker mostly serves one
// call at a time, which waits on the pipe or the file system more than it
// computes: more processors only add the scheduler's cost of waking idle
// ones and handing goroutines between them, which is most of what a quick
// call costs besides its own work. Several calls at once (run.concurrency)
// still overlap their waits; a tool with CPU-bound calls that should run in
// parallel in one worker sets GOMAXPROCS in its run.env.
func workerProcs() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
}

// serveOne serves tool t for every request, whatever tool it names: a
// single-tool program answers to whatever name mcp-route gave it, as with
// MCP_TOOL in exec mode.
func serveOne(p Process, t Tool) int {
	p = workerStdio(p)
	return serve(p, func(string) (Tool, bool) { return t, true }, []string{t.Name})
}

// serveMany serves byName; a request for another name goes to fallback
// when it is set (the tool the program's name or first argument chose, as
// in exec mode), else gets an unknown-tool error.
func serveMany(p Process, byName map[string]Tool, fallback *Tool) int {
	p = workerStdio(p)
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return serve(p, func(name string) (Tool, bool) {
		if t, ok := byName[name]; ok {
			return t, true
		}
		if fallback != nil {
			return *fallback, true
		}
		return Tool{}, false
	}, names)
}

// workerStdio gives a worker process private descriptors for its requests
// and answers when p is the real process (see privateStdio), and one
// processor (see workerProcs); a Process with other readers and writers (a
// test) is left as it is.
func workerStdio(p Process) Process {
	if p.Stdin != os.Stdin || p.Stdout != os.Stdout {
		return p
	}
	workerProcs()
	in, out, err := privateStdio()
	if err != nil {
		fmt.Fprintf(p.Stderr, "worker: stray reads of stdin and writes to stdout are not diverted: %v\n", err)
	}
	if in != nil && out != nil {
		p.Stdin, p.Stdout = in, out
		// Read and written without waking the runtime's monitor thread
		// per message (package rawpipe); a copy left blocking is used
		// as it is.
		if r, err := rawpipe.New(in); err == nil {
			p.Stdin = r
		}
		if w, err := rawpipe.New(out); err == nil {
			p.Stdout = w
		}
	}
	return p
}
