// Package proctest holds the /proc look-ups that tests of process
// supervision share: is a process still running, wait (bounded) until it is
// not, how many descriptors does this process hold. Linux only; the
// functions skip the test when /proc is missing.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether pid is a live process: a zombie (dead, not yet
// reaped) is not alive.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	// The state follows the command name, which is in parentheses and may
	// itself hold spaces and parentheses.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) == 0 || f[0] != "Z"
}

// WaitGone waits until pid is no longer alive, and fails the test (after
// killing pid) if it still is after 20 seconds. A killed process is reaped
// asynchronously, by its parent or by init, so a short poll is
// unavoidable; the interval is no assertion about speed.
func WaitGone(t testing.TB, pid int) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CountFDs is the number of descriptors this process has open.
func CountFDs(t testing.TB) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(ents)
}
