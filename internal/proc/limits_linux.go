package proc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// hierarchy is one cgroup v1 hierarchy whose controller we use: where our
// trees' cgroups go (base, a "mcpipe" directory below our own cgroup) and
// our own cgroup, which a forking thread returns to.
type hierarchy struct {
	controller string
	base, own  string // directories; "" when the controller is not usable
	path       string // base as /proc/PID/cgroup names it
	err        error  // why it is not
	// leave is our own cgroup's tasks file, open for the life of the
	// process: a forking thread returns there after every fork.
	leave *os.File
}

var v1 struct {
	once         sync.Once
	pids, memory hierarchy
}

// setupV1 finds the pids and memory hierarchies of cgroup v1 and makes the
// base directory in each, once.
func setupV1() {
	v1.once.Do(func() {
		v1.pids = findHierarchy("pids")
		v1.memory = findHierarchy("memory")
		for _, h := range []hierarchy{v1.pids, v1.memory} {
			if h.base != "" {
				removeStale(h.base)
			}
		}
	})
}

func findHierarchy(controller string) hierarchy {
	h := hierarchy{controller: controller}
	mount, root, ok := v1Mount(controller)
	if !ok {
		h.err = fmt.Errorf("no cgroup v1 %s hierarchy is mounted", controller)
		return h
	}
	path, ok := ownCgroup(controller)
	if !ok {
		h.err = fmt.Errorf("this process is in no cgroup of the %s hierarchy", controller)
		return h
	}
	rel := path
	if root != "/" {
		if !strings.HasPrefix(path+"/", root+"/") {
			h.err = fmt.Errorf("our %s cgroup %s is outside the mounted %s", controller, path, root)
			return h
		}
		rel = strings.TrimPrefix(path, root)
	}
	own := filepath.Join(mount, rel)
	base := filepath.Join(own, "mcpipe")
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		h.err = fmt.Errorf("cannot make a cgroup under %s: %v", own, err)
		return h
	}
	// base may exist on a file system we cannot write (a container's or
	// a sandbox's read-only /sys/fs/cgroup answers EEXIST before EROFS):
	// a tree's cgroup must be makeable, or every start would fail.
	probe := filepath.Join(base, fmt.Sprintf("probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		h.err = fmt.Errorf("cannot make a cgroup under %s: %v", base, err)
		return h
	}
	os.Remove(probe)
	leave, err := os.OpenFile(filepath.Join(own, "tasks"), os.O_WRONLY, 0)
	if err != nil {
		h.err = fmt.Errorf("cannot move threads back to %s: %v", own, err)
		return h
	}
	h.base, h.own, h.path, h.leave = base, own, filepath.Join(path, "mcpipe"), leave
	return h
}

// v1Mount finds the mount point of the cgroup v1 hierarchy holding
// controller, and the cgroup path mounted there.
func v1Mount(controller string) (mount, root string, ok bool) {
	return findMount(func(fstype string, opts []string) bool {
		return fstype == "cgroup" && slices.Contains(opts, controller)
	})
}

// findMount returns the mount point and the mounted root of the first
// mount in /proc/self/mountinfo that match takes, given its file system
// type and super options.
func findMount(match func(fstype string, opts []string) bool) (mount, root string, ok bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, found := strings.Cut(sc.Text(), " - ")
		if !found {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 1 {
			continue
		}
		var opts []string
		if len(qf) >= 3 {
			opts = strings.Split(qf[2], ",")
		}
		if match(qf[0], opts) {
			return unescapeMount(pf[4]), unescapeMount(pf[3]), true
		}
	}
	return "", "", false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroup is our cgroup path in the v1 hierarchy of controller.
func ownCgroup(controller string) (string, bool) {
	return cgroupOf("self", controller)
}

func cgroupOf(pid, controller string) (string, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		return "", false
	}
	return cgroupIn(b, controller)
}

// cgroupIn finds controller's cgroup in the text of a /proc/PID/cgroup.
func cgroupIn(b []byte, controller string) (string, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == controller {
				return parts[2], true
			}
		}
	}
	return "", false
}

// LimitSupport says how each limit is enforced on this machine, one
// line for a start-up log and --confine-check.
func LimitSupport() string {
	setupV1()
	setupV2()
	var parts []string
	if v1.memory.base != "" {
		parts = append(parts, "memory: cgroup v1 "+v1.memory.base+" (the whole tree)")
	} else if s, ok := v2Support("memory"); ok {
		parts = append(parts, "memory: "+s)
	} else {
		parts = append(parts, "memory: RLIMIT_DATA per process, not the tree ("+v1.memory.err.Error()+"; "+v2Why("memory")+")")
	}
	if v1.pids.base != "" {
		parts = append(parts, "pids: cgroup v1 "+v1.pids.base+" (the whole tree)")
	} else if s, ok := v2Support("pids"); ok {
		parts = append(parts, "pids: "+s)
	} else {
		parts = append(parts, "pids: NOT LIMITED ("+v1.pids.err.Error()+"; "+v2Why("pids")+"; RLIMIT_NPROC counts every process of the user and root is exempt)")
	}
	parts = append(parts, "cpu: RLIMIT_CPU per process")
	return strings.Join(parts, "; ")
}

var treeSeq atomic.Uint64

// treeLimit is the enforcement of Limits for one process tree.
type treeLimit struct {
	lim          Limits
	pids, memory string      // the tree's cgroup directories, "" when none
	name         string      // their name, below each hierarchy's base
	enter, leave []*os.File  // their tasks files, and our own cgroups'
	forked       atomic.Bool // aroundFork forked inside the cgroups
	v2           *v2Tree     // its cgroup v2, nil when none
	// Descriptors kept with the cgroups (and with a spare pair): their
	// directories, for openat, and their event files, read with pread at
	// offset 0, which makes the kernel show them afresh. Every access at
	// the end of a tree is then a syscall or three, not a path walk down
	// /sys/fs/cgroup and os.File's poller set-up: on a virtual machine
	// those made the limits most of what mcp-route added to a call. -1:
	// none.
	memDir, pidsDir       int
	oomEvents, pidsEvents int
	// The event counts the cgroups had before this tree (a reused pair:
	// see spare), so that hit sees only this tree's.
	oomBase, pidsBase int64
	// settle's findings: whether the cgroups were seen empty, and the
	// event counts read after that (final: an empty cgroup has no process
	// to hit a limit).
	settled         bool
	empty           bool
	oomNow, pidsNow int64
}

// closeFDs closes the descriptors kept with the cgroups (not the tasks
// files).
func (t *treeLimit) closeFDs() {
	for _, fd := range []*int{&t.memDir, &t.pidsDir, &t.oomEvents, &t.pidsEvents} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// spare holds empty cgroup pairs of ended trees for the next tree with the
// same limits. Making and removing a memory cgroup per call is the
// costly part of the limits (the kernel frees a memory cgroup in the
// background, on the same processors the tools need), and a reused pair
// needs only its tasks files opened. A pair is kept only when nothing is
// left in it (no process, little memory charged: page cache and tmpfs
// pages a tree leaves stay charged to its cgroup, and would count
// against the next tree's limit), at most maxSpare, and removed at exit
// by ReleaseLimits or, after a crash, by the next start (setupV1).
var spare struct {
	sync.Mutex
	pairs []*treeLimit
}

const maxSpare = 16

// spareCharge is the memory a kept pair may still hold charged: a
// sixty-fourth of its limit, and at least 4 MiB, since what the kernel
// charged for a process that just exited (page tables, kernel stacks)
// comes back a moment after it is gone: 1.4 MB was seen after a memory
// hog's cgroup was found empty, which with a 65 MiB limit made the next
// tree make new cgroups now and then.
func spareCharge(limit int64) int64 { return max(limit/64, 4<<20) }

// takeSpare returns a kept pair for l, or nil.
func takeSpare(l Limits) *treeLimit {
	spare.Lock()
	defer spare.Unlock()
	for i, t := range spare.pairs {
		if t.lim.Pids == l.Pids && t.lim.Memory == l.Memory {
			spare.pairs = append(spare.pairs[:i], spare.pairs[i+1:]...)
			return t
		}
	}
	return nil
}

// ReleaseLimits removes the kept empty cgroups (see spare); a program that
// starts processes with Limits calls it at exit. Processes started later
// get fresh cgroups.
func ReleaseLimits() {
	spare.Lock()
	pairs := spare.pairs
	spare.pairs = nil
	spare.Unlock()
	for _, t := range pairs {
		for _, f := range t.enter {
			f.Close()
		}
		t.closeFDs()
		for _, d := range []string{t.pids, t.memory} {
			if d != "" {
				unix.Rmdir(d)
			}
		}
		if t.v2 != nil {
			t.v2.release()
			unix.Rmdir(t.v2.dir)
		}
	}
}

// removeStale removes the empty tree cgroups under base that a process
// of ours that is gone left (one that kept spare pairs and crashed).
func removeStale(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || !e.IsDir() || n == os.Getpid() {
			continue
		}
		if unix.Kill(n, 0) == unix.ESRCH {
			unix.Rmdir(filepath.Join(base, e.Name())) // fails while not empty
		}
	}
}

// alive reports whether pid is a process that is not exiting nor has
// exited (PF_EXITING in its flags, or a zombie): an exiting process has
// already left its cgroups.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:])) // state, ppid, pgrp, session, tty, tpgid, flags
	if len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	const pfExiting = 0x4
	return err == nil && flags&pfExiting == 0
}

// newTreeLimit makes the tree's cgroups and sets their limits. An error
// means the limits cannot be set up; nothing is left behind.
func newTreeLimit(l Limits) (*treeLimit, error) {
	setupV1()
	setupV2()
	t := &treeLimit{lim: l, memDir: -1, pidsDir: -1, oomEvents: -1, pidsEvents: -1}
	reused := takeSpare(l)
	if reused != nil {
		// Made, set up and opened by an earlier tree.
		t.name, t.oomBase, t.pidsBase = reused.name, reused.oomBase, reused.pidsBase
		t.pids, t.memory, t.enter, t.v2 = reused.pids, reused.memory, reused.enter, reused.v2
		t.memDir, t.pidsDir, t.oomEvents, t.pidsEvents = reused.memDir, reused.pidsDir, reused.oomEvents, reused.pidsEvents
		for _, h := range []hierarchy{v1.pids, v1.memory} {
			if (h.controller == "pids" && t.pids != "") || (h.controller == "memory" && t.memory != "") {
				t.leave = append(t.leave, h.leave)
			}
		}
		return t, nil
	}
	name := fmt.Sprintf("%d-%d", os.Getpid(), treeSeq.Add(1))
	t.name = name
	mk := func(h hierarchy, files map[string]string, dirFD, eventsFD *int, events string) (string, error) {
		dir := filepath.Join(h.base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", fmt.Errorf("limits: %w", err)
		}
		for _, kv := range [][2]string{{"memory.limit_in_bytes", files["memory.limit_in_bytes"]}, {"memory.memsw.limit_in_bytes", files["memory.memsw.limit_in_bytes"]}, {"pids.max", files["pids.max"]}} {
			if kv[1] == "" {
				continue
			}
			err := os.WriteFile(filepath.Join(dir, kv[0]), []byte(kv[1]), 0)
			if err != nil && !(kv[0] == "memory.memsw.limit_in_bytes" && errors.Is(err, os.ErrNotExist)) {
				os.Remove(dir)
				return "", fmt.Errorf("limits: %s: %w", kv[0], err)
			}
		}
		in, err := os.OpenFile(filepath.Join(dir, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("limits: %w", err)
		}
		d, err := openRetry(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			in.Close()
			os.Remove(dir)
			return "", fmt.Errorf("limits: %s: %w", dir, err)
		}
		ev, err := openatRetry(d, events, unix.O_RDONLY|unix.O_CLOEXEC)
		if err != nil {
			unix.Close(d)
			in.Close()
			os.Remove(dir)
			return "", fmt.Errorf("limits: %s: %w", filepath.Join(dir, events), err)
		}
		*dirFD, *eventsFD = d, ev
		t.enter, t.leave = append(t.enter, in), append(t.leave, h.leave)
		return dir, nil
	}
	var err error
	if l.Pids > 0 && v1.pids.base != "" {
		t.pids, err = mk(v1.pids, map[string]string{"pids.max": strconv.Itoa(l.Pids)}, &t.pidsDir, &t.pidsEvents, "pids.events")
	}
	if err == nil && l.Memory > 0 && v1.memory.base != "" {
		m := strconv.FormatInt(l.Memory, 10)
		// Swap counts too (memsw, where the kernel accounts it), so the
		// limit is not the memory plus all of swap.
		t.memory, err = mk(v1.memory, map[string]string{"memory.limit_in_bytes": m, "memory.memsw.limit_in_bytes": m}, &t.memDir, &t.oomEvents, "memory.oom_control")
	}
	if err == nil && usesV2(l) {
		t.v2, err = newV2Tree(v2.base, name, l)
	}
	if err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// aroundFork runs start (which forks on the calling thread) with the
// calling thread in the tree's cgroups, so the child is born in them: a
// cgroup v1 hierarchy places threads one by one, and fork copies the
// forking thread's. The thread then returns to our own cgroups.
func (t *treeLimit) aroundFork(start func() error) error {
	if len(t.enter) == 0 {
		return start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// "0" is the writing thread itself. Unlike its tid, it spares the
	// kernel the lock that makes a migration wait for every fork and
	// exit on the system (cgroup_threadgroup_rwsem; Linux 5.17 and
	// later skip it for the calling thread).
	tid := []byte("0")
	var err error
	entered := 0
	for _, f := range t.enter {
		if _, err = f.Write(tid); err != nil {
			err = fmt.Errorf("limits: entering %s: %w", f.Name(), err)
			break
		}
		entered++
	}
	if err == nil {
		if err = start(); err == nil {
			t.forked.Store(true)
		}
	}
	for _, f := range t.leave[:entered] {
		if _, lerr := f.Write(tid); lerr != nil {
			// The thread would put every later child in this tree's
			// cgroups: no thread of ours may go on like that.
			panic(fmt.Sprintf("proc: limits: a forking thread cannot return to %s: %v", f.Name(), lerr))
		}
	}
	return err
}

// started checks that pid was born in the tree's cgroups (a Spawn that
// forks elsewhere without ForkHook would escape them) and sets the
// rlimits that stand in for a missing controller, and RLIMIT_CPU.
func (t *treeLimit) started(pid int) error {
	if (t.pids != "" || t.memory != "") && !t.forked.Load() {
		return errors.New("limits: the process was not forked inside its cgroups: a Spawn that forks on another thread must use proc.ForkHook")
	}
	var cgroups []byte // /proc/PID/cgroup, read once for both
	for _, h := range []hierarchy{v1.pids, v1.memory} {
		if (h.controller == "pids" && t.pids == "") || (h.controller == "memory" && t.memory == "") {
			continue
		}
		if cgroups == nil {
			cgroups, _ = readSmall(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/cgroup", make([]byte, 4096))
		}
		// An exited process (a zombie) shows the root cgroup: only a live
		// one elsewhere is wrong.
		if got, _ := cgroupIn(cgroups, h.controller); got != h.path+"/"+t.name && alive(pid) {
			return fmt.Errorf("limits: the process was not started in its %s cgroup (it is in %q)", h.controller, got)
		}
	}
	if t.v2 != nil {
		if cgroups == nil {
			cgroups, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		}
		if got, ok := t.v2.in(cgroups, t.name); !ok && alive(pid) {
			return fmt.Errorf("limits: the process was not started in its cgroup v2 %s (it is in %q): a Spawn that forks on another thread must use proc.ForkHook", t.v2.dir, got)
		}
	}
	set := func(res int, cur, max uint64) error {
		if err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: cur, Max: max}, nil); err != nil {
			return fmt.Errorf("limits: prlimit: %w", err)
		}
		return nil
	}
	if t.lim.CPU > 0 {
		s := uint64((t.lim.CPU + time.Second - 1) / time.Second)
		if err := set(unix.RLIMIT_CPU, s, s+1); err != nil {
			return err
		}
	}
	if t.lim.Memory > 0 && t.memory == "" && !(t.v2 != nil && v2.memory) {
		m := uint64(t.lim.Memory)
		if err := set(unix.RLIMIT_DATA, m, m); err != nil {
			return err
		}
	}
	return nil
}

// hit says which limit the tree reached, if any: the pids controller
// refused a fork, the memory controller killed for lack of memory, or the
// leader ended by RLIMIT_CPU (ws is its status, rusage its usage).
func (t *treeLimit) hit(ws syscall.WaitStatus, ru *syscall.Rusage) (string, int64) {
	t.settle()
	if t.memory != "" && t.oomNow > t.oomBase {
		return LimitMemory, t.lim.Memory
	}
	if t.pids != "" && t.pidsNow > t.pidsBase {
		return LimitPids, int64(t.lim.Pids)
	}
	if t.v2 != nil {
		if name, v := t.v2.hit(t.lim); name != "" {
			return name, v
		}
	}
	if t.lim.CPU > 0 && ws.Signaled() {
		used := time.Duration(0)
		if ru != nil {
			used = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		if ws.Signal() == syscall.SIGXCPU || (ws.Signal() == syscall.SIGKILL && used >= t.lim.CPU) {
			return LimitCPU, int64(t.lim.CPU)
		}
	}
	return "", 0
}

// settle ends the tree, once: every process still in its cgroups is
// killed (one that left the process group, a daemon) until they are seen
// empty, then the event counts are read. Read after that, they are
// final, so hit sees every limit the tree reached and keep takes them as
// the next tree's base.
func (t *treeLimit) settle() {
	if t.settled {
		return
	}
	t.settled, t.empty = true, true
	if t.v2 != nil {
		t.empty = t.v2.empty()
	}
	for _, d := range []int{t.pidsDir, t.memDir} {
		if d >= 0 {
			t.empty = killCgroup(d) && t.empty
		}
	}
	if t.oomEvents >= 0 {
		t.oomNow = eventCount(t.oomEvents, "oom_kill")
	}
	if t.pidsEvents >= 0 {
		t.pidsNow = eventCount(t.pidsEvents, "max")
	}
}

// eventCount reads "key N" from a cgroup events file open as fd; 0 when
// absent.
func eventCount(fd int, key string) int64 {
	var buf [512]byte
	n, err := preadRetry(fd, buf[:], 0)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

func preadRetry(fd int, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(fd, b, off)
		if err != unix.EINTR {
			return n, err
		}
	}
}

func openatRetry(dir int, path string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dir, path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readSmall reads the file path (relative to dir) into buf, growing it
// as needed, with no more than open, read and close.
func readSmall(dir int, path string, buf []byte) ([]byte, error) {
	fd, err := openatRetry(dir, path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf)+512)...)
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m <= 0 {
			return buf[:n], nil
		}
		n += m
		// A seq_file read stops short only at its end or when its page
		// is full: far from full, this was the end.
		if n < 2048 && n < len(buf) {
			return buf[:n], nil
		}
	}
}

// close kills every process still in the tree's cgroups (one that left
// the process group, a daemon), so none outlives the tree, and removes
// the cgroups once they are empty.
func (t *treeLimit) close() {
	type cgroup struct {
		path string
		dir  int
	}
	var cgroups []cgroup
	if t.pids != "" {
		cgroups = append(cgroups, cgroup{t.pids, t.pidsDir})
	}
	if t.memory != "" {
		cgroups = append(cgroups, cgroup{t.memory, t.memDir})
	}
	if len(cgroups) == 0 && t.v2 == nil {
		return
	}
	t.settle()
	if t.v2 != nil {
		cgroups = append(cgroups, cgroup{t.v2.dir, -1})
	}
	if t.empty && t.keep() {
		return
	}
	for _, f := range t.enter {
		f.Close()
	}
	if t.v2 != nil {
		t.v2.release()
	}
	t.pidsDir, t.memDir = -1, -1 // closed by the goroutine below
	t.closeFDs()
	go func() {
		// A killed process leaves its cgroup when it is gone; rmdir
		// fails (EBUSY) until then.
		for _, c := range cgroups {
			for i := 0; i < 200; i++ {
				if err := unix.Rmdir(c.path); err == nil || errors.Is(err, unix.ENOENT) {
					break
				}
				if c.dir >= 0 {
					killCgroup(c.dir)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if c.dir >= 0 {
				unix.Close(c.dir)
			}
		}
	}()
}

// keep puts t's emptied cgroups among the spare ones, with their event
// counts, when they hold little memory and there is room; false: the
// caller removes them.
func (t *treeLimit) keep() bool {
	if (t.lim.Pids > 0 && v1.pids.base != "") != (t.pids != "") || (t.lim.Memory > 0 && v1.memory.base != "") != (t.memory != "") {
		return false // half made (its set-up failed): not what its limits need
	}
	if usesV2(t.lim) != (t.v2 != nil) || (t.v2 != nil && !t.v2.reusable(t.lim)) {
		return false
	}
	if t.memory != "" {
		var buf [64]byte
		b, err := readSmall(t.memDir, "memory.usage_in_bytes", buf[:])
		used, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || perr != nil || used > spareCharge(t.lim.Memory) {
			return false
		}
	}
	spare.Lock()
	defer spare.Unlock()
	if len(spare.pairs) >= maxSpare {
		return false
	}
	// The counts settle read once the cgroups were empty are the next
	// tree's base.
	spare.pairs = append(spare.pairs, &treeLimit{lim: t.lim, pids: t.pids, memory: t.memory, name: t.name, enter: t.enter,
		memDir: t.memDir, pidsDir: t.pidsDir, oomEvents: t.oomEvents, pidsEvents: t.pidsEvents,
		oomBase: t.oomNow, pidsBase: t.pidsNow, v2: t.v2})
	return true
}

// killCgroup sends SIGKILL to every process listed in the cgroup.procs
// of the cgroup directory open as dir until none is listed (a killed
// process leaves the list when it has exited; one that forks as it is
// killed is listed again), for at most killWait: when it returns, what it
// killed is gone, not merely signalled. It reports whether the cgroup was
// seen empty. The file is opened afresh each time: cgroup v1 keeps the
// list an open file showed for a second, so a pread would see it stale.
func killCgroup(dir int) bool {
	var deadline time.Time
	var buf [512]byte
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 10*time.Millisecond) {
		b, err := readSmall(dir, "cgroup.procs", buf[:])
		if err != nil {
			return false
		}
		pids := parsePids(b, nil)
		if len(pids) == 0 {
			return true
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(killWait)
		} else if time.Now().After(deadline) {
			return false
		}
		for _, n := range pids {
			if n > 0 {
				unix.Kill(n, unix.SIGKILL)
			}
		}
		time.Sleep(pause)
	}
}

// killWait bounds how long killCgroup waits for what it killed to exit.
const killWait = 5 * time.Second

// withLimits wraps start for cmd under l: it returns the wrapped start,
// the tree (nil without limits) and an error when the limits cannot be
// set up.
func withLimits(l Limits, cmd *exec.Cmd, spawn func(*exec.Cmd) error) (func(*exec.Cmd) error, *treeLimit, error) {
	if l.IsZero() {
		return spawn, nil, nil
	}
	t, err := newTreeLimit(l)
	if err != nil {
		return nil, nil, err
	}
	hook := t.aroundFork
	if t.v2 != nil && t.v2.prepare(cmd, spawn == nil) {
		hook = func(start func() error) error {
			return t.aroundFork(func() error { return t.v2.aroundFork(cmd, start) })
		}
	}
	forkHooks.Store(cmd, hook)
	return func(c *exec.Cmd) error {
		defer forkHooks.Delete(c)
		var err error
		if spawn == nil {
			err = hook(c.Start)
		} else {
			err = spawn(c)
		}
		if err != nil {
			return err
		}
		if err := t.started(c.Process.Pid); err != nil {
			c.Process.Kill()
			c.Wait()
			return err
		}
		return nil
	}, t, nil
}
