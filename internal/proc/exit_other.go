//go:build unix && !linux

package proc

import "os/exec"

// watchExit returns a channel closed when cmd's process has exited and
// been reaped, and reap, which returns cmd.Wait's result. Without
// waitid(WNOWAIT) here, the leader is reaped as soon as it exits (see the
// package doc, "Platforms").
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(ch)
	}()
	return ch, func() error { <-ch; return err }
}
