// Package runner runs one tool process to completion under supervision: the
// process-level half of mcp-route's "tools as executables" contract. It is
// a thin layer over internal/proc, whose package doc has the exact sequence
// and the platform differences; what runner adds is the tool's contract:
//
//   - argv is Spec.Path and Spec.Args; stdin gets Spec.Stdin and then EOF;
//     the environment is exactly Spec.Env (nil: empty).
//   - fd 3 is always open as the write end of a progress pipe; each line
//     written to it (at most MaxProgressLine bytes; longer lines are
//     dropped) goes to Spec.Progress, and the pipe is always drained.
//   - fd 4, when Spec.Answers is set, is that pipe's read end: the tool
//     reads there the answers to the questions it asked on fd 3.
//   - stdout is kept up to Spec.MaxOutput bytes; one byte more and the whole
//     group is killed (SIGKILL) and Result.OutputExceeded is set.
//   - stderr is kept as a tail of at most Spec.MaxStderr bytes.
//   - on Spec.Timeout or when ctx is done the group gets SIGTERM, and SIGKILL
//     Spec.Grace later if the leader is still alive.
//   - when the leader exits, the pipes get Spec.Drain to reach EOF; then the
//     group is killed (SIGKILL), before the leader is reaped, so nothing
//     left in the group outlives the call.
//
// Run is safe for concurrent use; each call is independent. It refuses
// nothing itself: deciding what may run, with which environment, is the
// caller's job. A process that leaves its group (setsid) escapes the group
// kill; mcp-route's subreaper (proc.Subreap) catches it.
package runner

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
)

// Defaults used when a Spec field is zero.
const (
	DefaultMaxOutput = proc.DefaultMaxOutput
	DefaultMaxStderr = proc.DefaultMaxStderr
	DefaultGrace     = proc.DefaultGrace
	DefaultDrain     = proc.DefaultDrain
	MaxProgressLine  = proc.MaxProgressLine
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
	// Answers, when set, becomes fd 4: the read end of the pipe on which
	// mcp-route answers what the tool asked on fd 3. Run closes it once
	// the tool holds its copy (proc.Cmd.Answers).
	Answers *os.File
	// Spawn, when set, starts the prepared command instead of
	// cmd.Start: mcp-route's confinement (package
	// mcp-route/confinement), which forks on a thread that holds the
	// Landlock domain, so the tool is confined from its first
	// instruction. nil: cmd.Start, unconfined.
	Spawn func(*exec.Cmd) error
	// Limits bound the tool's process tree (proc.Limits: memory,
	// processes, CPU); a limit reached ends the run with
	// proc.LimitExceeded, whose wording names it. Zero: none.
	Limits proc.Limits
}

// Result is what happened. Outcome is how the run ended (decide on its
// Ending); the flags below mirror it for callers that predate it.
type Result struct {
	Outcome        proc.Outcome
	Stdout         []byte         // at most MaxOutput bytes
	Stderr         []byte         // the last MaxStderr bytes
	StderrCut      bool           // Stderr lost its beginning
	ExitCode       int            // -1 when killed by a signal or never started
	Signal         syscall.Signal // the signal that killed the leader, if any
	TimedOut       bool
	Canceled       bool // ctx was done before the leader exited
	OutputExceeded bool
	Err            error // the process could not be started
}

// OK reports whether the process ran and exited 0 without any limit hit.
func (r *Result) OK() bool { return r.Outcome.OK() }

// Failure returns a short human-readable reason for a failed run, "" when
// r.OK(): the Outcome's wording ("exit status 3", "killed by SIGSEGV",
// ...), then the tail of stderr when there is one.
func (r *Result) Failure() string {
	switch {
	case r.OK():
		return ""
	case r.Err != nil:
		return "cannot start tool: " + r.Err.Error()
	}
	reason := r.Outcome.String()
	if tail := StderrTail(r.Stderr, 1000); tail != "" {
		reason += ": " + tail
	}
	return reason
}

// Cause is Failure cut to one line: the Outcome's wording, then the last
// line of stderr that reads like the cause ("...Error: ...", "...: Permission
// denied", "... not found"), else its last line, at most 200 bytes. A
// Python interpreter that cannot start prints 1.5 KB of its path
// configuration; the line that says why is near the end, not at it.
func (r *Result) Cause() string {
	switch {
	case r.OK():
		return ""
	case r.Err != nil:
		return "cannot start tool: " + r.Err.Error()
	}
	reason := r.Outcome.String()
	var last, cause string
	for _, l := range strings.Split(StderrTail(r.Stderr, 4096), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = l
		if causeLine.MatchString(l) {
			cause = l
		}
	}
	if cause == "" {
		cause = last
	}
	if cause != "" {
		if len(cause) > 200 {
			cause = strings.ToValidUTF8(cause[:200], "") + "..."
		}
		reason += ": " + cause
	}
	return reason
}

// causeLine: a line of stderr that says why a program failed.
var causeLine = regexp.MustCompile(`(?i)error|denied|not permitted|not found|no such|cannot|can't|fatal|exception|refused`)

// StderrTail returns the last n bytes of stderr, trimmed of surrounding
// space and cut at a line start when possible, as valid UTF-8.
func StderrTail(stderr []byte, n int) string { return proc.StderrTail(stderr, n) }

// SignalName returns the conventional name of sig, e.g. "SIGSEGV", or
// "signal N" for one without a common name.
func SignalName(sig syscall.Signal) string { return proc.SignalName(sig) }

// Command returns the proc.Cmd that runs s: the one place a tool's process
// is described, so an exec'd call (Run) and a persistent worker
// (mcp-route/worker, proc.Start, which ignores the fields only Run uses)
// start the same way: argv, working directory, environment, process group,
// limits, and whatever launcher or start hook proc.Cmd gains.
func Command(s Spec) proc.Cmd {
	progress := s.Progress
	if progress == nil {
		progress = func([]byte) {} // fd 3 is part of the contract regardless
	}
	stdin := s.Stdin
	if stdin == nil {
		stdin = []byte{} // a pipe that reaches EOF, as the contract says
	}
	return proc.Cmd{
		Path:      s.Path,
		Args:      append([]string{s.Path}, s.Args...),
		Dir:       s.Dir,
		Env:       s.Env,
		Stdin:     stdin,
		Timeout:   s.Timeout,
		Grace:     s.Grace,
		Drain:     s.Drain,
		MaxOutput: s.MaxOutput,
		MaxStderr: s.MaxStderr,
		Progress:  progress,
		Answers:   s.Answers,
		Spawn:     s.Spawn,
		Limits:    s.Limits,
	}
}

// Run runs s to completion; see the package doc. It never returns with the
// process or its group still running.
func Run(ctx context.Context, s Spec) *Result {
	pr := proc.Run(ctx, Command(s))
	o := pr.Outcome
	return &Result{
		Outcome:        o,
		Stdout:         pr.Stdout,
		Stderr:         pr.Stderr,
		StderrCut:      pr.StderrCut,
		ExitCode:       o.ExitCode,
		Signal:         o.Signal,
		TimedOut:       o.Ending == proc.TimedOut,
		Canceled:       o.Ending == proc.Canceled,
		OutputExceeded: o.Ending == proc.OutputExceeded,
		Err:            o.Err,
	}
}
