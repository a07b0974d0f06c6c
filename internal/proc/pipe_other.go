//go:build !linux

package proc

import "os"

// ChildPipe returns a pipe whose end child is for a child process (it
// reads from it when childReads is set, else writes to it) and whose end
// ours is the caller's; see the Linux version. Here it is os.Pipe.
func ChildPipe(childReads bool) (child, ours *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if childReads {
		return r, w, nil
	}
	return w, r, nil
}
