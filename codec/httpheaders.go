package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Streamable HTTP mirrors parts of a 2026-07-28 request in headers, so that
// a proxy can route on them: Mcp-Method, Mcp-Name (the tool, prompt or
// resource named) and one Mcp-Param-NAME per tools/call argument whose
// inputSchema property carries "x-mcp-header": NAME. The rules below are
// the one copy both sides use: mcp-call's client builds the headers,
// mcp-route's HTTP transport checks them against the body.

// The Streamable HTTP headers, in canonical form (http.CanonicalHeaderKey).
// Each may appear once in a request: a server that checked only the first
// of two Mcp-Name headers would let a proxy route on one and the body name
// another, so mcp-route refuses a repeated one (400).
const (
	HeaderSession         = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix starts the header that mirrors an x-mcp-header
	// argument.
	HeaderParamPrefix = "Mcp-Param-"
)

// SingleHeaders are the headers that may appear at most once, besides
// every HeaderParamPrefix one.
var SingleHeaders = []string{HeaderSession, HeaderProtocolVersion, HeaderMethod, HeaderName}

// NameParam says which member of params Mcp-Name mirrors for method:
// "name" for tools/call and prompts/get, "uri" for resources/read, ""
// for a method that has no Mcp-Name.
func NameParam(method string) string {
	switch method {
	case MethodToolsCall, "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

const headerBase64Open, headerBase64Close = "=?base64?", "?="

// HeaderParam is one argument mirrored into HeaderParamPrefix + Name.
type HeaderParam struct {
	Path []string // property names from the arguments object down
	Name string   // the x-mcp-header value
}

// HeaderParams finds the x-mcp-header annotations of an inputSchema and
// checks them against the 2026-07-28 rules: on a property reached from the
// root through properties keys alone, of type integer, string or boolean,
// named by a non-empty HTTP token unique regardless of case. A schema that
// is not JSON has none (the schema checks report it); a broken annotation
// is an error naming it: a client leaves such a tool out.
func HeaderParams(schema json.RawMessage) ([]HeaderParam, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, nil
	}
	var out []HeaderParam
	seen := map[string]bool{}
	var walk func(node any, path []string, chain bool) error
	walk = func(node any, path []string, chain bool) error {
		switch n := node.(type) {
		case []any:
			for _, e := range n {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if v, ok := n["x-mcp-header"]; ok {
				where := "/" + strings.Join(path, "/")
				name, _ := v.(string)
				typ, _ := n["type"].(string)
				switch {
				case !chain || len(path) == 0:
					return fmt.Errorf("x-mcp-header at %s is not on a property reached through properties alone", where)
				case !isHeaderToken(name):
					return fmt.Errorf("x-mcp-header %v at %s is not an HTTP header name token", v, where)
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q appears twice", name)
				case typ != "string" && typ != "integer" && typ != "boolean":
					return fmt.Errorf("x-mcp-header %q is on a property of type %v (want string, integer or boolean)", name, n["type"])
				}
				seen[strings.ToLower(name)] = true
				out = append(out, HeaderParam{Path: slices.Clone(path), Name: name})
			}
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k == "x-mcp-header" {
					continue
				}
				if props, ok := n[k].(map[string]any); ok && k == "properties" {
					names := make([]string, 0, len(props))
					for pk := range props {
						names = append(names, pk)
					}
					sort.Strings(names)
					for _, pk := range names {
						if err := walk(props[pk], append(slices.Clone(path), pk), chain); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(n[k], append(slices.Clone(path), k), false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
}

func isHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// EncodeHeaderValue encodes a value for Mcp-Name or Mcp-Param-*: as it is
// when it is plain visible ASCII (spaces and tabs inside allowed), else as
// =?base64?…?=; a plain value that looks encoded is encoded too, so that
// DecodeHeaderValue gives it back.
func EncodeHeaderValue(s string) string {
	plain := s == strings.TrimSpace(s) &&
		!(strings.HasPrefix(s, headerBase64Open) && strings.HasSuffix(s, headerBase64Close))
	for i := 0; plain && i < len(s); i++ {
		if (s[i] < 0x20 || s[i] > 0x7e) && s[i] != '\t' {
			plain = false
		}
	}
	if plain {
		return s
	}
	return headerBase64Open + base64.StdEncoding.EncodeToString([]byte(s)) + headerBase64Close
}

// ErrHeaderEncoding is a =?base64?…?= header value that does not decode.
var ErrHeaderEncoding = errors.New("not valid =?base64?...?= text")

// DecodeHeaderValue is the inverse of EncodeHeaderValue.
func DecodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, headerBase64Open)
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, headerBase64Close)
	dec, err := base64.StdEncoding.DecodeString(inner)
	if !ok || err != nil {
		return "", ErrHeaderEncoding
	}
	return string(dec), nil
}

// SessionRevisions are the revisions whose Streamable HTTP requests run in
// a session (Mcp-Session-Id), oldest first: 2024-11-05 had no Streamable
// HTTP, 2026-07-28 has no sessions. Treat it as read-only.
var SessionRevisions = []string{Rev20250326, Rev20250618, Rev20251125}

// CheckSessionVersionHeader checks the MCP-Protocol-Version header v of a
// request in a Streamable HTTP session that negotiated sessionRev. The spec
// asks for 400 only when the version is invalid or unsupported, so any of
// SessionRevisions is accepted, whichever the session negotiated (the
// conversation goes on in the negotiated revision: the header is a
// transport check, and the official SDKs send a fixed one on some
// requests). A missing header is accepted only in a 2025-03-26 session,
// which did not define it. The error says what was wrong and what is
// expected.
func CheckSessionVersionHeader(v, sessionRev string) error {
	switch {
	case v == "" && sessionRev == Rev20250326:
		return nil
	case v == "":
		return fmt.Errorf("missing %s header: this session negotiated %s; send it on every request", HeaderProtocolVersion, sessionRev)
	case slices.Contains(SessionRevisions, v):
		return nil
	case IsSupportedRevision(v):
		return fmt.Errorf("%s header %q: that revision has no Streamable HTTP sessions; this session negotiated %s (accepted: %s)",
			HeaderProtocolVersion, v, sessionRev, strings.Join(SessionRevisions, ", "))
	}
	return fmt.Errorf("%s header %q: unsupported protocol version; this session negotiated %s (accepted: %s)",
		HeaderProtocolVersion, v, sessionRev, strings.Join(SessionRevisions, ", "))
}
