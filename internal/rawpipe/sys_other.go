//go:build unix && !linux

package rawpipe

// Every other Unix system takes the portable path (see sys_unix.go).
var (
	sysRead  = portableRead
	sysWrite = portableWrite
	getFlags = portableGetFlags
)
