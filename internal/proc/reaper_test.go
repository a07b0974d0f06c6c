//go:build linux

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestMain lets TestSubreap run this binary as a supervisor with Subreap
// on: a process attribute the other tests must not share.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROC_TEST_SUBREAP_DIR"); dir != "" {
		childrenFiles = childrenFiles && os.Getenv("PROC_TEST_SCAN") == ""
		toLeader = toLeader && childrenFiles && os.Getenv("PROC_TEST_ALL_THREADS") == ""
		os.Exit(subreapHelper(dir))
	}
	os.Exit(m.Run())
}

// daemonScript daemonizes (setsid, stdio detached), records the daemon's
// pid and its child's, and exits.
const daemonScript = `setsid sh -c 'sleep 300 & echo $! > "$D/child.pid"; echo $$ > "$D/daemon.pid"; wait' </dev/null >/dev/null 2>&1 &
while [ ! -s "$D/daemon.pid" ] || [ ! -s "$D/child.pid" ]; do sleep 0.02; done`

// subreapHelper runs the daemonizing tool, with Subreap unless
// PROC_TEST_NO_SUBREAP is set, and then a plain one, and reports how they
// ended.
func subreapHelper(dir string) int {
	if os.Getenv("PROC_TEST_NO_SUBREAP") == "" {
		if err := Subreap(); err != nil {
			fmt.Println("Subreap:", err)
			return 1
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "D=" + dir}
	r := Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", daemonScript}, Env: env, Timeout: 20 * time.Second})
	fmt.Println("daemonize:", r.Outcome)
	for _, f := range []string{"daemon.pid", "child.pid"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		fmt.Printf("%s alive after the run: %v\n", f, proctest.Alive(pid))
	}
	r = Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "echo plain"}, Env: env})
	fmt.Printf("plain: %s %q\n", r.Outcome, r.Stdout)
	Sweep()
	return 0
}

// TestSubreap: with Subreap, the daemon a run leaves behind, and its
// child, are gone when Run returns, and a plain run still works, whether
// the sweep lists children from the children files or, where the kernel
// has none, from a scan of /proc; without Subreap they survive (and are
// killed here).
func TestSubreap(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip(err)
	}
	for _, mode := range []string{"leader's children", "every thread's children", "scan", "no subreaper"} {
		on := mode != "no subreaper"
		if mode == "leader's children" && !toLeader {
			t.Log("this kernel does not reparent to the subreaper's leader thread (before 3.19, or no children files): the lock-free pass reads every thread")
			continue
		}
		if mode == "every thread's children" && !childrenFiles {
			t.Log("no /proc/PID/task/TID/children here (CONFIG_PROC_CHILDREN): only the scan is tested")
			continue
		}
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PROC_TEST_SUBREAP_DIR="+dir)
		switch mode {
		case "every thread's children":
			cmd.Env = append(cmd.Env, "PROC_TEST_ALL_THREADS=1")
		case "scan":
			cmd.Env = append(cmd.Env, "PROC_TEST_SCAN=1")
		case "no subreaper":
			cmd.Env = append(cmd.Env, "PROC_TEST_NO_SUBREAP=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		want := fmt.Sprintf("daemonize: exit status 0\ndaemon.pid alive after the run: %v\nchild.pid alive after the run: %v\nplain: exit status 0 \"plain\\n\"\n", !on, !on)
		if string(out) != want {
			t.Errorf("%s: helper said\n%s\nwant\n%s", mode, out, want)
		}
		if !on { // the escaped daemon is ours to clean up
			for _, f := range []string{"daemon.pid", "child.pid"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
}

// TestChildren: the lister finds a process's children, a grandchild
// under its parent and none under a process that is gone, from the
// children files and from the /proc scan alike.
func TestChildren(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip(err)
	}
	var kids []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	})
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	for _, argv := range [][]string{
		{"sleep", "300"},
		{"sleep", "300"},
		{"/bin/sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile},
	} {
		c := exec.Command(argv[0], argv[1:]...)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		kids = append(kids, c)
	}
	grandchild := proctest.WaitPIDFile(t, pidFile)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, scan := range []bool{false, true} {
		if !scan && !childrenFiles {
			t.Log("no /proc/PID/task/TID/children here (CONFIG_PROC_CHILDREN): only the scan is tested")
			continue
		}
		l := lister{scan: scan}
		got := l.children(os.Getpid(), nil)
		for _, c := range kids {
			if !slices.Contains(got, c.Process.Pid) {
				t.Errorf("scan %v: children of the test %v lack %d", scan, got, c.Process.Pid)
			}
		}
		if got := l.children(kids[2].Process.Pid, nil); !slices.Equal(got, []int{grandchild}) {
			t.Errorf("scan %v: children of the shell: %v, want [%d]", scan, got, grandchild)
		}
		if got := l.children(gone.Process.Pid, nil); len(got) != 0 {
			t.Errorf("scan %v: children of a process that is gone: %v", scan, got)
		}
	}
}

func TestParsePids(t *testing.T) {
	for in, want := range map[string][]int{
		"":           nil,
		"12 345 ":    {12, 345},
		"7":          {7},
		"1 22 333\n": {1, 22, 333},
	} {
		if got := parsePids([]byte(in), nil); !slices.Equal(got, want) {
			t.Errorf("parsePids(%q) = %v, want %v", in, got, want)
		}
	}
}

// BenchmarkSweep is the cost of a sweep that finds nothing to kill (the
// case after nearly every call), with four children of ours running:
// reading the leader thread's children file (where Linux 3.19 and later
// put every orphan), every thread's, or scanning /proc as kernels without
// children files must; the scan's cost grows with the processes on the
// host, which the benchmark reports. Run it:
//
//	go test -run '^$' -bench Sweep ./internal/proc
func BenchmarkSweep(b *testing.B) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		b.Skip(err)
	}
	for range 4 {
		p, err := Start(Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "exec sleep 300"}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { p.Terminate(time.Second) })
	}
	hostProcs := len(processes())
	for _, mode := range []string{"leader", "every-thread", "scan"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "leader" && !toLeader || mode == "every-thread" && !childrenFiles {
				b.Skip("not on this kernel (before 3.19, or no CONFIG_PROC_CHILDREN)")
			}
			defer func(files, leader bool) { childrenFiles, toLeader = files, leader }(childrenFiles, toLeader)
			childrenFiles, toLeader = mode != "scan", mode == "leader"
			for b.Loop() {
				sweep()
			}
			b.ReportMetric(float64(hostProcs), "host-procs")
		})
	}
}
