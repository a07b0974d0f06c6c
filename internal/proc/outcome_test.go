package proc

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestOutcomeWording pins the one wording of each ending that every caller
// shows.
func TestOutcomeWording(t *testing.T) {
	for _, tc := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Ending: Exited, ExitCode: 0}, "exit status 0"},
		{Outcome{Ending: Exited, ExitCode: 3}, "exit status 3"},
		{Outcome{Ending: Signaled, ExitCode: -1, Signal: syscall.SIGSEGV}, "killed by SIGSEGV"},
		{Outcome{Ending: Signaled, ExitCode: -1, Signal: syscall.Signal(63)}, "killed by signal 63"},
		{Outcome{Ending: TimedOut, Timeout: 30 * time.Second, Signal: syscall.SIGTERM}, "timed out after 30s"},
		{Outcome{Ending: OutputExceeded, Limit: 1 << 20}, "output exceeded 1048576 bytes"},
		{Outcome{Ending: Canceled}, "canceled"},
		{Outcome{Ending: NotStarted, Err: errors.New("no such file")}, "cannot start: no such file"},
	} {
		if got := tc.o.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
		if ok := tc.o.Ending == Exited && tc.o.ExitCode == 0; tc.o.OK() != ok {
			t.Errorf("%+v: OK %v", tc.o, tc.o.OK())
		}
	}
}

func TestStderrTail(t *testing.T) {
	if got := StderrTail([]byte("first\nsecond\nthird\n"), 10); got != "third" {
		t.Errorf("got %q", got)
	}
	if got := StderrTail([]byte("  \xff ok \n"), 100); got != "\uFFFD ok" {
		t.Errorf("got %q", got)
	}
}
