package proc

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// watchExit returns a channel closed when cmd's process has exited, and
// reap, which reaps it (cmd.Wait). Until reap the exited process stays a
// zombie (waitid with WNOWAIT), so its pid, and with it the process group
// id, cannot be reused while the group is still signalled.
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	pid := cmd.Process.Pid
	go func() {
		defer close(ch)
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
