//go:build unix

package router

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/mcpipe/mcpipe/internal/rawpipe"
)

// pollableInput returns a non-blocking copy of in when in is a pipe (a
// host's usual stdin), with its close; otherwise in itself and a no-op.
//
// Why: os.Stdin is left blocking by Go, so the goroutine reading requests
// sits in read(2) between lines holding a thread and its P, and the
// request it has just handed on waits in that P's run queue until the
// scheduler takes the P back: tens of µs on every call. A non-blocking
// descriptor parks the reader in Go's poller instead, and package rawpipe
// reads it without waking the runtime's monitor thread. Setting O_NONBLOCK
// on fd 0 itself would change the file description the host may share
// (a terminal, a shell's pipe); opening /proc/self/fd/0 makes a
// description of our own for the same pipe. Anything else (a terminal, a
// socket, a file) is read as it is.
func pollableInput(in io.Reader) (io.Reader, func()) {
	if p := ownPipe(in, unix.O_RDONLY); p != nil {
		return p, func() { p.Close() }
	}
	return in, func() {}
}

// pollableOutput is pollableInput for stdout: writes that wait in the
// poller, on a description of our own.
func pollableOutput(out io.Writer) (io.Writer, func()) {
	if p := ownPipe(out, unix.O_WRONLY); p != nil {
		return p, func() { p.Close() }
	}
	return out, func() {}
}

// ownPipe opens the pipe x (an *os.File) again, non-blocking, for reading
// or writing (mode), or returns nil.
func ownPipe(x any, mode int) *rawpipe.File {
	f, ok := x.(*os.File)
	if !ok {
		return nil
	}
	// Through Control, not f.Fd(), which would make a pollable f blocking.
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	rc.Control(func(src uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(src), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		// O_NONBLOCK also keeps the open from waiting for a peer that
		// is already gone.
		own, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(src)), mode|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		var again unix.Stat_t
		if unix.Fstat(own, &again) != nil || again.Dev != st.Dev || again.Ino != st.Ino {
			unix.Close(own)
			return
		}
		fd = own
	})
	if fd < 0 {
		return nil
	}
	p, err := rawpipe.New(os.NewFile(uintptr(fd), f.Name()))
	if err != nil {
		unix.Close(fd)
		return nil
	}
	return p
}
