// Package runner runs one tool process to completion under supervision: the
// process-level half of mcp-route's "tools as executables" contract.
//
// Run starts the executable in its own process group (Setpgid) with exactly
// the environment, working directory and stdin bytes it is given, and fd 3
// open as the write end of a progress pipe. It returns when the process and
// everything it left behind in its group are gone:
//
//   - stdin gets Spec.Stdin and then EOF; a tool that never reads it or closes
//     it early is fine (EPIPE on our side is ignored, never fatal).
//   - stdout is kept up to Spec.MaxOutput bytes; one byte more and the whole
//     group is killed (SIGKILL) and Result.OutputExceeded is set.
//   - stderr is kept as a tail of at most Spec.MaxStderr bytes, so memory
//     stays bounded however much a tool writes.
//   - each line written to fd 3 (at most MaxProgressLine bytes; longer lines
//     are dropped) is handed to Spec.Progress; the pipe is always drained so a
//     tool never blocks on it, even when nobody wants progress.
//   - on Spec.Timeout or when ctx is done the group gets SIGTERM, and SIGKILL
//     Spec.Grace later if the leader is still alive.
//   - when the leader exits, the pipes get Spec.Drain to reach EOF; then the
//     group is killed (SIGKILL) unconditionally, so a background child that
//     still holds stdout cannot hold the call open and nothing outlives it.
//     The kill happens while the exited leader is still an unreaped zombie, so
//     the group id cannot have been reused by an unrelated process.
//   - the leader is always reaped and every descriptor Run opened is closed
//     before it returns.
//
// Run is Linux-only (waitid with WNOWAIT, process groups) and safe for
// concurrent use; each call is independent. It refuses
// nothing itself: deciding what may run, with which environment, is the
// caller's job. A process that leaves its group (setsid) escapes the kill; its
// pipes are closed on our side after the drain so the call still returns.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults used when a Spec field is zero.
const (
	DefaultMaxOutput = 1 << 20         // 1 MiB of stdout
	DefaultMaxStderr = 64 << 10        // 64 KiB tail of stderr
	DefaultGrace     = 2 * time.Second // SIGTERM → SIGKILL
	DefaultDrain     = 200 * time.Millisecond
	MaxProgressLine  = 64 << 10 // longest fd-3 line passed to Progress
)

// Spec describes one process to run. Zero values fall back to the defaults
// above; a zero Timeout means no timeout.
type Spec struct {
	Path      string        // executable; required
	Args      []string      // arguments after argv[0] (argv[0] is Path); optional
	Dir       string        // working directory; "" means the caller's
	Env       []string      // the complete environment; nil means an empty one
	Stdin     []byte        // written to stdin, then EOF
	Timeout   time.Duration // 0: none
	Grace     time.Duration // SIGTERM → SIGKILL delay
	Drain     time.Duration // how long pipes may stay open after the leader exits
	MaxOutput int64         // stdout cap in bytes
	MaxStderr int           // stderr tail size in bytes
	// Progress, when set, receives each complete line written to fd 3,
	// without its newline. It is called from one goroutine, in order, and
	// always before Run returns; the slice is only valid during the call.
	Progress func(line []byte)
}

// Result is what happened. Exactly one of the outcome flags or fields
// explains a failure; Failure turns it into a short text.
type Result struct {
	Stdout         []byte         // at most MaxOutput bytes
	Stderr         []byte         // the last MaxStderr bytes
	StderrCut      bool           // Stderr lost its beginning
	ExitCode       int            // -1 when killed by a signal or never started
	Signal         syscall.Signal // the signal that killed the leader, if any
	TimedOut       bool
	Canceled       bool // ctx was done before the leader exited
	OutputExceeded bool
	Err            error // the process could not be started
	// Settings echoed for Failure's messages.
	Timeout   time.Duration
	MaxOutput int64
}

// OK reports whether the process ran and exited 0 without any limit hit.
func (r *Result) OK() bool {
	return r.Err == nil && !r.TimedOut && !r.Canceled && !r.OutputExceeded &&
		r.Signal == 0 && r.ExitCode == 0
}

// Failure returns a short human-readable reason for a failed run, "" when
// r.OK(). The tail of stderr, when there is one, follows the reason.
func (r *Result) Failure() string {
	var reason string
	switch {
	case r.Err != nil:
		return "cannot start tool: " + r.Err.Error()
	case r.Canceled:
		reason = "canceled"
	case r.TimedOut:
		reason = "timed out after " + r.Timeout.String()
	case r.OutputExceeded:
		reason = fmt.Sprintf("output exceeded %d bytes", r.MaxOutput)
	case r.Signal != 0:
		reason = "killed by " + SignalName(r.Signal)
	case r.ExitCode != 0:
		reason = fmt.Sprintf("exit status %d", r.ExitCode)
	default:
		return ""
	}
	if tail := StderrTail(r.Stderr, 1000); tail != "" {
		reason += ": " + tail
	}
	return reason
}

// StderrTail returns the last n bytes of stderr, trimmed of surrounding
// space and cut at a line start when possible, as valid UTF-8.
func StderrTail(stderr []byte, n int) string {
	b := bytes.TrimSpace(stderr)
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

var errNoPath = errors.New("runner: empty Path")

// Run runs s to completion; see the package doc for the exact sequence. It
// never returns with the process or its group still running (barring a
// process that left the group).
func Run(ctx context.Context, s Spec) *Result {
	if s.MaxOutput <= 0 {
		s.MaxOutput = DefaultMaxOutput
	}
	if s.MaxStderr <= 0 {
		s.MaxStderr = DefaultMaxStderr
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.Drain <= 0 {
		s.Drain = DefaultDrain
	}
	res := &Result{ExitCode: -1, Timeout: s.Timeout, MaxOutput: s.MaxOutput}
	if s.Path == "" {
		res.Err = errNoPath
		return res
	}

	var files []*os.File // every descriptor we opened, closed on return
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err == nil {
		var outR, outW, errR, errW, progR, progW *os.File
		if outR, outW, err = pipe(); err == nil {
			if errR, errW, err = pipe(); err == nil {
				if progR, progW, err = pipe(); err == nil {
					return run(ctx, s, res, inR, inW, outR, outW, errR, errW, progR, progW)
				}
			}
		}
	}
	res.Err = err
	return res
}

func run(ctx context.Context, s Spec, res *Result, inR, inW, outR, outW, errR, errW, progR, progW *os.File) *Result {
	cmd := &exec.Cmd{
		Path:        s.Path,
		Args:        append([]string{s.Path}, s.Args...),
		Dir:         s.Dir,
		Env:         s.Env,
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		ExtraFiles:  []*os.File{progW}, // fd 3
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean "inherit ours"
	}
	if err := cmd.Start(); err != nil {
		res.Err = err
		return res
	}
	pgid := cmd.Process.Pid
	// The child holds its own copies now; ours would keep the pipes open
	// and hide EOF.
	inR.Close()
	outW.Close()
	errW.Close()
	progW.Close()

	var wg sync.WaitGroup
	overflow := make(chan struct{})
	wg.Add(4)
	go func() { // stdin; EPIPE and friends mean the tool does not want it
		defer wg.Done()
		inW.Write(s.Stdin)
		inW.Close()
	}()
	readers := make(chan struct{}, 3)
	go func() {
		defer wg.Done()
		defer func() { readers <- struct{}{} }()
		res.Stdout = readCapped(outR, s.MaxOutput, overflow)
	}()
	go func() {
		defer wg.Done()
		defer func() { readers <- struct{}{} }()
		res.Stderr, res.StderrCut = readTail(errR, s.MaxStderr)
	}()
	go func() {
		defer wg.Done()
		defer func() { readers <- struct{}{} }()
		readLines(progR, MaxProgressLine, s.Progress)
	}()

	exited := make(chan error, 1)
	go func() { exited <- waitExited(pgid) }()

	var timeoutC <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	var graceC <-chan time.Time
	terminating := false
	terminate := func() {
		if terminating {
			return
		}
		terminating = true
		killGroup(pgid, syscall.SIGTERM)
		t := time.NewTimer(s.Grace)
		graceC = t.C
	}
	done := ctx.Done()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-done:
			done = nil
			if !res.TimedOut && !res.OutputExceeded {
				res.Canceled = true
			}
			terminate()
		case <-timeoutC:
			timeoutC = nil
			if !res.Canceled && !res.OutputExceeded {
				res.TimedOut = true
			}
			terminate()
		case <-overflow:
			overflow = nil
			if !res.Canceled && !res.TimedOut {
				res.OutputExceeded = true
			}
			killGroup(pgid, syscall.SIGKILL)
		case <-graceC:
			graceC = nil
			killGroup(pgid, syscall.SIGKILL)
		}
	}

	// The leader is a zombie now: give the pipes a moment to reach EOF, then
	// kill whatever is left in the group.
	drain := time.NewTimer(s.Drain)
	for n := 0; n < 3; {
		select {
		case <-readers:
			n++
			continue
		case <-drain.C:
		}
		break
	}
	drain.Stop()
	killGroup(pgid, syscall.SIGKILL)
	// Readers now see EOF unless something left the group still holds a
	// pipe; closing our ends unblocks them in that case.
	unblock := time.AfterFunc(s.Drain, func() {
		outR.Close()
		errR.Close()
		progR.Close()
		inW.Close()
	})
	err := cmd.Wait() // reaps the leader; no copy goroutines: all *os.File
	wg.Wait()
	unblock.Stop()

	if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		} else {
			res.ExitCode = st.ExitCode()
		}
	} else if err != nil {
		res.Err = err
	}
	return res
}

func killGroup(pgid int, sig syscall.Signal) {
	// ESRCH (nothing left in the group) is the normal case late in a run.
	syscall.Kill(-pgid, sig)
}

// readCapped reads r to EOF, keeping at most max bytes. The first byte over
// max closes overflow; the rest is read and dropped so the writer never
// blocks before it is killed.
func readCapped(r io.Reader, max int64, overflow chan struct{}) []byte {
	var buf bytes.Buffer
	_, err := io.Copy(&buf, io.LimitReader(r, max))
	if err != nil {
		return buf.Bytes()
	}
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		close(overflow)
		io.Copy(io.Discard, r)
	} else {
		// A zero-byte read without EOF is possible in theory; drain anyway.
		if n, _ := io.Copy(io.Discard, r); n > 0 {
			close(overflow)
		}
	}
	return buf.Bytes()
}

// readTail reads r to EOF and keeps its last max bytes.
func readTail(r io.Reader, max int) (tail []byte, cut bool) {
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 4096)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if len(buf) > 2*max {
			buf = append(buf[:0], buf[len(buf)-max:]...)
			cut = true
		}
		if err != nil {
			break
		}
	}
	if len(buf) > max {
		buf = buf[len(buf)-max:]
		cut = true
	}
	return buf, cut
}

// readLines hands each line of r (at most max bytes; longer ones are
// dropped whole) to fn, and drains r to EOF.
func readLines(r io.Reader, max int, fn func([]byte)) {
	buf := make([]byte, 0, 512)
	chunk := make([]byte, 4096)
	skipping := false
	for {
		n, err := r.Read(chunk)
		data := chunk[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !skipping {
					buf = append(buf, data...)
					if len(buf) > max {
						buf, skipping = buf[:0], true
					}
				}
				break
			}
			if !skipping {
				buf = append(buf, data[:i]...)
				if len(buf) <= max && fn != nil {
					fn(bytes.TrimSuffix(buf, []byte("\r")))
				}
			}
			buf, skipping = buf[:0], false
			data = data[i+1:]
		}
		if err != nil {
			// A final unterminated line is still a line.
			if !skipping && len(buf) > 0 && fn != nil {
				fn(buf)
			}
			return
		}
	}
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL",
	syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

// SignalName returns the conventional name of sig, e.g. "SIGSEGV", or
// "signal N" for one without a common name.
func SignalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
