package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mcpipe/mcpipe/internal/rawconn"
)

// ListenOptions configure Listen.
type ListenOptions struct {
	Addr              string // host:port; a bare ":port" means every interface
	CertFile, KeyFile string // optional: serve HTTPS
	// Grace is the core's grace for requests in flight; Listen waits that
	// long and a little more for their answers to go out.
	Grace time.Duration
	// Ready, optional, is called with the bound address once listening.
	Ready func(addr net.Addr)
	// Logger, optional, gets a warning when the drain cannot refuse new
	// handshakes before it closes the listener.
	Logger *slog.Logger
}

// handshakeSettle is how long the listener stays open, refusing new
// handshakes, for those already under way to complete and be accepted:
// one round trip, which in a data center (or on loopback) is far less.
// A connection refused later still waits for its SYN's retransmission
// (1 s) before the refusal reaches the proxy, so this stays well under it.
const handshakeSettle = 250 * time.Millisecond

// Listen serves h on o.Addr until ctx is done, then drains (see the
// package doc's Drain): h.Drain; the listener stops taking connections
// without resetting one that was already handed a request; requests on
// connections already accepted are served; the HTTP server shuts down once
// every handler has returned (all of it at most Grace plus 6 s). It
// returns nil after a clean drain.
func Listen(ctx context.Context, h *Handler, o ListenOptions) error {
	ln, err := listenTCP(o.Addr)
	if err != nil {
		return err
	}
	// No WriteTimeout: an SSE stream lasts as long as its call or
	// subscription. The Handler bounds each write instead (deadlineWriter;
	// a Conn keeps the connection's deadlines). Connections are read and
	// written raw (rawconn): a small request's read and answer's write
	// otherwise keep the runtime's monitor thread polling every 20µs while
	// calls come (~9% of the CPU at 64 calls in flight).
	//
	// HTTP/1.1 only, over TLS too: over HTTP/2 the Handler's write
	// deadline is a timer that resets the stream when it fires, write or
	// no write (every call longer than WriteTimeout was answered
	// RST_STREAM), and the connection's frames are written by a goroutine
	// of its own that no deadline bounds (a client that opens every window
	// and stops reading held it for ever).
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, Protocols: &protocols}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	served := make(chan error, 1)
	go func() {
		if o.CertFile != "" {
			served <- srv.ServeTLS(rawconn.Listener{Listener: ln}, o.CertFile, o.KeyFile)
		} else {
			served <- srv.Serve(rawconn.Listener{Listener: ln})
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	deadline := time.Now().Add(o.Grace + 6*time.Second)
	h.Drain()
	// Closing a listener resets the connections in its accept queue, and
	// a proxy has already written its request into them: for a POST it
	// cannot tell whether the call ran, so it does not resend it, and the
	// call is lost. So new handshakes are refused first (the proxy's
	// connect fails, nothing was sent, it tries another replica), the
	// handshakes under way complete and are accepted, and only then is
	// the listener closed, its queue empty.
	if err := refuseHandshakes(ln); err != nil && o.Logger != nil {
		o.Logger.Warn("draining: cannot refuse new connections before closing the listener: a connection queued at the close is reset", slog.Any("error", err))
	}
	// The accept loop empties the queue at once unless it is starved
	// (no file descriptor left): then a second more, not the whole grace.
	settle := time.Now().Add(handshakeSettle)
	for time.Now().Before(settle) || acceptQueue(ln) > 0 && time.Now().Before(settle.Add(time.Second)) {
		time.Sleep(10 * time.Millisecond)
	}
	// Shutdown closes the listener, then the idle connections, and waits
	// for the requests under way, including those that arrive on a
	// connection accepted a moment ago (the server leaves a new
	// connection 5 s to send one); their answers say Connection: close.
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	err = srv.Shutdown(sctx)
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// listenTCP listens on plain TCP: Go's default, MPTCP where the kernel
// has it, is a socket that takes no socket filter (refuseHandshakes), and
// a replica behind a proxy has no use for several paths.
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}
