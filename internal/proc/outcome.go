package proc

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Ending says why a process ended. Callers decide on it, never on the
// text of Outcome.String.
type Ending int

const (
	// Exited: the process ran and exited on its own; Outcome.ExitCode is
	// its status.
	Exited Ending = iota
	// Signaled: a signal ended it (a crash, someone's kill, or Process.Stop);
	// Outcome.Signal says which. A Run ended by its own timeout, cancel or
	// output limit is not Signaled but TimedOut, Canceled or
	// OutputExceeded.
	Signaled
	// TimedOut: Cmd.Timeout passed and the group was terminated.
	TimedOut
	// OutputExceeded: stdout or stderr passed its limit and the group was
	// killed.
	OutputExceeded
	// Canceled: the context was done (or Stop was called) before the
	// process exited, and the group was terminated.
	Canceled
	// NotStarted: the process could not be started; Outcome.Err says why.
	NotStarted
	// LimitExceeded: the tree reached one of its Cmd.Limits (the memory
	// controller killed, the pids controller refused a fork, RLIMIT_CPU
	// ended the leader); Outcome.LimitName says which, Outcome.Limit its
	// value. It wins over how the leader itself ended: what a process
	// made while its forks or allocations were refused is not trusted.
	LimitExceeded
)

// Outcome is how a process ended. Its String is the one wording of each
// ending that every caller shows.
type Outcome struct {
	Ending   Ending
	ExitCode int            // the exit status; -1 when a signal ended it or it never ran
	Signal   syscall.Signal // the signal that ended the leader, 0 if none
	Timeout  time.Duration  // the timeout, for TimedOut
	Limit    int64          // the byte limit, for OutputExceeded; the limit's value (bytes, processes, nanoseconds) for LimitExceeded
	// LimitName is LimitMemory, LimitPids or LimitCPU, for LimitExceeded.
	LimitName string
	Err       error // why it could not start, for NotStarted
}

// OK reports whether the process exited on its own with status 0.
func (o Outcome) OK() bool { return o.Ending == Exited && o.ExitCode == 0 }

// String is the outcome in the words every caller uses:
//
//	exit status 3
//	killed by SIGSEGV
//	timed out after 30s
//	output exceeded 1048576 bytes
//	canceled
//	cannot start: fork/exec /x: permission denied
//	memory limit of 512MiB reached (--limit-mem)
//	process limit of 512 reached (--limit-pids)
//	CPU time limit of 10s reached (--limit-cpu)
func (o Outcome) String() string {
	switch o.Ending {
	case Exited:
		return fmt.Sprintf("exit status %d", o.ExitCode)
	case Signaled:
		return "killed by " + SignalName(o.Signal)
	case TimedOut:
		return "timed out after " + o.Timeout.String()
	case OutputExceeded:
		return fmt.Sprintf("output exceeded %d bytes", o.Limit)
	case Canceled:
		return "canceled"
	case NotStarted:
		return "cannot start: " + o.Err.Error()
	case LimitExceeded:
		return limitText(o.LimitName, o.Limit)
	}
	return fmt.Sprintf("ending %d", int(o.Ending))
}

// SignalName returns the conventional name of sig, e.g. "SIGSEGV", or
// "signal N" for one without a name on this platform.
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
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

// outcomeOf turns a reaped process's state into an Outcome, given what
// this package did to it (forced is Exited when it did nothing).
func outcomeOf(ws syscall.WaitStatus, forced Ending, timeout time.Duration, limit int64) Outcome {
	o := Outcome{Ending: Exited, ExitCode: -1, Timeout: timeout, Limit: limit}
	if ws.Signaled() {
		o.Ending, o.Signal = Signaled, ws.Signal()
	} else {
		o.ExitCode = ws.ExitStatus()
	}
	if forced != Exited {
		// It may have exited on its own (status and all) after our signal;
		// what we did is still why it ended.
		o.Ending = forced
	}
	return o
}
