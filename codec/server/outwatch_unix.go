//go:build unix

package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchOutput watches w, when it is a pipe or a socket, for the client
// closing its end: poll(2) reports POLLERR on a pipe without readers and
// POLLHUP on a socket shut both ways, with no write needed. gone receives
// one error wrapping ErrOutputClosed when that happens; stop ends the
// watch and waits for its goroutine.
func watchOutput(w io.Writer) (gone <-chan error, stop func()) {
	nothing := func() {}
	sc, ok := w.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return nil, nothing
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, nothing
	}
	fd := -1
	raw.Control(func(f uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(f), &st) == nil && (st.Mode&unix.S_IFMT == unix.S_IFIFO || st.Mode&unix.S_IFMT == unix.S_IFSOCK) {
			fd = int(f)
		}
	})
	if fd < 0 {
		return nil, nothing
	}
	// A pipe of our own wakes the poll up when the watch must stop.
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		return nil, nothing
	}
	ch := make(chan error, 1)
	done := make(chan struct{})
	wakeRaw, _ := wakeR.SyscallConn()
	var wakeFd int
	wakeRaw.Control(func(f uintptr) { wakeFd = int(f) })
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(fd)}, {Fd: int32(wakeFd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(fds, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || fds[1].Revents != 0 || fds[0].Revents&unix.POLLNVAL != 0 {
				return
			}
			if fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				ch <- fmt.Errorf("%w: the client closed its end", ErrOutputClosed)
				return
			}
		}
	}()
	return ch, func() {
		wakeW.Close()
		<-done
		wakeR.Close()
	}
}
