package client

import (
	"context"
	"errors"
	"fmt"
)

// Conn is a Client connected to a server process that it started, or to
// an HTTP endpoint (Proc nil).
type Conn struct {
	*Client
	Proc *Process // nil over HTTP
}

// GoneError reports that the server went away (exited, or closed its
// stdout) before it answered the handshake. It wraps ErrClosed.
type GoneError struct {
	// State is the Process.State when the error was made: "exit status
	// 2", "running" (it closed its stdout but lives on), ...
	State string
	// Restartable says whether starting the server again for initialize
	// can help (see Dial).
	Restartable bool
}

func (e *GoneError) Error() string {
	if e.State == "running" {
		return "server closed its stdout before answering"
	}
	return "server ended before answering: " + e.State
}

func (e *GoneError) Unwrap() error { return ErrClosed }

// Dial starts the server and connects to it (see Client.Connect), within
// ctx: the auto probe and the handshake share its deadline.
//
// When the auto probe makes the server go away (some legacy servers treat an
// unknown first request as fatal), Dial starts it again and performs the
// legacy handshake on the new process; Info.Probe says so. It does so only
// when that can help: the server read the probe (where the platform can
// tell: Linux) and then exited with status 0 or closed its stdout. A server
// that exits non-zero (a usage error, a missing file) or never read its
// stdin would fail the same way again, and its error output would be
// printed twice.
//
// Errors: a *StartError when the server cannot be started; a *GoneError
// when it went away before answering; otherwise what Connect returns. On
// error the server has been stopped; one that did not answer in time is
// sent SIGTERM at once rather than after Command.Grace, so a failed Dial
// does not outlast ctx by the grace period.
func Dial(ctx context.Context, cmd Command, opts Options) (*Conn, *Info, error) {
	era, err := ResolveEra(opts.Era, opts.ProtocolVersion)
	if err != nil {
		return nil, nil, err
	}
	c, info, err := dialOnce(ctx, cmd, opts)
	var ge *GoneError
	if err == nil || era != EraAuto || ctx.Err() != nil || !errors.As(err, &ge) || !ge.Restartable {
		return c, info, err
	}
	opts.Era = EraLegacy
	c, info, err = dialOnce(ctx, cmd, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (also after a restart for initialize)", err)
	}
	info.Probe = "server closed the connection on server/discover; restarted it and used initialize"
	return c, info, nil
}

// DialHTTP connects to the Streamable HTTP endpoint at endpoint (see
// NewHTTP and Client.Connect) within ctx. The Conn has no Proc. On error
// the client has been closed.
func DialHTTP(ctx context.Context, endpoint string, hopts HTTPOptions, opts Options) (*Conn, *Info, error) {
	if _, err := ResolveEra(opts.Era, opts.ProtocolVersion); err != nil {
		return nil, nil, err
	}
	cl, err := NewHTTP(endpoint, hopts, opts)
	if err != nil {
		return nil, nil, err
	}
	info, err := cl.Connect(ctx)
	if err != nil {
		cl.CloseWrite()
		return nil, nil, err
	}
	return &Conn{Client: cl}, info, nil
}

// Close stops the server (see Process.Stop) and waits for the read loop;
// over HTTP it ends the session (see Client.CloseWrite).
func (c *Conn) Close() {
	if c.Proc == nil {
		c.Client.CloseWrite()
		return
	}
	c.Proc.Stop()
	<-c.Client.Done()
}
