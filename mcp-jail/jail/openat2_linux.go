package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// openDirFD keeps a second descriptor on the root for openat2. held is the
// directory os.Root holds; the descriptor must name the same one.
func (r *Root) openDirFD(held fs.FileInfo) error {
	if noOpenat2.Load() {
		return nil
	}
	d, err := os.OpenFile(r.path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fi, err := d.Stat()
	if err != nil || !os.SameFile(fi, held) {
		d.Close()
		return errors.Join(err, errors.New("root changed while it was opened"))
	}
	rc, err := d.SyscallConn()
	if err != nil {
		d.Close()
		return err
	}
	r.dir, r.dirConn = d, rc
	return nil
}

// withDirFD calls f with the root's descriptor, which stays valid (not
// closed and reused by a concurrent Close) while f runs. It reports false
// when there is no descriptor or the Root is closed.
func (r *Root) withDirFD(f func(dirfd int)) bool {
	if r.dirConn == nil || noOpenat2.Load() {
		return false
	}
	return r.dirConn.Control(func(fd uintptr) { f(int(fd)) }) == nil
}

// openat2 opens rel under the root in one system call: the kernel resolves
// the whole name beneath the root handle, refusing ".." above it, absolute
// symlinks and /proc magic links, atomically with respect to concurrent
// renames. handled is false when the caller should fall back to os.Root,
// which is always safe: openat2 is missing, or it answered something
// os.Root can explain better (ELOOP: a loop or a magic link) or retry.
func (r *Root) openat2(name, rel string, flag int, perm fs.FileMode) (f *os.File, handled bool, err error) {
	how := unix.OpenHow{
		Flags:   uint64(flag) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for try := 0; try < 4; try++ {
		fd, err := -1, error(unix.EBADF)
		if !r.withDirFD(func(dirfd int) { fd, err = unix.Openat2(dirfd, rel, &how) }) {
			return nil, false, nil
		}
		switch err {
		case nil:
			// Regular files ignore O_NONBLOCK, but a File that is not
			// in non-blocking mode is the plain kind Go expects.
			unix.SetNonblock(fd, false)
			return os.NewFile(uintptr(fd), join(r.path, splitName(rel))), true, nil
		case unix.EINTR, unix.EAGAIN:
			// EAGAIN: a rename raced with a ".." lookup; try again.
			continue
		case unix.EXDEV:
			return nil, true, escapes(name, fmt.Errorf("openat2: %w", err))
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return nil, false, nil
		case unix.ELOOP, unix.EPERM, unix.EINVAL, unix.E2BIG:
			return nil, false, nil
		default:
			return nil, true, &PathError{Path: name, Err: err}
		}
	}
	return nil, false, nil
}

// noFastResolve is set when /proc/self/fd cannot name an open file.
var noFastResolve atomic.Bool

// resolveFast resolves rel, which must exist, in three system calls: one
// openat2 beneath the root (the kernel follows the symlinks and refuses
// escapes and magic links), a readlink of the descriptor in /proc/self/fd
// to learn the path, and a close. ok is false whenever the walker must
// decide instead: a missing component, an escape (so that the walker can
// say which link), no openat2, no /proc, or a path that does not start
// with the root's (the root was moved).
func (r *Root) resolveFast(rel string) (parts []string, ok bool) {
	if noFastResolve.Load() {
		return nil, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := -1, error(unix.EBADF)
	if !r.withDirFD(func(dirfd int) { fd, err = unix.Openat2(dirfd, rel, &how) }) {
		return nil, false
	}
	if err != nil {
		if err == unix.ENOSYS {
			noOpenat2.Store(true)
		}
		return nil, false
	}
	defer unix.Close(fd)
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil {
		noFastResolve.Store(true)
		return nil, false
	}
	p := string(buf[:n])
	switch {
	case p == r.path:
		return nil, true
	case r.path == "/" && strings.HasPrefix(p, "/"):
		return splitName(p), true
	case strings.HasPrefix(p, r.path+"/"):
		return splitName(p[len(r.path)+1:]), true
	}
	return nil, false
}
