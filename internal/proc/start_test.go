package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// syncBuffer is a bytes.Buffer safe for StderrTo's writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFile waits (bounded) for a tool to write a line into file.
func waitFile(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing in %s", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartConversation: a line-echoing server answers over the pipes, its
// stderr is both copied and kept, and it ends with "exit status 0" when its
// stdin closes (Stop sends no signal).
func TestStartConversation(t *testing.T) {
	t.Parallel()
	var errCopy syncBuffer
	p, err := Start(Cmd{
		Path:     script(t, `echo hello >&2; while read l; do echo "got $l"; done`),
		Env:      []string{"PATH=/usr/bin:/bin"},
		StderrTo: &errCopy,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin(), "ping\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil || line != "got ping\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	if _, done := p.Outcome(); done {
		t.Error("Outcome says ended while it runs")
	}
	if consumed, known := p.StdinConsumed(); known && !consumed {
		t.Error("StdinConsumed: an answered line counts as unread")
	}
	p.Stop(10 * time.Second)
	if o := p.Wait(); !o.OK() {
		t.Errorf("outcome %q, want exit status 0", o)
	}
	if string(p.StderrTail()) != "hello\n" || errCopy.String() != "hello\n" {
		t.Errorf("stderr tail %q, copy %q", p.StderrTail(), errCopy.String())
	}
	p.Stop(time.Second) // idempotent
}

// TestStartStopLadder: a server that ignores stdin EOF and SIGTERM, with
// a child in its group, is killed, child included.
func TestStartStopLadder(t *testing.T) {
	t.Parallel()
	child := filepath.Join(t.TempDir(), "child.pid")
	p, err := Start(Cmd{Path: script(t, fmt.Sprintf(`trap '' TERM; sleep 60 & echo $! > %q; while :; do sleep 1; done`, child))})
	if err != nil {
		t.Fatal(err)
	}
	pid := waitFile(t, child)
	p.Stop(100 * time.Millisecond)
	if o := p.Wait(); o.Ending != Signaled || o.Signal != syscall.SIGKILL || o.String() != "killed by SIGKILL" {
		t.Errorf("outcome %+v", o)
	}
	proctest.WaitGone(t, pid)
}

// TestStartTerminate: Terminate sends SIGTERM without waiting for the
// server to notice EOF first; a grace of a minute shows it did not wait.
func TestStartTerminate(t *testing.T) {
	t.Parallel()
	p, err := Start(Cmd{Path: script(t, `trap '' HUP; while :; do sleep 1; done`)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Terminate(time.Minute); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Terminate waited for the grace before SIGTERM")
	}
	if o := p.Wait(); o.Signal != syscall.SIGTERM {
		t.Errorf("outcome %q, want killed by SIGTERM", o)
	}
}

// TestStartLeftoversKilledOnExit: when the server exits on its own, the
// child it left in its group goes too, and Stdout still gives what it
// wrote last.
func TestStartLeftoversKilledOnExit(t *testing.T) {
	t.Parallel()
	p, err := Start(Cmd{Path: script(t, `sleep 60 >/dev/null & echo $!; exit 4`)})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout())
	o := p.Wait()
	if o.Ending != Exited || o.ExitCode != 4 {
		t.Errorf("outcome %q", o)
	}
	proctest.WaitGone(t, pidFrom(t, out))
	p.Stop(time.Second)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	if _, err := Start(Cmd{Path: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("started a missing program")
	}
	if _, err := Start(Cmd{}); err == nil {
		t.Error("started an empty Path")
	}
}
