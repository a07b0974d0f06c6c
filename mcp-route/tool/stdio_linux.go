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
	// Non-blocking, the copies go through Go's poller: the goroutine that
	// reads requests parks in it between lines instead of holding a thread
	// and its P in read(2), where the call it has just started would wait
	// for the scheduler to take the P back (tens of µs per call). The
	// pipes' file descriptions are this worker's alone once fds 0 and 1
	// point elsewhere, so the flag reaches no other process. A copy left
	// blocking still works, only slower.
	unix.SetNonblock(inFD, true)
	unix.SetNonblock(outFD, true)
	return os.NewFile(uintptr(inFD), "worker-requests"), os.NewFile(uintptr(outFD), "worker-answers"), err
}
