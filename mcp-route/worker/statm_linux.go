package worker

import (
	"os"
	"syscall"
	"unsafe"
)

// readStatm preads statm from offset 0. The pread is made raw, without
// the runtime's syscall bookkeeping (see internal/rawpipe): reading statm
// never waits, and a bookkept call after every answer kept the runtime's
// monitor thread polling.
func readStatm(statm *os.File, buf []byte) (int, bool) {
	if statm == nil {
		return 0, false
	}
	rc, err := statm.SyscallConn()
	if err != nil {
		return 0, false
	}
	var n uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			n, _, errno = syscall.RawSyscall6(syscall.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
			if errno != syscall.EINTR {
				return
			}
		}
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(n), true
}
