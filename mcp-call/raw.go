package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-call/client"
)

// raw sends stdin's non-blank lines to the server exactly as they are (only
// the line ending becomes "\n"), with no handshake and nothing answered on
// the user's behalf, and prints every frame the server writes. A line that
// is not JSON, or not valid JSON-RPC, is sent too: raw is how one tests what
// a server does with a bad frame. Only lines that decode as requests with an
// id await an answer; notifications and undecodable lines await nothing, but
// whatever the server answers to them is printed like everything else.
// After stdin ends it waits (up to --timeout) until every request it sent has
// an answer, then closes the server's stdin and prints whatever else the
// server writes before it exits.
//
// Status: 0 when every request got an answer (error answers are data here);
// 2 for a server line that is not JSON-RPC (it is reported, and printed when
// it is JSON) or a stdin line over the frame limit (not sent); 3 when the
// server could not be started, went away with requests unanswered, or the
// wait timed out.
func (s *session) raw(ctx context.Context, cmd client.Command) int {
	p, err := client.Start(cmd)
	if err != nil {
		return s.fail(err)
	}
	defer p.Stop()

	var (
		mu      sync.Mutex
		worst   int
		pending = map[string]bool{}
		changed = make(chan struct{}, 1)
	)
	setWorst := func(c int) {
		mu.Lock()
		worst = max(worst, c)
		mu.Unlock()
	}
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}

	out := codec.NewWriter(s.stdout)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r := codec.NewReader(p.Stdout(), 0)
		for {
			f, err := r.ReadFrame()
			if errors.Is(err, codec.ErrFrameTooLarge) {
				s.errorf("server stdout line %d: %v", r.Line(), err)
				setWorst(exitProtocol)
				continue
			}
			if err != nil {
				return
			}
			if !json.Valid(f) {
				s.errorf("server stdout line %d: not JSON: %.80q", r.Line(), f)
				setWorst(exitProtocol)
				continue
			}
			if err := out.WriteFrame(f); err != nil {
				s.errorf("writing stdout: %v", err)
				setWorst(exitProtocol)
			}
			msgs, _, derr := codec.DecodeFrame(f, true)
			if derr != nil {
				s.errorf("server stdout line %d: %v", r.Line(), derr)
				setWorst(exitProtocol)
			}
			for _, m := range msgs {
				if m.IsResponse() && m.ID != nil {
					mu.Lock()
					delete(pending, m.ID.Key())
					mu.Unlock()
					poke()
				}
			}
		}
	}()

	in := codec.NewReader(s.stdin, 0)
	w := p.Stdin() // lines go as they are: no codec.Writer, which compacts
	for {
		f, err := in.ReadFrame()
		if errors.Is(err, codec.ErrFrameTooLarge) {
			s.errorf("stdin line %d: %v", in.Line(), err)
			setWorst(exitProtocol)
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.errorf("reading stdin: %v", err)
			setWorst(exitProtocol)
			break
		}
		// Requests are tracked even when the frame has other faults: the
		// server owes them an answer either way. A line that is not JSON
		// decodes to no messages and awaits nothing.
		msgs, _, _ := codec.DecodeFrame(f, true)
		mu.Lock()
		for _, m := range msgs {
			if m.IsRequest() {
				pending[m.ID.Key()] = true
			}
		}
		mu.Unlock()
		if _, err := w.Write(append(f, '\n')); err != nil {
			s.errorf("server stdin: %v (server %s)", err, p.State())
			setWorst(exitServer)
			break
		}
	}

	var deadline <-chan time.Time
	if s.opts.timeout > 0 {
		t := time.NewTimer(s.opts.timeout)
		defer t.Stop()
		deadline = t.C
	}
wait:
	for {
		mu.Lock()
		n := len(pending)
		mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-changed:
		case <-readerDone:
			s.errorf("server closed its stdout with %d request(s) unanswered (server %s)", n, p.State())
			setWorst(exitServer)
			break wait
		case <-deadline:
			s.errorf("%s", timeoutMessage(fmt.Sprintf("no answer to %d request(s)", n), s.opts.timeout))
			setWorst(exitServer)
			break wait
		case <-ctx.Done():
			s.errorf("interrupted with %d request(s) unanswered", n)
			setWorst(exitServer)
			break wait
		}
	}
	// Let the server finish writing and exit on its own before Stop, which
	// closes our end of its stdout and would drop unread lines.
	p.Stdin().Close()
	select {
	case <-readerDone:
	case <-time.After(client.DefaultGrace):
	case <-ctx.Done():
	}
	p.Stop()
	<-readerDone
	mu.Lock()
	defer mu.Unlock()
	return worst
}
