package router

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
	"github.com/mcpipe/mcpipe/internal/toolenv"
	"github.com/mcpipe/mcpipe/mcp-route/runner"
	"github.com/mcpipe/mcpipe/mcp-route/surface"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

// Resources, prompts and completion (package mcp-route/surface) are
// served beside the tools when Options.Surface is set: the methods are
// registered on every conversation, the capabilities declared, and the
// executables run as tools do (runSurface: the same process slots,
// environment, confinement, limits and timeout). resources/subscribe
// records the uri for the conversation (the uri must name a resource:
// -32602 otherwise; one a resource template matches is answered and not
// kept: no update is sent for it); a change of the file then sends
// notifications/resources/updated to each conversation that subscribed,
// in a legacy session. Over Streamable HTTP the subscriptions belong to
// the session (its Mcp-Session-Id), kept by the replica that took the
// subscribe, and updates go out on the session's GET stream on that
// replica (the transport drops them on a POST's stream). Sessions are
// stateless tokens, so nothing says when one ends: at most maxSubscribers
// sessions hold subscriptions, and when a new one comes to a full table,
// the subscriber idle longest with no conversation open here (no GET
// stream, no request) loses its subscriptions. A session whose GET
// stream is open, the only one that can receive updates, is never
// evicted; there are at most --http-max-streams of those, fewer than
// maxSubscribers, so sessions made only to subscribe cannot lock others
// out. (2026-07-28 resource subscriptions through subscriptions/listen
// are not served, and resources/subscribe, which that revision lacks, is
// -32601.)

// capabilities is what initialize and server/discover declare.
func (s *Router) capabilities() codec.ServerCapabilities {
	caps := codec.ServerCapabilities{
		Tools: &codec.ToolsCapability{ListChanged: true},
		// Tools log through their channel (channel.go).
		Logging: json.RawMessage(`{}`),
	}
	res, prs := s.hasResources(), s.hasPrompts()
	if res {
		caps.Resources = json.RawMessage(`{"subscribe":true,"listChanged":true}`)
	}
	if prs {
		caps.Prompts = json.RawMessage(`{"listChanged":true}`)
	}
	if res || prs {
		caps.Completions = json.RawMessage(`{}`)
	}
	return caps
}

// hasResources and hasPrompts say which methods are served: those of the
// local surface, and both whenever upstreams are mounted (what they
// declare is known only once they are connected, after ours is).
func (s *Router) hasResources() bool {
	return (s.opts.Surface != nil && s.opts.Surface.HasResources()) || s.hasUpstreams()
}

func (s *Router) hasPrompts() bool {
	return (s.opts.Surface != nil && s.opts.Surface.HasPrompts()) || s.hasUpstreams()
}

func (s *Router) hasUpstreams() bool {
	return s.opts.Upstreams != nil && len(s.opts.Upstreams.Upstreams()) > 0
}

// subscriberOf is who holds conv's resource subscriptions: its Streamable
// HTTP session, whose requests and GET stream are conversations of their
// own (a conn with a SessionID), or else conv itself (stdio).
func subscriberOf(conv *core.Server, conn core.Conn) any {
	if sc, ok := conn.(interface{ SessionID() string }); ok && sc.SessionID() != "" {
		return "session " + sc.SessionID()
	}
	return conv
}

// registerSurface adds the resources, prompts and completion methods.
func (s *Router) registerSurface(conv *core.Server) {
	if s.hasResources() {
		conv.HandleFunc("resources/list", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.listResources(ctx, req, upstream.KindResource) })
		})
		conv.HandleFunc("resources/templates/list", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.listResources(ctx, req, upstream.KindTemplate) })
		})
		conv.HandleFunc("resources/read", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.read(ctx, req) })
		})
		conv.HandleFunc("resources/subscribe", func(ctx context.Context, req *core.Request) (any, error) {
			if codec.IsModernRevision(req.Revision) {
				return nil, legacyOnly(req.Method)
			}
			return s.surfaceWait(ctx, func() (any, error) { return s.subscribe(ctx, conv, req.Params, true) })
		})
		conv.HandleFunc("resources/unsubscribe", func(ctx context.Context, req *core.Request) (any, error) {
			if codec.IsModernRevision(req.Revision) {
				return nil, legacyOnly(req.Method)
			}
			return s.surfaceWait(ctx, func() (any, error) { return s.subscribe(ctx, conv, req.Params, false) })
		})
	}
	if s.hasPrompts() {
		conv.HandleFunc("prompts/list", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.listPrompts(ctx, req) })
		})
		conv.HandleFunc("prompts/get", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.getPrompt(ctx, req) })
		})
	}
	if s.hasResources() || s.hasPrompts() {
		conv.HandleFunc("completion/complete", func(ctx context.Context, req *core.Request) (any, error) {
			return s.surfaceWait(ctx, func() (any, error) { return s.complete(ctx, req) })
		})
	}
}

// legacyOnly refuses a method 2026-07-28 does not have: its resource
// subscriptions go through subscriptions/listen.
func legacyOnly(method string) error {
	return codec.Errorf(codec.CodeMethodNotFound, "method not found: %q (2026-07-28 has no %s; resource subscriptions are not served in that revision yet)", method, method)
}

// surfaceWait runs f once the first load is done. Without polling
// (--poll 0) every request re-reads the directories first, as tools/list
// does, and tells the conversations of a list that changed.
func (s *Router) surfaceWait(ctx context.Context, f func() (any, error)) (any, error) {
	if err := s.waitLoaded(ctx); err != nil {
		return nil, codec.Errorf(codec.CodeInternalError, "canceled: %v", err)
	}
	if s.opts.Poll <= 0 && s.opts.Surface != nil {
		res, prs, upd := s.opts.Surface.Reload()
		if res {
			s.surfaceListChanged(surface.MethodResourcesListChanged)
		}
		if prs {
			s.surfaceListChanged(surface.MethodPromptsListChanged)
		}
		for _, u := range upd {
			s.resourceUpdated(u)
		}
	}
	return f()
}

// subscribe records (on) or drops a resource subscription of conv.
func (s *Router) subscribe(ctx context.Context, conv *core.Server, params json.RawMessage, on bool) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: want {\"uri\": STRING}")
	}
	var up *upstream.Upstream
	var own string
	if on && s.hasUpstreams() && upstream.IsServedURI(*p.URI) {
		u, o, err := s.opts.Upstreams.ResolveURI(ctx, *p.URI)
		if err != nil {
			return nil, clientError(err)
		}
		up, own = u, o
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := s.subscriber[conv]
	if !on {
		delete(s.subs[key], *p.URI)
		if len(s.subs[key]) == 0 {
			delete(s.subs, key)
			delete(s.subsUsed, key)
		}
		return struct{}{}, nil
	}
	if up != nil {
		// Recorded first, then forwarded outside s.mu: the upstream may
		// send its first update before its answer.
		if err := s.record(key, *p.URI); err != nil {
			return nil, err
		}
		s.mu.Unlock()
		_, err := up.Forward(ctx, "resources/subscribe", map[string]string{"uri": own})
		s.mu.Lock()
		if err != nil {
			delete(s.subs[key], *p.URI)
			if len(s.subs[key]) == 0 {
				delete(s.subs, key)
				delete(s.subsUsed, key)
			}
			return nil, clientError(err)
		}
		return struct{}{}, nil
	} else if r, _ := s.localLookup(*p.URI); r == nil {
		e := codec.Errorf(codec.CodeInvalidParams, "Resource not found: %s", codec.QuoteClip(*p.URI, 200))
		e.Data, _ = json.Marshal(map[string]string{"uri": *p.URI})
		return nil, e
	} else if r.URI != *p.URI {
		// A template's URI: no update is ever sent for one (a dynamic
		// resource is made anew at each read), and a client chooses
		// its length, up to a frame: answered, not kept.
		return struct{}{}, nil
	}
	if err := s.record(key, *p.URI); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// record keeps key's subscription to uri, within the bounds. Under s.mu.
func (s *Router) record(key any, uri string) error {
	if s.subs == nil {
		s.subs, s.subsUsed = map[any]map[string]bool{}, map[any]time.Time{}
	}
	if s.subs[key] == nil {
		if len(s.subs) >= maxSubscribers && !s.evictIdleSubscriber() {
			return codec.Errorf(codec.CodeInternalError, "server busy: %d sessions with open streams hold resource subscriptions; try again later", maxSubscribers)
		}
		s.subs[key] = map[string]bool{}
	}
	if len(s.subs[key]) >= maxSubscriptions {
		return codec.Errorf(codec.CodeInvalidParams, "invalid params: %d subscriptions already: unsubscribe first", maxSubscriptions)
	}
	if !s.subs[key][uri] {
		n := len(uri)
		for u := range s.subs[key] {
			n += len(u)
		}
		if n > maxSubscriptionBytes {
			return codec.Errorf(codec.CodeInvalidParams, "invalid params: subscriptions of %d bytes of URIs in all, more than %d: unsubscribe first", n, maxSubscriptionBytes)
		}
	}
	s.subs[key][uri] = true
	s.subsUsed[key] = time.Now()
	return nil
}

// evictIdleSubscriber drops the subscriptions of the subscriber that
// subscribed least recently among those with no conversation being served
// (see the doc above); false when every subscriber has one. s.mu is held.
func (s *Router) evictIdleSubscriber() bool {
	live := make(map[any]bool, len(s.subscriber))
	for _, key := range s.subscriber {
		live[key] = true
	}
	var oldest any
	var at time.Time
	for key := range s.subs {
		if live[key] {
			continue
		}
		if t := s.subsUsed[key]; oldest == nil || t.Before(at) {
			oldest, at = key, t
		}
	}
	if oldest == nil {
		return false
	}
	delete(s.subs, oldest)
	delete(s.subsUsed, oldest)
	return true
}

// maxSubscriptions bounds one subscriber's resource subscriptions,
// maxSubscriptionBytes the bytes of their URIs (an upstream's URI is the
// client's to choose, up to upstream.MaxURI: 1024 of 4 KB for each of
// maxSubscribers would be 16 GiB), and maxSubscribers the subscribers.
const (
	maxSubscriptions     = 1024
	maxSubscriptionBytes = 64 << 10
	maxSubscribers       = 4096
)

// resourceUpdated sends notifications/resources/updated to every
// conversation subscribed to uri.
func (s *Router) resourceUpdated(uri string) {
	s.mu.Lock()
	var convs []*core.Server
	for c, key := range s.subscriber {
		if s.subs[key][uri] {
			convs = append(convs, c)
		}
	}
	s.mu.Unlock()
	for _, c := range convs {
		c.Notify(surface.MethodResourcesUpdated, map[string]string{"uri": uri})
	}
}

// surfaceListChanged tells every conversation that a list changed.
func (s *Router) surfaceListChanged(method string) {
	s.mu.Lock()
	convs := slices.Collect(maps.Keys(s.convs))
	s.mu.Unlock()
	for _, c := range convs {
		c.ListChanged(method)
	}
}

// watchSurface loads the resources and prompts, then polls them with the
// tool directories' interval.
func (s *Router) watchSurface(ctx context.Context) {
	sf := s.opts.Surface
	if sf == nil {
		return
	}
	sf.Reload()
	if s.opts.Poll > 0 {
		s.watch.Add(1)
		go func() {
			defer s.watch.Done()
			sf.Watch(ctx, s.opts.Poll, s.surfaceListChanged, s.resourceUpdated)
		}()
	}
}

// runSurface runs a resource's, prompt's or completion's executable as a
// tool call runs: a process slot, the tools' environment (MCP_ARG_* from
// stdin's object, plus env), --root, the confinement, the limits, the
// timeout and the output cap.
func (s *Router) runSurface(ctx context.Context, path string, argv []string, stdin []byte, env map[string]string, rev string) ([]byte, string) {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return nil, "canceled"
	}
	e := toolenv.Call{Root: s.opts.Root, ProtocolVersion: rev, Lookup: s.opts.LookupEnv, Args: stdin, Env: env}.Build(s.opts.Env)
	e = slices.DeleteFunc(e, func(kv string) bool { return len(kv) >= 9 && kv[:9] == "MCP_TOOL=" })
	spec := runner.Spec{
		Path: path, Args: argv, Dir: s.opts.Root, Env: e, Stdin: stdin,
		Timeout: s.opts.Timeout, Grace: s.opts.Grace, MaxOutput: s.opts.MaxOutput,
		Spawn: s.opts.Spawn, Limits: s.opts.Limits,
	}
	start := time.Now()
	res := runner.Run(ctx, spec)
	if !res.OK() {
		failure := res.Failure()
		if res.Canceled && errors.Is(context.Cause(ctx), core.ErrShutdown) {
			failure = "canceled: server shutting down"
		}
		s.opts.Logger.Warn("resource or prompt program failed", slog.String("path", path), slog.Duration("elapsed", time.Since(start).Round(time.Millisecond)), slog.String("error", failure))
		return nil, failure
	}
	return res.Stdout, ""
}
