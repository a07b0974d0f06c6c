//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestStopLadder: a server that ignores stdin EOF and SIGTERM, with a child
// in its process group, is killed, child included.
func TestStopLadder(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.pid")
	script := fmt.Sprintf(`trap '' TERM; sleep 60 & echo $! > %q; while :; do sleep 1; done`, child)
	p, err := Start(Command{Argv: []string{"sh", "-c", script}, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	childPID := proctest.WaitPIDFile(t, child)
	p.Stop()
	if st := p.State(); st != "killed by SIGKILL" {
		t.Errorf("State %q, want killed by SIGKILL", st)
	}
	proctest.WaitGone(t, childPID)
	p.Stop() // idempotent
}

// TestStopPolite: a server that exits on stdin EOF is not signalled, and a
// child it leaves behind in its group is still killed.
func TestStopPolite(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.pid")
	script := fmt.Sprintf(`sleep 60 & echo $! > %q; cat >/dev/null; exit 0`, child)
	p, err := Start(Command{Argv: []string{"sh", "-c", script}, Grace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	childPID := proctest.WaitPIDFile(t, child)
	p.Stop()
	if st := p.State(); st != "exit status 0" {
		t.Errorf("State %q, want a clean exit", st)
	}
	proctest.WaitGone(t, childPID)
}

func TestStartErrors(t *testing.T) {
	_, err := Start(Command{Argv: []string{filepath.Join(t.TempDir(), "nope")}})
	var se *StartError
	if !errors.As(err, &se) {
		t.Errorf("Start(missing) = %v, want *StartError", err)
	}
	if _, err := Start(Command{}); !errors.As(err, &se) {
		t.Errorf("Start(empty) = %v, want *StartError", err)
	}
}

// TestDialRestartsOnProbeExit: the real process path of a server that exits
// on server/discover: Dial starts it again for initialize.
func TestDialRestartsOnProbeExit(t *testing.T) {
	// A legacy "server" in sh: exits on server/discover; otherwise answers
	// initialize and a ping. Good enough to prove the restart.
	script := `
while IFS= read -r line; do
  case $line in
  *server/discover*) exit 0 ;;
  *'"initialize"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sh","version":"0"}}}' ;;
  *'"ping"'*) echo '{"jsonrpc":"2.0","id":2,"result":{}}' ;;
  esac
done`
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, info, err := Dial(ctx, Command{Argv: []string{"sh", "-c", script}, Grace: 100 * time.Millisecond}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if info.Era != EraLegacy || info.ProtocolVersion != "2025-06-18" || !strings.Contains(info.Probe, "restarted") {
		t.Errorf("info %+v", info)
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
	pid := c.Proc.p.Pid()
	c.Close()
	if err := syscall.Kill(pid, 0); err == nil && proctest.Alive(pid) {
		t.Errorf("server %d still alive after Close", pid)
	}
}

// starts counts the lines a test server appended to file: one per start.
func starts(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestDialRestartsOnlyWhenItCanHelp: a server that fails (non-zero exit),
// or exits without reading the probe, is started once; one that reads the
// probe and closes its stdout is started again for initialize.
func TestDialRestartsOnlyWhenItCanHelp(t *testing.T) {
	tests := []struct {
		name, script string
		wantStarts   int
		wantErr      string
	}{
		{"usage error", `echo >> "$0"; exit 2`, 1, "server ended before answering: exit status 2"},
		{"fails after reading", `echo >> "$0"; read x; exit 1`, 1, "server ended before answering: exit status 1"},
		{"exits 0 without reading", `echo >> "$0"; exit 0`, 1, "server ended before answering: exit status 0"},
		// Closes stdout after reading, then lives on until its stdin ends.
		{"closes stdout after reading", `echo >> "$0"; read x; exec >&-; cat >/dev/null`, 2,
			"server closed its stdout before answering (also after a restart for initialize)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.name == "exits 0 without reading" && runtime.GOOS != "linux" {
				t.Skip("only Linux tells whether the probe was read (FIONREAD on the pipe)")
			}
			file := filepath.Join(t.TempDir(), "starts")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, _, err := Dial(ctx, Command{Argv: []string{"sh", "-c", tt.script, file}, Grace: 100 * time.Millisecond}, Options{})
			var ge *GoneError
			if !errors.As(err, &ge) || !errors.Is(err, ErrClosed) {
				t.Fatalf("Dial: %v, want a *GoneError", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("Dial: %q, want %q", err, tt.wantErr)
			}
			if n := starts(t, file); n != tt.wantStarts {
				t.Errorf("started %d times, want %d", n, tt.wantStarts)
			}
		})
	}
}

// TestDialTimeoutStopsHungServer: a server that never answers and ignores
// the end of its stdin is terminated when the connect deadline passes, not
// after Grace (an hour here: waiting for it would hang the test until its
// own bound fails it).
func TestDialTimeoutStopsHungServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	type res struct{ err error }
	done := make(chan res, 1)
	go func() {
		// The probe's own bound (5 s by default) is cut short by ctx: the
		// probe and initialize share its deadline.
		_, _, err := Dial(ctx, Command{Argv: []string{"sh", "-c", `echo $$ > "$0"; exec sleep 1000`, pidFile}, Grace: time.Hour}, Options{})
		done <- res{err}
	}()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("Dial: %v, want a deadline error", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Dial did not return: it waited Grace before terminating a hung server")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 && proctest.Alive(pid) {
		t.Errorf("server %d still alive after Dial failed", pid)
	}
}
