package codec

import (
	"encoding/json"
	"fmt"
)

// ToolFor returns t without the members revision rev does not define:
// annotations before 2025-03-26; title, outputSchema and _meta before
// 2025-06-18; icons before 2025-11-25. The schemas would tolerate the extra
// members, but an older client has no use for them.
func ToolFor(rev string, t Tool) Tool {
	if rev < Rev20250326 {
		t.Annotations = nil
	}
	if rev < Rev20250618 {
		t.Title = ""
		t.OutputSchema = nil
		t.Meta = nil
	}
	if rev < Rev20251125 {
		t.Icons = nil
	}
	return t
}

// ContentTypeSupported reports whether revision rev defines content blocks
// of type typ: audio from 2025-03-26, resource_link from 2025-06-18.
func ContentTypeSupported(rev, typ string) bool {
	switch typ {
	case ContentText, ContentImage, ContentResource:
		return true
	case ContentAudio:
		return rev >= Rev20250326
	case ContentResourceLink:
		return rev >= Rev20250618
	}
	return false
}

// CallToolResultFor returns r fitted to revision rev: a content block of a
// type rev does not define becomes a text block saying what it was (an
// audio clip, a link), so that the result validates and nothing is silently
// dropped. r itself is not modified.
func CallToolResultFor(rev string, r *CallToolResult) *CallToolResult {
	out := *r
	out.Content = make([]Content, len(r.Content))
	for i, c := range r.Content {
		if ContentTypeSupported(rev, c.Type) {
			out.Content[i] = c
			continue
		}
		switch c.Type {
		case ContentResourceLink:
			out.Content[i] = TextContent(fmt.Sprintf("resource: %s (%s)", c.URI, c.Name))
		case ContentAudio:
			out.Content[i] = TextContent(fmt.Sprintf("[audio %s, %d bytes base64, not supported by protocol %s]", c.MimeType, len(c.Data), rev))
		default:
			out.Content[i] = TextContent(fmt.Sprintf("[content of type %q not supported by protocol %s]", c.Type, rev))
		}
	}
	return &out
}

// ModernRequestMeta returns the _meta a client puts on every 2026-07-28
// request: the protocol version, the client's info, empty client
// capabilities, and the progress token when given.
func ModernRequestMeta(rev string, client Implementation, progressToken json.RawMessage) map[string]json.RawMessage {
	m := map[string]json.RawMessage{
		MetaProtocolVersion:    mustMarshal(rev),
		MetaClientCapabilities: json.RawMessage(`{}`),
	}
	if client.Name != "" {
		m[MetaClientInfo] = mustMarshal(client)
	}
	if len(progressToken) > 0 {
		m[MetaProgressToken] = progressToken
	}
	return m
}

func mustMarshal(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic(err) // only called with values that always marshal
	}
	return b
}
