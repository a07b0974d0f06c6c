package proc

import (
	"errors"
	"os/exec"
	"sync"
	"sync/atomic"
)

// Every child this package starts is tracked from before it can be seen
// until it is reaped, so that the reaper (see Subreap) can tell our
// children from processes reparented to us.
var (
	// startMu is held shared across each start and exclusively by a
	// sweep that found a child it does not know, so that it never takes
	// a child that is started but not yet tracked for a stray. A sweep
	// that finds only known children takes no lock at all.
	startMu sync.RWMutex
	// ours maps the pid of every child started here to its kind: true
	// for a Run (which kills its group when it ends, so the sweep leaves
	// the group to it), false for a Start (whose group lives as long as
	// the server or worker: nothing reparented into it is spared).
	ours sync.Map // pid → bool
	// subreaping is set by Subreap: sweep after every Run and Stop.
	subreaping atomic.Bool
)

// ErrNoSubreaper is returned by Subreap where the platform has no child
// subreaper (everywhere but Linux).
var ErrNoSubreaper = errors.New("child subreaper not supported on this platform")

// startTracked starts cmd with spawn (nil: cmd.Start) and tracks it, as
// a Run's child when run is set. The child is started and tracked under
// startMu, whichever thread spawn starts it on.
func startTracked(cmd *exec.Cmd, spawn func(*exec.Cmd) error, run bool) error {
	if spawn == nil {
		spawn = (*exec.Cmd).Start
	}
	startMu.RLock()
	defer startMu.RUnlock()
	if err := spawn(cmd); err != nil {
		return err
	}
	if cmd.Process == nil {
		return errors.New("proc: Cmd.Spawn returned without starting the process")
	}
	ours.Store(cmd.Process.Pid, run)
	return nil
}

func untrack(pid int) { ours.Delete(pid) }

func isOurs(pid int) bool {
	_, ok := ours.Load(pid)
	return ok
}

// isRunGroup reports whether pgid is the group of a Run in progress.
func isRunGroup(pgid int) bool {
	run, ok := ours.Load(pgid)
	return ok && run.(bool)
}

// Subreap makes this process a child subreaper (Linux
// PR_SET_CHILD_SUBREAPER): a process that leaves its group and whose
// parent exits (a daemon, `setsid cmd &`) is reparented to us instead of
// to init. From then on every Run, and every Process once it ends, is
// followed by a Sweep. Call it once, early in main, before starting
// children; a program that starts children other than through this
// package must not call it, since a sweep kills every child it did not
// start. Elsewhere it returns ErrNoSubreaper and changes nothing.
func Subreap() error {
	if err := setSubreaper(); err != nil {
		return err
	}
	subreaping.Store(true)
	return nil
}

// Sweep kills (SIGKILL) every process reparented to us that this
// package did not start and that is not in the group of a Run in
// progress, and everything below it, and reaps them. It is a no-op
// unless Subreap succeeded. Call it at shutdown, after the last Run, and
// after anything a child of a Start may have left behind (a call on a
// worker); Run and Process call it themselves. When nothing escaped it
// takes no lock and reads only our own children.
func Sweep() {
	if subreaping.Load() {
		sweep()
	}
}

func sweepAfterRun() { Sweep() }
