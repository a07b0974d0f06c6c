package proc

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestStartConversation: a line-echoing server answers over the pipes, its
// stderr is both copied and kept, and it ends with "exit status 0" when its
// stdin closes (Stop sends no signal).
func TestStartConversation(t *testing.T) {
	t.Parallel()
	var errCopy proctest.Buffer
	p, err := Start(Cmd{
		Path:     proctest.Script(t, `echo hello >&2; while read l; do echo "got $l"; done`),
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
	p, err := Start(Cmd{Path: proctest.Script(t, fmt.Sprintf(`trap '' TERM; sleep 60 & echo $! > %q; while :; do sleep 1; done`, child))})
	if err != nil {
		t.Fatal(err)
	}
	pid := proctest.WaitPIDFile(t, child)
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
	p, err := Start(Cmd{Path: proctest.Script(t, `trap '' HUP; while :; do sleep 1; done`)})
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
	p, err := Start(Cmd{Path: proctest.Script(t, `sleep 60 >/dev/null & echo $!; exit 4`)})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout())
	o := p.Wait()
	if o.Ending != Exited || o.ExitCode != 4 {
		t.Errorf("outcome %q", o)
	}
	proctest.WaitGone(t, proctest.PID(t, out))
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

// TestStartDeathNotHiddenByChild: a server that left a child holding its
// stdout and stderr is killed (SIGKILL). The reader sees EOF and Done
// comes with "killed by SIGKILL" at once, not when the child ends nor
// after a drain: the Drain here is an hour and the child sleeps as long,
// so only the kill of the group on the leader's exit can end them. The
// child is gone afterwards.
func TestStartDeathNotHiddenByChild(t *testing.T) {
	t.Parallel()
	p, err := Start(Cmd{
		Path:  proctest.Script(t, `sleep 3600 & echo $!; exec sleep 3600`),
		Drain: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	r := bufio.NewReader(p.Stdout())
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child := proctest.PID(t, []byte(line))
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eof := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		eof <- err
	}()
	// Far below the Drain and the child's sleep: what ended them was the
	// death, not either of those.
	bound := time.After(time.Minute)
	select {
	case err := <-eof:
		if err != nil {
			t.Errorf("stdout after the death: %v, want EOF", err)
		}
	case <-bound:
		t.Fatal("stdout still open a minute after the server was killed: its child holds it")
	}
	select {
	case <-p.Done():
	case <-bound:
		t.Fatal("Done not closed a minute after the server was killed")
	}
	if o := p.Wait(); o.Ending != Signaled || o.String() != "killed by SIGKILL" {
		t.Errorf("outcome %q, want killed by SIGKILL", o)
	}
	proctest.WaitGone(t, child)
}
