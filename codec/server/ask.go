package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/mcpipe/mcpipe/codec"
)

// What a request may send its client besides progress: log records
// (notifications/message) and questions (elicitation/create,
// sampling/createMessage), each only as far as the client asked for it.
//
//   - Log level. A 2026-07-28 request names its own threshold in
//     _meta["io.modelcontextprotocol/logLevel"]; without one nothing is
//     logged to it. A legacy session's threshold is what logging/setLevel
//     set (Session.SetLogLevel); before that, nothing is logged either,
//     as the Go SDK's server does: the spec leaves the default to the
//     server, and a record the client did not ask for is noise.
//   - Capabilities. A 2026-07-28 request declares them in
//     _meta["io.modelcontextprotocol/clientCapabilities"], and the server
//     must not take them from another request; a legacy session declared
//     them in initialize.
//   - Questions go to the client as a request of the server's
//     (Request.Call), on the call's own stream: only a legacy session is
//     asked so (CanAsk), and only on a transport that carries a request
//     to the client and its answer back (stdio; Streamable HTTP with a
//     session and an SSE stream). Otherwise Call fails with
//     ErrNoBackChannel.

// ErrNoBackChannel is returned by Request.Call when the request's
// transport cannot carry a request to the client: an HTTP request without
// a session or without an SSE stream to carry it. (A 2026-07-28 client
// expects none at all: it is asked through an input_required result;
// CanAsk says no for one.)
var ErrNoBackChannel = errors.New("server: this request cannot carry a request to the client")

// ClientCapabilities returns the capabilities that apply to the request:
// its _meta's for a 2026-07-28 request, the session's (from initialize)
// otherwise. nil when none were declared.
func (r *Request) ClientCapabilities() codec.ClientCapabilities {
	if codec.IsModernRevision(r.Revision) {
		m, err := codec.ParseRequestMeta(r.Params)
		if err != nil || m == nil {
			return nil
		}
		return m.ClientCapabilities
	}
	return r.srv.sess.ClientCapabilities()
}

// LogLevel returns the threshold of notifications/message for the
// request, "" when the client asked for none.
func (r *Request) LogLevel() string {
	if codec.IsModernRevision(r.Revision) {
		m, err := codec.ParseRequestMeta(r.Params)
		if err != nil || m == nil {
			return ""
		}
		return m.LogLevel
	}
	return r.srv.sess.LogLevel()
}

// Log sends notifications/message on behalf of the request when level is
// at or above its threshold (LogLevel), and reports whether it did. data
// must be one JSON value.
func (r *Request) Log(level, logger string, data json.RawMessage) (bool, error) {
	if !codec.LogEnabled(r.LogLevel(), level) {
		return false, nil
	}
	return true, r.Notify(codec.MethodLoggingMessage, codec.LoggingMessageParams{Level: level, Logger: logger, Data: data})
}

// CanAsk reports whether the request may send its client a request of
// method (codec.MethodElicit in mode, codec.MethodCreateMessage): a
// legacy session of a revision that has the method (elicitation: from
// 2025-06-18; its url mode: from 2025-11-25) whose client declared the
// capability. Whether the
// transport carries it is known only when Call tries (ErrNoBackChannel).
func (r *Request) CanAsk(method, mode string) bool {
	if codec.IsModernRevision(r.Revision) {
		return false
	}
	caps := r.ClientCapabilities()
	switch method {
	case codec.MethodElicit:
		// Elicitation came with 2025-06-18, its url mode with 2025-11-25.
		since := codec.Rev20250618
		if mode == codec.ElicitURL {
			since = codec.Rev20251125
		}
		return r.Revision >= since && codec.ClientCanElicit(caps, mode)
	case codec.MethodCreateMessage:
		return codec.ClientCanSample(caps)
	}
	return false
}

// setLevel serves logging/setLevel (legacy revisions; 2026-07-28 has
// the _meta logLevel instead, and the method is not found there).
func (s *Server) setLevel(_ context.Context, req *Request) (any, error) {
	if codec.IsModernRevision(req.Revision) {
		return nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: %q: 2026-07-28 sets the log level per request in _meta[%q]", req.Method, codec.MetaLogLevel)
	}
	var p struct {
		Level *string `json:"level"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Level == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: logging/setLevel needs a string level, one of %v", codec.LogLevels)
	}
	if err := s.sess.SetLogLevel(*p.Level); err != nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: level %s is not one of %v", codec.QuoteClip(*p.Level, 40), codec.LogLevels)
	}
	s.opts.Logger.Debug("logging/setLevel", slog.String("level", *p.Level))
	return struct{}{}, nil
}

// rememberCapabilities keeps what an initialize declared.
func (s *Server) rememberCapabilities(params json.RawMessage) {
	var p struct {
		Capabilities codec.ClientCapabilities `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) == nil {
		s.sess.SetClientCapabilities(p.Capabilities)
	}
}

// outgoingIDs numbers the requests of every conversation of the process,
// after a prefix of its own: a transport that routes the client's
// answers by id (Streamable HTTP, many conversations per session, many
// replicas) never mistakes one for another's.
var (
	outgoingPrefix = func() string {
		b := make([]byte, 6)
		rand.Read(b)
		return "srv-" + hex.EncodeToString(b)
	}()
	outgoingSeq atomic.Uint64
)

func nextOutgoingID() codec.ID {
	return codec.StringID(fmt.Sprintf("%s-%d", outgoingPrefix, outgoingSeq.Add(1)))
}

type callerKey struct{}

// WithCaller returns ctx carrying the identity of the caller (Serve's ctx
// is every handler's parent, so its handlers see it through CallerOf): a
// transport that authenticates its clients (HTTP bearer tokens) names
// the one that sent the request, so that what is granted to one caller
// (an approval) is not taken for another's. "" is an anonymous caller.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerOf returns what WithCaller put in ctx, "" without one.
func CallerOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}
