//go:build unix

package client

import (
	"context"
	"errors"
	"fmt"
)

// Conn is a Client connected to a server process that it started.
type Conn struct {
	*Client
	Proc *Process
}

// Dial starts the server and connects to it (see Client.Connect). When the
// auto probe makes the server exit (some legacy servers treat an unknown
// first request as fatal), Dial starts it again and performs the legacy
// handshake on the new process; Info.Probe says so.
//
// Errors: a *StartError when the server cannot be started; otherwise what
// Connect returns, with ErrClosed annotated with the server's exit state.
// On error the server has been stopped.
func Dial(ctx context.Context, cmd Command, opts Options) (*Conn, *Info, error) {
	era, err := ResolveEra(opts.Era, opts.ProtocolVersion)
	if err != nil {
		return nil, nil, err
	}
	c, info, err := dialOnce(ctx, cmd, opts)
	if err == nil || era != EraAuto || !errors.Is(err, ErrClosed) || ctx.Err() != nil {
		return c, info, err
	}
	opts.Era = EraLegacy
	c, info, err = dialOnce(ctx, cmd, opts)
	if err != nil {
		// Usually a server that dies at startup, whatever it is sent: the
		// restart's error is the one worth reading.
		return nil, nil, fmt.Errorf("%w (also after a restart for initialize)", err)
	}
	info.Probe = "server closed the connection on server/discover; restarted it and used initialize"
	return c, info, nil
}

func dialOnce(ctx context.Context, cmd Command, opts Options) (*Conn, *Info, error) {
	p, err := Start(cmd)
	if err != nil {
		return nil, nil, err
	}
	cl := New(p.Stdout(), p.Stdin(), opts)
	info, err := cl.Connect(ctx)
	if err != nil {
		if errors.Is(err, ErrClosed) {
			// Give an exiting server a moment to be reaped so the error can
			// say how it ended.
			p.WaitExit(ctx, p.grace)
			err = fmt.Errorf("%w (server %s)", err, p.State())
		}
		p.Stop()
		return nil, nil, err
	}
	return &Conn{Client: cl, Proc: p}, info, nil
}

// Close stops the server (see Process.Stop) and waits for the read loop.
func (c *Conn) Close() {
	c.Proc.Stop()
	<-c.Client.Done()
}
