package tool

import (
	"os"
	"sync"
	"syscall"
)

// fd3Open records, before any other package can open a file that might get
// descriptor 3, whether the process inherited a writable pipe, socket or file
// as fd 3. Any other kind (or none) means no progress channel, so a tool run
// by hand never writes progress into a descriptor that is not for it.
var fd3Open = inheritedProgressFD()

func inheritedProgressFD() bool {
	var st syscall.Stat_t
	if syscall.Fstat(3, &st) != nil {
		return false
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO, syscall.S_IFSOCK, syscall.S_IFREG, syscall.S_IFCHR:
	default:
		return false
	}
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 3, syscall.F_GETFL, 0)
	if errno != 0 {
		return false
	}
	mode := fl & syscall.O_ACCMODE
	return mode == syscall.O_WRONLY || mode == syscall.O_RDWR
}

// progressFile wraps fd 3 once; the file lives as long as the process, so
// its finalizer never closes the descriptor.
var progressFile = sync.OnceValue(func() *os.File {
	if !fd3Open {
		return nil
	}
	return os.NewFile(3, "progress")
})
