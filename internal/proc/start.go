package proc

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpipe/mcpipe/internal/rawpipe"
)

// Process is a long-lived child started by Start: a server or a
// persistent worker, in its own process group, talked to over its stdin
// and stdout pipes. Its methods are safe for concurrent use.
type Process struct {
	pgid   int
	stdin  pipeFile // our write end of its stdin
	stdout pipeFile // our read end of its stdout

	done    chan struct{}
	outcome Outcome // set before done is closed
	stderr  *capture

	stopOnce sync.Once

	wrote, writeFailed atomic.Bool
}

// Start starts c as a long-lived process: stdin and stdout are pipes the
// caller uses (Stdin, Stdout), stderr goes to c.StderrTo and its last
// c.MaxStderr bytes are kept (StderrTail), fd 3 is not set up. c.Stdin,
// Timeout, MaxOutput, ReadLimit and Progress are Run's and are ignored;
// ending it is the caller's job (Stop), or the process's own. When the
// leader exits, the rest of its group is killed at once, before the
// leader is reaped, and Done is closed as soon as stderr has reached EOF
// (at most c.Drain later, for a process that left the group and holds
// it). A child that holds stdout therefore cannot hide the exit: the
// reader sees EOF when the group is killed. Stdout stays readable after
// the exit, so the last frames of a server that answers and exits are
// not lost, until Stop closes it. Our ends of stdin and stdout are read
// and written through package rawpipe: waiting in the poller, with no
// thread held and no wake-up of the runtime's monitor per message.
func Start(c Cmd) (*Process, error) {
	c.defaults()
	cmd, err := c.command()
	if err != nil {
		return nil, err
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	tree, err := c.prepareAndStart(cmd, false)
	if err != nil {
		closeAll()
		return nil, err
	}
	// The child has its copies; ours would keep the pipes open forever.
	inR.Close()
	outW.Close()
	errW.Close()
	p := &Process{
		pgid: cmd.Process.Pid, stdin: rawOr(inW), stdout: rawOr(outR),
		done:   make(chan struct{}),
		stderr: &capture{keep: c.MaxStderr, tail: true, limit: -1, tee: c.StderrTo},
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.stderr.readFrom(errR)
	}()
	exited, reap := watchExit(cmd)
	go func() {
		<-exited
		// A server's leader is the server: once it has exited, nothing
		// left in its group has anything to say. Kill the rest at once,
		// not after a drain as Run does, so that a child still holding
		// stdout cannot hide the death from the reader (it sees EOF now)
		// nor delay Done. What the server wrote before it exited is in
		// the pipes and stays readable.
		killGroup(p.pgid, syscall.SIGKILL)
		reap()
		untrack(p.pgid)
		// Something that left the group may still hold stderr.
		t := time.AfterFunc(c.Drain, func() { errR.Close() })
		<-stderrDone
		t.Stop()
		errR.Close()
		p.outcome = limitOutcome(tree, outcomeOf(cmd.ProcessState.Sys().(syscall.WaitStatus), Exited, 0, 0), cmd.ProcessState)
		close(p.done)
		Sweep()
	}()
	return p, nil
}

// Pid is the process id, which is also its process group id.
func (p *Process) Pid() int { return p.pgid }

// Stdin is the process's stdin. Closing it asks a stdio server to exit.
func (p *Process) Stdin() io.WriteCloser { return stdinWriter{p} }

type stdinWriter struct{ p *Process }

func (w stdinWriter) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	if err != nil {
		w.p.writeFailed.Store(true)
	} else if n > 0 {
		w.p.wrote.Store(true)
	}
	return n, err
}

func (w stdinWriter) Close() error { return w.p.stdin.Close() }

// StdinConsumed reports whether the process read everything written to
// its stdin, and whether that can be known: nothing written, or a failed
// write, counts as not read; otherwise it asks the pipe (Linux: FIONREAD;
// elsewhere known is false). Ask before Stop, which closes the pipe.
func (p *Process) StdinConsumed() (consumed, known bool) {
	if p.writeFailed.Load() || !p.wrote.Load() {
		return false, true
	}
	n, ok := pipeQueued(p.stdin)
	return n == 0, ok
}

// Stdout is the process's stdout.
func (p *Process) Stdout() io.Reader { return p.stdout }

// Done is closed when the process has exited, the rest of its group has
// been killed and it has been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for Done and returns how the process ended.
func (p *Process) Wait() Outcome {
	<-p.done
	return p.outcome
}

// Outcome returns how the process ended, and false while it runs.
func (p *Process) Outcome() (Outcome, bool) {
	select {
	case <-p.done:
		return p.outcome, true
	default:
		return Outcome{}, false
	}
}

// StderrTail returns a copy of the last bytes of stderr so far.
func (p *Process) StderrTail() []byte {
	return p.stderr.snapshot()
}

// Stop ends the process the way the MCP stdio transport asks: close its
// stdin, wait grace for it to exit, SIGTERM the group, wait grace again,
// SIGKILL the group. It returns when the process has been reaped, then
// closes stdout. Only the first call of Stop or Terminate acts; the
// others wait for it. The Outcome is what the process did: "exit status
// 0" for a server that exits when its stdin closes, "killed by SIGTERM"
// for one that needed the signal.
func (p *Process) Stop(grace time.Duration) { p.stop(grace, false) }

// Terminate is Stop without the first wait: close stdin and SIGTERM the
// group at once, SIGKILL grace later. For a process that failed to
// answer in time.
func (p *Process) Terminate(grace time.Duration) { p.stop(grace, true) }

func (p *Process) stop(grace time.Duration, now bool) {
	p.stopOnce.Do(func() {
		if grace <= 0 {
			grace = DefaultGrace
		}
		p.stdin.Close()
		first := grace
		if now {
			first = 0
		}
		t := time.NewTimer(first)
		defer t.Stop()
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
			select {
			case <-p.done:
			case <-t.C:
				killGroup(p.pgid, sig)
				t.Reset(grace)
				continue
			}
			break
		}
		<-p.done
		p.stdout.Close()
	})
	<-p.done
}

// rawOr is f through rawpipe, or f itself where the poller cannot take it.
func rawOr(f *os.File) pipeFile {
	if p, err := rawpipe.New(f); err == nil {
		return p
	}
	return f
}

// pipeFile is our end of a pipe to the process.
type pipeFile interface {
	io.ReadWriteCloser
	SyscallConn() (syscall.RawConn, error)
}
