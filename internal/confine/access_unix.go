//go:build unix

package confine

import "golang.org/x/sys/unix"

const (
	accessRead  = unix.R_OK
	accessWrite = unix.W_OK
	accessExec  = unix.X_OK
)

// mayAccess reports whether the calling process's user may access path as
// mode asks, by the file's permissions (access(2)): what the confinement
// alone then refused.
func mayAccess(path string, mode uint32) bool { return unix.Access(path, mode) == nil }
