package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func setSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// sweep finds our children in /proc (not waitid(P_ALL), which would
// race with os/exec's own waits): any that this package did not start is
// killed with its descendants, and reaped. A killed process's own
// children are reparented to us too, hence the rounds.
func sweep() {
	startMu.Lock()
	defer startMu.Unlock()
	self := os.Getpid()
	for round := 0; round < 50; round++ {
		parent, group := processes()
		var foreign []int
		for pid, ppid := range parent {
			// One still in the group of a child we run is left to that
			// run, which kills its group when it ends.
			if ppid == self && !isOurs(pid) && !isOurs(group[pid]) {
				foreign = append(foreign, pid)
			}
		}
		if len(foreign) == 0 {
			return
		}
		// Kill the descendants too: stopping the top first would only
		// hand its children to us for the next round, still running.
		for _, top := range foreign {
			for pid := range parent {
				if descends(pid, top, parent) {
					unix.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		for _, pid := range foreign {
			var ws unix.WaitStatus
			for {
				_, err := unix.Wait4(pid, &ws, 0, nil)
				if err != unix.EINTR {
					break
				}
			}
		}
	}
}

// descends reports whether pid is top or lies below it.
func descends(pid, top int, parent map[int]int) bool {
	for i := 0; i < 1000 && pid > 1; i++ {
		if pid == top {
			return true
		}
		pid = parent[pid]
	}
	return false
}

// processes maps every pid in /proc to its parent's pid and to its
// process group.
func processes() (parent, group map[int]int) {
	parent, group = map[int]int{}, map[int]int{}
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parens.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgrp, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			parent[pid], group[pid] = ppid, pgrp
		}
	}
	return parent, group
}
