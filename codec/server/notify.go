package server

import "github.com/mcpipe/mcpipe/codec"

// Notify sends a notification that belongs to no request, such as
// notifications/resources/updated, to an initialized legacy session; it
// reports whether it was sent. A modern (2026-07-28) conversation has no
// channel for it outside subscriptions/listen, a session not yet
// initialized must not get it, and after Closing nothing is sent.
func (s *Server) Notify(method string, params any) bool {
	select {
	case <-s.closing:
		return false
	default:
	}
	if !s.sess.Initialized() {
		return false
	}
	m, err := codec.NewNotification(method, params)
	if err != nil {
		return false
	}
	return s.write(m) == nil
}
