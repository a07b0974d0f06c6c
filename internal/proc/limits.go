package proc

import (
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// Limits bound the resources of one process tree: a Run's process and
// everything it starts, or a Start'ed process and everything it starts
// over its life. Zero fields are no limit. See the package doc, "Limits".
type Limits struct {
	// Memory is the most memory, in bytes, the tree may use together
	// (cgroup memory controller); without one, each process's data
	// segment (RLIMIT_DATA).
	Memory int64
	// Pids is the most processes and threads the tree may have at once
	// (cgroup pids controller); without one, there is no process limit.
	Pids int
	// CPU is the most CPU time each process may use (RLIMIT_CPU): SIGXCPU
	// at CPU, SIGKILL a second later.
	CPU time.Duration
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l.Memory <= 0 && l.Pids <= 0 && l.CPU <= 0 }

// The names of the limits in Outcome.LimitName.
const (
	LimitMemory = "memory"
	LimitPids   = "pids"
	LimitCPU    = "cpu"
)

// limitText is the wording of a limit that was hit, for Outcome.String.
func limitText(name string, value int64) string {
	switch name {
	case LimitMemory:
		return fmt.Sprintf("memory limit of %s reached (--limit-mem)", FormatSize(value))
	case LimitPids:
		return fmt.Sprintf("process limit of %d reached (--limit-pids)", value)
	case LimitCPU:
		return fmt.Sprintf("CPU time limit of %s reached (--limit-cpu)", time.Duration(value))
	}
	return name + " limit reached"
}

// FormatSize writes a byte count the way --limit-mem takes it: "512MiB",
// "1GiB", "1000B".
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v && n%u.v == 0 {
			return fmt.Sprintf("%d%s", n/u.v, u.s)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// forkHooks holds, for a command being started with Limits, what must run
// on the thread that forks it (ForkHook).
var forkHooks sync.Map // *exec.Cmd → func(func() error) error

// ForkHook returns what a Cmd.Spawn that forks on another thread (a
// confine.Spawner) must wrap around the fork, on that thread: with a
// cgroup v1 hierarchy, the thread enters the tree's cgroups for the fork,
// so the child is born in them, and leaves them again; with cgroup v2,
// it moves the child into the tree's cgroup at its exec stop (see the
// package doc). It is nil when there is nothing to do. A Spawn that forks on another thread without it
// gets its process killed and NotStarted: the limits would not hold.
func ForkHook(cmd *exec.Cmd) func(start func() error) error {
	if h, ok := forkHooks.Load(cmd); ok {
		return h.(func(func() error) error)
	}
	return nil
}
