package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 turns out to be missing (Linux < 5.6, or a
// seccomp filter that answers ENOSYS); os.Root then does every open.
var noOpenat2 atomic.Bool

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
	r.dir = d
	r.dirfd = int(d.Fd())
	return nil
}

// openat2 opens rel under the root in one system call: the kernel resolves
// the whole name beneath the root handle, refusing ".." above it, absolute
// symlinks and /proc magic links, atomically with respect to concurrent
// renames. handled is false when the caller should fall back to os.Root,
// which is always safe: openat2 is missing, or it answered something
// os.Root can explain better (ELOOP: a loop or a magic link) or retry.
func (r *Root) openat2(name, rel string, flag int, perm fs.FileMode) (f *os.File, handled bool, err error) {
	if r.dirfd < 0 || noOpenat2.Load() {
		return nil, false, nil
	}
	how := unix.OpenHow{
		Flags:   uint64(flag) | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for try := 0; try < 4; try++ {
		fd, err := unix.Openat2(r.dirfd, rel, &how)
		// Keep the root's descriptor open until the call returned.
		runtime.KeepAlive(r.dir)
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
