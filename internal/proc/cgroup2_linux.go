package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The cgroup v2 (unified) hierarchy, for the controllers no cgroup v1
// hierarchy holds (a controller is bound to one hierarchy at a time). See
// the package doc, "Limits".
var (
	v2     v2State
	v2once sync.Once
)

type v2State struct {
	// base is the directory our trees' cgroups go in (OWN/mcpipe), with
	// the controllers below enabled in its cgroup.subtree_control; ""
	// when the hierarchy is not usable, err saying why.
	base   string
	path   string // base as the "0::" line of /proc/PID/cgroup names it
	pids   bool   // trees get pids.max
	memory bool   // trees get memory.max
	kill   bool   // cgroup.kill (Linux 5.14): one write kills the tree
	// clone3 is whether clone3(2) works here (a container's seccomp
	// profile may answer ENOSYS, as confine's does on its thread): the
	// child is then born in its cgroup by CLONE_INTO_CGROUP; otherwise
	// it is moved in while stopped at its exec (see v2Tree.aroundFork).
	clone3 bool
	moved  string // the leaf we moved ourselves into, "" if none
	err    error
}

// setupV2 finds the unified hierarchy and makes it usable for the
// controllers cgroup v1 does not hold, once, after setupV1.
func setupV2() {
	v2once.Do(func() {
		var want []string
		if v1.pids.base == "" {
			want = append(want, "pids")
		}
		if v1.memory.base == "" {
			want = append(want, "memory")
		}
		if len(want) == 0 {
			v2.err = errors.New("not needed: cgroup v1 holds both")
			return
		}
		prepareV2(want)
	})
}

// prepareV2 sets v2 up for the controllers in want (none: membership and
// cgroup.kill only, which the tests use).
func prepareV2(want []string) {
	ownPath, ok := cgroupIn(readFile("/proc/self/cgroup"), "")
	if !ok {
		v2.err = errors.New("this process is in no cgroup v2 hierarchy")
		return
	}
	mount, root, ok := v2Mount()
	if !ok {
		v2.err = errors.New("no cgroup2 file system is mounted")
		return
	}
	rel := ownPath
	if root != "/" {
		if !strings.HasPrefix(ownPath+"/", root+"/") {
			v2.err = fmt.Errorf("our cgroup v2 %s is outside the mounted %s", ownPath, root)
			return
		}
		rel = strings.TrimPrefix(ownPath, root)
	}
	own := filepath.Join(mount, rel)
	avail := strings.Fields(string(readFile(filepath.Join(own, "cgroup.controllers"))))
	var use []string
	for _, c := range want {
		for _, a := range avail {
			if a == c {
				use = append(use, c)
			}
		}
	}
	if len(want) > 0 && len(use) == 0 {
		v2.err = fmt.Errorf("cgroup v2 %s offers no %s controller (cgroup.controllers: %q)", own, strings.Join(want, " or "), strings.Join(avail, " "))
		return
	}
	enable := func(dir string) error {
		if len(use) == 0 {
			return nil
		}
		have := strings.Fields(string(readFile(filepath.Join(dir, "cgroup.subtree_control"))))
		var add []string
		for _, c := range use {
			found := false
			for _, h := range have {
				found = found || h == c
			}
			if !found {
				add = append(add, "+"+c)
			}
		}
		if len(add) == 0 {
			return nil
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(add, " ")), 0); err != nil {
			return fmt.Errorf("cannot enable %s in %s: %v", strings.Join(add, " "), dir, err)
		}
		return nil
	}
	// A cgroup that hands controllers down may hold no process (the root
	// excepted: it has no cgroup.type). So unless the controllers are
	// enabled in ours already, we move into a leaf of our own first, and
	// only when our cgroup is ours to arrange: it holds no process but
	// ours, and it is delegated to us.
	if _, err := os.Stat(filepath.Join(own, "cgroup.type")); err != nil {
		if err := enable(own); err != nil { // the root
			v2.err = err
			return
		}
	} else if enable(own) != nil {
		if err := moveIntoLeaf(own, ownPath); err != nil {
			v2.err = err
			return
		}
		if err := enable(own); err != nil {
			// Back where we were: a leaf of ours with nothing to show for
			// it would only puzzle whoever manages the cgroup.
			os.WriteFile(filepath.Join(own, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
			unix.Rmdir(v2.moved)
			v2.moved = ""
			v2.err = err
			return
		}
	}
	base := filepath.Join(own, "mcpipe")
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		v2.err = fmt.Errorf("cannot make a cgroup under %s: %v", own, err)
		return
	}
	if err := enable(base); err != nil {
		v2.err = err
		return
	}
	// As findHierarchy: an existing base on a read-only cgroupfs.
	probe := filepath.Join(base, fmt.Sprintf("probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		v2.err = fmt.Errorf("cannot make a cgroup under %s: %v", base, err)
		return
	}
	_, kerr := os.Stat(filepath.Join(probe, "cgroup.kill"))
	unix.Rmdir(probe)
	_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	v2.clone3 = e != unix.ENOSYS
	v2.kill = kerr == nil
	for _, c := range use {
		v2.pids = v2.pids || c == "pids"
		v2.memory = v2.memory || c == "memory"
	}
	v2.base, v2.path, v2.err = base, filepath.Join(ownPath, "mcpipe"), nil
	removeStale(base)
}

// moveIntoLeaf moves this process into own/mcpipe-route, after checking
// that own is ours to arrange: no other process is in it (we never move
// what is not ours), and it was delegated to us (systemd's Delegate=yes
// marks it with a trusted.delegate or user.delegate xattr; a container's
// cgroup namespace root is the container's). Ownership is not taken for
// delegation: systemd's user manager owns every cgroup of the user's, and
// rearranges those it was not asked to delegate.
func moveIntoLeaf(own, ownPath string) error {
	me := strconv.Itoa(os.Getpid())
	for _, p := range strings.Fields(string(readFile(filepath.Join(own, "cgroup.procs")))) {
		if p != me {
			return fmt.Errorf("cgroup v2 %s holds other processes than ours (%s): controllers cannot be handed down from it without moving them", own, p)
		}
	}
	delegated := ownPath == "/"
	for _, x := range []string{"trusted.delegate", "user.delegate"} {
		b := make([]byte, 8)
		if n, err := unix.Getxattr(own, x, b); err == nil && string(b[:n]) == "1" {
			delegated = true
		}
	}
	if !delegated {
		return fmt.Errorf("cgroup v2 %s is not delegated to us (systemd: Delegate=yes), so we do not rearrange it", own)
	}
	leaf := filepath.Join(own, "mcpipe-route")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot make a cgroup under %s: %v", own, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(me), 0); err != nil {
		unix.Rmdir(leaf)
		return fmt.Errorf("cannot move into %s: %v", leaf, err)
	}
	v2.moved = leaf
	return nil
}

// v2Mount finds a cgroup2 mount and the cgroup path mounted there.
func v2Mount() (mount, root string, ok bool) {
	return findMount(func(fstype string, _ []string) bool { return fstype == "cgroup2" })
}

func readFile(name string) []byte {
	b, _ := os.ReadFile(name)
	return b
}

// v2Support is LimitSupport's wording for what v2 enforces, by controller.
func v2Support(controller string) (string, bool) {
	if (controller == "pids" && v2.pids) || (controller == "memory" && v2.memory) {
		s := "cgroup v2 " + v2.base + " (the whole tree)"
		if v2.moved != "" {
			s += ", mcp-route moved into " + v2.moved
		}
		return s, true
	}
	return "", false
}

// v2Tree is a tree's cgroup in the unified hierarchy.
type v2Tree struct {
	dir   string
	dirFD *os.File // for CLONE_INTO_CGROUP
	procs *os.File // its cgroup.procs, opened before a confined fork needs it
	// Event counts before this tree (reuse, as treeLimit's).
	oomBase, pidsBase int64
}

// newV2Tree makes the cgroup name under base with l's limits on the
// controllers v2 holds.
func newV2Tree(base, name string, l Limits) (*v2Tree, error) {
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	fail := func(err error) (*v2Tree, error) {
		unix.Rmdir(dir)
		return nil, fmt.Errorf("limits: %w", err)
	}
	var files [][2]string
	if l.Pids > 0 && v2.pids {
		files = append(files, [2]string{"pids.max", strconv.Itoa(l.Pids)})
	}
	if l.Memory > 0 && v2.memory {
		m := strconv.FormatInt(l.Memory, 10)
		// No swap, so the limit is not the memory plus all of swap.
		files = append(files, [2]string{"memory.max", m}, [2]string{"memory.swap.max", "0"})
	}
	for _, kv := range files {
		err := os.WriteFile(filepath.Join(dir, kv[0]), []byte(kv[1]), 0)
		if err != nil && !(kv[0] == "memory.swap.max" && errors.Is(err, os.ErrNotExist)) {
			return fail(err)
		}
	}
	fd, err := os.Open(dir)
	if err != nil {
		return fail(err)
	}
	procs, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		fd.Close()
		return fail(err)
	}
	return &v2Tree{dir: dir, dirFD: fd, procs: procs}, nil
}

// prepare sets cmd up to be born in c: CLONE_INTO_CGROUP where clone3
// works on the forking thread (direct is false for a Spawn, which forks
// on a thread of its own, a confined one answering clone3 with ENOSYS);
// otherwise the child stops at its exec (PTRACE_TRACEME) and aroundFork
// moves it in before it runs an instruction of its own. It reports
// whether aroundFork must be used.
func (c *v2Tree) prepare(cmd *exec.Cmd, direct bool) bool {
	if direct && v2.clone3 {
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = int(c.dirFD.Fd())
		return false
	}
	cmd.SysProcAttr.Ptrace = true
	return true
}

// aroundFork starts cmd (start forks on the calling thread, which is
// the tracer of the child: PTRACE_TRACEME), waits for the child's stop
// at its exec, moves it into c and lets it go. Only descriptors opened
// before are used: it may run on a Landlock-confined thread.
func (c *v2Tree) aroundFork(cmd *exec.Cmd, start func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := start(); err != nil {
		return err
	}
	pid := cmd.Process.Pid
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("limits: waiting for the exec stop: %w", err)
		}
		break
	}
	const cldTrapped = 4
	if info.Code != cldTrapped {
		return nil // gone already (killed): the caller reaps it
	}
	_, werr := c.procs.Write([]byte(strconv.Itoa(pid)))
	if err := unix.PtraceDetach(pid); err != nil && werr == nil {
		werr = fmt.Errorf("detach: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("limits: moving the process into %s: %w", c.dir, werr)
	}
	return nil
}

// in reports whether the process whose /proc/PID/cgroup is b is in c.
func (c *v2Tree) in(b []byte, name string) (string, bool) {
	got, _ := cgroupIn(b, "")
	return got, got == v2.path+"/"+name
}

// hit names the limit c's controllers enforced, if one was reached since
// the tree began.
func (c *v2Tree) hit(l Limits) (string, int64) {
	if v2.memory && l.Memory > 0 && c.eventCount("memory.events", "oom_kill") > c.oomBase {
		return LimitMemory, l.Memory
	}
	if v2.pids && l.Pids > 0 && c.eventCount("pids.events", "max") > c.pidsBase {
		return LimitPids, int64(l.Pids)
	}
	return "", 0
}

// empty kills everything in c (cgroup.kill where there is one, then
// killCgroup, which waits until they are gone) and reports whether it
// was seen empty.
func (c *v2Tree) empty() bool {
	if v2.kill {
		os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	}
	return killCgroup(int(c.dirFD.Fd()))
}

// eventCount reads "key N" from c's events file name; 0 when absent.
func (c *v2Tree) eventCount(name, key string) int64 {
	fd, err := openatRetry(int(c.dirFD.Fd()), name, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	return eventCount(fd, key)
}

// reusable says whether an emptied c may serve the next tree with l:
// little memory charged to it; it records the event counts so far.
func (c *v2Tree) reusable(l Limits) bool {
	if v2.memory && l.Memory > 0 {
		b := readFile(filepath.Join(c.dir, "memory.current"))
		used, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || used > spareCharge(l.Memory) {
			return false
		}
	}
	c.oomBase = c.eventCount("memory.events", "oom_kill")
	c.pidsBase = c.eventCount("pids.events", "max")
	return true
}

// release closes c's descriptors; remove (after) removes the directory.
func (c *v2Tree) release() {
	c.dirFD.Close()
	c.procs.Close()
}

// usesV2 reports whether a tree with l gets a cgroup v2.
func usesV2(l Limits) bool {
	return (l.Pids > 0 && v2.pids) || (l.Memory > 0 && v2.memory)
}

// v2Why says why cgroup v2 does not hold controller here.
func v2Why(controller string) string {
	if v2.err != nil {
		return v2.err.Error()
	}
	return "cgroup v2 " + v2.base + " has no " + controller + " controller"
}
