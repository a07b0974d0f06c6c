//go:build !unix

package client

import (
	"context"
	"io"
	"time"
)

// Process is a running server. Here Start makes none; the methods exist so
// that code written for Unix builds.
type Process struct{}

// Start refuses: see ErrNoStdio.
func Start(Command) (*Process, error) { return nil, &StartError{Err: ErrNoStdio} }

// Stdin is the server's stdin.
func (p *Process) Stdin() io.WriteCloser { return nil }

// Stdout is the server's stdout.
func (p *Process) Stdout() io.Reader { return nil }

// Exited is closed when the server process has exited.
func (p *Process) Exited() <-chan struct{} { return nil }

// State describes the process for error messages.
func (p *Process) State() string { return "not started" }

// Stop ends the server.
func (p *Process) Stop() {}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (p *Process) WaitExit(context.Context, time.Duration) bool { return true }

func dialOnce(_ context.Context, cmd Command, _ Options) (*Conn, *Info, error) {
	_, err := Start(cmd)
	return nil, nil, err
}
