package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// Environment variables mcp-route sets for every call.
const (
	EnvTool            = "MCP_TOOL"
	EnvRoot            = "MCP_ROOT"
	EnvProtocolVersion = "MCP_PROTOCOL_VERSION"
)

// ErrResultWritten is returned by JSON and Result when the call already wrote
// something to stdout: a "json" or "mcp" result must be the only output.
var ErrResultWritten = errors.New("tool: result already written")

// A Call is one run of a handler: its arguments, environment and outputs.
type Call struct {
	ctx      context.Context
	name     string
	args     json.RawMessage
	env      func(string) string
	progress io.Writer    // nil: no progress channel
	channel  io.Writer    // log records and questions (channel.go); nil: none
	answers  answerSource // the answers to questions; nil: none
	askMu    sync.Mutex   // one question at a time
	asked    int          // questions asked, under askMu

	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	wrote  bool
	fields map[string]json.RawMessage // Arg's cache
}

// Name is the tool's name: MCP_TOOL when set, else the definition's name.
func (c *Call) Name() string {
	if n := c.env(EnvTool); n != "" {
		return n
	}
	return c.name
}

// Context is the call's context: context.Background() in an exec'd call
// (see the package doc on signals), cancelled by mcp-route's cancel in a
// worker, the caller's under InvokeWith.
func (c *Call) Context() context.Context { return c.ctx }

// RawArgs returns the arguments object as received (never empty: absent
// arguments are {}). The caller must not modify it.
func (c *Call) RawArgs() json.RawMessage { return c.args }

// Args decodes the arguments object into v, as json.Unmarshal does. mcp-route
// has already checked the arguments against the InputSchema; the error here
// is for the rest (and for a tool run by hand).
func (c *Call) Args(v any) error {
	if err := json.Unmarshal(c.args, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// Arg returns one top-level argument as text: a string's value, or the JSON
// of any other value ("3", "true", "[1,2]"); "" when absent or null.
func (c *Call) Arg(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fields == nil {
		c.fields = map[string]json.RawMessage{}
		// The arguments were checked to be an object when the call began.
		_ = json.Unmarshal(c.args, &c.fields)
	}
	raw, ok := c.fields[name]
	if !ok || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Getenv returns the call's environment variable name ("" when unset).
func (c *Call) Getenv(name string) string { return c.env(name) }

// Root is MCP_ROOT, the directory the tool works in; "." when unset (a tool
// run by hand works in its working directory).
func (c *Call) Root() string {
	if r := c.env(EnvRoot); r != "" {
		return r
	}
	return "."
}

// ProtocolVersion is MCP_PROTOCOL_VERSION, the MCP revision of the request
// ("" when unset; in a worker, the request's protocolVersion).
func (c *Call) ProtocolVersion() string { return c.env(EnvProtocolVersion) }

// Write appends p to stdout; a Call is an io.Writer for text results.
func (c *Call) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wrote = true
	return c.stdout.Write(p)
}

// Text appends s to the text result.
func (c *Call) Text(s string) { io.WriteString(c, s) }

// Textf appends a formatted string to the text result.
func (c *Call) Textf(format string, args ...any) { fmt.Fprintf(c, format, args...) }

// JSON writes v as the one JSON value of a "json" result (Run.Result =
// ResultJSON). It fails with ErrResultWritten when anything was written
// before.
func (c *Call) JSON(v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("tool: encoding the result: %w", err)
	}
	return c.writeOnce(append(b, '\n'))
}

// Result writes r as the whole result of an "mcp" result (Run.Result =
// ResultMCP). It fails with ErrResultWritten when anything was written
// before. A result with IsError set is how an "mcp" tool reports a failure
// with content of its own; returning an error works too.
func (c *Call) Result(r *codec.CallToolResult) error {
	if r.Content == nil {
		// content is required even when empty.
		cp := *r
		cp.Content = []codec.Content{}
		r = &cp
	}
	b, err := marshal(r)
	if err != nil {
		return fmt.Errorf("tool: encoding the result: %w", err)
	}
	return c.writeOnce(append(b, '\n'))
}

func (c *Call) writeOnce(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wrote {
		return ErrResultWritten
	}
	c.wrote = true
	_, err := c.stdout.Write(b)
	return err
}

// Progress reports progress: done out of total (total <= 0: unknown) with an
// optional message. It writes one line to fd 3 when mcp-route opened it (the
// client asked for progress) and does nothing otherwise; errors are dropped,
// since progress is advice and must never fail a call.
func (c *Call) Progress(done, total float64, message string) {
	if c.progress == nil {
		return
	}
	line := struct {
		Progress float64  `json:"progress"`
		Total    *float64 `json:"total,omitempty"`
		Message  string   `json:"message,omitempty"`
	}{Progress: done, Message: message}
	if total > 0 {
		line.Total = &total
	}
	b, err := marshal(line)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress.Write(append(b, '\n'))
}

// Stderr is the call's stderr, for diagnostics: mcp-route logs it and, when
// the call fails, shows its tail to the caller.
func (c *Call) Stderr() io.Writer { return lockedWriter{&c.mu, c.stderr} }

// Logf writes one line to stderr.
func (c *Call) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !bytes.HasSuffix([]byte(msg), []byte("\n")) {
		msg += "\n"
	}
	io.WriteString(c.Stderr(), msg)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Errorf is fmt.Errorf, so that a handler can fail with a formatted message
// without importing fmt: return tool.Errorf("no such unit %q", u).
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
