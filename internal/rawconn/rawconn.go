// Package rawconn reads and writes network connections the way
// internal/rawpipe does pipes: raw read and write system calls on the
// non-blocking descriptor, waiting in the Go runtime's poller, without the
// runtime's syscall bookkeeping (which keeps its monitor thread polling
// every 20µs while small requests come; see rawpipe).
//
// NewConn takes a connection the net package made (TCP, Unix sockets:
// always non-blocking and in the poller), and Listener makes every
// connection a listener accepts one. A Conn keeps the connection's
// deadlines, which Read and Write honour, and words its errors as the net
// package does: a deadline is a net.Error whose Timeout is true, a closed
// connection is net.ErrClosed, a read or write error is a *net.OpError with
// Op "read" or "write" (net/http relies on all three). A connection that is
// no syscall.Conn is refused by NewConn and served as it is by Listener.
//
// It is its own package because it imports net: rawpipe must not, for the
// statically linked programs that use it.
package rawconn

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/mcpipe/mcpipe/internal/rawpipe"
)

// Conn is a network connection (TCP or Unix) whose Read and Write are
// raw, like rawpipe.File's. Everything else is the connection's own: deadlines
// (which Read and Write honour, waiting in the poller), addresses, Close.
type Conn struct {
	net.Conn
	rc syscall.RawConn
}

// NewConn returns c with raw reads and writes. c must be a connection the
// net package made (its descriptors are non-blocking and in the poller);
// one that is no syscall.Conn is refused.
func NewConn(c net.Conn) (*Conn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.New("rawconn: connection has no descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c, rc: rc}, nil
}

// Read reads up to len(b) bytes, waiting in the poller until some are
// there or the read deadline passes.
func (c *Conn) Read(b []byte) (int, error) {
	n, errno, err := rawpipe.Read(c.rc, b)
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0 && len(b) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of b, waiting in the poller while the connection takes
// no more, until the write deadline.
func (c *Conn) Write(b []byte) (int, error) {
	n, errno, err := rawpipe.Write(c.rc, b)
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// CloseWrite shuts down the writing side, when the connection has one
// (TCP and Unix do): net/http uses it to close a connection gracefully.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return &net.OpError{Op: "close", Net: c.LocalAddr().Network(), Addr: c.RemoteAddr(), Err: errors.ErrUnsupported}
}

// opError words an error the way the net package does, so that callers'
// checks hold: a deadline is a net.Error whose Timeout is true, and a
// closed connection is net.ErrClosed.
func (c *Conn) opError(op string, err error) error {
	var poller *net.OpError
	if errors.As(err, &poller) && poller.Op != op {
		err = poller.Err // the RawConn's "raw-read"/"raw-write"
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Listener hands out its accepted connections as Conns.
type Listener struct{ net.Listener }

// Accept waits for the next connection and makes its reads and writes raw.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc, err := NewConn(c)
	if err != nil {
		return c, nil // not ours to judge: served as it is
	}
	return rc, nil
}
