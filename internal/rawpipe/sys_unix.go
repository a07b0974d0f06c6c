//go:build unix

package rawpipe

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// The portable path, on golang.org/x/sys/unix: the same system calls with
// the runtime's bookkeeping, on any Unix system. It is what macOS and the
// BSDs use; on Linux the tests run it too.

func portableRead(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := unix.Read(int(fd), b)
	return count(n, err)
}

func portableWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := unix.Write(int(fd), b)
	return count(n, err)
}

func portableGetFlags(fd uintptr) (int, syscall.Errno) {
	return count(unix.FcntlInt(fd, unix.F_GETFL, 0))
}

// count turns x/sys/unix's (n, error) into the raw calls' (n, errno): a
// failed call counts nothing (x/sys/unix reports -1 there).
func count(n int, err error) (int, syscall.Errno) {
	if err == nil {
		return n, 0
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		errno = syscall.EIO // x/sys/unix returns only Errnos; never reached
	}
	return 0, errno
}
