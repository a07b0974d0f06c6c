// Package proctest holds the /proc look-ups that tests of process
// supervision share: is a process still running, which processes are in a
// group or are a process's children, wait (bounded) until a condition
// holds, how many descriptors does a process hold. Linux only; the
// functions that need /proc skip the test when it is missing.
//
// The waits poll, because a killed process is reaped asynchronously (by its
// parent or by init); their bound, Patience, is far above what any step
// needs even on a loaded machine, so that a hang fails the test instead of
// hanging it. The polling interval is no assertion about speed.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Patience bounds every wait in this package.
const Patience = time.Minute

// Proc is one process as /proc/PID/stat shows it.
type Proc struct {
	PID, PPID, PGID int
	State           byte // 'R', 'S', 'Z' (zombie: dead, not yet reaped), ...
	Comm            string
}

// String is "PID(comm,state)", for failure messages.
func (p Proc) String() string {
	return strconv.Itoa(p.PID) + "(" + p.Comm + "," + string(p.State) + ")"
}

// Lookup returns process pid, ok false when there is none (or no /proc).
func Lookup(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	return parseStat(pid, string(b))
}

// parseStat reads "pid (comm) state ppid pgrp ...": the command name is in
// parentheses and may itself hold spaces and parentheses.
func parseStat(pid int, s string) (Proc, bool) {
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return Proc{}, false
	}
	f := strings.Fields(s[closing+1:])
	if len(f) < 3 {
		return Proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return Proc{PID: pid, PPID: ppid, PGID: pgrp, State: f[0][0], Comm: s[open+1 : closing]}, true
}

// Alive reports whether pid is a live process: a zombie (dead, not yet
// reaped) is not alive.
func Alive(pid int) bool {
	p, ok := Lookup(pid)
	return ok && p.State != 'Z'
}

// List returns every process /proc shows.
func List(t testing.TB) []Proc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Lookup(pid); ok { // else gone meanwhile
			out = append(out, p)
		}
	}
	return out
}

// Group lists the live processes of process group pgid. Zombies are dead:
// one whose parent exited waits for init to reap it, which some containers'
// init does only now and then; Children shows a zombie its parent left.
func Group(t testing.TB, pgid int) []Proc {
	t.Helper()
	var out []Proc
	for _, p := range List(t) {
		if p.PGID == pgid && p.State != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// Children lists the processes whose parent is ppid, zombies included.
func Children(t testing.TB, ppid int) []Proc {
	t.Helper()
	var out []Proc
	for _, p := range List(t) {
		if p.PPID == ppid {
			out = append(out, p)
		}
	}
	return out
}

// Eventually polls cond until it returns "", and fails the test with
// cond's last complaint if it still has one after Patience.
func Eventually(t testing.TB, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", Patience, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitGone waits until pid is no longer alive, and fails the test (after
// killing pid) if it still is after Patience.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	deadline := time.Now().Add(Patience)
	for Alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running after %v", pid, Patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitGroupGone waits until process group pgid has no live process left,
// and fails the test (after killing the group) if it still has after
// Patience.
func WaitGroupGone(t testing.TB, pgid int) {
	t.Helper()
	deadline := time.Now().Add(Patience)
	for {
		ps := Group(t, pgid)
		if len(ps) == 0 {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("after %v, processes left in group %d: %s", Patience, pgid, Describe(ps))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Describe lists ps for a failure message.
func Describe(ps []Proc) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// CountFDs is the number of descriptors this process has open.
func CountFDs(t testing.TB) int {
	t.Helper()
	return CountFDsOf(t, os.Getpid())
}

// CountFDsOf is the number of descriptors process pid has open.
func CountFDsOf(t testing.TB, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			t.Skipf("no /proc: %v", serr)
		}
		t.Fatalf("counting the descriptors of process %d: %v", pid, err)
	}
	return len(ents)
}

// WriteExecutable writes an executable file (mode 0755) for a test to run.
//
// A test that writes a script while another test of the same process forks
// can fail with ETXTBSY ("text file busy") when it execs the script: the
// other fork's child holds the write descriptor until its own exec closes it
// (golang.org/issue/22315). Holding syscall.ForkLock for reading while the
// file is open keeps every fork of this process out of that window.
func WriteExecutable(t testing.TB, path string, content []byte) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, content, 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
}
