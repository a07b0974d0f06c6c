package proc

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults used when a Cmd field is zero.
const (
	DefaultMaxOutput = 1 << 20         // 1 MiB of stdout
	DefaultMaxStderr = 64 << 10        // 64 KiB tail of stderr
	DefaultGrace     = 2 * time.Second // SIGTERM → SIGKILL
	DefaultDrain     = 200 * time.Millisecond
	MaxProgressLine  = 64 << 10 // longest fd-3 line passed to Progress
)

// Cmd describes a process to run (Run) or to start (Start). Zero values
// fall back to the defaults above. Every limit is a field, so concurrent
// runs with different limits do not interfere.
type Cmd struct {
	Path string   // the executable; required
	Args []string // argv, argv[0] first; nil means {Path}
	Dir  string   // working directory; "" means the caller's
	Env  []string // the complete environment; nil means an empty one

	// Stdin is written to the process's stdin, then EOF (Run only); nil
	// means /dev/null. A process that does not read it is fine.
	Stdin []byte
	// Timeout ends a Run: SIGTERM to the group, SIGKILL Grace later. 0:
	// none.
	Timeout time.Duration
	// Grace is the SIGTERM → SIGKILL delay.
	Grace time.Duration
	// Drain is how long Run lets the output pipes stay open after the
	// leader exits before the rest of the group is killed. Start kills
	// the rest at once; for it, Drain only bounds the wait for a stderr
	// still held by a process that left the group.
	Drain time.Duration
	// MaxOutput is how many bytes of stdout Run keeps (the first ones).
	MaxOutput int64
	// MaxStderr is how many bytes of stderr are kept (the last ones).
	MaxStderr int
	// ReadLimit is how many bytes Run reads from each of stdout and stderr
	// before it kills the group (OutputExceeded); past MaxOutput they are
	// counted, not kept. 0 means: the first stdout byte past MaxOutput
	// kills, and stderr is read to its end however long it gets.
	ReadLimit int64
	// Progress, when set, gets fd 3 as the write end of a pipe, and each
	// complete line written to it (at most MaxProgressLine bytes; longer
	// lines are dropped), without its newline, in order, from one
	// goroutine, before Run returns. The slice is valid during the call.
	// The pipe is always drained, so the process never blocks on it.
	Progress func(line []byte)
	// Answers, when set with Progress, is fd 4 of the process: the read
	// end of the pipe on which the caller answers what the process asked
	// on fd 3 (mcp-route's tool channel). Run owns it: it closes it once
	// the child holds its copy (or the start failed), so that the
	// caller's writes fail, instead of blocking, once the process is gone.
	Answers *os.File
	// StderrTo, when set, also gets stderr as it arrives (Start: a
	// server's log for the user). Its errors are ignored.
	StderrTo io.Writer

	// Launcher, when set, is the program (an absolute path) and leading
	// arguments that start the process instead: the argv run is
	// Launcher followed by Path and Args[1:]. A launcher confines itself
	// (e.g. Landlock) and then execs its trailing argv, so the
	// confinement covers the tool and everything it starts.
	Launcher []string
	// Prepare, when set, is called with the *exec.Cmd just before it
	// starts: the seam for what must happen between fork and exec
	// (SysProcAttr fields: credentials, namespaces, ...). It must keep
	// SysProcAttr.Setpgid set; an error is returned as NotStarted.
	Prepare func(*exec.Cmd) error
	// Spawn, when set, starts the *exec.Cmd instead of cmd.Start: the
	// seam for starting it elsewhere, such as on the Landlock-confined
	// thread of a confine.Spawner (Spawner.Start), whose domain the child
	// inherits at fork. It is called after Prepare and must either call
	// cmd.Start once and return its error, or return an error without
	// starting anything (NotStarted). Spawn must not wait for the
	// process; Run and Start do.
	Spawn func(*exec.Cmd) error
	// Limits bound the process tree (see the package doc, "Limits"):
	// memory, processes and CPU. Zero: none. A Spawn that forks on
	// another thread must run ForkHook(cmd) around the fork there.
	Limits Limits
}

// Result is what Run saw. Outcome says how the process ended.
type Result struct {
	Outcome
	Stdout      []byte // at most MaxOutput bytes, the first ones
	StdoutTotal int64  // bytes read from stdout
	Stderr      []byte // at most MaxStderr bytes, the last ones
	StderrTotal int64  // bytes read from stderr
	StderrCut   bool   // Stderr lost its beginning
}

var errNoPath = errors.New("empty Path")

func (c *Cmd) defaults() {
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	if c.MaxStderr <= 0 {
		c.MaxStderr = DefaultMaxStderr
	}
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Drain <= 0 {
		c.Drain = DefaultDrain
	}
}

// command builds the *exec.Cmd for c: its own process group, exactly
// c.Env, the launcher in front when there is one.
func (c *Cmd) command() (*exec.Cmd, error) {
	if c.Path == "" {
		return nil, errNoPath
	}
	args := c.Args
	if len(args) == 0 {
		args = []string{c.Path}
	}
	cmd := &exec.Cmd{
		Path:        c.Path,
		Args:        append([]string(nil), args...),
		Dir:         c.Dir,
		Env:         c.Env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean "inherit ours"
	}
	if len(c.Launcher) > 0 {
		cmd.Path = c.Launcher[0]
		cmd.Args = append(append(append([]string(nil), c.Launcher...), c.Path), args[1:]...)
	}
	return cmd, nil
}

// prepareAndStart runs Prepare and starts cmd as a tracked child, a
// Run's when run is set, in its limits (nil tree: none).
func (c *Cmd) prepareAndStart(cmd *exec.Cmd, run bool) (*treeLimit, error) {
	if c.Prepare != nil {
		if err := c.Prepare(cmd); err != nil {
			return nil, err
		}
		if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setpgid {
			return nil, errors.New("proc: Cmd.Prepare cleared SysProcAttr.Setpgid")
		}
	}
	spawn, tree, err := withLimits(c.Limits, cmd, c.Spawn)
	if err != nil {
		return nil, err
	}
	if err := startTracked(cmd, spawn, run); err != nil {
		if tree != nil {
			tree.close()
		}
		return nil, err
	}
	return tree, nil
}

// limitOutcome turns o into LimitExceeded when the tree reached a limit
// and nothing this package did ended it first; then it ends the tree:
// every process left in it is killed.
func limitOutcome(tree *treeLimit, o Outcome, st *os.ProcessState) Outcome {
	if tree == nil {
		return o
	}
	if o.Ending == Exited || o.Ending == Signaled {
		ru, _ := st.SysUsage().(*syscall.Rusage)
		if name, v := tree.hit(st.Sys().(syscall.WaitStatus), ru); name != "" {
			o.Ending, o.LimitName, o.Limit = LimitExceeded, name, v
		}
	}
	tree.close()
	return o
}

func killGroup(pgid int, sig syscall.Signal) {
	// ESRCH (nothing left in the group) is the normal case late in a run.
	unix.Kill(-pgid, sig)
}

// Run runs c to completion; see the package doc for the exact sequence.
// It returns when the process and the rest of its group are gone.
func Run(ctx context.Context, c Cmd) *Result {
	c.defaults()
	res := &Result{Outcome: Outcome{Ending: NotStarted, ExitCode: -1, Timeout: c.Timeout}}
	if c.Answers != nil {
		defer c.Answers.Close() // the child's copy is all it needs
	}
	cmd, err := c.command()
	if err != nil {
		res.Err = err
		return res
	}
	var files []*os.File // every descriptor we opened, closed on return
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	// The child's ends stay out of the poller (ChildPipe): they are only
	// handed over and closed.
	pipe := func(childReads bool) (child, ours *os.File) {
		if err != nil {
			return nil, nil
		}
		child, ours, err = ChildPipe(childReads)
		files = append(files, child, ours)
		return child, ours
	}
	var inR, inW, progR, progW *os.File
	if c.Stdin != nil {
		inR, inW = pipe(true)
		cmd.Stdin = inR
	}
	outW, outR := pipe(false)
	errW, errR := pipe(false)
	if c.Progress != nil {
		progW, progR = pipe(false)
		cmd.ExtraFiles = []*os.File{progW} // fd 3
		if c.Answers != nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, c.Answers) // fd 4
		}
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	var tree *treeLimit
	if err == nil {
		tree, err = c.prepareAndStart(cmd, true)
	}
	if err != nil {
		res.Err = err
		return res
	}
	defer sweepAfterRun()
	pgid := cmd.Process.Pid
	// The child holds its own copies now; ours would keep the pipes open
	// and hide EOF.
	for _, f := range []*os.File{inR, outW, errW, progW, c.Answers} {
		if f != nil {
			f.Close()
		}
	}

	var wg sync.WaitGroup
	readers := make(chan struct{}, 3)
	nreaders := 0
	reader := func(fn func()) {
		nreaders++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { readers <- struct{}{} }()
			fn()
		}()
	}
	if inW != nil {
		wg.Add(1)
		go func() { // EPIPE and friends mean the process does not want it
			defer wg.Done()
			inW.Write(c.Stdin)
			inW.Close()
		}()
	}
	overflow := make(chan int64, 2)
	outLimit, errLimit := c.ReadLimit, c.ReadLimit
	if outLimit <= 0 {
		outLimit, errLimit = c.MaxOutput, -1
	}
	stdout := &capture{keep: int(c.MaxOutput), limit: outLimit, over: func() { overflow <- outLimit }}
	stderr := &capture{keep: c.MaxStderr, tail: true, limit: errLimit, over: func() { overflow <- errLimit }, tee: c.StderrTo}
	reader(func() { stdout.readFrom(outR) })
	reader(func() { stderr.readFrom(errR) })
	if progR != nil {
		reader(func() { readLines(progR, MaxProgressLine, c.Progress) })
	}

	exited, reap := watchExit(cmd)
	forced := Exited
	var limit int64
	var timeoutC, graceC <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	terminate := func(why Ending) {
		if forced == Exited {
			forced = why
		}
		if graceC == nil {
			killGroup(pgid, syscall.SIGTERM)
			graceC = time.After(c.Grace)
		}
	}
	done := ctx.Done()
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-done:
			done = nil
			terminate(Canceled)
		case <-timeoutC:
			timeoutC = nil
			terminate(TimedOut)
		case n := <-overflow:
			if forced == Exited {
				forced, limit = OutputExceeded, n
			}
			killGroup(pgid, syscall.SIGKILL)
		case <-graceC:
			killGroup(pgid, syscall.SIGKILL)
		}
	}

	// The leader has exited (a zombie, on Linux): give the pipes a
	// moment to reach EOF, then kill whatever is left in the group.
	drain := time.NewTimer(c.Drain)
	for n := 0; n < nreaders; {
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
	// Readers now see EOF unless something that left the group still
	// holds a pipe; closing our ends unblocks them then.
	unblock := time.AfterFunc(c.Drain, func() {
		for _, f := range []*os.File{outR, errR, progR, inW} {
			if f != nil {
				f.Close()
			}
		}
	})
	waitErr := reap() // no copy goroutines in cmd: all *os.File
	wg.Wait()
	unblock.Stop()
	untrack(pgid)

	res.Stdout, res.StdoutTotal = stdout.buf, stdout.total
	res.Stderr, res.StderrTotal, res.StderrCut = stderr.buf, stderr.total, stderr.cut
	if st := cmd.ProcessState; st != nil {
		res.Outcome = limitOutcome(tree, outcomeOf(st.Sys().(syscall.WaitStatus), forced, c.Timeout, limit), st)
	} else {
		res.Err = waitErr
		if tree != nil {
			tree.close()
		}
	}
	return res
}
