package proctest

import (
	"os"
	"os/exec"
	"testing"
)

func TestAliveAndWaitGone(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep: %v", err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatal("a started sleep is not alive")
	}
	cmd.Process.Kill()
	// Until Wait reaps it the killed child is a zombie: not alive.
	WaitGone(t, pid)
	cmd.Wait()
	if Alive(pid) {
		t.Error("a reaped process is alive")
	}
}

func TestCountFDs(t *testing.T) {
	before := CountFDs(t)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if got := CountFDs(t); got != before+1 {
		t.Errorf("CountFDs = %d after an open, want %d", got, before+1)
	}
	f.Close()
}
