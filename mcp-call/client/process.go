//go:build unix

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultGrace is how long Stop waits after closing the server's stdin before
// SIGTERM, and after SIGTERM before SIGKILL.
const DefaultGrace = 2 * time.Second

// Command describes a server to start.
type Command struct {
	// Argv is the program and its arguments; required. A program name
	// without a slash is looked up in PATH.
	Argv []string
	// Env is the environment; nil means this process's environment.
	Env []string
	// Dir is the working directory; "" means the current one.
	Dir string
	// Stderr receives the server's stderr; nil discards it.
	Stderr io.Writer
	// Grace is the shutdown step; 0 means DefaultGrace.
	Grace time.Duration
}

// StartError reports that the server could not be started.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "cannot start server: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Process is a running server in its own process group. Its stdin and
// stdout are plain pipes owned by the Process; Stop is the only way to end
// it and is safe to call more than once and from several goroutines.
type Process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our write end of the server's stdin
	stdout *os.File // our read end of the server's stdout
	grace  time.Duration
	exited chan struct{}
	err    error // from Wait; read after exited
	stop   sync.Once
	term   bool // Stop sends SIGTERM without waiting Grace first

	wrote       atomic.Bool // a write to stdin succeeded
	writeFailed atomic.Bool // a write to stdin failed (the server was gone)
}

// Start starts the server. The pipes are os.Pipe pairs rather than
// exec's StdoutPipe because Wait closes a StdoutPipe, which would race with
// reading the last frames of a server that answers and exits.
func Start(c Command) (*Process, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, &StartError{Err: errors.New("no server command")}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &StartError{Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, &StartError{Err: err}
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = c.Stderr
	// Its own process group, so that Stop reaches the server's children
	// too (npx, shells, language launchers all fork).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// A stderr copied through a goroutine (Stderr not an *os.File) may be
	// held open by an escaped grandchild; do not let Wait hang on it.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, &StartError{Err: err}
	}
	// The child has its copies; ours would keep the pipes open forever.
	inR.Close()
	outW.Close()
	p := &Process{cmd: cmd, stdin: inW, stdout: outR, grace: grace, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Stdin is the server's stdin. Closing it asks a stdio server to exit.
func (p *Process) Stdin() io.WriteCloser { return stdinWriter{p} }

// stdinWriter notes failed writes: a probe that could not be written was
// never read (see Dial).
type stdinWriter struct{ p *Process }

func (w stdinWriter) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	if err != nil {
		w.p.writeFailed.Store(true)
	} else {
		w.p.wrote.Store(true)
	}
	return n, err
}

func (w stdinWriter) Close() error { return w.p.stdin.Close() }

// stdinConsumed reports whether the server read everything written to its
// stdin, and whether that is known (see stdinQueued). Nothing written, or a
// failed write, counts as not read.
func (p *Process) stdinConsumed() (consumed, known bool) {
	if p.writeFailed.Load() || !p.wrote.Load() {
		return false, true
	}
	n, ok := stdinQueued(p.stdin)
	return n == 0, ok
}

// Stdout is the server's stdout.
func (p *Process) Stdout() io.Reader { return p.stdout }

// Exited is closed when the server process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State describes the process for error messages: "running", "exited with
// status 1", "killed by signal: terminated".
func (p *Process) State() string {
	select {
	case <-p.exited:
	default:
		return "running"
	}
	if p.err == nil {
		return "exited with status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal: " + ws.Signal().String()
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return p.err.Error()
}

// Stop ends the server the way the MCP stdio transport asks: close its
// stdin, wait Grace for it to exit, then SIGTERM its process group, wait
// Grace again, then SIGKILL the group. Whatever is left of the group after
// the server exits is killed too, so no child outlives mcp-call. Stop
// returns when the server has been reaped; the result of the call it served
// does not depend on how it ended, so Stop returns no error.
func (p *Process) Stop() { p.stop.Do(p.doStop) }

// terminate is Stop for a server that did not answer in time: after closing
// its stdin it sends SIGTERM at once, SIGKILL after Grace.
func (p *Process) terminate() {
	p.stop.Do(func() {
		p.term = true
		p.doStop()
	})
}

func (p *Process) doStop() {
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	steps := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	first := p.grace
	if p.term {
		first = 0
	}
	timer := time.NewTimer(first)
	defer timer.Stop()
	for i := 0; ; i++ {
		select {
		case <-p.exited:
			// Leftover group members (a server's children) go too; ESRCH
			// when there are none.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			p.stdout.Close()
			return
		case <-timer.C:
			if i < len(steps) {
				_ = syscall.Kill(-pgid, steps[i])
			}
			timer.Reset(p.grace)
		}
	}
}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (p *Process) WaitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
