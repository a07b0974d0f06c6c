package proc

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
	"golang.org/x/sys/unix"
)

// runLong runs c bounded like runT, with room for a loaded machine: the
// limits take CPU time (a second of it, hundreds of forks) to reach.
func runLong(t *testing.T, c Cmd) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan *Result, 1)
	go func() { done <- Run(ctx, c) }()
	select {
	case r := <-done:
		return r
	case <-time.After(4 * time.Minute):
		t.Fatal("the run did not return")
		return nil
	}
}

// needCgroups skips where no cgroup (v1 or v2) pids and memory
// controllers can be used.
func needCgroups(t *testing.T) {
	t.Helper()
	setupV1()
	setupV2()
	if (v1.pids.base == "" && !v2.pids) || (v1.memory.base == "" && !v2.memory) {
		t.Skipf("no usable cgroup pids and memory controllers here: %s", LimitSupport())
	}
}

// limitBases are the directories the trees' cgroups are made in.
func limitBases() []string {
	var b []string
	for _, d := range []string{v1.pids.base, v1.memory.base, v2.base} {
		if d != "" {
			b = append(b, d)
		}
	}
	return b
}

// bomb forks a binary tree of shells DEPTH deep (2^(DEPTH+1) processes
// without a limit: bounded, so a limit that fails cannot take the machine
// down); each leaf sleeps a second. It prints "done".
const bomb = `b() { [ "$1" -gt 0 ] || exec sleep 1; b $(($1-1)) & b $(($1-1)) & wait; }
b 8 2>/dev/null; echo done`

// TestLimitsForkBomb: a fork bomb under a pids limit is refused forks
// and the run ends LimitExceeded naming the process limit; nothing of it
// is left. The counterpart: 50 processes under a limit of 64 run.
func TestLimitsForkBomb(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	r := runLong(t, Cmd{Path: proctest.Script(t, bomb), Limits: Limits{Pids: 32}, Timeout: 2 * time.Minute})
	if r.Ending != LimitExceeded || r.LimitName != LimitPids || r.String() != "process limit of 32 reached (--limit-pids)" {
		t.Errorf("fork bomb: %v (%+v)", r.Outcome, r.Outcome)
	}
	assertNoCgroupsLeft(t)

	r = runLong(t, Cmd{Path: proctest.Script(t, `i=0; while [ $i -lt 50 ]; do sleep 1 & i=$((i+1)); done; wait; echo ok`), Limits: Limits{Pids: 64}})
	if !r.OK() || string(r.Stdout) != "ok\n" {
		t.Errorf("50 processes under a limit of 64: %v %q", r.Outcome, r.Stderr)
	}
}

// TestLimitsMemoryHog: a process that touches more memory than the limit
// is killed and the run ends LimitExceeded naming the memory limit; the
// counterpart, 100 MiB under a 256 MiB limit, runs.
func TestLimitsMemoryHog(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	hog := `dd if=/dev/zero of=/dev/null bs=%s count=1 2>/dev/null && echo ok`
	r := runLong(t, Cmd{Path: proctest.Script(t, strings.Replace(hog, "%s", "200M", 1)), Limits: Limits{Memory: 64 << 20}})
	if r.Ending != LimitExceeded || r.LimitName != LimitMemory || r.String() != "memory limit of 64MiB reached (--limit-mem)" {
		t.Errorf("memory hog: %v (%+v)", r.Outcome, r.Outcome)
	}
	r = runLong(t, Cmd{Path: proctest.Script(t, strings.Replace(hog, "%s", "100M", 1)), Limits: Limits{Memory: 256 << 20}})
	if !r.OK() || string(r.Stdout) != "ok\n" {
		t.Errorf("100 MiB under 256 MiB: %v %q", r.Outcome, r.Stderr)
	}
	assertNoCgroupsLeft(t)
}

// TestLimitsDaemonKilled: a process that left the group (setsid) is in
// the tree's cgroup still, and is killed when the run ends.
func TestLimitsDaemonKilled(t *testing.T) {
	t.Parallel()
	needCgroups(t)
	r := runLong(t, Cmd{Path: proctest.Script(t, `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!`), Limits: Limits{Pids: 16}})
	pid, err := strconv.Atoi(strings.TrimSpace(string(r.Stdout)))
	if !r.OK() || err != nil {
		t.Fatalf("%v %q", r.Outcome, r.Stdout)
	}
	// Killed by the time Run returned; a zombie at most until reaped.
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		unix.Kill(pid, unix.SIGKILL)
		t.Errorf("the daemon %d outlived the run: %s", pid, st)
	}
}

// TestLimitsCPU: a busy loop past its CPU time is ended, LimitExceeded
// naming the CPU limit.
func TestLimitsCPU(t *testing.T) {
	t.Parallel()
	r := runLong(t, Cmd{Path: proctest.Script(t, `while :; do :; done`), Limits: Limits{CPU: time.Second}, Timeout: 2 * time.Minute})
	if r.Ending != LimitExceeded || r.LimitName != LimitCPU {
		t.Errorf("busy loop: %v (%+v)", r.Outcome, r.Outcome)
	}
}

// assertNoCgroupsLeft waits (bounded) for the trees' cgroups of this
// process to be removed.
func assertNoCgroupsLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		for _, base := range limitBases() {
			ents, _ := os.ReadDir(base)
			for _, e := range ents {
				if e.IsDir() && strings.HasPrefix(e.Name(), strconv.Itoa(os.Getpid())+"-") {
					if b, _ := os.ReadFile(base + "/" + e.Name() + "/cgroup.procs"); len(b) > 0 {
						left = append(left, base+"/"+e.Name()+": "+string(b))
					}
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left in cgroups: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLimitsReuse: the cgroups of an ended tree are reused by the next
// tree with the same limits, and what the earlier tree did is not held
// against it: after a fork bomb and a memory hog hit their limits, an
// ordinary run in the same (reused) cgroups ends OK. ReleaseLimits
// removes the kept cgroups.
func TestLimitsReuse(t *testing.T) {
	needCgroups(t)
	lim := Limits{Pids: 33, Memory: 65 << 20} // values no other test uses
	where := proctest.Script(t, `grep -E ':(pids|memory|):' /proc/self/cgroup | sort; echo ok`)
	first := runLong(t, Cmd{Path: where, Limits: lim})
	if !first.OK() {
		t.Fatalf("first run: %v %q", first.Outcome, first.Stderr)
	}
	r := runLong(t, Cmd{Path: proctest.Script(t, bomb), Limits: lim, Timeout: 2 * time.Minute})
	if r.Ending != LimitExceeded || r.LimitName != LimitPids {
		t.Errorf("fork bomb: %v", r.Outcome)
	}
	r = runLong(t, Cmd{Path: proctest.Script(t, `dd if=/dev/zero of=/dev/null bs=200M count=1 2>/dev/null && echo ok`), Limits: lim})
	if r.Ending != LimitExceeded || r.LimitName != LimitMemory {
		t.Errorf("memory hog: %v", r.Outcome)
	}
	assertNoCgroupsLeft(t)
	again := runLong(t, Cmd{Path: where, Limits: lim})
	if !again.OK() || !strings.HasSuffix(string(again.Stdout), "ok\n") {
		t.Errorf("after the bomb and the hog, in reused cgroups: %v %q", again.Outcome, again.Stderr)
	}
	if string(again.Stdout) != string(first.Stdout) {
		t.Errorf("the cgroups were not reused:\n%s\nthen\n%s", first.Stdout, again.Stdout)
	}
	if !strings.Contains(string(first.Stdout), "/mcpipe/"+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("not run in a tree cgroup: %q", first.Stdout)
	}
	ReleaseLimits()
	for _, base := range limitBases() {
		ents, _ := os.ReadDir(base)
		for _, e := range ents {
			if strings.Contains(string(first.Stdout), "/mcpipe/"+e.Name()+"\n") {
				t.Errorf("ReleaseLimits left %s/%s", base, e.Name())
			}
		}
	}
}
