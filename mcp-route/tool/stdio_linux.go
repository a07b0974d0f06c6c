package tool

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// privateStdio moves a worker's protocol off descriptors 0 and 1, so that
// code which reads os.Stdin or writes os.Stdout directly (a stray
// fmt.Println, a library's debug print) cannot steal a request or corrupt
// the answer stream: requests and answers get private close-on-exec copies
// of fds 0 and 1, then fd 0 becomes /dev/null and fd 1 a copy of fd 2, so
// stray prints land on stderr, where mcp-route logs them. Children the
// handlers start inherit neither private copy.
func privateStdio() (in, out *os.File, err error) {
	inFD, err := unix.FcntlInt(0, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, nil, fmt.Errorf("duplicating stdin: %w", err)
	}
	outFD, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		unix.Close(inFD)
		return nil, nil, fmt.Errorf("duplicating stdout: %w", err)
	}
	null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Dup3(null, 0, 0)
		unix.Close(null)
	}
	if err == nil {
		err = unix.Dup3(2, 1, 0)
	}
	if err != nil {
		// fds 0 and 1 may be half moved; the copies still work.
		err = fmt.Errorf("pointing stdin at %s and stdout at stderr: %w", os.DevNull, err)
	}
	return os.NewFile(uintptr(inFD), "worker-requests"), os.NewFile(uintptr(outFD), "worker-answers"), err
}
