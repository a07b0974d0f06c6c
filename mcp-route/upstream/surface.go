package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/mcp-route/pin"
)

// Scheme is the URI scheme of an upstream's resources as mcp-route serves
// them: the upstream's own URI U becomes mcp-upstream://NAME/U, verbatim.
// See "Resources and prompts" in the package doc.
const Scheme = "mcp-upstream"

// schemePrefix is what every served upstream URI starts with.
const schemePrefix = Scheme + "://"

// The kinds of an upstream's surface, as the lists name them.
const (
	KindResource = "resource"
	KindTemplate = "resource template"
	KindPrompt   = "prompt"
)

// The notifications of an upstream's surface.
const (
	methodResourcesListChanged = "notifications/resources/list_changed"
	methodPromptsListChanged   = "notifications/prompts/list_changed"
	methodResourcesUpdated     = "notifications/resources/updated"
)

// Bounds on an upstream's resource, template and prompt lists.
const (
	// MaxSurfaceItems is the most items of one kind kept per upstream.
	MaxSurfaceItems = 10000
	// MaxURI is the longest resource URI or URI template served, in bytes
	// (the upstream's own; mcp-route's prefix comes on top).
	MaxURI = 4096
	// maxSurfacePages bounds the pages of one list (a cursor that never
	// ends).
	maxSurfacePages = 1000
)

// Item is one upstream resource, resource template or prompt as served:
// Listed is its uri, uriTemplate or name as the client sees it, Own the
// upstream's, and Def the definition with Listed in place of Own, every
// other member as the upstream gave it.
type Item struct {
	Upstream *Upstream
	Kind     string
	Listed   string
	Own      string
	Def      json.RawMessage
	// Orig is the definition as the upstream gave it (what is pinned).
	Orig     json.RawMessage
	withheld string
}

// Withheld is Admit's reason, "" when the item is served.
func (it *Item) Withheld() string { return it.withheld }

// surfaceLists is what an upstream last listed of each kind.
type surfaceLists struct {
	resources, templates, prompts []rawItem
}

// rawItem is one definition as the upstream gave it, and its key (uri,
// uriTemplate or name).
type rawItem struct {
	key string
	raw json.RawMessage
}

// ServedURI is the URI mcp-route serves an upstream's resource (or
// template) own under.
func ServedURI(upstream, own string) string { return schemePrefix + upstream + "/" + own }

// IsServedURI reports whether uri is in mcp-route's upstream scheme (the
// scheme compared without regard to case, as RFC 3986 says): such a URI is
// only ever an upstream's, never a local resource's.
func IsServedURI(uri string) bool {
	return len(uri) >= len(schemePrefix) && strings.EqualFold(uri[:len(schemePrefix)], schemePrefix)
}

// schemeRE is an absolute URI's start (RFC 3986 scheme ":").
var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// checkOwnURI says what is wrong with an upstream's own URI or template,
// "" when nothing is.
func checkOwnURI(own string) string {
	switch {
	case own == "":
		return "it is empty"
	case len(own) > MaxURI:
		return fmt.Sprintf("it is %d bytes long, more than %d", len(own), MaxURI)
	case !utf8.ValidString(own):
		return "it is not UTF-8"
	case strings.IndexFunc(own, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0:
		return "it holds a control character or white space"
	case !schemeRE.MatchString(own):
		return "it does not start with a scheme (scheme:...)"
	case IsServedURI(own):
		return "it is in mcp-route's own " + Scheme + " scheme"
	}
	return ""
}

// ParseURI reads a URI a client sent in mcp-route's upstream scheme:
// the upstream it names and that upstream's own URI. The error is for the
// client (-32602).
func (s *Set) ParseURI(uri string) (*Upstream, string, error) {
	rest := uri[len(schemePrefix):]
	name, own, ok := strings.Cut(rest, "/")
	if !ok || pin.ValidateUpstream(name) != nil {
		return nil, "", fmt.Errorf("%s: want %sNAME/URI, NAME an upstream's name (%s) and URI that upstream's own", codec.QuoteClip(uri, 200), schemePrefix, s.names())
	}
	u := s.upstream(name)
	if u == nil {
		return nil, "", fmt.Errorf("%s names no upstream: %q is not one of %s", codec.QuoteClip(uri, 200), name, s.names())
	}
	if why := checkOwnURI(own); why != "" {
		return nil, "", fmt.Errorf("%s: what follows %s%s/ must be upstream %s's own URI, as it lists it, but %s", codec.QuoteClip(uri, 200), schemePrefix, name, name, why)
	}
	return u, own, nil
}

// names lists the upstreams' names for a message.
func (s *Set) names() string {
	var b strings.Builder
	for i, u := range s.ups {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(u.spec.Name)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

func (s *Set) upstream(name string) *Upstream {
	for _, u := range s.ups {
		if u.spec.Name == name {
			return u
		}
	}
	return nil
}

// listSurface reads the resources, templates and prompts the upstream
// declares (capabilities): each kind bounded to MaxSurfaceItems items of
// at most MaxToolDef bytes, all of them together to MaxListBytes; a kind
// whose list fails is logged and kept empty (its tools are still served).
func (u *Upstream) listSurface(ctx context.Context, c *client.Client, caps codec.ServerCapabilities) surfaceLists {
	var out surfaceLists
	budget := u.opts.MaxListBytes
	if len(caps.Resources) > 0 {
		out.resources = u.listKind(ctx, c, "resources/list", "resources", "uri", &budget)
		out.templates = u.listKind(ctx, c, "resources/templates/list", "resourceTemplates", "uriTemplate", &budget)
	}
	if len(caps.Prompts) > 0 {
		out.prompts = u.listKind(ctx, c, "prompts/list", "prompts", "name", &budget)
	}
	return out
}

// listKind pages through one list, keeping what fits.
func (u *Upstream) listKind(ctx context.Context, c *client.Client, method, member, key string, budget *int) []rawItem {
	var items []rawItem
	seen := map[string]bool{}
	cursor, over := "", 0
	for page := 0; ; page++ {
		if page == maxSurfacePages {
			u.opts.Logger.Warn("upstream list: too many pages; keeping the first", slog.String("upstream", u.spec.Name), slog.String("method", method), slog.Int("pages", maxSurfacePages))
			break
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.Request(ctx, method, params)
		if err != nil {
			u.opts.Logger.Warn("upstream list failed: serving none", slog.String("upstream", u.spec.Name), slog.String("method", method), slog.String("error", codec.Clip(err.Error(), 300)))
			return nil
		}
		var res map[string]json.RawMessage
		var list []json.RawMessage
		if json.Unmarshal(raw, &res) != nil || json.Unmarshal(res[member], &list) != nil {
			u.opts.Logger.Warn("upstream list: the result has no list; serving none", slog.String("upstream", u.spec.Name), slog.String("method", method), slog.String("member", member))
			return nil
		}
		for _, r := range list {
			if len(items) >= MaxSurfaceItems || len(r) > MaxToolDef || len(r) > *budget {
				over++
				continue
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(r, &m) != nil {
				over++
				continue
			}
			k, _ := codec.StringValue(m[key])
			*budget -= len(r)
			items = append(items, rawItem{k, slices.Clone(r)})
		}
		next, _ := codec.StringValue(res["nextCursor"])
		if next == "" || seen[next] {
			break
		}
		seen[next] = true
		cursor = next
	}
	if over > 0 {
		u.opts.Logger.Warn("upstream list: items left out", slog.String("upstream", u.spec.Name), slog.String("method", method), slog.Int("left_out", over),
			slog.String("why", fmt.Sprintf("over %d items, %d bytes each or %d bytes in all", MaxSurfaceItems, MaxToolDef, u.opts.MaxListBytes)))
	}
	return items
}

// setSurface keeps new lists and tells the Set which kinds changed.
func (u *Upstream) setSurface(l surfaceLists) {
	u.mu.Lock()
	old := u.surf
	u.surf = l
	u.mu.Unlock()
	resChanged := !slices.EqualFunc(old.resources, l.resources, sameRaw) || !slices.EqualFunc(old.templates, l.templates, sameRaw)
	prChanged := !slices.EqualFunc(old.prompts, l.prompts, sameRaw)
	if resChanged || prChanged {
		u.notifySurface(resChanged, prChanged)
	}
}

func sameRaw(a, b rawItem) bool { return a.key == b.key && string(a.raw) == string(b.raw) }

// surfaceListing is the last lists.
func (u *Upstream) surfaceListing() surfaceLists {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.surf
}

// Surface returns the upstream's last lists of one kind (KindResource,
// KindTemplate, KindPrompt), as the upstream gave them (for `mcp-route
// pin`).
func (u *Upstream) Surface(kind string) []json.RawMessage {
	l := u.surfaceListing()
	var items []rawItem
	switch kind {
	case KindResource:
		items = l.resources
	case KindTemplate:
		items = l.templates
	case KindPrompt:
		items = l.prompts
	}
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = it.raw
	}
	return out
}

// rebuildSurface makes the served items of each kind. Under s.mu.
func (s *Set) rebuildSurface() {
	var res, tmpl, prs []*Item
	for _, u := range s.ups {
		l := u.surfaceListing()
		res = append(res, s.items(u, KindResource, l.resources)...)
		tmpl = append(tmpl, s.items(u, KindTemplate, l.templates)...)
		prs = append(prs, s.items(u, KindPrompt, l.prompts)...)
	}
	for _, l := range [][]*Item{res, tmpl, prs} {
		slices.SortFunc(l, func(a, b *Item) int { return strings.Compare(a.Listed, b.Listed) })
	}
	s.surf = [3][]*Item{res, tmpl, prs}
}

// items checks and renames one upstream's items of a kind: a name or URI
// that breaks the rules, and a key listed twice, are left out with one
// log line each.
func (s *Set) items(u *Upstream, kind string, raws []rawItem) []*Item {
	count := map[string]int{}
	for _, r := range raws {
		count[r.key]++
	}
	var out []*Item
	for _, r := range raws {
		why, listed, member := "", "", "uri"
		switch kind {
		case KindPrompt:
			member = "name"
			listed = u.spec.Name + Separator + r.key
			if err := codec.ValidateToolName(r.key); err != nil {
				why = "its name breaks the tool-name rules prompts are held to: " + codec.Clip(err.Error(), 300)
			} else if len(listed) > MaxListedName {
				why = fmt.Sprintf("%s is %d characters long, more than %d", listed, len(listed), MaxListedName)
			}
		default:
			if kind == KindTemplate {
				member = "uriTemplate"
			}
			listed = ServedURI(u.spec.Name, r.key)
			if w := checkOwnURI(r.key); w != "" {
				why = "its " + member + " is refused: " + w
			}
		}
		if why == "" && count[r.key] > 1 {
			why = fmt.Sprintf("the upstream lists %d of that %s; none is served", count[r.key], member)
		}
		if why == "" {
			if name, ok := codec.StringValue(memberOf(r.raw, "name")); ok && strings.IndexFunc(name, unicode.IsControl) >= 0 {
				why = "its name holds a control character"
			}
		}
		if why != "" {
			s.reportItem(u, kind, r.key, why)
			continue
		}
		members, _ := codec.Members(r.raw)
		q, _ := json.Marshal(listed)
		members[member] = q
		it := &Item{Upstream: u, Kind: kind, Listed: listed, Own: r.key, Def: object(members), Orig: r.raw}
		if s.opts.AdmitSurface != nil {
			if ok, reason := s.opts.AdmitSurface(u.spec.Name, kind, r.key, r.raw); !ok {
				if reason == "" {
					reason = "not admitted"
				}
				it.withheld = reason
				s.reportItem(u, kind, r.key, "withheld: "+reason)
			}
		}
		out = append(out, it)
	}
	return out
}

func memberOf(raw json.RawMessage, name string) json.RawMessage {
	m, _ := codec.Members(raw)
	return m[name]
}

// Surface returns the served items of a kind (withheld ones included;
// see Item.Withheld), sorted by Listed, waiting for the first lists as
// List does.
func (s *Set) Surface(ctx context.Context, kind string) []*Item {
	s.List(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	switch kind {
	case KindResource:
		return s.surf[0]
	case KindTemplate:
		return s.surf[1]
	}
	return s.surf[2]
}

// surfaceError is an upstream's failure as the client's error.
func (u *Upstream) surfaceError(what string, err error) error {
	var rpc *codec.Error
	if errors.As(err, &rpc) {
		if n := int64(len(rpc.Message) + len(rpc.Data)); n > u.opts.MaxOutput {
			return codec.Errorf(codec.CodeInternalError, "upstream %s: %s: its error of %d bytes exceeds --max-output (%d bytes)", u.spec.Name, what, n, u.opts.MaxOutput)
		}
		return rpc
	}
	return codec.Errorf(codec.CodeInternalError, "upstream %s: %s: %s", u.spec.Name, what, codec.Clip(err.Error(), 500))
}

// Forward sends one request (resources/read, prompts/get,
// completion/complete, resources/subscribe, resources/unsubscribe) to u
// with params as given, and returns its result, bounded by MaxOutput, or
// the error for the client.
func (u *Upstream) Forward(ctx context.Context, method string, params any) (json.RawMessage, error) {
	cctx, cancel := context.WithTimeout(ctx, u.opts.CallTimeout)
	defer cancel()
	l, refusal := u.await(cctx)
	if l == nil {
		if refusal == "" {
			refusal = fmt.Sprintf("upstream %s: %s timed out after %v", u.spec.Name, method, u.opts.CallTimeout)
		}
		return nil, codec.Errorf(codec.CodeInternalError, "%s", refusal)
	}
	raw, err := l.Request(cctx, method, params)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: %s timed out after %v", u.spec.Name, method, u.opts.CallTimeout)
		}
		return nil, u.surfaceError(method, err)
	}
	if n := int64(len(raw)); n > u.opts.MaxOutput {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: %s: its result of %d bytes exceeds --max-output (%d bytes)", u.spec.Name, method, n, u.opts.MaxOutput)
	}
	return raw, nil
}

// RewriteContents puts the contents' uris of a resources/read result of u
// under mcp-route's scheme, as its list's are. A content whose uri is not
// one of u's own (in mcp-route's scheme: another upstream's, or the
// gateway's) makes the result an error: an upstream speaks for itself
// only.
func (u *Upstream) RewriteContents(raw json.RawMessage) (json.RawMessage, error) {
	members, ok := codec.Members(raw)
	if !ok {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: resources/read: its result is not an object", u.spec.Name)
	}
	var contents []map[string]json.RawMessage
	if err := json.Unmarshal(members["contents"], &contents); err != nil || contents == nil {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: resources/read: its result has no contents list", u.spec.Name)
	}
	out := make([]json.RawMessage, len(contents))
	for i, c := range contents {
		own, ok := codec.StringValue(c["uri"])
		if !ok {
			return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: resources/read: content %d has no uri", u.spec.Name, i)
		}
		if why := checkOwnURI(own); why != "" {
			return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: resources/read: content %d's uri %s is refused: %s", u.spec.Name, i, codec.QuoteClip(own, 200), why)
		}
		c["uri"], _ = json.Marshal(ServedURI(u.spec.Name, own))
		out[i] = object(c)
	}
	members["contents"], _ = json.Marshal(out)
	delete(members, "_meta") // the upstream's serverInfo and the like
	return object(members), nil
}

// RewritePrompt puts the uris of embedded resources in a prompts/get
// result of u under mcp-route's scheme; one that cannot be makes it an
// error, as for RewriteContents.
func (u *Upstream) RewritePrompt(raw json.RawMessage) (json.RawMessage, error) {
	members, ok := codec.Members(raw)
	if !ok {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: prompts/get: its result is not an object", u.spec.Name)
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(members["messages"], &msgs); err != nil || msgs == nil {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: prompts/get: its result has no messages list", u.spec.Name)
	}
	for i, m := range msgs {
		content, ok := codec.Members(m["content"])
		if !ok {
			continue
		}
		typ, _ := codec.StringValue(content["type"])
		var target map[string]json.RawMessage
		switch typ {
		case "resource":
			target, _ = codec.Members(content["resource"])
		case "resource_link":
			target = content
		default:
			continue
		}
		own, _ := codec.StringValue(target["uri"])
		if why := checkOwnURI(own); why != "" {
			return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: prompts/get: message %d's resource uri %s is refused: %s", u.spec.Name, i, codec.QuoteClip(own, 200), why)
		}
		target["uri"], _ = json.Marshal(ServedURI(u.spec.Name, own))
		if typ == "resource" {
			content["resource"] = object(target)
		}
		m["content"] = object(content)
		msgs[i] = m
	}
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i] = object(m)
	}
	members["messages"], _ = json.Marshal(out)
	delete(members, "_meta")
	return object(members), nil
}

// LookupPrompt returns the prompt listed as name (withheld or not), or
// nil; it waits for the first lists as List does.
func (s *Set) LookupPrompt(ctx context.Context, name string) *Item {
	for _, it := range s.Surface(ctx, KindPrompt) {
		if it.Listed == name {
			return it
		}
	}
	return nil
}

// ResolveURI reads a client's URI in mcp-route's upstream scheme (see
// ParseURI) and refuses one whose resource is withheld: the error is for
// the client (-32602).
func (s *Set) ResolveURI(ctx context.Context, uri string) (*Upstream, string, error) {
	u, own, err := s.ParseURI(uri)
	if err != nil {
		return nil, "", err
	}
	for _, it := range s.Surface(ctx, KindResource) {
		if it.Upstream == u && it.Own == own && it.withheld != "" {
			return nil, "", fmt.Errorf("resource %s is withheld: %s", codec.QuoteClip(uri, 200), it.withheld)
		}
	}
	return u, own, nil
}

// IsUpstreamPrompt reports whether name is NAME__PROMPT for one of the
// upstreams (listed or not).
func (s *Set) IsUpstreamPrompt(name string) bool {
	prefix, _, ok := strings.Cut(name, Separator)
	return ok && s.upstream(prefix) != nil
}

// reportItem logs an item left out, once per reason, as report does for
// a tool.
func (s *Set) reportItem(u *Upstream, kind, key, why string) {
	k := u.spec.Name + "\x00" + kind + "\x00" + key + "\x00" + why
	if s.reported[k] {
		return
	}
	if len(s.reported) >= maxReported {
		clear(s.reported)
	}
	s.reported[k] = true
	// The handler escapes what the upstream named; only its length is bounded here.
	s.opts.Logger.Warn("upstream item left out", slog.String("upstream", u.spec.Name), slog.String("kind", kind), slog.String("key", codec.Clip(key, 200)), slog.String("why", why))
}

// foreignContent says what is wrong with a tools/call result whose
// resource link or embedded resource has a uri in mcp-route's own scheme
// (another upstream's, or the gateway's: text the upstream made up, passed
// off as theirs), "" when none has: an upstream speaks for itself only, as
// in RewriteContents. Its own uris pass as they came.
func foreignContent(raw json.RawMessage) string {
	// Most results hold no resource: not parsed again. A member name or
	// type spelled with escapes is looked at in full.
	if !bytes.Contains(raw, []byte("esource")) && !bytes.Contains(raw, []byte(`\u`)) {
		return ""
	}
	var r struct {
		Content []struct {
			Type     string `json:"type"`
			URI      string `json:"uri"`
			Resource struct {
				URI string `json:"uri"`
			} `json:"resource"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return "" // fit says what is wrong with it
	}
	for i, c := range r.Content {
		uri := c.URI
		if c.Type == "resource" {
			uri = c.Resource.URI
		}
		if IsServedURI(uri) {
			return fmt.Sprintf("its content %d names %s, in mcp-route's own %s scheme: an upstream's result may name its own resources only", i, codec.QuoteClip(uri, 200), Scheme)
		}
	}
	return ""
}
