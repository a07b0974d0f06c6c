//go:build unix && !linux

package proc

import "os/exec"

// peekExit is false: without waitid(WNOWAIT) here, the leader is reaped
// as soon as it exits (see the package doc, "Platforms").
const peekExit = false

// watchExit returns a channel closed when cmd's process has exited and
// been reaped, and reap, which returns cmd.Wait's result.
func watchExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(ch)
	}()
	return ch, func() error { <-ch; return err }
}
