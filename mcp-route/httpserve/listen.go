package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
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
}

// Listen serves h on o.Addr until ctx is done, then drains: h.Drain, the
// conversations in flight end (their calls get Grace), then the HTTP
// server shuts down once every handler has returned (all of it at most
// Grace plus 6 s). It returns nil after a clean drain.
func Listen(ctx context.Context, h *Handler, o ListenOptions) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	// No WriteTimeout: an SSE stream lasts as long as its call or
	// subscription.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	served := make(chan error, 1)
	go func() {
		if o.CertFile != "" {
			served <- srv.ServeTLS(ln, o.CertFile, o.KeyFile)
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// The listener stays open while the conversations end: /readyz says
	// 503 to the load balancer and a new POST gets 503 (not a refused
	// connection) until they have.
	h.Drain()
	deadline := time.Now().Add(o.Grace + 5*time.Second)
	for !h.Idle() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	sctx, cancel := context.WithDeadline(context.Background(), deadline.Add(time.Second))
	defer cancel()
	err = srv.Shutdown(sctx)
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
