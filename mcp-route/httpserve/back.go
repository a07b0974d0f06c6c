package httpserve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/server"
)

// What a legacy session carries over HTTP beyond its token:
//
//   - Questions to the client. A tool's elicitation or sampling request
//     (and the --confirm approval) goes out as a server request on the
//     SSE stream of the POST whose call asks. The client answers with a
//     POST of its own, carrying the same Mcp-Session-Id: the answer is
//     routed to the asking conversation by session id and request id, so
//     an answer from another session (or one without a session) reaches
//     nothing. The request ids are unique per process and hard to guess
//     (codec/server). A POST that cannot carry a question (no session,
//     the client does not accept text/event-stream) makes Call fail with
//     server.ErrNoBackChannel, and the tool gets a refusal. The answer
//     must reach the replica that asked: behind a proxy that spreads one
//     session over replicas, route by Mcp-Session-Id.
//   - The log level of logging/setLevel, kept per replica for the
//     session's lifetime (at most maxLevels sessions; the oldest go
//     first): a replica that did not take the setLevel sends no records
//     for the session, as if none was set.
//   - The client capabilities, from the token (when they fit in it,
//     maxCapsBytes): a client whose capabilities were too big to carry is
//     asked nothing.
type backChannel struct {
	mu     sync.Mutex
	asks   map[string]*exchange // session id + request id → the exchange that asked
	levels map[string]levelEntry
}

type levelEntry struct {
	level   string
	expires int64 // unix seconds: the session's expiry
}

// maxLevels bounds the sessions whose log level a replica remembers.
const maxLevels = 10000

// resume prepares a resumed session with what the token and this replica
// know of it.
func (h *Handler) resume(sid string, c *claims) *codec.Session {
	sess, _ := codec.ResumeSession(c.Rev)
	if len(c.Caps) > 0 {
		var caps codec.ClientCapabilities
		if json.Unmarshal(c.Caps, &caps) == nil {
			sess.SetClientCapabilities(caps)
		}
	}
	h.back.mu.Lock()
	e, ok := h.back.levels[sid]
	h.back.mu.Unlock()
	if ok {
		sess.SetLogLevel(e.level)
	}
	return sess
}

// keepLevel remembers the level a conversation of session sid set.
func (h *Handler) keepLevel(sid string, c *claims, sess *codec.Session) {
	level := sess.LogLevel()
	if level == "" {
		return
	}
	b := &h.back
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.levels == nil {
		b.levels = map[string]levelEntry{}
	}
	if e, ok := b.levels[sid]; ok && e.level == level {
		return
	}
	if len(b.levels) >= maxLevels {
		now := h.now().Unix()
		oldest, first := "", int64(0)
		for k, e := range b.levels {
			if e.expires <= now {
				delete(b.levels, k)
				continue
			}
			if oldest == "" || e.expires < first {
				oldest, first = k, e.expires
			}
		}
		if len(b.levels) >= maxLevels {
			delete(b.levels, oldest)
		}
	}
	b.levels[sid] = levelEntry{level: level, expires: c.Expires}
}

// asking is the exchange's hook for a request it sends the client: it
// can carry one only with a session and an SSE stream.
func (h *Handler) asking(sid string, x *exchange) func(id *codec.ID) error {
	return func(id *codec.ID) error {
		if sid == "" || !x.sseOK || id == nil {
			return server.ErrNoBackChannel
		}
		h.back.mu.Lock()
		defer h.back.mu.Unlock()
		if h.back.asks == nil {
			h.back.asks = map[string]*exchange{}
		}
		h.back.asks[sid+"\x00"+id.Key()] = x
		return nil
	}
}

// forgetAsks drops the routes of x's questions: its conversation is over.
func (h *Handler) forgetAsks(x *exchange) {
	h.back.mu.Lock()
	defer h.back.mu.Unlock()
	for k, v := range h.back.asks {
		if v == x {
			delete(h.back.asks, k)
		}
	}
}

// routeAnswer hands a client's response to the conversation that asked,
// when it runs here and belongs to session sid. An answer is taken once.
func (h *Handler) routeAnswer(sid string, m *codec.Message) {
	if sid == "" || m.ID == nil {
		return
	}
	key := sid + "\x00" + m.ID.Key()
	h.back.mu.Lock()
	x := h.back.asks[key]
	delete(h.back.asks, key)
	h.back.mu.Unlock()
	if x == nil {
		h.opts.Logger.Debug("a response that no question here waits for: dropped", slog.String("id", m.ID.Value()), sessionAttr(sid))
		return
	}
	frame, err := json.Marshal(m)
	if err != nil {
		return
	}
	t := time.NewTimer(h.opts.WriteTimeout)
	defer t.Stop()
	select {
	case x.inject <- frame:
	case <-x.closed:
	case <-t.C:
	}
}

// caller names the client of r for what is granted per caller (the
// approval gate's requestState): the SHA-256 of its bearer token, when
// tokens are required (and so checked); "" otherwise.
func (h *Handler) caller(r *http.Request) string {
	if len(h.opts.Tokens) == 0 {
		return ""
	}
	_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	sum := sha256.Sum256([]byte(tok))
	return "token:" + hex.EncodeToString(sum[:16])
}
