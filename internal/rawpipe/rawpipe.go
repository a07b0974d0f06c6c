//go:build unix

// Package rawpipe reads and writes pipes (and sockets) in non-blocking mode
// through the Go runtime's poller, making the read and write system calls
// without the runtime's syscall bookkeeping.
//
// Why: a Go program that makes a system call while it is otherwise idle
// wakes the runtime's monitor thread (sysmon), which then polls every 20µs
// for as long as the program is busy. A stdio MCP server that forwards one
// small message at a time (mcp-route's gateway, a worker call) is exactly
// such a program: on a virtual machine where a thread switch is expensive,
// that thread cost more CPU than the forwarding itself. A read or write on a
// non-blocking descriptor never blocks, so the bookkeeping that lets the
// runtime run other goroutines during a blocking call buys nothing; waiting
// is left to the poller, as for a network connection.
//
// New takes a file that is already non-blocking and in the poller (the
// ends os.Pipe makes; a descriptor of one's own opened with O_NONBLOCK and
// given to os.NewFile); what else the poller cannot take gets an error
// from Read and Write. Read and Write follow io.Reader and io.Writer: Write
// writes everything, waiting while the pipe is full, and a Read or Write
// that is waiting returns os.ErrClosed once the file is closed, as
// *os.File's do. The mode belongs to the open file description, which
// another process may share (a pipe inherited from a shell): set it only on
// a description of one's own.
//
// Read and Write do the same on any syscall.RawConn (internal/rawconn uses
// them for network connections).
//
// Platforms: the raw calls are Linux's. Every other Unix system (macOS,
// the BSDs) reads and writes through golang.org/x/sys/unix, with the
// runtime's bookkeeping: the behaviour is the same (non-blocking, waiting
// in the poller, the same errors), only the monitor-thread saving is
// Linux's. macOS has no raw system call interface of its own (its stable
// one is libSystem's), which is why the fast path is not tried there.
// Windows is not served (no caller needs it there).
//
// This package imports no net: a program that must stay statically linked
// (mcp-stock) uses it through internal/proc.
package rawpipe

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// File is a non-blocking pipe or socket read and written without syscall
// bookkeeping. Its methods are safe for concurrent use; concurrent Writes
// do not interleave (each holds the descriptor's write lock throughout).
type File struct {
	f  *os.File
	rc syscall.RawConn
}

// Read reads up to len(b) bytes, waiting in the poller until some are there.
func (p *File) Read(b []byte) (int, error) {
	n, errno, err := Read(p.rc, b)
	switch {
	case err != nil:
		return 0, p.waitError("read", err)
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of b, waiting in the poller while the pipe is full.
func (p *File) Write(b []byte) (int, error) {
	written, errno, err := Write(p.rc, b)
	switch {
	case err != nil:
		return written, p.waitError("write", err)
	case errno != 0:
		return written, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
	}
	return written, nil
}

// Read is one read(2) of up to len(b) bytes on rc's descriptor, which must
// be non-blocking, waiting in the poller while there is nothing to read:
// the count (0 at end of file), the read's errno, or the poller's error
// (a deadline, or the descriptor closed).
func Read(rc syscall.RawConn, b []byte) (int, syscall.Errno, error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, e := sysRead(fd, b)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = r, e
			return true
		}
	})
	return n, errno, err
}

// Write writes all of b to rc's descriptor, which must be non-blocking,
// waiting in the poller while it takes no more: what was written, and the
// errno or the poller's error that stopped it.
func Write(rc syscall.RawConn, b []byte) (int, syscall.Errno, error) {
	written := 0
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			r, e := sysWrite(fd, b[written:])
			switch e {
			case 0:
				written += r
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	return written, errno, err
}

// waitError is what a failed wait in the poller means: a deadline, or
// (the only other way it fails) the file was closed, which *os.File
// reports as os.ErrClosed.
func (p *File) waitError(op string, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: p.f.Name(), Err: err}
}

// Close closes the file; a Read or Write waiting returns os.ErrClosed.
func (p *File) Close() error { return p.f.Close() }

// File is the *os.File underneath, for Stat, Fd and deadlines.
func (p *File) File() *os.File { return p.f }

// New returns a File over f, which must already be in non-blocking mode
// and in the poller (os.Pipe's ends, or os.NewFile of a non-blocking
// descriptor). The File owns f: Close closes it. A blocking f is refused
// (ErrBlocking): a read that blocks without the runtime knowing would hold
// up every goroutine of its processor.
func New(f *os.File) (*File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var flags int
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		flags, errno = getFlags(fd)
	}); err != nil {
		return nil, err
	}
	if errno != 0 {
		return nil, os.NewSyscallError("fcntl", errno)
	}
	if flags&syscall.O_NONBLOCK == 0 {
		return nil, ErrBlocking
	}
	return &File{f: f, rc: rc}, nil
}

// ErrBlocking is New's error for a file in blocking mode.
var ErrBlocking = errors.New("rawpipe: file is in blocking mode")

// SyscallConn is the file's, for code that polls the descriptor itself.
func (p *File) SyscallConn() (syscall.RawConn, error) { return p.rc, nil }
