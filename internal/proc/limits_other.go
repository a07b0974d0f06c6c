//go:build !linux

package proc

import (
	"os/exec"
	"syscall"
)

// LimitSupport: none here.
func LimitSupport() string {
	return "nothing on this system: limits are Linux only, and not enforced here"
}

type treeLimit struct{}

func (t *treeLimit) hit(ws syscall.WaitStatus, ru *syscall.Rusage) (string, int64) { return "", 0 }
func (t *treeLimit) close()                                                        {}

// withLimits starts cmd as it is: the limits are not enforced here (no
// cgroups, no prlimit on another process), as LimitSupport says. Refusing
// instead would refuse every tool, since mcp-route sets limits by default.
func withLimits(_ Limits, _ *exec.Cmd, spawn func(*exec.Cmd) error) (func(*exec.Cmd) error, *treeLimit, error) {
	return spawn, nil, nil
}

// ReleaseLimits does nothing here: no cgroups are kept.
func ReleaseLimits() {}
