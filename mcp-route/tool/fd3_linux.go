package tool

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fd3Open records, before any other package can open a file that might get
// descriptor 3, whether the process inherited a writable pipe, socket or file
// as fd 3. Any other kind (or none) means no progress channel, so a tool run
// by hand never writes progress into a descriptor that is not for it.
var fd3Open = inheritedProgressFD()

func inheritedProgressFD() bool {
	var st unix.Stat_t
	if unix.Fstat(3, &st) != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFSOCK, unix.S_IFREG, unix.S_IFCHR:
	default:
		return false
	}
	fl, err := unix.FcntlInt(3, unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	mode := fl & unix.O_ACCMODE
	return mode == unix.O_WRONLY || mode == unix.O_RDWR
}

// progressFile wraps fd 3 once; the file lives as long as the process, so
// its finalizer never closes the descriptor.
var progressFile = sync.OnceValue(func() *os.File {
	if !fd3Open {
		return nil
	}
	return os.NewFile(3, "progress")
})

// fd4Open: whether the process inherited a readable pipe as fd 4, where
// mcp-route answers the tool's questions (channel.go).
var fd4Open = inheritedAnswerFD()

func inheritedAnswerFD() bool {
	var st unix.Stat_t
	if unix.Fstat(4, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return false
	}
	fl, err := unix.FcntlInt(4, unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	mode := fl & unix.O_ACCMODE
	return mode == unix.O_RDONLY || mode == unix.O_RDWR
}

// answerFile wraps fd 4 once, like progressFile.
var answerFile = sync.OnceValue(func() *os.File {
	if !fd4Open || !fd3Open {
		return nil
	}
	return os.NewFile(4, "answers")
})
