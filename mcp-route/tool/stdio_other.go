//go:build !linux

package tool

import (
	"errors"
	"os"
)

// privateStdio: outside Linux the protocol stays on fds 0 and 1, and a
// stray write to os.Stdout corrupts the answer stream.
func privateStdio() (in, out *os.File, err error) {
	return nil, nil, errors.New("not supported on this system")
}
