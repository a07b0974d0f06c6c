package proc

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// withV2 sets the unified hierarchy up for want (nil: membership and
// cgroup.kill only) for the test, or skips saying why it cannot be.
func withV2(t *testing.T, want []string) {
	t.Helper()
	setupV1()
	setupV2()
	saved := v2
	t.Cleanup(func() { v2 = saved })
	v2 = v2State{}
	prepareV2(want)
	if v2.base == "" {
		t.Skipf("no writable cgroup v2 hierarchy here: %v", v2.err)
	}
}

// TestCgroupV2Tree: a child is born in its tree's cgroup v2, by
// CLONE_INTO_CGROUP and by the move at its exec stop (the path of a
// confined fork, whose thread refuses clone3); a daemon it leaves
// (setsid) is in the cgroup too and is killed with it; the cgroup is then
// removed. It needs no controller: where none is delegated (as on a
// hybrid host whose controllers are all on v1) it still runs.
func TestCgroupV2Tree(t *testing.T) {
	withV2(t, nil)
	for _, direct := range []bool{true, false} {
		name := "clone-into-cgroup"
		if !direct {
			name = "exec-stop"
		}
		t.Run(name, func(t *testing.T) {
			if direct && !v2.clone3 {
				t.Skip("clone3 answers ENOSYS here (a seccomp profile): no CLONE_INTO_CGROUP")
			}
			tree := strconv.Itoa(os.Getpid()) + "-test-" + name
			c, err := newV2Tree(v2.base, tree, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			r, w, _ := os.Pipe()
			cmd := exec.Command("/bin/sh", "-c", `cat /proc/self/cgroup; setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "daemon $!"`)
			cmd.Stdout, cmd.SysProcAttr = w, &syscall.SysProcAttr{Setpgid: true}
			start := cmd.Start
			if c.prepare(cmd, direct) {
				start = func() error { return c.aroundFork(cmd, cmd.Start) }
			}
			if direct != cmd.SysProcAttr.UseCgroupFD || direct == cmd.SysProcAttr.Ptrace {
				t.Fatalf("prepare(direct=%v): UseCgroupFD %v, Ptrace %v", direct, cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.Ptrace)
			}
			err = start()
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, 4096)
			var got []byte
			for {
				n, err := r.Read(out)
				got = append(got, out[:n]...)
				if err != nil {
					break
				}
			}
			cmd.Wait()
			if !strings.Contains(string(got), "0::"+v2.path+"/"+tree+"\n") {
				t.Errorf("the child is not in %s/%s: %q", v2.path, tree, got)
			}
			_, d, _ := strings.Cut(string(got), "daemon ")
			pid, err := strconv.Atoi(strings.TrimSpace(d))
			if err != nil {
				t.Fatalf("no daemon pid in %q", got)
			}
			if !alive(pid) {
				t.Fatalf("the daemon %d is not running before the kill", pid)
			}
			if !c.empty() {
				t.Errorf("the cgroup did not empty: %s", readFile(c.dir+"/cgroup.procs"))
			}
			if alive(pid) {
				unix.Kill(pid, unix.SIGKILL)
				t.Errorf("the daemon %d outlived the tree's kill", pid)
			}
			c.release()
			if err := unix.Rmdir(c.dir); err != nil {
				t.Errorf("removing %s: %v", c.dir, err)
			}
		})
	}
}

// TestCgroupV2Fallback: where the unified hierarchy has no pids or memory
// controller to give (a hybrid host whose controllers are bound to v1, a
// container given none), setting v2 up fails saying which is missing,
// and the limits fall back as LimitSupport says.
func TestCgroupV2Fallback(t *testing.T) {
	setupV1()
	setupV2()
	saved := v2
	t.Cleanup(func() { v2 = saved })
	v2 = v2State{}
	mount, _, ok := v2Mount()
	if !ok {
		t.Skip("no cgroup2 file system is mounted")
	}
	own, _ := cgroupIn(readFile("/proc/self/cgroup"), "")
	ctrl := strings.Fields(string(readFile(mount + own + "/cgroup.controllers")))
	for _, c := range ctrl {
		if c == "pids" {
			t.Skipf("cgroup v2 %s%s has a pids controller (%v): nothing to fall back from", mount, own, ctrl)
		}
	}
	prepareV2([]string{"pids"})
	if v2.base != "" || v2.err == nil || !strings.Contains(v2.err.Error(), "offers no pids controller") {
		t.Errorf("v2 without a pids controller: base %q, err %v", v2.base, v2.err)
	}
	if w := v2Why("pids"); !strings.Contains(w, "no pids controller") {
		t.Errorf("v2Why: %q", w)
	}
}

// TestCgroupV2NotOurs: a cgroup that holds a process not ours (here a
// child started in it, a pid other than ours) is never rearranged:
// moving into a leaf of it is refused, no leaf is made, and we stay where
// we are.
func TestCgroupV2NotOurs(t *testing.T) {
	withV2(t, nil)
	if os.Geteuid() != 0 {
		t.Skip("needs root: it moves processes between cgroups")
	}
	own, _ := cgroupIn(readFile("/proc/self/cgroup"), "")
	mount, root, _ := v2Mount()
	ownDir := mount + strings.TrimPrefix(own, strings.TrimSuffix(root, "/"))
	shared := ownDir + "/mcpipe-test-" + strconv.Itoa(os.Getpid())
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Skipf("cannot make %s: %v", shared, err)
	}
	defer unix.Rmdir(shared)
	stranger := exec.Command("sleep", "300")
	stranger.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	f, _ := os.Open(shared)
	stranger.SysProcAttr.UseCgroupFD, stranger.SysProcAttr.CgroupFD = true, int(f.Fd())
	if err := stranger.Start(); err != nil {
		f.Close()
		t.Skipf("cannot start a process in %s: %v", shared, err)
	}
	f.Close()
	defer func() { stranger.Process.Kill(); stranger.Wait() }()
	err := moveIntoLeafOf(shared)
	if err == nil || !strings.Contains(err.Error(), "holds other processes than ours") {
		t.Errorf("moving into a leaf of a cgroup with a stranger in it: %v", err)
	}
	if got, _ := cgroupIn(readFile("/proc/self/cgroup"), ""); got != own {
		t.Errorf("we moved to %s", got)
	}
	if _, err := os.Stat(shared + "/mcpipe-route"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a leaf was made in the shared cgroup: %v", err)
	}
}

// moveIntoLeafOf is moveIntoLeaf for a cgroup directory of the mount.
func moveIntoLeafOf(dir string) error {
	saved := v2.moved
	defer func() { v2.moved = saved }()
	return moveIntoLeaf(dir, "/x")
}
