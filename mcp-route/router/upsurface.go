package router

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
	"github.com/mcpipe/mcpipe/mcp-route/surface"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

// The resources, resource templates and prompts of upstreams (package
// mcp-route/upstream) are served beside the local ones: lists merged,
// sorted and paginated alike; a uri in the upstream scheme
// (mcp-upstream://NAME/URI) and a prompt named NAME__PROMPT go to that
// upstream, with the upstream's own uri or name. A local resource whose
// uri is in the upstream scheme is left out (it could not be read), and a
// prompt name both a local prompt and an upstream's claim is served by
// neither, as for tools.

// listed is one item of a merged list: its key and its definition.
type listed struct {
	key string
	def any
}

// localLookup is the local resource or template that serves uri.
func (s *Router) localLookup(uri string) (*surface.Resource, map[string]string) {
	if s.opts.Surface == nil || !s.opts.Surface.HasResources() {
		return nil, nil
	}
	return s.opts.Surface.Lookup(uri)
}

// clientError is an error for the client: a *codec.Error as it is, else
// -32602 with its text (ParseURI's and ResolveURI's refusals).
func clientError(err error) error {
	var rpc *codec.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	return codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
}

// listResources answers resources/list and resources/templates/list.
func (s *Router) listResources(ctx context.Context, req *core.Request, kind string) (any, error) {
	sf := s.opts.Surface
	if !s.hasUpstreams() {
		if kind == upstream.KindTemplate {
			return sf.ListTemplates(req.Params, req.Revision)
		}
		return sf.ListResources(req.Params, req.Revision)
	}
	var all []listed
	if sf != nil {
		res, tmpl, _ := sf.Listed()
		local := res
		if kind == upstream.KindTemplate {
			local = tmpl
		}
		for _, r := range local {
			key := r.URI
			if kind == upstream.KindTemplate {
				key = r.URITemplate
			}
			if upstream.IsServedURI(key) {
				s.warnOnce("local "+key, "resource left out: its uri is in the scheme of the upstreams' resources, where it could not be read",
					slog.String("uri", codec.Clip(key, 200)), slog.String("scheme", upstream.Scheme))
				continue
			}
			all = append(all, listed{key, r})
		}
	}
	for _, it := range s.opts.Upstreams.Surface(ctx, kind) {
		if it.Withheld() == "" {
			all = append(all, listed{it.Listed, it.Def})
		}
	}
	member := "resources"
	if kind == upstream.KindTemplate {
		member = "resourceTemplates"
	}
	return s.page(req, all, member)
}

// listPrompts answers prompts/list.
func (s *Router) listPrompts(ctx context.Context, req *core.Request) (any, error) {
	sf := s.opts.Surface
	if !s.hasUpstreams() {
		return sf.ListPrompts(req.Params, req.Revision)
	}
	var all []listed
	local := map[string]bool{}
	if sf != nil && sf.HasPrompts() {
		_, _, prs := sf.Listed()
		for _, p := range prs {
			local[p.Name] = true
			all = append(all, listed{p.Name, p})
		}
	}
	for _, it := range s.opts.Upstreams.Surface(ctx, upstream.KindPrompt) {
		if it.Withheld() != "" {
			continue
		}
		if local[it.Listed] {
			s.warnOnce("prompt "+it.Listed, "prompt left out: a local prompt and an upstream's are named so; neither is served until one is renamed",
				slog.String("prompt", it.Listed), slog.String("upstream", it.Upstream.Name()), slog.String("upstream_prompt", codec.Clip(it.Own, 100)))
			all = slices.DeleteFunc(all, func(l listed) bool { return l.key == it.Listed })
			continue
		}
		all = append(all, listed{it.Listed, it.Def})
	}
	return s.page(req, all, "prompts")
}

// page sorts all by key and answers the page after the request's cursor,
// the way the local lists page.
func (s *Router) page(req *core.Request, all []listed, member string) (any, error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(req.Params) > 0 && string(req.Params) != "null" {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	slices.SortStableFunc(all, func(a, b listed) int { return strings.Compare(a.key, b.key) })
	start := 0
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		after, ok := strings.CutPrefix(string(b), cursorPrefix)
		if err != nil || !ok {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown cursor %q", p.Cursor)
		}
		start, _ = slices.BinarySearchFunc(all, after, func(l listed, k string) int { return strings.Compare(l.key, k) })
		for start < len(all) && all[start].key == after {
			start++
		}
	}
	end := min(start+s.opts.PageSize, len(all))
	items := make([]any, 0, end-start)
	for _, l := range all[start:end] {
		items = append(items, l.def)
	}
	res := map[string]any{member: items}
	if end < len(all) {
		res["nextCursor"] = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + all[end-1].key))
	}
	if s.opts.Surface != nil {
		c := s.opts.Surface.CacheFor(req.Revision)
		if c.TTLMs != nil {
			res["ttlMs"], res["cacheScope"] = *c.TTLMs, c.CacheScope
		}
	} else if codec.IsModernRevision(req.Revision) {
		res["ttlMs"], res["cacheScope"] = int64(0), codec.CacheScopePublic
	}
	return res, nil
}

// read answers resources/read: an upstream's uri is forwarded, the
// contents' uris put back under the upstream scheme.
func (s *Router) read(ctx context.Context, req *core.Request) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.URI == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: want {\"uri\": STRING}")
	}
	if !s.hasUpstreams() || !upstream.IsServedURI(*p.URI) {
		if s.opts.Surface == nil || !s.opts.Surface.HasResources() {
			e := codec.Errorf(codec.CodeInvalidParams, "Resource not found: %s", codec.QuoteClip(*p.URI, 200))
			e.Data, _ = json.Marshal(map[string]string{"uri": *p.URI})
			return nil, e
		}
		return s.opts.Surface.Read(ctx, req.Params, req.Revision)
	}
	u, own, err := s.opts.Upstreams.ResolveURI(ctx, *p.URI)
	if err != nil {
		return nil, clientError(err)
	}
	raw, err := u.Forward(ctx, "resources/read", withMember(req.Params, "uri", own))
	if err != nil {
		return nil, err
	}
	out, err := u.RewriteContents(raw)
	if err != nil {
		return nil, err
	}
	return fitForwarded(out, req.Revision, true), nil
}

// fitForwarded makes an upstream's result the client's revision's: the
// upstream's own resultType, ttlMs and cacheScope (of its revision, not
// the client's) are dropped (the core puts resultType in), and a read for
// a 2026-07-28 client says it may not be cached (what the upstream's
// resource holds is the upstream's to change at any time).
func fitForwarded(raw json.RawMessage, rev string, read bool) json.RawMessage {
	m, ok := codec.Members(raw)
	if !ok {
		return raw
	}
	delete(m, "resultType")
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	if read && codec.IsModernRevision(rev) {
		m["ttlMs"], m["cacheScope"] = json.RawMessage("0"), json.RawMessage(`"`+codec.CacheScopePrivate+`"`)
	}
	b, _ := json.Marshal(m)
	return b
}

// getPrompt answers prompts/get: NAME__PROMPT is forwarded as PROMPT.
func (s *Router) getPrompt(ctx context.Context, req *core.Request) (any, error) {
	var p struct {
		Name *string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	if p.Name == nil || !s.hasUpstreams() || !s.opts.Upstreams.IsUpstreamPrompt(*p.Name) {
		if s.opts.Surface == nil || !s.opts.Surface.HasPrompts() {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown prompt %s", codec.QuoteClip(deref(p.Name), 200))
		}
		return s.opts.Surface.Get(ctx, req.Params, req.Revision)
	}
	it := s.opts.Upstreams.LookupPrompt(ctx, *p.Name)
	switch {
	case it == nil:
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown prompt %s: its upstream does not list it", codec.QuoteClip(*p.Name, 200))
	case it.Withheld() != "":
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: prompt %s is withheld: %s", *p.Name, it.Withheld())
	}
	if s.opts.Surface != nil && s.opts.Surface.HasPrompts() {
		if _, _, prs := s.opts.Surface.Listed(); slices.ContainsFunc(prs, func(d surface.PromptDef) bool { return d.Name == *p.Name }) {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: both a local prompt and upstream %s's prompt %q are named %s; neither is served until one is renamed", it.Upstream.Name(), it.Own, *p.Name)
		}
	}
	raw, err := it.Upstream.Forward(ctx, "prompts/get", withMember(req.Params, "name", it.Own))
	if err != nil {
		return nil, err
	}
	out, err := it.Upstream.RewritePrompt(raw)
	if err != nil {
		return nil, err
	}
	return fitForwarded(out, req.Revision, false), nil
}

// complete answers completion/complete: a ref to an upstream's prompt or
// resource template is forwarded with the upstream's own name or uri.
func (s *Router) complete(ctx context.Context, req *core.Request) (any, error) {
	var p struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
	}
	_ = json.Unmarshal(req.Params, &p)
	local := func() (any, error) {
		if s.opts.Surface == nil {
			return surface.CompleteResult{}, nil
		}
		return s.opts.Surface.Complete(ctx, req.Params, req.Revision)
	}
	if !s.hasUpstreams() {
		return local()
	}
	members, _ := codec.Members(req.Params)
	ref, _ := codec.Members(members["ref"])
	var u *upstream.Upstream
	switch {
	case p.Ref.Type == "ref/prompt" && s.opts.Upstreams.IsUpstreamPrompt(p.Ref.Name):
		it := s.opts.Upstreams.LookupPrompt(ctx, p.Ref.Name)
		if it == nil || it.Withheld() != "" {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown prompt %s", codec.QuoteClip(p.Ref.Name, 200))
		}
		u = it.Upstream
		ref["name"], _ = json.Marshal(it.Own)
	case p.Ref.Type == "ref/resource" && upstream.IsServedURI(p.Ref.URI):
		up, own, err := s.opts.Upstreams.ParseURI(p.Ref.URI)
		if err != nil {
			return nil, clientError(err)
		}
		u = up
		ref["uri"], _ = json.Marshal(own)
	default:
		return local()
	}
	members["ref"], _ = json.Marshal(ref)
	raw, err := u.Forward(ctx, "completion/complete", members)
	if err != nil {
		return nil, err
	}
	return fitForwarded(raw, req.Revision, false), nil
}

// withMember is params (an object) with member set to v.
func withMember(params json.RawMessage, member, v string) map[string]json.RawMessage {
	m, _ := codec.Members(params)
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[member], _ = json.Marshal(v)
	return m
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// warnOnce logs msg once per key (bounded as the clashes are).
func (s *Router) warnOnce(key, msg string, attrs ...slog.Attr) {
	s.mu.Lock()
	if s.clashes == nil || len(s.clashes) >= 4096 {
		s.clashes = map[string]bool{}
	}
	seen := s.clashes[key]
	s.clashes[key] = true
	s.mu.Unlock()
	if !seen {
		s.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
	}
}
