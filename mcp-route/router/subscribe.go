package router

import (
	"encoding/json"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// subscriptions/listen (2026-07-28): how a modern client hears about tool
// list changes, since it has no session to receive unsolicited
// notifications on.
//
//   - A listen request first gets notifications/subscriptions/acknowledged
//     naming what is honoured: toolsListChanged when asked for, nothing
//     else (this server has no prompts or resources; those requests are
//     left out of the acknowledgement, as the schema says).
//   - Then every change of the advertised tool list sends
//     notifications/tools/list_changed with _meta subscriptionId = the
//     listen id, to every open subscription that asked for tool changes.
//   - The listen request stays open. At shutdown (input closed, ctx done)
//     it is answered {resultType: "complete", _meta: {subscriptionId}}
//     before the pending calls are waited for. A notifications/cancelled
//     for its id ends it with nothing more sent for that id.
//   - A listen that asks for nothing this server honours is acknowledged
//     (with an empty filter) and answered at once: there is nothing to
//     keep open for (the official Go SDK server does the same).
//
// Open subscriptions are kept apart from pending calls (server.inflight),
// whose count is the call queue's: a listen whose id is that of a pending
// call or another open listen is refused (-32600). In a legacy session (no
// modern _meta) the method does not exist: -32601. Limit: inside a
// 2025-03-26 JSON-RPC batch a modern listen holds back the batch's answer
// until the subscription ends (a batch is answered as one array).

// subscriptions holds the open subscriptions of one Serve call.
type subscriptions struct {
	// mu is held while a subscription's message is written, so that once
	// a subscription is taken out of open, nothing more goes out for it.
	mu   sync.Mutex
	open map[string]*subscription // by codec.ID.Key
}

// subscription is an open subscriptions/listen request that asked for tool
// list changes.
type subscription struct {
	id    codec.ID
	ok    func(any)            // answers the listen request (decorated for its revision)
	reply func(*codec.Message) // reply(nil): the request is done, send nothing
}

// listen handles subscriptions/listen. reply (through ok or directly) is
// called once: at once for a refused or empty listen, else when the
// subscription ends.
func (s *server) listen(rev string, id codec.ID, params json.RawMessage, ok func(any), fail func(*codec.Error), reply func(*codec.Message)) {
	if !codec.IsModernRevision(rev) {
		fail(codec.Errorf(codec.CodeMethodNotFound, "method not found: %q (a %s request: send _meta[%q])",
			codec.MethodSubscriptionsListen, codec.FirstModernRevision, codec.MetaProtocolVersion))
		return
	}
	p, perr := codec.ParseSubscriptionsListenParams(params)
	if perr != nil {
		fail(perr)
		return
	}
	honoured := codec.SubscriptionFilter{ToolsListChanged: p.Notifications.ToolsListChanged}
	key := id.Key()
	// Only the read loop, which runs this, adds pending calls: none can
	// take the id between this check and the registration below.
	s.mu.Lock()
	_, dup := s.inflight[key]
	s.mu.Unlock()
	ack, err := codec.NewSubscriptionAck(id, honoured)
	if err != nil {
		fail(codec.Errorf(codec.CodeInternalError, "internal error: %v", err))
		return
	}
	keep := !honoured.Empty()
	// The acknowledgement and the registration happen under subs.mu: no
	// list_changed for this id can go out before its acknowledgement.
	s.subs.mu.Lock()
	if _, open := s.subs.open[key]; dup || open {
		s.subs.mu.Unlock()
		fail(codec.Errorf(codec.CodeInvalidRequest, "invalid request: id %s is already in use by a pending request", id))
		return
	}
	s.write(ack)
	if keep {
		if s.subs.open == nil {
			s.subs.open = map[string]*subscription{}
		}
		s.subs.open[key] = &subscription{id: id, ok: ok, reply: reply}
	}
	s.subs.mu.Unlock()
	if !keep {
		s.opts.Debugf("subscription %s: nothing this server can notify of (asked for %s)", id, clip(filterJSON(p.Notifications)))
		ok(codec.NewSubscriptionsListenResult(id))
		return
	}
	s.opts.Debugf("subscription %s: open (tools list changes)", id)
}

// filterJSON is the filter as JSON, for the log.
func filterJSON(f *codec.SubscriptionFilter) []byte {
	b, _ := codec.Marshal(f)
	return b
}

// toolsChanged sends notifications/tools/list_changed on every open
// subscription.
func (s *server) toolsChanged() {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	for _, sub := range s.subs.open {
		m, err := codec.NewSubscriptionNotification(sub.id, codec.MethodToolsListChanged)
		if err == nil {
			s.write(m)
		}
	}
}

// take removes the subscription with the given key; nil when it is not
// open (never was, or already ended).
func (s *server) take(key string) *subscription {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	sub := s.subs.open[key]
	delete(s.subs.open, key)
	return sub
}

// cancelSubscription ends the subscription a notifications/cancelled names:
// nothing more is sent for its id, not even an answer. It reports whether
// there was one.
func (s *server) cancelSubscription(id codec.ID, reason string) bool {
	sub := s.take(id.Key())
	if sub == nil {
		return false
	}
	s.opts.Debugf("subscription %s: cancelled by the client: %s", sub.id, reason)
	sub.reply(nil)
	return true
}

// endSubscriptions answers every open subscription: the server is shutting
// down and will send no more notifications.
func (s *server) endSubscriptions() {
	s.subs.mu.Lock()
	keys := make([]string, 0, len(s.subs.open))
	for k := range s.subs.open {
		keys = append(keys, k)
	}
	s.subs.mu.Unlock()
	for _, k := range keys {
		if sub := s.take(k); sub != nil {
			s.opts.Debugf("subscription %s: ended (server shutting down)", sub.id)
			sub.ok(codec.NewSubscriptionsListenResult(sub.id))
		}
	}
}
