package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// subscriptions/listen (2026-07-28): how a modern client hears about list
// changes, having no session to receive unsolicited notifications on.
//
//   - A listen request first gets notifications/subscriptions/acknowledged
//     naming what is honoured: the list changes the server's capabilities
//     declare (listChanged), of those asked for; nothing else (resource
//     subscriptions are left out of the acknowledgement, as the schema
//     says).
//   - Then every ListChanged of a method it asked for sends that
//     notification with _meta subscriptionId = the listen id.
//   - The listen request stays open, in flight. At shutdown it is answered
//     {resultType: "complete", _meta: {subscriptionId}} before the
//     requests in flight are waited for. A notifications/cancelled for its
//     id ends it with nothing more sent for that id.
//   - A listen that asks for nothing honoured is acknowledged (with an
//     empty filter) and answered at once: there is nothing to keep open
//     for (the official Go SDK server does the same).
//
// A listen whose id is that of a request in flight is refused (-32600). In
// a legacy session (no modern _meta) the method does not exist: -32601.
// Limit: inside a 2025-03-26 JSON-RPC batch a modern listen holds back the
// batch's answer until the subscription ends (a batch is answered as one
// array).

// subscriptions holds the open subscriptions of a conversation.
type subscriptions struct {
	// mu is held while a subscription's message is written, so that once
	// a subscription is taken out of open, nothing more goes out for it.
	mu   sync.Mutex
	open map[string]*subscription // by codec.ID.Key
}

type subscription struct {
	req    *Request
	filter codec.SubscriptionFilter // what is honoured
}

// listen serves subscriptions/listen on the read loop: the acknowledgement
// and the registration happen in arrival order, so a change found by a
// request read after the listen is told to it.
func (s *Server) listen(req *Request) {
	if !codec.IsModernRevision(req.Revision) {
		s.respond(req, nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: %q (a %s request: send _meta[%q])",
			codec.MethodSubscriptionsListen, codec.FirstModernRevision, codec.MetaProtocolVersion))
		return
	}
	p, perr := codec.ParseSubscriptionsListenParams(req.Params)
	if perr != nil {
		s.respond(req, nil, perr)
		return
	}
	caps := s.opts.Capabilities
	honoured := codec.SubscriptionFilter{
		ToolsListChanged:     p.Notifications.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged,
		PromptsListChanged:   p.Notifications.PromptsListChanged && declaresListChanged(caps.Prompts),
		ResourcesListChanged: p.Notifications.ResourcesListChanged && declaresListChanged(caps.Resources),
	}
	ack, err := codec.NewSubscriptionAck(req.ID, honoured)
	if err != nil {
		s.respond(req, nil, err)
		return
	}
	if honoured.Empty() {
		s.mu.Lock()
		_, dup := s.inflight[req.ID.Key()]
		s.mu.Unlock()
		if dup {
			s.respond(req, nil, codec.Errorf(codec.CodeInvalidRequest, "invalid request: id %s is already in use by a pending request", req.ID))
			return
		}
		s.write(ack)
		s.opts.Logger.Debug("subscription: nothing this server can notify of", slog.String("id", req.ID.Value()), slog.String("asked", clip(filterJSON(p.Notifications))))
		s.respond(req, codec.NewSubscriptionsListenResult(req.ID), nil)
		return
	}
	// In flight until cancelled (no answer) or answered at shutdown.
	wait := Method{Handler: func(ctx context.Context, _ *Request) (any, error) {
		<-ctx.Done()
		return nil, ErrNoResponse
	}}
	if !s.start(req, wait) {
		return
	}
	// Under subs.mu: no list change for this id goes out before its
	// acknowledgement.
	s.subs.mu.Lock()
	s.write(ack)
	if s.subs.open == nil {
		s.subs.open = map[string]*subscription{}
	}
	s.subs.open[req.ID.Key()] = &subscription{req: req, filter: honoured}
	s.subs.mu.Unlock()
	s.opts.Logger.Debug("subscription open", slog.String("id", req.ID.Value()), slog.String("filter", string(filterJSON(&honoured))))
}

// declaresListChanged reports whether a raw capability object (prompts,
// resources) has "listChanged": true.
func declaresListChanged(raw json.RawMessage) bool {
	var c struct {
		ListChanged bool `json:"listChanged"`
	}
	return len(bytes.TrimSpace(raw)) > 0 && json.Unmarshal(raw, &c) == nil && c.ListChanged
}

// filterJSON is the filter as JSON, for the log.
func filterJSON(f *codec.SubscriptionFilter) []byte {
	b, _ := codec.Marshal(f)
	return b
}

// The list_changed notifications of prompts and resources (codec names
// only the tools one: mcpipe serves tools).
const (
	methodPromptsListChanged   = "notifications/prompts/list_changed"
	methodResourcesListChanged = "notifications/resources/list_changed"
)

// notifySubscriptions sends method on every open subscription that asked
// for it.
func (s *Server) notifySubscriptions(method string) {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	for _, sub := range s.subs.open {
		f := sub.filter
		if method == codec.MethodToolsListChanged && f.ToolsListChanged ||
			method == methodPromptsListChanged && f.PromptsListChanged ||
			method == methodResourcesListChanged && f.ResourcesListChanged {
			if m, err := codec.NewSubscriptionNotification(sub.req.ID, method); err == nil {
				s.write(m)
			}
		}
	}
}

// takeSubscription removes the subscription with the given key; nil when
// it is not open.
func (s *Server) takeSubscription(key string) *subscription {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	sub := s.subs.open[key]
	delete(s.subs.open, key)
	return sub
}

// endSubscriptions answers every open subscription: the conversation is
// over and will carry no more notifications.
func (s *Server) endSubscriptions() {
	s.subs.mu.Lock()
	keys := make([]string, 0, len(s.subs.open))
	for k := range s.subs.open {
		keys = append(keys, k)
	}
	s.subs.mu.Unlock()
	for _, k := range keys {
		if sub := s.takeSubscription(k); sub != nil {
			s.opts.Logger.Debug("subscription ended: server shutting down", slog.String("id", sub.req.ID.Value()))
			s.respond(sub.req, codec.NewSubscriptionsListenResult(sub.req.ID), nil)
			sub.req.cancel(ErrShutdown)
		}
	}
}
