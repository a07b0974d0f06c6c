package confine

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// unconfinedSpawner is a Spawner whose thread was never restricted: the
// bug of a domain applied to another thread, whose syscalls all returned
// 0. Nothing may call it enforced.
func unconfinedSpawner(t *testing.T, p Policy) *Spawner {
	s := &Spawner{policy: p, reqs: make(chan spawnReq), quit: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for {
			select {
			case req := <-s.reqs:
				req.done <- req.cmd.Start()
			case <-s.quit:
				return
			}
		}
	}()
	t.Cleanup(s.Close)
	return s
}

// TestCheckSeesAnUnrestrictedThread: the effect check, run on a thread
// the rules were not applied to, fails, however the syscalls went.
func TestCheckSeesAnUnrestrictedThread(t *testing.T) {
	confinetest.Need(t, 1)
	pl, err := readyPlan(Policy{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	w := newWitness(pl)
	defer w.close()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		_, err := w.check(pl)
		done <- err
	}()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "not refused") {
		t.Errorf("check on an unrestricted thread: %v", err)
	}
	// And on a restricted thread it passes (the thread then ends).
	go func() {
		runtime.LockOSThread()
		if err := restrictThread(pl); err != nil {
			done <- err
			return
		}
		_, err := w.check(pl)
		done <- err
	}()
	if err := <-done; err != nil {
		t.Errorf("check on the restricted thread: %v", err)
	}
}

// TestProbeSeesAnUnconfinedChild: Probe through a spawner that does not
// confine fails, naming what the child could do.
func TestProbeSeesAnUnconfinedChild(t *testing.T) {
	confinetest.Need(t, 1)
	s := unconfinedSpawner(t, Policy{Root: t.TempDir()})
	if err := Probe(s, ""); err == nil || !strings.Contains(err.Error(), "not confined") {
		t.Errorf("Probe of an unconfined child: %v", err)
	}
	// The same spawner starts programs fine: Probe is what noticed.
	if err := s.Start(exec.Command("/bin/true")); err != nil {
		t.Fatal(err)
	}
}
