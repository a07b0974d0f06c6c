package proctest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
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

// TestGroupAndChildren: a started group shows in Group and Children with
// its command name, and WaitGroupGone returns once the group is killed.
func TestGroupAndChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & exec sleep 61")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	defer syscall.Kill(-pid, syscall.SIGKILL)
	Eventually(t, func() string {
		// Until the shell has exec'd the second sleep, its group holds
		// "sh" and one sleep: wait for both sleeps.
		g := Group(t, pid)
		if len(g) != 2 || g[0].Comm != "sleep" || g[1].Comm != "sleep" {
			return "group " + strconv.Itoa(pid) + ": " + Describe(g) + ", want the shell's two sleeps"
		}
		return ""
	})
	kids := Children(t, os.Getpid())
	found := false
	for _, k := range kids {
		found = found || k.PID == pid && k.Comm == "sleep" && k.PGID == pid
	}
	if !found {
		t.Errorf("Children of this process: %s, want %d(sleep) in group %d", Describe(kids), pid, pid)
	}
	if p, ok := Lookup(pid); !ok || p.PPID != os.Getpid() || !strings.Contains(p.String(), "(sleep,") {
		t.Errorf("Lookup(%d) = %v, %v", pid, p, ok)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	WaitGroupGone(t, pid)
	if g := Group(t, pid); len(g) != 0 {
		t.Errorf("group %d after WaitGroupGone: %s", pid, Describe(g))
	}
	if n := CountFDsOf(t, os.Getpid()); n != CountFDs(t) {
		t.Errorf("CountFDsOf(self) = %d, CountFDs = %d", n, CountFDs(t))
	}
}

func TestParseStat(t *testing.T) {
	p, ok := parseStat(7, "7 (a) (b) c) S 1 7 7 0 -1")
	if !ok || p.Comm != "a) (b) c" || p.State != 'S' || p.PPID != 1 || p.PGID != 7 {
		t.Errorf("parseStat: %+v, %v", p, ok)
	}
	if _, ok := parseStat(7, "garbage"); ok {
		t.Error("parseStat accepted garbage")
	}
}
