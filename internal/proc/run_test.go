package proc

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// runT runs c bounded, so a supervision bug fails the test instead of
// hanging it.
func runT(t *testing.T, c Cmd) *Result {
	t.Helper()
	return proctest.Bounded(t, func(ctx context.Context) *Result { return Run(ctx, c) })
}

func TestRunExitStatusAndStreams(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "cat; echo err >&2; exit 3"), Stdin: []byte("in")})
	if r.Ending != Exited || r.ExitCode != 3 || r.String() != "exit status 3" {
		t.Errorf("outcome %+v", r.Outcome)
	}
	if string(r.Stdout) != "in" || string(r.Stderr) != "err\n" || r.StdoutTotal != 2 || r.StderrTotal != 4 {
		t.Errorf("stdout %q (%d) stderr %q (%d)", r.Stdout, r.StdoutTotal, r.Stderr, r.StderrTotal)
	}
}

// TestRunNilStdinIsDevNull: no Stdin means /dev/null, not our stdin.
func TestRunNilStdinIsDevNull(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "readlink /proc/self/fd/0 || echo none")})
	if got := strings.TrimSpace(string(r.Stdout)); got != "/dev/null" && got != "none" {
		t.Errorf("stdin is %q, want /dev/null", got)
	}
}

func TestRunSignaled(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "kill -SEGV $$")})
	if r.Ending != Signaled || r.Signal != syscall.SIGSEGV || r.ExitCode != -1 || r.String() != "killed by SIGSEGV" {
		t.Errorf("outcome %+v", r.Outcome)
	}
}

// TestRunTimeoutLadder: a tool and its child both ignore SIGTERM; only the
// SIGKILL after the grace ends them, and the outcome is the timeout, not
// the signal.
func TestRunTimeoutLadder(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{
		Path:    proctest.Script(t, "trap '' TERM; sleep 30 & echo $!; wait"),
		Timeout: 100 * time.Millisecond,
		Grace:   100 * time.Millisecond,
	})
	if r.Ending != TimedOut || r.Signal != syscall.SIGKILL || r.String() != "timed out after 100ms" {
		t.Errorf("outcome %+v %q", r.Outcome, r.String())
	}
	proctest.WaitGone(t, proctest.PID(t, r.Stdout))
}

func TestRunCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Run(ctx, Cmd{Path: proctest.Script(t, "exec sleep 30")})
	if r.Ending != Canceled || r.String() != "canceled" {
		t.Errorf("outcome %+v", r.Outcome)
	}
}

func TestRunOutputExceeded(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "while :; do echo yyyyyyyyyyyyyyyyyyyy; done"), MaxOutput: 1000})
	if r.Ending != OutputExceeded || r.String() != "output exceeded 1000 bytes" || len(r.Stdout) != 1000 {
		t.Errorf("outcome %q, kept %d", r.String(), len(r.Stdout))
	}
	// Exactly at the cap is fine.
	r = runT(t, Cmd{Path: proctest.Script(t, "printf 12345"), MaxOutput: 5})
	if !r.OK() || string(r.Stdout) != "12345" {
		t.Errorf("at the cap: %q %q", r.String(), r.Stdout)
	}
}

// TestRunReadLimit: past MaxOutput bytes are counted, on both streams,
// until ReadLimit, which kills.
func TestRunReadLimit(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "head -c 5000 /dev/zero; head -c 3000 /dev/zero >&2"), MaxOutput: 100, MaxStderr: 10, ReadLimit: 1 << 20})
	if !r.OK() || len(r.Stdout) != 100 || r.StdoutTotal != 5000 || len(r.Stderr) != 10 || r.StderrTotal != 3000 || !r.StderrCut {
		t.Errorf("%q: kept %d of %d, stderr %d of %d", r.String(), len(r.Stdout), r.StdoutTotal, len(r.Stderr), r.StderrTotal)
	}
	r = runT(t, Cmd{Path: proctest.Script(t, "while :; do echo 0123456789 >&2; done"), MaxOutput: 100, ReadLimit: 1 << 16})
	if r.Ending != OutputExceeded || r.StderrTotal <= 1<<16 || r.Limit != 1<<16 {
		t.Errorf("%q: stderr total %d", r.String(), r.StderrTotal)
	}
}

// TestRunLeftoversKilled: a background child that holds stdout neither
// holds the run open nor outlives it.
func TestRunLeftoversKilled(t *testing.T) {
	t.Parallel()
	r := runT(t, Cmd{Path: proctest.Script(t, "sleep 30 & echo $!"), Drain: 50 * time.Millisecond})
	if !r.OK() {
		t.Fatal(r.String())
	}
	proctest.WaitGone(t, proctest.PID(t, r.Stdout))
}

// TestRunProgress: fd 3 exists only with Progress, and its lines arrive.
func TestRunProgress(t *testing.T) {
	t.Parallel()
	var got []string
	r := runT(t, Cmd{
		Path:     proctest.Script(t, `echo one >&3; printf 'two\r\nlast' >&3`),
		Progress: func(l []byte) { got = append(got, string(l)) },
	})
	if !r.OK() || !slices.Equal(got, []string{"one", "two", "last"}) {
		t.Errorf("%q: progress %q", r.String(), got)
	}
	r = runT(t, Cmd{Path: proctest.Script(t, `echo x >&3`)})
	if r.OK() {
		t.Error("fd 3 is open without Progress")
	}
}

// TestRunLauncherAndPrepare: the launcher runs first with the tool's argv
// after its own; Prepare sees the command and may not drop the group.
func TestRunLauncherAndPrepare(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	tool := proctest.Script(t, `echo "tool $1"`)
	var prepared []string
	r := runT(t, Cmd{
		Path:     tool,
		Args:     []string{"tool", "arg"},
		Launcher: []string{sh, "-c", `echo "launcher sees $*"; exec "$@"`, "launch"},
		Prepare:  func(c *exec.Cmd) error { prepared = c.Args; return nil },
	})
	want := "launcher sees " + tool + " arg\ntool arg\n"
	if !r.OK() || string(r.Stdout) != want {
		t.Errorf("%q: stdout %q, want %q", r.String(), r.Stdout, want)
	}
	if len(prepared) == 0 || prepared[0] != sh {
		t.Errorf("Prepare saw argv %q", prepared)
	}
	r = runT(t, Cmd{Path: tool, Prepare: func(c *exec.Cmd) error { c.SysProcAttr.Setpgid = false; return nil }})
	if r.Ending != NotStarted || !strings.Contains(r.String(), "Setpgid") {
		t.Errorf("a Prepare that drops the group: %q", r.String())
	}
}

func TestRunNotStarted(t *testing.T) {
	t.Parallel()
	for _, c := range []Cmd{{}, {Path: filepath.Join(t.TempDir(), "missing")}} {
		r := Run(context.Background(), c)
		if r.Ending != NotStarted || r.Err == nil || !strings.HasPrefix(r.String(), "cannot start: ") {
			t.Errorf("%q: %+v", c.Path, r.Outcome)
		}
	}
}

// TestRunNoDescriptorLeak is not parallel: it counts this process's fds.
func TestRunNoDescriptorLeak(t *testing.T) {
	p := proctest.Script(t, "cat >/dev/null; sleep 30 & echo x")
	runT(t, Cmd{Path: p, Stdin: []byte("{}"), Drain: 10 * time.Millisecond}) // warm up
	before := proctest.CountFDs(t)
	for range 3 {
		runT(t, Cmd{Path: p, Stdin: []byte("{}"), Drain: 10 * time.Millisecond, Progress: func([]byte) {}})
	}
	runT(t, Cmd{Path: filepath.Join(t.TempDir(), "missing"), Stdin: []byte("x")})
	if after := proctest.CountFDs(t); after != before {
		t.Errorf("open fds: %d before, %d after", before, after)
	}
}
