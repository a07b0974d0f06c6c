package proc

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// watchExit returns a channel closed when cmd's process has exited, and
// reap, which reaps it (cmd.Wait). Until reap the exited process stays a
// zombie (waitid with WNOWAIT), so its pid, and with it the process group
// id, cannot be reused while the group is still signalled.
//
// The wait is on a pidfd in Go's poller (Linux 5.3 and later): the
// goroutine parks there, with no thread held in waitid for the life of
// the process. A thread held there made the runtime's monitor take its
// processor back and hand it over, and made the thread queue for one
// again when the process ended, on the critical path of every call.
// Where the pidfd cannot be had, the goroutine waits in waitid.
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	pid := cmd.Process.Pid
	go func() {
		defer close(ch)
		if waitPidfd(pid) {
			return
		}
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				return
			}
		}
	}()
	return ch, cmd.Wait
}

// waitPidfd waits in the poller until pid has exited, without reaping
// it; false when it cannot wait that way.
func waitPidfd(pid int) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	// A non-blocking pidfd's waitid answers EAGAIN while the process
	// lives; the pidfd turns readable when it exits.
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		for {
			switch unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT, nil) {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			}
			exited = true // or nothing left to wait for: Wait will say
			return true
		}
	})
	return err == nil && exited
}
