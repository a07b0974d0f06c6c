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

// childrenFiles is whether the kernel has /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN). Without them, children are found by a scan of
// all of /proc, whose cost grows with the host. A variable, so that the
// tests cover the fallback too.
var childrenFiles = func() bool {
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/children")
	return err == nil
}()

// toLeader is whether the kernel reparents an orphan to the first live
// thread of the subreaper, its leader (find_alive_thread, Linux 3.19 and
// later), rather than to the thread that forked its ancestor. Then a
// stray can only be on the leader's children list, and the lock-free
// pass of a sweep reads that one file; the children our other threads
// forked are all tracked. A variable, so that the tests cover both.
var toLeader = childrenFiles && kernelAtLeast(3, 19)

// maxRounds bounds a sweep: each round kills the strays it finds with
// everything below them; the next finds what they forked meanwhile,
// handed to us when they died.
const maxRounds = 50

// maxTree bounds the processes one round kills below a single stray (a
// fork bomb); the rest is reparented to us and found in the next round.
const maxTree = 1 << 16

// sweep kills our stray children: a first pass lists our children and
// returns, taking no lock, when each is tracked or in the group of a Run
// in progress (the common case: nothing escaped). Only when it sees one
// it does not know does it take startMu exclusively, so that a child
// being started is tracked (it is tracked under the shared lock), and
// look again: every untracked child not in a Run's group is killed with
// its descendants, and reaped. A killed process's own children are
// reparented to us too, hence the rounds. Children are listed from the
// children files (not with waitid(P_ALL), which would steal the status
// of a child os/exec waits for).
// selfPid is our pid, read once: os.Getpid is a system call each time.
var selfPid = os.Getpid()

func sweep() {
	self := selfPid
	l := lister{scan: !childrenFiles}
	var kids []int
	if toLeader {
		if b, err := l.read("/proc/" + strconv.Itoa(self) + "/task/" + strconv.Itoa(self) + "/children"); err == nil {
			kids = parsePids(b, nil)
		}
	} else {
		kids = l.children(self, nil)
	}
	for _, pid := range kids {
		if stray(pid) {
			sweepLocked(self)
			return
		}
	}
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor; false when it cannot tell.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	maj, rest, _ := strings.Cut(rel, ".")
	min, _, _ := strings.Cut(rest, ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(strings.TrimRightFunc(min, func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

func sweepLocked(self int) {
	startMu.Lock()
	defer startMu.Unlock()
	for range maxRounds {
		l := lister{scan: !childrenFiles}
		var foreign []int
		for _, pid := range l.children(self, nil) {
			if stray(pid) && ourChild(pid) {
				foreign = append(foreign, pid)
			}
		}
		if len(foreign) == 0 {
			return
		}
		for _, top := range foreign {
			l.killTree(top)
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

// stray reports whether pid, listed as a child of ours, is one this
// package did not start and that no Run in progress will kill when it
// ends: untracked and not in a Run's group. A process in the group of a
// server or worker (Start) is a stray: that group lives as long as the
// server, and a process that joined it (setpgid) and was reparented to us
// would live as long. The worker's own children are not ours to judge:
// their parent is the worker.
func stray(pid int) bool {
	if isOurs(pid) {
		return false
	}
	pgid, err := unix.Getpgid(pid)
	return err != nil || !isRunGroup(pgid)
}

// ourChild reports whether pid is still an unreaped child of ours, so
// that the pid cannot have been reused: under startMu held exclusively,
// only a Run or a Process reaps, and only the children it tracks.
func ourChild(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// killTree kills top and everything below it. Each process is killed
// before its children are listed: killed, it forks no more and reaps
// none, so the pids listed under it stay its children (or become ours)
// and cannot be reused meanwhile.
func (l *lister) killTree(top int) {
	todo := []int{top}
	for n := 0; len(todo) > 0 && n < maxTree; n++ {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		unix.Kill(pid, syscall.SIGKILL)
		todo = l.children(pid, todo)
	}
}

// lister lists the children of processes. With the children files it
// reads /proc/PID/task/*/children: a cost that grows with the threads
// and children of PID, not with the host. With scan set it reads
// /proc/*/stat once, at its first use, and answers from that snapshot.
type lister struct {
	scan     bool
	byParent map[int][]int // scan: the children of each pid
	buf      []byte
	names    []string
}

// children appends the pids of pid's children to dst. A process that is
// gone, or whose files cannot be read, has none.
func (l *lister) children(pid int, dst []int) []int {
	if l.scan {
		if l.byParent == nil {
			l.byParent = map[int][]int{}
			for p, pp := range processes() {
				l.byParent[pp] = append(l.byParent[pp], p)
			}
		}
		return append(dst, l.byParent[pid]...)
	}
	task := "/proc/" + strconv.Itoa(pid) + "/task/"
	var err error
	l.names, err = l.readNames(task)
	if err != nil {
		return dst
	}
	for _, tid := range l.names {
		b, err := l.read(task + tid + "/children")
		if err != nil {
			continue
		}
		dst = parsePids(b, dst)
	}
	return dst
}

// readNames lists the directory dir into l.names.
func (l *lister) readNames(dir string) ([]string, error) {
	fd, err := openRetry(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if l.buf == nil {
		l.buf = make([]byte, 4096)
	}
	names := l.names[:0]
	for {
		n, err := unix.Getdents(fd, l.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(l.buf[:n], -1, names)
	}
}

// read returns the content of the small file path, in l.buf.
func (l *lister) read(path string) ([]byte, error) {
	fd, err := openRetry(path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if l.buf == nil {
		l.buf = make([]byte, 4096)
	}
	n := 0
	for {
		if n == len(l.buf) {
			l.buf = append(l.buf, make([]byte, len(l.buf))...)
		}
		m, err := unix.Read(fd, l.buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m <= 0 {
			return l.buf[:n], nil
		}
		n += m
		// A seq_file read stops short only at the end or when its page
		// is full: far from full, this was the end, and the read that
		// would return 0 is saved.
		if n < 2048 && n < len(l.buf) {
			return l.buf[:n], nil
		}
	}
}

func openRetry(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// parsePids appends the pids in b, a children file ("12 345 "), to dst.
func parsePids(b []byte, dst []int) []int {
	pid, digits := 0, false
	for _, c := range b {
		if c >= '0' && c <= '9' {
			pid, digits = pid*10+int(c-'0'), true
			continue
		}
		if digits {
			dst = append(dst, pid)
		}
		pid, digits = 0, false
	}
	if digits {
		dst = append(dst, pid)
	}
	return dst
}

// processes maps every pid in /proc to its parent's pid: the fallback
// where the kernel has no children files.
func processes() map[int]int {
	parent := map[int]int{}
	d, err := os.Open("/proc")
	if err != nil {
		return parent
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
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			parent[pid] = ppid
		}
	}
	return parent
}
