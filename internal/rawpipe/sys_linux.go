package rawpipe

import (
	"syscall"
	"unsafe"
)

// Linux's fast path: the calls are made raw, without the runtime's syscall
// bookkeeping (the package doc says why). The portable functions stay
// reachable for the tests, which run both paths here.
var (
	sysRead  = rawRead
	sysWrite = rawWrite
	getFlags = rawGetFlags
)

func rawRead(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r), e
}

func rawWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(r), e
}

// rawGetFlags is fcntl(F_GETFL). It is made once per New, so it keeps the
// bookkeeping.
func rawGetFlags(fd uintptr) (int, syscall.Errno) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return int(r), e
}
