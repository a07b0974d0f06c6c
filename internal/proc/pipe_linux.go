package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// ChildPipe returns a pipe whose end child is for a child process (it
// reads from it when childReads is set, else writes to it) and whose end
// ours is the caller's, non-blocking and in Go's poller (deadlines work),
// both close-on-exec. Unlike os.Pipe, the child's end is left blocking
// and out of the poller: it is only handed to the child and closed, so
// registering it would cost four system calls (and os/exec's Fd another
// to make it blocking again) for nothing, per descriptor per start.
func ChildPipe(childReads bool) (child, ours *os.File, err error) {
	var p [2]int
	for {
		err = unix.Pipe2(p[:], unix.O_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	c, o := p[1], p[0]
	if childReads {
		c, o = p[0], p[1]
	}
	// A new pipe end has no status flags: setting O_NONBLOCK alone is
	// what unix.SetNonblock would do, without reading them first.
	if _, err := unix.FcntlInt(uintptr(o), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(c), "|child"), os.NewFile(uintptr(o), "|ours"), nil
}
