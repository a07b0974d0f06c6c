package runner

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// runT runs s bounded, so a supervision bug fails the test instead of
// hanging it.
func runT(t *testing.T, s Spec) *Result {
	t.Helper()
	return proctest.Bounded(t, func(ctx context.Context) *Result { return Run(ctx, s) })
}

func TestRunStdinToStdout(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "cat; echo; echo err >&2"), Stdin: []byte(`{"a":1}`)})
	if !r.OK() {
		t.Fatalf("not OK: %s", r.Failure())
	}
	if got := string(r.Stdout); got != "{\"a\":1}\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(r.Stderr); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestRunExactEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	env := []string{"A=1", "PATH=/usr/bin:/bin"}
	r := runT(t, Spec{Path: proctest.Script(t, `env | sort; pwd`), Env: env, Dir: dir})
	if !r.OK() {
		t.Fatal(r.Failure())
	}
	lines := strings.Split(strings.TrimSpace(string(r.Stdout)), "\n")
	// sh itself may add PWD, SHLVL and _; nothing else may appear.
	var got []string
	for _, l := range lines[:len(lines)-1] {
		k, _, _ := strings.Cut(l, "=")
		if k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
			got = append(got, l)
		}
	}
	if !slices.Equal(got, env) {
		t.Errorf("env = %q, want %q", got, env)
	}
	if real, _ := filepath.EvalSymlinks(dir); lines[len(lines)-1] != dir && lines[len(lines)-1] != real {
		t.Errorf("cwd = %q, want %q", lines[len(lines)-1], dir)
	}
}

func TestRunNonZeroExit(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "echo noise >&2; echo 'bad input: x' >&2; exit 3")})
	if r.OK() || r.ExitCode != 3 {
		t.Fatalf("exit = %d OK=%v", r.ExitCode, r.OK())
	}
	if got, want := r.Failure(), "exit status 3: noise\nbad input: x"; got != want {
		t.Errorf("Failure = %q, want %q", got, want)
	}
}

func TestRunSignal(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "kill -SEGV $$")})
	if r.Signal != syscall.SIGSEGV {
		t.Fatalf("signal = %v, exit %d", r.Signal, r.ExitCode)
	}
	if got := r.Failure(); got != "killed by SIGSEGV" {
		t.Errorf("Failure = %q", got)
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	// The tool ignores SIGTERM, and so does its child: only the SIGKILL after
	// the grace ends them.
	r := runT(t, Spec{
		Path:    proctest.Script(t, "trap '' TERM; sleep 30 & echo $!; wait"),
		Timeout: 100 * time.Millisecond,
		Grace:   100 * time.Millisecond,
	})
	if !r.TimedOut {
		t.Fatalf("not timed out: %+v", r)
	}
	if got := r.Failure(); got != "timed out after 100ms" {
		t.Errorf("Failure = %q", got)
	}
	proctest.WaitGone(t, proctest.PID(t, r.Stdout))
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := proctest.Script(t, "echo started; exec sleep 30")
	done := make(chan *Result)
	go func() { done <- Run(ctx, Spec{Path: p}) }()
	// Cancel right away: whether the tool got to run or not, Run must end.
	cancel()
	select {
	case r := <-done:
		if !r.Canceled {
			t.Errorf("not Canceled: %+v", r)
		}
		if r.Failure() != "canceled" {
			t.Errorf("Failure = %q", r.Failure())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestRunOutputCap(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done"), MaxOutput: 1000})
	if !r.OutputExceeded {
		t.Fatalf("not OutputExceeded: %+v", r.Failure())
	}
	if len(r.Stdout) != 1000 {
		t.Errorf("kept %d bytes, want 1000", len(r.Stdout))
	}
	if got := r.Failure(); got != "output exceeded 1000 bytes" {
		t.Errorf("Failure = %q", got)
	}
}

func TestRunOutputExactlyAtCap(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "printf 12345"), MaxOutput: 5})
	if !r.OK() || string(r.Stdout) != "12345" {
		t.Fatalf("OK=%v stdout=%q %s", r.OK(), r.Stdout, r.Failure())
	}
}

func TestRunStderrBounded(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "i=0; while [ $i -lt 2000 ]; do echo line $i >&2; i=$((i+1)); done; exit 1"), MaxStderr: 100})
	if len(r.Stderr) > 100 || !r.StderrCut {
		t.Fatalf("stderr %d bytes cut=%v", len(r.Stderr), r.StderrCut)
	}
	if !strings.HasSuffix(r.Failure(), "line 1999") {
		t.Errorf("Failure = %q", r.Failure())
	}
}

func TestRunToolClosesStdinEarly(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 4<<20) // far more than a pipe buffer
	r := runT(t, Spec{Path: proctest.Script(t, "exec 0<&-; echo ok"), Stdin: big})
	if !r.OK() || string(r.Stdout) != "ok\n" {
		t.Fatalf("OK=%v stdout=%q %s", r.OK(), r.Stdout, r.Failure())
	}
}

func TestRunBackgroundChildHoldingStdout(t *testing.T) {
	r := runT(t, Spec{Path: proctest.Script(t, "sleep 30 & echo $!"), Drain: 50 * time.Millisecond})
	if !r.OK() {
		t.Fatalf("not OK: %s", r.Failure())
	}
	proctest.WaitGone(t, proctest.PID(t, r.Stdout))
}

func TestRunProgressLines(t *testing.T) {
	var got []string
	long := strings.Repeat("z", MaxProgressLine+10)
	r := runT(t, Spec{
		Path:     proctest.Script(t, `echo '{"progress":1}' >&3; echo `+long+` >&3; printf 'two\r\nlast' >&3; echo done`),
		Progress: func(l []byte) { got = append(got, string(l)) },
	})
	if !r.OK() {
		t.Fatal(r.Failure())
	}
	want := []string{`{"progress":1}`, "two", "last"}
	if !slices.Equal(got, want) {
		t.Errorf("progress = %q, want %q", got, want)
	}
}

func TestRunNotExecutable(t *testing.T) {
	r := runT(t, Spec{Path: filepath.Join(t.TempDir(), "missing")})
	if r.Err == nil || !strings.HasPrefix(r.Failure(), "cannot start tool: ") {
		t.Fatalf("Err = %v, Failure = %q", r.Err, r.Failure())
	}
}

func TestRunNoDescriptorLeak(t *testing.T) {
	before := proctest.CountFDs(t)
	p := proctest.Script(t, "cat >/dev/null; sleep 30 & echo x")
	for range 5 {
		runT(t, Spec{Path: p, Stdin: []byte("{}"), Drain: 10 * time.Millisecond})
	}
	runT(t, Spec{Path: filepath.Join(t.TempDir(), "missing")})
	if after := proctest.CountFDs(t); after != before {
		t.Errorf("open fds: %d before, %d after", before, after)
	}
}

func TestSignalName(t *testing.T) {
	if got := SignalName(syscall.SIGKILL); got != "SIGKILL" {
		t.Errorf("got %q", got)
	}
	if got := SignalName(syscall.Signal(63)); got != "signal 63" {
		t.Errorf("got %q", got)
	}
}
