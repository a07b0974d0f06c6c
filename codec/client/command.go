package client

import (
	"errors"
	"io"
	"os/exec"
	"runtime"
	"time"
)

// DefaultGrace is how long Stop waits after closing the server's stdin before
// SIGTERM, and after SIGTERM before SIGKILL.
const DefaultGrace = 2 * time.Second

// Command describes a server to start.
type Command struct {
	// Argv is the program and its arguments; required. A program name
	// without a slash is looked up in PATH.
	Argv []string
	// Env is the environment; nil means this process's environment.
	Env []string
	// Dir is the working directory; "" means the current one.
	Dir string
	// Stderr receives the server's stderr; nil discards it.
	Stderr io.Writer
	// Grace is the shutdown step; 0 means DefaultGrace.
	Grace time.Duration
	// Spawn, optional, starts the process instead of exec.Cmd.Start
	// (proc.Cmd.Spawn): mcp-route starts its upstreams on the confined
	// spawner its tools start on.
	Spawn func(*exec.Cmd) error
}

// StartError reports that the server could not be started.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "cannot start server: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// ErrNoStdio is Start's error (in a StartError) where a stdio server cannot
// be started: on systems other than Unix ones (Windows), since stopping a
// server safely needs a process group to signal (Process.Stop). Streamable
// HTTP ([DialHTTP]) works everywhere.
var ErrNoStdio = errors.New("starting a stdio server is not supported on " + runtime.GOOS + ": connect to it over Streamable HTTP instead (mcp-call --url)")
