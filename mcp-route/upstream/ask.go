package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// The requests an upstream may be allowed to send mcp-route's client
// (--upstream-allow NAME=elicitation,sampling), by the word that allows
// them.
var allowable = map[string]string{
	"elicitation": codec.MethodElicit,
	"sampling":    codec.MethodCreateMessage,
}

// ParseAllow reads --upstream-allow NAME=WHAT[,WHAT...], WHAT elicitation
// or sampling.
func ParseAllow(s string) (name string, what []string, err error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return "", nil, fmt.Errorf("--upstream-allow %q: want NAME=elicitation, NAME=sampling or NAME=elicitation,sampling", s)
	}
	for _, w := range strings.Split(list, ",") {
		w = strings.TrimSpace(w)
		if _, ok := allowable[w]; !ok {
			return "", nil, fmt.Errorf("--upstream-allow %s: %q: want elicitation or sampling", name, w)
		}
		if !slices.Contains(what, w) {
			what = append(what, w)
		}
	}
	return name, what, nil
}

// Asker sends a request to the client of the call being forwarded (its
// router's core.Request.Call), and returns its result or its error;
// refused, when not "", says why that client cannot take method (an older
// revision, no such capability, no way back).
type Asker func(ctx context.Context, method string, params json.RawMessage) (res json.RawMessage, refused string, err error)

type askerKey struct{}

// askerValue is what WithAsker puts in a context.
type askerValue struct {
	client any
	ask    Asker
}

// WithAsker is ctx carrying ask for the call it is the context of: an
// upstream allowed to (Spec.Allow) sends its elicitation/create and
// sampling/createMessage to that call's client while the call is in
// flight. client (comparable) says who that client is: an HTTP session,
// a stdio conversation; calls of different clients in flight to one
// upstream at once leave it no one to ask (see askers).
func WithAsker(ctx context.Context, client any, ask Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, askerValue{client, ask})
}

// askers are the calls in flight to an upstream that can take its
// requests; the latest one is asked (an upstream's request names no call).
// When calls of more than one client are in flight, none is: the request
// may be for any of them, and putting one client's question (with what it
// tells) to another, and its answer into the first one's call, would leak
// between them (two HTTP sessions, two users).
type askers struct {
	mu   sync.Mutex
	next int64
	m    map[int64]askerEntry
}

type askerEntry struct {
	ctx    context.Context
	client any
	ask    Asker
}

func (a *askers) add(ctx context.Context) func() {
	v, _ := ctx.Value(askerKey{}).(askerValue)
	if v.ask == nil {
		return func() {}
	}
	a.mu.Lock()
	if a.m == nil {
		a.m = map[int64]askerEntry{}
	}
	a.next++
	id := a.next
	a.m[id] = askerEntry{ctx, v.client, v.ask}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.m, id)
		a.mu.Unlock()
	}
}

// latest is the latest call in flight; shared is false when calls of
// more than one client are.
func (a *askers) latest() (e askerEntry, ok, shared bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var best int64
	for id := range a.m {
		best = max(best, id)
	}
	e, ok = a.m[best]
	for _, o := range a.m {
		if o.client != e.client {
			return e, ok, true
		}
	}
	return e, ok, false
}

// allows reports whether the upstream may send method to the client.
func (u *Upstream) allows(method string) bool {
	for _, w := range u.spec.Allow {
		if allowable[w] == method {
			return true
		}
	}
	return false
}

// capabilities are the client capabilities mcp-route declares to the
// upstream: those --upstream-allow grants it.
func (u *Upstream) capabilities() codec.ClientCapabilities {
	caps := codec.ClientCapabilities{}
	for _, w := range u.spec.Allow {
		caps[w] = json.RawMessage(`{}`)
	}
	return caps
}

// onRequest serves a request of the upstream (codec/client's OnRequest):
// elicitation/create and sampling/createMessage go to the client of a call
// in flight to it when --upstream-allow allows them; everything else is
// refused as codec/client refuses it.
func (u *Upstream) onRequest(m *codec.Message) (json.RawMessage, error) {
	if allowWord(m.Method) == "" {
		return nil, nil // roots/list and the rest: codec/client's -32601
	}
	if !u.allows(m.Method) {
		return nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: %s: mcp-route does not pass upstream %s's %s on to its client (--upstream-allow %s=%s allows it)", m.Method, u.spec.Name, m.Method, u.spec.Name, allowWord(m.Method))
	}
	e, ok, shared := u.askers.latest()
	if !ok {
		return nil, codec.Errorf(codec.CodeInvalidRequest, "upstream %s: %s: no call of mcp-route's client is in flight to this upstream, so there is no one to ask", u.spec.Name, m.Method)
	}
	if shared {
		return nil, codec.Errorf(codec.CodeInvalidRequest, "upstream %s: %s: calls of more than one client are in flight to this upstream, and which one this is for cannot be told, so none is asked", u.spec.Name, m.Method)
	}
	params := m.Params
	if m.Method == codec.MethodCreateMessage {
		params = ownContextOnly(params)
	}
	res, refused, err := e.ask(e.ctx, m.Method, params)
	if refused != "" {
		return nil, codec.Errorf(codec.CodeInvalidRequest, "upstream %s: %s: the client cannot be asked: %s", u.spec.Name, m.Method, refused)
	}
	if err != nil {
		return nil, err
	}
	if int64(len(res)) > u.opts.MaxOutput {
		return nil, codec.Errorf(codec.CodeInternalError, "upstream %s: %s: the client's answer of %d bytes exceeds --max-output", u.spec.Name, m.Method, len(res))
	}
	return res, nil
}

func allowWord(method string) string {
	for w, m := range allowable {
		if m == method {
			return w
		}
	}
	return ""
}

// ownContextOnly is sampling/createMessage params with includeContext
// "none" in place of any other: through the gateway, "thisServer" is every
// upstream and the local tools, and "allServers" more, so the client's
// model would answer this upstream with what the others returned.
func ownContextOnly(params json.RawMessage) json.RawMessage {
	m, ok := codec.Members(params)
	if !ok {
		return params
	}
	if ic, ok := m["includeContext"]; !ok || string(ic) == `"none"` {
		return params
	}
	m["includeContext"] = json.RawMessage(`"none"`)
	b, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return b
}
