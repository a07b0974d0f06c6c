package codec

import (
	"encoding/json"
	"fmt"
	"strings"
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
