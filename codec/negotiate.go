package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// NegotiateLegacy answers an initialize request's protocolVersion: the
// requested version when it is a supported legacy revision, else
// LatestLegacyRevision (the client then decides whether it can go on).
func NegotiateLegacy(requested string) string {
	if IsLegacyRevision(requested) {
		return requested
	}
	return LatestLegacyRevision
}

// RequestRevision returns params._meta["io.modelcontextprotocol/protocolVersion"]
// when params carries it as a string.
func RequestRevision(params json.RawMessage) (rev string, ok bool) {
	m, err := ParseRequestMeta(params)
	if err != nil || m == nil || m.ProtocolVersion == "" {
		return "", false
	}
	return m.ProtocolVersion, true
}

// ParseRequestMeta decodes params._meta. It returns nil, nil when params or
// _meta is absent, and an error when they are not objects or a known key has
// the wrong type.
func ParseRequestMeta(params json.RawMessage) (*RequestMeta, error) {
	if len(params) == 0 || string(params) == "null" {
		return nil, nil
	}
	// Every request is classified by its _meta: one validating pass that
	// only picks _meta out, instead of encoding/json's check and decode.
	// Anything it is unsure of goes the slow way, which also words the
	// errors.
	raw, ok := metaMember(params)
	if !ok {
		return parseRequestMetaSlow(params)
	}
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	meta, ok := scanMembers(raw) // validated by metaMember's pass
	if !ok {
		return parseRequestMetaSlow(params)
	}
	return requestMeta(meta)
}

// metaMember returns params' _meta member (nil when absent) from one
// validating pass. ok is false when params is not one valid JSON object,
// or when a member's name is _meta only to encoding/json's
// case-insensitive matching: the slow path decides then.
func metaMember(params []byte) (meta json.RawMessage, ok bool) {
	s := scanner{b: params}
	i := s.ws(0)
	if i >= len(params) || params[i] != '{' {
		return nil, false
	}
	ok = true
	end, err := s.object(i, 1, func(key []byte, start, end int) {
		if string(key) == `"_meta"` {
			meta = params[start:end]
			return
		}
		if len(key) == len(`"_meta"`) || bytes.IndexByte(key, '\\') >= 0 {
			if name, _ := stringValue(key); strings.EqualFold(name, "_meta") {
				ok = false
			}
		}
	})
	if err != nil || s.ws(end) != len(params) {
		return nil, false
	}
	return meta, ok
}

// parseRequestMetaSlow is ParseRequestMeta by encoding/json.
func parseRequestMetaSlow(params json.RawMessage) (*RequestMeta, error) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, paramsError(err)
	}
	if p.Meta == nil {
		return nil, nil
	}
	return requestMeta(p.Meta)
}

// requestMeta decodes the members of a request's _meta.
func requestMeta(meta map[string]json.RawMessage) (*RequestMeta, error) {
	m := &RequestMeta{}
	for k, v := range meta {
		var err error
		switch k {
		case MetaProtocolVersion:
			var ok bool
			if m.ProtocolVersion, ok = stringValue(v); !ok {
				err = json.Unmarshal(v, &m.ProtocolVersion)
			}
		case MetaClientInfo:
			m.ClientInfo, err = clientInfo(v)
		case MetaClientCapabilities:
			if caps, ok := scanMembers(v); ok {
				m.ClientCapabilities = caps
			} else {
				err = json.Unmarshal(v, &m.ClientCapabilities)
			}
		case MetaLogLevel:
			err = json.Unmarshal(v, &m.LogLevel)
		case MetaProgressToken:
			if string(v) != "null" {
				m.ProgressToken = v
			}
		default:
			if m.Other == nil {
				m.Other = map[string]json.RawMessage{}
			}
			m.Other[k] = v
		}
		if err != nil {
			return nil, metaError(k, err)
		}
	}
	return m, nil
}

// lastClientInfo is the clientInfo decoded last, by its JSON: a
// 2026-07-28 client sends the same one with every request.
var lastClientInfo atomic.Pointer[decodedClientInfo]

type decodedClientInfo struct {
	raw  string
	info Implementation
}

// clientInfo decodes a request's _meta clientInfo into a new Implementation
// (its Icons shared with other requests that sent the same JSON).
func clientInfo(raw json.RawMessage) (*Implementation, error) {
	info := new(Implementation)
	if last := lastClientInfo.Load(); last != nil && last.raw == string(raw) {
		*info = last.info
		return info, nil
	}
	if err := json.Unmarshal(raw, info); err != nil {
		return info, err
	}
	if len(raw) <= 4096 {
		lastClientInfo.Store(&decodedClientInfo{raw: string(raw), info: *info})
	}
	return info, nil
}

// metaError names a _meta member whose value has the wrong JSON type.
func metaError(key string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := fmt.Sprintf("params._meta[%q]", key)
		if te.Field != "" {
			path += "." + te.Field
		}
		return fmt.Errorf("%s: expected %s, got %s", path, jsonTypeOf(te.Type), gotValue(te.Value))
	}
	return fmt.Errorf("params._meta[%q]: %s", key, err.Error())
}

// Session tracks one connection's legacy negotiation and tells, for each
// incoming message, which revision applies. It is safe for concurrent use.
//
// Rules (DESIGN.md, "Protocol eras"):
//   - a request whose _meta names a protocol version is handled statelessly
//     in that revision when it is a supported modern one; an unknown version
//     gets -32022 (UnsupportedVersionError) with data.supported and
//     data.requested;
//   - initialize negotiates (NegotiateLegacy) once; a second one is refused;
//   - ping and server/discover are allowed at any time: before initialize,
//     ping answers in the session's revision (LatestLegacyRevision before
//     initialize) and discover always in LatestRevision;
//   - any other request before initialize, without a modern _meta version,
//     gets -32600 "server not initialized: ...";
//   - after initialize, messages without _meta use the negotiated revision;
//   - a request whose _meta.progressToken is neither a string nor an integer
//     gets -32602 naming it: the server would echo it in
//     notifications/progress, which allows nothing else.
type Session struct {
	mu          sync.Mutex
	rev         string             // negotiated legacy revision; "" before initialize
	initialized bool               // notifications/initialized seen
	caps        ClientCapabilities // declared in initialize (sessionstate.go)
	logLevel    string             // set by logging/setLevel (sessionstate.go)
}

// NewSession returns a session that has not negotiated yet.
func NewSession() *Session { return &Session{} }

// ResumeSession returns a session that negotiated rev and was initialized
// earlier, on another connection: a transport whose session outlives one
// conversation (Streamable HTTP's Mcp-Session-Id) resumes it for each
// request. rev must be a legacy revision; any other is refused.
func ResumeSession(rev string) (*Session, error) {
	if !IsLegacyRevision(rev) {
		return nil, fmt.Errorf("codec: cannot resume a session of revision %q: not a legacy revision", rev)
	}
	return &Session{rev: rev, initialized: true}, nil
}

// Revision returns the negotiated legacy revision, "" before initialize.
func (s *Session) Revision() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// Initialized reports whether notifications/initialized has arrived.
func (s *Session) Initialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

// AllowBatch reports whether a JSON-RPC batch is acceptable now: only in a
// session that negotiated 2025-03-26.
func (s *Session) AllowBatch() bool { return BatchesAllowed(s.Revision()) }

// Classify returns the revision that applies to m, or the error to answer it
// with. For initialize it performs the negotiation: the returned revision is
// the one the InitializeResult must carry. Notifications never get an answer;
// an error for one is for the log only. Responses get the session's revision.
func (s *Session) Classify(m *Message) (rev string, err *Error) {
	if m.IsResponse() {
		return s.revOr(LatestLegacyRevision), nil
	}
	meta, merr := ParseRequestMeta(m.Params)
	if merr != nil {
		return "", Errorf(CodeInvalidParams, "invalid params: %s", merr.Error())
	}
	if m.IsRequest() && meta != nil && meta.ProgressToken != nil {
		// The server would echo it in notifications/progress.
		if e := progressTokenProblem(meta.ProgressToken); e != "" {
			return "", Errorf(CodeInvalidParams, "invalid params: %s", e)
		}
	}
	if meta != nil && meta.ProtocolVersion != "" {
		v := meta.ProtocolVersion
		switch {
		case IsSupportedRevision(v) && IsModernRevision(v):
			return v, nil
		case !IsSupportedRevision(v):
			return "", UnsupportedVersionError(v, slices.Clone(Revisions))
		}
		// A legacy revision named in _meta: fall through to the session rules.
	}
	switch m.Method {
	case MethodInitialize:
		if m.IsNotification() {
			return "", Errorf(CodeInvalidRequest, "invalid request: initialize must be a request")
		}
		var p struct {
			ProtocolVersion *string `json:"protocolVersion"`
		}
		if len(m.Params) == 0 || json.Unmarshal(m.Params, &p) != nil || p.ProtocolVersion == nil {
			return "", Errorf(CodeInvalidParams, "invalid params: initialize needs a string protocolVersion")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.rev != "" {
			return "", Errorf(CodeInvalidRequest, "invalid request: already initialized (protocol version %s)", s.rev)
		}
		s.rev = NegotiateLegacy(*p.ProtocolVersion)
		return s.rev, nil
	case MethodInitialized:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.rev == "" {
			return "", Errorf(CodeInvalidRequest, "notifications/initialized before initialize")
		}
		s.initialized = true
		return s.rev, nil
	case MethodPing, MethodCancelled, MethodProgress:
		return s.revOr(LatestLegacyRevision), nil
	case MethodDiscover:
		// server/discover only exists from 2026-07-28 on: answer in that
		// revision whatever the legacy session negotiated.
		return LatestRevision, nil
	}
	if r := s.Revision(); r != "" {
		return r, nil
	}
	return "", Errorf(CodeInvalidRequest,
		"server not initialized: send initialize, or a %s request with _meta[%q]", LatestRevision, MetaProtocolVersion)
}

func (s *Session) revOr(def string) string {
	if r := s.Revision(); r != "" {
		return r
	}
	return def
}
