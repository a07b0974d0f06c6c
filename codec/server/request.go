package server

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// Request is one client request being served. Its exported fields are
// read-only.
type Request struct {
	ID       codec.ID
	Method   string
	Params   json.RawMessage
	Revision string // the revision that applies (codec.Session.Classify)

	srv       *Server
	reply     func(*codec.Message)
	once      sync.Once
	cancel    context.CancelCauseFunc // nil for a request answered on the read loop
	cancelled bool                    // by the client; under srv.mu
}

// ProgressToken returns params._meta.progressToken when the request
// carries one.
func (r *Request) ProgressToken() (json.RawMessage, bool) {
	m, err := codec.ParseRequestMeta(r.Params)
	if err != nil || m == nil || len(m.ProgressToken) == 0 {
		return nil, false
	}
	return m.ProgressToken, true
}

// Progress sends notifications/progress for the request with its progress
// token; it does nothing when the request has no token or was cancelled.
func (r *Request) Progress(p codec.ProgressParams) error {
	token, ok := r.ProgressToken()
	if !ok {
		return nil
	}
	p.ProgressToken = token
	return r.Notify(codec.MethodProgress, p)
}

// Notify sends a notification on behalf of the request, unless the client
// cancelled it.
func (r *Request) Notify(method string, params any) error {
	m, err := codec.NewNotification(method, params)
	if err != nil {
		return err
	}
	s := r.srv
	s.mu.Lock()
	cancelled := r.cancelled
	s.mu.Unlock()
	if cancelled {
		return nil
	}
	return s.write(m)
}

// Call sends a request to the client and returns its response (a result
// or an error response). It returns ctx's cause when ctx is done first, and
// ErrClosed when the conversation stops reading. It needs a client that
// accepts requests from the server: a legacy session on a two-way
// transport; otherwise it returns ErrNoBackChannel (see ask.go).
func (r *Request) Call(ctx context.Context, method string, params any) (*codec.Message, error) {
	s := r.srv
	ch := make(chan *codec.Message, 1)
	id := nextOutgoingID()
	s.mu.Lock()
	s.outgoing[id.Key()] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.outgoing, id.Key())
		s.mu.Unlock()
	}()
	m, err := codec.NewRequest(id, method, params)
	if err != nil {
		return nil, err
	}
	if err := s.conn.Write(s.writeCtx, m); err != nil {
		if !errors.Is(err, ErrNoBackChannel) {
			s.writeFailed(err)
		}
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-s.closing:
		return nil, ErrClosed
	}
}
