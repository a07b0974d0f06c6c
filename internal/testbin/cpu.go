package testbin

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CPUTime is the user and system CPU time process pid has used so far,
// with that of the children it has waited for (a tool process per call),
// from /proc/PID/stat (counted in clock ticks, 100 a second on Linux, so
// measure over seconds, not one call). It fails the test when pid is gone.
func CPUTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	d, ok := cpuTime(pid)
	if !ok {
		t.Fatalf("cpu time of process %d: no /proc/%d/stat", pid, pid)
	}
	return d
}

// TreeCPUTime is CPUTime of pid and of its live children together (a
// server and its workers). A child pid waits for between two readings
// counts whole in the second, the time it had before the first too.
func TreeCPUTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	d := CPUTime(t, pid)
	for _, kid := range Children(pid) {
		k, _ := cpuTime(kid)
		d += k
	}
	return d
}

func cpuTime(pid int) (time.Duration, bool) {
	f, ok := statFields(pid)
	if !ok || len(f) < 15 {
		return 0, false
	}
	// After the command: state(0) ppid(1) ... utime(11) stime(12)
	// cutime(13) cstime(14).
	var ticks int64
	for _, field := range f[11:15] {
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

// Children lists the live processes whose parent is pid.
func Children(pid int) []int {
	var kids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := statFields(n); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// statFields are the fields of /proc/PID/stat after the command, which
// may itself hold spaces and parentheses.
func statFields(pid int) ([]string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}
