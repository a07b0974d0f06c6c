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
	// sweep, so a sweep never sees a child that is started but not yet
	// tracked.
	startMu sync.RWMutex
	ours    sync.Map // pid → struct{}
	// subreaping is set by Subreap: sweep after every Run and Stop.
	subreaping atomic.Bool
)

// ErrNoSubreaper is returned by Subreap where the platform has no child
// subreaper (everywhere but Linux).
var ErrNoSubreaper = errors.New("child subreaper not supported on this platform")

// startTracked starts cmd with spawn (nil: cmd.Start) and tracks it.
// The child is started and tracked under startMu, whichever thread spawn
// starts it on.
func startTracked(cmd *exec.Cmd, spawn func(*exec.Cmd) error) error {
	if spawn == nil {
		spawn = (*exec.Cmd).Start
	}
	startMu.RLock()
	defer startMu.RUnlock()
	if err := spawn(cmd); err != nil {
		return err
	}
	if cmd.Process == nil {
		return errors.New("Spawn returned without starting the process")
	}
	ours.Store(cmd.Process.Pid, struct{}{})
	return nil
}

func untrack(pid int) { ours.Delete(pid) }

func isOurs(pid int) bool {
	_, ok := ours.Load(pid)
	return ok
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
// package did not start, and everything below it, and reaps them. It
// is a no-op unless Subreap succeeded. Call it at shutdown, after the
// last Run; Run and Process call it themselves.
func Sweep() {
	if subreaping.Load() {
		sweep()
	}
}

func sweepAfterRun() { Sweep() }
