//go:build !linux

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// LimitSupport: none here.
func LimitSupport() string { return "not supported on this system (Linux only)" }

type treeLimit struct{}

func (t *treeLimit) hit(ws syscall.WaitStatus, ru *syscall.Rusage) (string, int64) { return "", 0 }
func (t *treeLimit) close()                                                        {}

func withLimits(l Limits, cmd *exec.Cmd, spawn func(*exec.Cmd) error) (func(*exec.Cmd) error, *treeLimit, error) {
	if l.IsZero() {
		return spawn, nil, nil
	}
	return nil, nil, errors.New("limits: per-process-tree limits are supported on Linux only")
}

// ReleaseLimits does nothing here: no cgroups are kept.
func ReleaseLimits() {}
