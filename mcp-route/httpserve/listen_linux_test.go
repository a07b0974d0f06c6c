package httpserve

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// queuedRequest dials ln and writes a request that nobody accepts yet: a
// proxy's connection in the listener's accept queue. It returns once the
// kernel has queued it.
func queuedRequest(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST /mcp"); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, func() string {
		if n := acceptQueue(ln); n != 1 {
			return "the connection is not in the accept queue"
		}
		return ""
	})
	return c
}

// TestCloseResetsQueuedConnections is why Listen does not just close its
// listener to stop taking connections: the kernel resets a connection
// still in the accept queue, whose request the proxy has written, and
// the proxy cannot tell whether the call ran.
func TestCloseResetsQueuedConnections(t *testing.T) {
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := queuedRequest(t, ln)
	ln.Close()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read on a queued connection after the listener closed: %v, want ECONNRESET", err)
	}
}

// TestRefuseHandshakes: once refuseHandshakes has run, a new connection
// is not taken (its SYN is dropped, then refused once the listener is
// closed), while the one already queued is still accepted with its
// request, and then the listener closes with nothing to reset.
func TestRefuseHandshakes(t *testing.T) {
	ln, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	queuedRequest(t, ln)
	if err := refuseHandshakes(ln); err != nil {
		t.Fatal(err)
	}
	// A dropped SYN cannot complete, whatever the wait: only the dial's
	// timeout ends it.
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Errorf("a new connection was taken after refuseHandshakes")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("new connection after refuseHandshakes: %v, want a timeout (SYN dropped)", err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 9)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "POST /mcp" {
		t.Errorf("queued connection: read %q, %v; want its request", buf, err)
	}
	if n := acceptQueue(ln); n != 0 {
		t.Errorf("accept queue %d after the accept, want 0", n)
	}
	ln.Close()
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("new connection after the close: %v, want ECONNREFUSED", err)
	}
}
