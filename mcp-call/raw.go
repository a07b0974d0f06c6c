package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
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

// rawHTTP is raw over --url: each non-blank stdin line is one POST, in
// order (a legacy initialize has to settle the session before the next
// line can use it), and every JSON message of each answer is printed: the
// body, or each SSE event. An error status without JSON is reported on
// stderr (2); a request whose answer holds no response to it, or a server
// that cannot be reached, is 3, as over stdio. --timeout bounds each POST.
func (s *session) rawHTTP(ctx context.Context, hopts client.HTTPOptions) int {
	r, err := client.NewRawHTTP(s.opts.url, hopts)
	if err != nil {
		return s.fail(usagef("%v", err))
	}
	defer r.Close()
	worst := exitOK
	out := codec.NewWriter(s.stdout)
	in := codec.NewReader(s.stdin, 0)
	for {
		f, err := in.ReadFrame()
		if errors.Is(err, codec.ErrFrameTooLarge) {
			s.errorf("stdin line %d: %v", in.Line(), err)
			worst = max(worst, exitProtocol)
			continue
		}
		if errors.Is(err, io.EOF) {
			return worst
		}
		if err != nil {
			s.errorf("reading stdin: %v", err)
			return max(worst, exitProtocol)
		}
		var want *codec.ID
		if msgs, _, _ := codec.DecodeFrame(f, true); len(msgs) == 1 && msgs[0].IsRequest() {
			want = msgs[0].ID
		}
		rctx, cancel := s.reqCtx(ctx)
		ans, err := r.Post(rctx, f)
		cancel()
		answered := false
		if ans != nil {
			for _, m := range ans.Messages {
				if err := out.WriteFrame(m); err != nil {
					s.errorf("writing stdout: %v", err)
					worst = max(worst, exitProtocol)
				}
				msgs, _, derr := codec.DecodeFrame(m, true)
				if derr != nil {
					s.errorf("stdin line %d: HTTP answer: %v", in.Line(), derr)
					worst = max(worst, exitProtocol)
				}
				for _, msg := range msgs {
					if want != nil && msg.IsResponse() && msg.ID != nil && msg.ID.Key() == want.Key() {
						answered = true
					}
				}
			}
			if ans.Status/100 == 3 {
				s.errorf("stdin line %d: HTTP %d %s: redirect to %.200q not followed (give the endpoint's own URL)", in.Line(), ans.Status, http.StatusText(ans.Status), ans.Location)
				worst = max(worst, exitProtocol)
			} else if ans.Body != "" || (ans.Status >= 400 && len(ans.Messages) == 0) {
				s.errorf("stdin line %d: HTTP %d %s: %s", in.Line(), ans.Status, http.StatusText(ans.Status), strings.Join(strings.Fields(ans.Body), " "))
				worst = max(worst, exitProtocol)
			}
		}
		switch {
		case err != nil:
			s.errorf("stdin line %d: %s", in.Line(), describeErr(err, s.opts.timeout))
			worst = max(worst, exitCode(err))
			if errors.Is(err, client.ErrUnreachable) || ctx.Err() != nil {
				return worst
			}
		case want != nil && !answered && ans.Status < 400 && ans.Status/100 != 3:
			s.errorf("stdin line %d: the HTTP answer (status %d) holds no response to request %s", in.Line(), ans.Status, want)
			worst = max(worst, exitServer)
		}
	}
}
