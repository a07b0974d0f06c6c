package proc

import (
	"golang.org/x/sys/unix"
)

// pipeQueued returns the bytes waiting in the pipe behind f (FIONREAD
// works on either end of a Linux pipe).
func pipeQueued(f pipeFile) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var n int
	var ierr error
	if err := rc.Control(func(fd uintptr) { n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil || ierr != nil {
		return 0, false
	}
	return n, true
}
