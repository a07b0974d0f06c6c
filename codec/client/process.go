//go:build unix

package client

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
)

// Process is a running server in its own process group (a proc.Process).
// Its stdin and stdout are plain pipes owned by the Process; Stop is the
// only way to end it and is safe to call more than once and from several
// goroutines.
type Process struct {
	p     *proc.Process
	grace time.Duration
}

// Start starts the server.
func Start(c Command) (*Process, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, &StartError{Err: errors.New("no server command")}
	}
	path := c.Argv[0]
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return nil, &StartError{Err: err}
		}
		path = lp
	}
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	p, err := proc.Start(proc.Cmd{Path: path, Args: c.Argv, Dir: c.Dir, Env: env, StderrTo: c.Stderr, Spawn: c.Spawn})
	if err != nil {
		return nil, &StartError{Err: err}
	}
	return &Process{p: p, grace: grace}, nil
}

// Stdin is the server's stdin. Closing it asks a stdio server to exit.
func (p *Process) Stdin() io.WriteCloser { return p.p.Stdin() }

// Stdout is the server's stdout.
func (p *Process) Stdout() io.Reader { return p.p.Stdout() }

// Exited is closed when the server process has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.p.Done() }

// Outcome is how the server ended, and false while it runs.
func (p *Process) Outcome() (proc.Outcome, bool) { return p.p.Outcome() }

// State describes the process for error messages: "running", or how it
// ended in proc.Outcome's words ("exit status 1", "killed by SIGTERM").
// Decide on Outcome, not on this text.
func (p *Process) State() string {
	if o, ok := p.p.Outcome(); ok {
		return o.String()
	}
	return "running"
}

// Stop ends the server the way the MCP stdio transport asks: close its
// stdin, wait Grace for it to exit, then SIGTERM its process group, wait
// Grace again, then SIGKILL the group. Whatever is left of the group after
// the server exits is killed too, so no child outlives mcp-call. Stop
// returns when the server has been reaped; the result of the call it served
// does not depend on how it ended, so Stop returns no error.
func (p *Process) Stop() { p.p.Stop(p.grace) }

// terminate is Stop for a server that did not answer in time: after closing
// its stdin it sends SIGTERM at once, SIGKILL after Grace.
func (p *Process) terminate() { p.p.Terminate(p.grace) }

// WaitExit waits up to d for the process to exit and reports whether it did.
func (p *Process) WaitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.p.Done():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
