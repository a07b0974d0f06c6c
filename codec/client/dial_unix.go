//go:build unix

package client

import (
	"context"
	"errors"
)

func dialOnce(ctx context.Context, cmd Command, opts Options) (*Conn, *Info, error) {
	p, err := Start(cmd)
	if err != nil {
		return nil, nil, err
	}
	cl := New(p.Stdout(), p.Stdin(), opts)
	info, err := cl.Connect(ctx)
	if err == nil {
		return &Conn{Client: cl, Proc: p}, info, nil
	}
	switch {
	case errors.Is(err, ErrClosed):
		// Give an exiting server a moment to be reaped so the error can
		// say how it ended.
		p.WaitExit(ctx, p.grace)
		// Asked before Stop, which closes the pipe.
		consumed, known := p.p.StdinConsumed()
		probeRead := consumed || !known
		o, exited := p.Outcome()
		state := "running"
		if exited {
			state = o.String()
		}
		err = &GoneError{State: state, Restartable: probeRead && (!exited || o.OK())}
		p.Stop()
	case ctx.Err() != nil:
		// No answer in time: the server is hung or ignores us; closing
		// its stdin and waiting Grace would only stretch --timeout.
		p.terminate()
	default:
		p.Stop()
	}
	return nil, nil, err
}
