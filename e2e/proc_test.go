package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procStat is the part of /proc/PID/stat the leak checks need.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	comm            string
}

// procs lists every process /proc shows (Linux).
func procs(t *testing.T) []procStat {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(s[closing+1:])
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		out = append(out, procStat{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], comm: s[open+1 : closing]})
	}
	return out
}

// inGroup lists the live processes of process group pgid. Zombies are
// dead: one whose parent exited waits for init to reap it, which some
// containers' init does only now and then; a zombie child of mcp-route
// itself is caught by noChildren.
func inGroup(t *testing.T, pgid int) []procStat {
	var out []procStat
	for _, p := range procs(t) {
		if p.pgrp == pgid && p.state != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// childrenOf lists the processes whose parent is ppid (zombies included).
func childrenOf(t *testing.T, ppid int) []procStat {
	var out []procStat
	for _, p := range procs(t) {
		if p.ppid == ppid {
			out = append(out, p)
		}
	}
	return out
}

// eventually polls cond until it returns "" or waitLong passes, and then
// fails with cond's last complaint. Processes die and get reaped
// asynchronously after a kill, so a check made once, at once, would be
// flaky; the polling interval is not an assertion about speed.
func eventually(t *testing.T, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", waitLong, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupGone waits until process group pgid has no process left.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	eventually(t, func() string {
		if ps := inGroup(t, pgid); len(ps) > 0 {
			return "processes left in group " + strconv.Itoa(pgid) + ": " + describe(ps)
		}
		return ""
	})
}

// noChildren waits until the server has no child process (running or
// zombie) left.
func noChildren(t *testing.T, s *server) {
	t.Helper()
	eventually(t, func() string {
		if ps := childrenOf(t, s.cmd.Process.Pid); len(ps) > 0 {
			return "mcp-route still has children: " + describe(ps)
		}
		return ""
	})
}

func describe(ps []procStat) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(strconv.Itoa(p.pid) + "(" + p.comm + "," + string(p.state) + ") ")
	}
	return b.String()
}

// readPID waits for a tool to write a pid into file and returns it.
func readPID(t *testing.T, file string) int {
	t.Helper()
	var pid int
	eventually(t, func() string {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return "no pid in " + file
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return err.Error()
		}
		return ""
	})
	return pid
}

// fdCount is the number of descriptors process pid has open.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		t.Fatalf("counting descriptors: %v", err)
	}
	return len(ents)
}

// alive reports whether pid is a live (not zombie) process.
func alive(t *testing.T, pid int) bool {
	for _, p := range procs(t) {
		if p.pid == pid {
			return p.state != 'Z'
		}
	}
	return false
}
