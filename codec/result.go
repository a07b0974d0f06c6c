package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Members that only 2026-07-28 results carry.
var modernOnlyResultKeys = []string{"resultType", "ttlMs", "cacheScope"}

// DecorateResult marshals result (a result struct, a map, or json.RawMessage
// holding an object) and fits it to revision rev:
//   - modern revisions: sets resultType to "complete" unless it is set (an
//     empty string or null counts as not set: no revision defines an empty
//     result type, and a struct built without one marshals it as ""), and
//     _meta["io.modelcontextprotocol/serverInfo"] to serverInfo (when its
//     Name is set) unless present;
//   - legacy revisions: drops resultType, ttlMs and cacheScope, which do not
//     exist there.
//
// The members come out sorted by name, as encoding/json writes a map. Every
// response of a server goes through here, so a result object whose member
// names are plain ASCII, none twice, is decorated by splicing its members
// (decorateFast) instead of decoding it into a map and encoding it again;
// the bytes are the same (TestDecorateResultFastPath).
//
// Build one result and decorate it per request: that is how a dual-era server
// answers each request in its own revision.
func DecorateResult(rev string, serverInfo Implementation, result any) (json.RawMessage, error) {
	raw, err := marshalParams(result)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		raw = json.RawMessage("{}")
	}
	if out, ok := decorateFast(rev, serverInfo, raw); ok {
		return out, nil
	}
	return decorateSlow(rev, serverInfo, raw)
}

// decorateSlow is DecorateResult on a marshalled result, through a map.
func decorateSlow(rev string, serverInfo Implementation, raw json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("codec: result must be a JSON object")
	}
	if IsModernRevision(rev) {
		if rt, ok := obj["resultType"]; !ok || string(rt) == `""` || string(rt) == "null" {
			obj["resultType"] = json.RawMessage(`"complete"`)
		}
		if serverInfo.Name != "" {
			var meta map[string]json.RawMessage
			if m, ok := obj["_meta"]; ok && string(m) != "null" {
				if err := json.Unmarshal(m, &meta); err != nil {
					return nil, fmt.Errorf("codec: result _meta must be an object")
				}
			}
			if meta == nil {
				meta = map[string]json.RawMessage{}
			}
			if _, ok := meta[MetaServerInfo]; !ok {
				si, err := marshal(serverInfo)
				if err != nil {
					return nil, err
				}
				meta[MetaServerInfo] = si
				mb, err := marshal(meta)
				if err != nil {
					return nil, err
				}
				obj["_meta"] = mb
			}
		}
	} else {
		for _, k := range modernOnlyResultKeys {
			delete(obj, k)
		}
	}
	return marshal(obj)
}

// member is one member of an object being decorated: its name (unquoted,
// plain ASCII) and its raw value.
type member struct {
	name []byte
	val  []byte
}

// fastMembers bounds the members decorateFast handles; a larger object
// takes the slow path.
const fastMembers = 16

// decorateFast is DecorateResult on raw, compact JSON from marshalParams,
// by splicing: it splits the object into its members, drops, replaces or
// adds the few it must, and writes them sorted by name. ok is false when
// raw is anything else than what it can do byte for byte as decorateSlow
// does: not one compact object, a member name that is escaped, not ASCII
// or given twice (in the object, or in a _meta it adds to), more than
// fastMembers members, a _meta that is not an object (an error, which
// decorateSlow words).
func decorateFast(rev string, serverInfo Implementation, raw []byte) (out []byte, ok bool) {
	var buf [fastMembers]member
	ms, ok := splitObject(raw, buf[:0])
	if !ok {
		return nil, false
	}
	changed := false
	if IsModernRevision(rev) {
		rt := -1
		meta := -1
		for i, m := range ms {
			switch string(m.name) {
			case "resultType":
				rt = i
			case "_meta":
				meta = i
			}
		}
		switch {
		case rt < 0:
			if len(ms) == fastMembers {
				return nil, false
			}
			ms = append(ms, member{resultTypeName, completeType})
			changed = true
		case string(ms[rt].val) == `""` || string(ms[rt].val) == "null":
			ms[rt].val = completeType
			changed = true
		}
		if serverInfo.Name != "" {
			var mv []byte
			if meta >= 0 && string(ms[meta].val) != "null" {
				mv = ms[meta].val
				if mv[0] != '{' {
					return nil, false // decorateSlow says what is wrong
				}
			}
			nm, add, ok := metaWithServerInfo(mv, serverInfo)
			if !ok {
				return nil, false
			}
			if add {
				changed = true
				if meta >= 0 {
					ms[meta].val = nm
				} else {
					if len(ms) == fastMembers {
						return nil, false
					}
					ms = append(ms, member{metaName, nm})
				}
			}
		}
	} else {
		kept := ms[:0]
		for _, m := range ms {
			switch string(m.name) {
			case "resultType", "ttlMs", "cacheScope":
				changed = true
			default:
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	if !changed && slices.IsSortedFunc(ms, compareMembers) {
		return raw, true
	}
	slices.SortFunc(ms, compareMembers)
	return appendObject(nil, ms), true
}

var (
	completeType       = []byte(`"complete"`)
	resultTypeName     = []byte("resultType")
	metaName           = []byte("_meta")
	metaServerInfoName = []byte(MetaServerInfo)
)

func compareMembers(a, b member) int { return bytes.Compare(a.name, b.name) }

// appendObject appends the object of ms, in their order, to b.
func appendObject(b []byte, ms []member) []byte {
	n := 2
	for _, m := range ms {
		n += len(m.name) + len(m.val) + 4
	}
	b = slices.Grow(b, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// splitObject appends the members of raw, which must be one compact JSON
// object, to ms. ok is false for anything else, for a member name that is
// not plain printable ASCII (escaped, or one encoding/json would write
// otherwise), a name given twice, or more than fastMembers members.
func splitObject(raw []byte, ms []member) (_ []member, ok bool) {
	if len(raw) < 2 || raw[0] != '{' {
		return nil, false
	}
	s := scanner{b: raw, trusted: true}
	i := 1
	if raw[i] == '}' {
		return ms, len(raw) == 2
	}
	for {
		if i >= len(raw) || raw[i] != '"' || len(ms) == fastMembers {
			return nil, false
		}
		kend, err := s.str(i)
		if err != nil {
			return nil, false
		}
		name := raw[i+1 : kend-1]
		for _, c := range name {
			if !jsPlain[c] {
				return nil, false
			}
		}
		if kend >= len(raw) || raw[kend] != ':' {
			return nil, false
		}
		end, err := s.value(kend+1, 1)
		if err != nil || end >= len(raw) {
			return nil, false
		}
		for _, m := range ms {
			if bytes.Equal(m.name, name) {
				return nil, false
			}
		}
		ms = append(ms, member{name, raw[kend+1 : end]})
		switch raw[end] {
		case ',':
			i = end + 1
		case '}':
			return ms, end+1 == len(raw) && s.wsEnd == 0
		default:
			return nil, false
		}
	}
}

// metaWithServerInfo returns the _meta object mv (nil: none) with
// serverInfo under MetaServerInfo, sorted as decorateSlow writes it, and
// add true; add is false when mv has it already. ok is false when mv is
// not an object splitObject takes.
func metaWithServerInfo(mv []byte, serverInfo Implementation) (out []byte, add, ok bool) {
	var buf [fastMembers]member
	ms := buf[:0]
	if mv != nil {
		if ms, ok = splitObject(mv, ms); !ok {
			return nil, false, false
		}
		for _, m := range ms {
			if string(m.name) == MetaServerInfo {
				return mv, false, true
			}
		}
		if len(ms) == fastMembers {
			return nil, false, false
		}
	}
	si, err := serverInfoJSON(serverInfo)
	if err != nil {
		return nil, false, false
	}
	ms = append(ms, member{metaServerInfoName, si})
	slices.SortFunc(ms, compareMembers)
	return appendObject(nil, ms), true, true
}

// serverInfoJSON is marshal(serverInfo), kept for the next call: a server
// decorates every result with the same one.
func serverInfoJSON(si Implementation) ([]byte, error) {
	if len(si.Icons) > 0 {
		return marshal(si)
	}
	if c := lastServerInfo.Load(); c != nil && c.si == si.plain() {
		return c.json, nil
	}
	b, err := marshal(si)
	if err != nil {
		return nil, err
	}
	lastServerInfo.Store(&serverInfoCache{si: si.plain(), json: b})
	return b, nil
}

// plainImplementation is an Implementation without its icons: comparable.
type plainImplementation struct {
	name, title, version, description, websiteURL string
}

func (i Implementation) plain() plainImplementation {
	return plainImplementation{i.Name, i.Title, i.Version, i.Description, i.WebsiteURL}
}

type serverInfoCache struct {
	si   plainImplementation
	json []byte // never modified: appendObject copies it
}

var lastServerInfo atomic.Pointer[serverInfoCache]

// NewResultFor is NewResponse with the result decorated for rev (see DecorateResult).
func NewResultFor(rev string, serverInfo Implementation, id ID, result any) (*Message, error) {
	raw, err := DecorateResult(rev, serverInfo, result)
	if err != nil {
		return nil, err
	}
	return &Message{JSONRPC: "2.0", ID: &id, Result: raw}, nil
}

// TextBlocks returns the text of each text block, in order.
func (r *CallToolResult) TextBlocks() []string {
	var out []string
	for _, c := range r.Content {
		if c.Type == ContentText {
			out = append(out, c.Text)
		}
	}
	return out
}

// Text returns the text blocks joined with "\n".
func (r *CallToolResult) Text() string { return strings.Join(r.TextBlocks(), "\n") }

// ContentTypes returns the type of each content block, in order.
func (r *CallToolResult) ContentTypes() []string {
	out := make([]string, len(r.Content))
	for i, c := range r.Content {
		out[i] = c.Type
	}
	return out
}

// ErrorMessage returns the result's text when it is an error result, and ""
// otherwise. An error result without text gets a generic message.
func (r *CallToolResult) ErrorMessage() string {
	if !r.IsError {
		return ""
	}
	if t := r.Text(); t != "" {
		return t
	}
	return "tool returned an error without text"
}

// ErrorResult returns an isError result with one text block.
func ErrorResult(msg string) *CallToolResult {
	return &CallToolResult{Content: []Content{TextContent(msg)}, IsError: true}
}

// TextResult returns a successful result with one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{TextContent(text)}}
}
