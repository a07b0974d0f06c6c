// Package servertest serves one MCP conversation over in-memory pipes, for
// the tests of a server (codec/server's core, mcp-route's router): the
// test sends lines, the server's lines arrive one frame at a time, and
// every log record is kept.
//
// Every wait is bounded by Wait, so a hung server fails the test instead
// of hanging it. The test's cleanup closes the input, waits for the server
// to return and, when the test failed, logs what the server logged.
package servertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// Wait bounds every wait for the server.
const Wait = 15 * time.Second

// Log keeps the messages of the records a server logs, "debug: " before
// the routine ones (below Info), so a test can tell what a quiet server
// would show. It is safe for concurrent use.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Logf adds a line.
func (l *Log) Logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// Lines returns a copy of the lines so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Logger returns a logger whose records go to l.
func (l *Log) Logger() *slog.Logger { return slog.New(handler{l}) }

type handler struct{ log *Log }

func (h handler) Enabled(context.Context, slog.Level) bool { return true }
func (h handler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h handler) WithGroup(string) slog.Handler            { return h }

// Handle adds the record as one line: "debug: " for a routine event
// (Debug), the message, then " key=value" per attribute, unquoted.
func (h handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if r.Level < slog.LevelInfo {
		b.WriteString("debug: ")
	}
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.log.Logf("%s", b.String())
	return nil
}

// Pipe is a running conversation.
type Pipe struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan []byte
	done  chan error // holds serve's error once it returned
}

// Start runs serve with the conversation's input and output in a goroutine
// until it returns; log is printed by the cleanup when the test failed.
func Start(t *testing.T, log *Log, serve func(in io.Reader, out io.Writer) error) *Pipe {
	t.Helper()
	p := &Pipe{t: t, lines: make(chan []byte, 100), done: make(chan error, 1)}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p.in = inW
	go func() {
		p.done <- serve(inR, outW)
		outW.Close()
	}()
	go func() {
		r := codec.NewReader(outR, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(p.lines)
				return
			}
			p.lines <- l
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		if _, ok := p.wait(); !ok {
			t.Error("the server did not return after its input closed")
		}
		if t.Failed() && log != nil {
			t.Logf("server log:\n%s", strings.Join(log.Lines(), "\n"))
		}
	})
	return p
}

// Send writes each line, with its newline.
func (p *Pipe) Send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.in, l+"\n"); err != nil {
			p.t.Fatalf("send: %v", err)
		}
	}
}

// Recv returns the next line the server wrote; the test fails when the
// output ends or no line comes within Wait.
func (p *Pipe) Recv() []byte {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the server's output ended")
		}
		return l
	case <-time.After(Wait):
		p.t.Fatal("no line from the server")
		return nil
	}
}

// CloseAndDrain closes the input and returns every line the server writes
// until its output ends.
func (p *Pipe) CloseAndDrain() [][]byte {
	p.t.Helper()
	p.in.Close()
	var out [][]byte
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return out
			}
			out = append(out, l)
		case <-time.After(Wait):
			p.t.Fatal("the server's output did not end")
		}
	}
}

// Wait returns what serve returned, failing the test when it does not
// return within Wait.
func (p *Pipe) Wait() error {
	p.t.Helper()
	err, ok := p.wait()
	if !ok {
		p.t.Fatal("the server did not return")
	}
	return err
}

func (p *Pipe) wait() (error, bool) {
	select {
	case err := <-p.done:
		p.done <- err // for the next wait
		return err, true
	case <-time.After(Wait):
		return nil, false
	}
}
