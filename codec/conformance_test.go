package codec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/spectest"
)

var testServer = Implementation{Name: "mcpipe-test", Version: "0.0.1"}

func mustLine(t *testing.T, m *Message, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sampleTools() []Tool {
	return []Tool{
		{
			Name:        "fs_read",
			Title:       "Read file",
			Description: "Read a file under the root.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			Annotations: &ToolAnnotations{Title: "Read", ReadOnlyHint: Bool(true), DestructiveHint: Bool(false), IdempotentHint: Bool(true), OpenWorldHint: Bool(false)},
		},
		{
			Name:         "sys_info",
			Description:  "System information.",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"os":{"type":"string"}}}`),
		},
	}
}

// toolsFor drops the Tool members a revision does not define, the way a
// server fits its list to the client's revision (see ToolFor).
func toolsFor(rev string) []Tool {
	var out []Tool
	for _, tl := range sampleTools() {
		out = append(out, ToolFor(rev, tl))
	}
	return out
}

// Every message codec builds for revision R validates against R's schema.
func TestConformanceServerMessages(t *testing.T) {
	spectest.Dir(t)
	for _, rev := range Revisions {
		t.Run(rev, func(t *testing.T) {
			id := IntID(1)
			lineOf := func(m *Message, err error) []byte {
				t.Helper()
				return mustLine(t, m, err)
			}
			check := func(method string, line []byte) {
				t.Helper()
				spectest.CheckServerMessage(t, rev, method, line)
			}
			if IsLegacyRevision(rev) {
				res := InitializeResult{ProtocolVersion: rev, Capabilities: ServerCapabilities{Tools: &ToolsCapability{ListChanged: true}}, ServerInfo: testServer, Instructions: "Use the tools."}
				check(MethodInitialize, lineOf(NewResultFor(rev, testServer, id, res)))
				check(MethodPing, lineOf(NewResultFor(rev, testServer, id, nil)))
				n, err := NewNotification(MethodToolsListChanged, nil)
				check("", lineOf(n, err))
			} else {
				res := DiscoverResult{SupportedVersions: Revisions, Capabilities: ServerCapabilities{Tools: &ToolsCapability{}}, TTLMs: 0, CacheScope: CacheScopePublic, Instructions: "Use the tools."}
				check(MethodDiscover, lineOf(NewResultFor(rev, testServer, id, res)))
				e := UnsupportedVersionError("2099-01-01", Revisions)
				check("", mustLine(t, NewErrorResponse(&id, e), nil))
			}
			ttl := int64(60000)
			list := ListToolsResult{Tools: toolsFor(rev), TTLMs: &ttl, CacheScope: CacheScopePublic, NextCursor: "c2"}
			check(MethodToolsList, lineOf(NewResultFor(rev, testServer, StringID("list"), list)))
			empty := ListToolsResult{Tools: []Tool{}, TTLMs: &ttl, CacheScope: CacheScopePrivate}
			check(MethodToolsList, lineOf(NewResultFor(rev, testServer, StringID("list"), empty)))

			for name, res := range sampleResults(rev) {
				t.Run(name, func(t *testing.T) {
					m, err := NewResultFor(rev, testServer, IntID(9), CallToolResultFor(rev, res))
					spectest.CheckServerMessage(t, rev, MethodToolsCall, mustLine(t, m, err))
				})
			}
			check("", mustLine(t, NewErrorResponse(&id, Errorf(CodeMethodNotFound, "method not found: %s", "x")), nil))
			check("", mustLine(t, NewErrorResponse(&id, Errorf(CodeInvalidParams, "unknown tool %q", "x")), nil))
			if rev >= Rev20251125 {
				// Older schemas require an id on every error response; see
				// Message.MarshalJSON.
				check("", mustLine(t, NewErrorResponse(nil, NewError(CodeParseError, "parse error")), nil))
			}
			total := 4.0
			p, err := NewNotification(MethodProgress, ProgressParams{ProgressToken: json.RawMessage(`"tok"`), Progress: 1, Total: &total, Message: "step 1"})
			check("", lineOf(p, err))
			p, err = NewNotification(MethodProgress, ProgressParams{ProgressToken: json.RawMessage(`7`), Progress: 0.5})
			check("", lineOf(p, err))
			if BatchesAllowed(rev) {
				r1, _ := NewResponse(IntID(1), nil)
				r2 := NewErrorResponse(&id, ErrMethodNotFound)
				var buf strings.Builder
				w := NewWriter(&buf)
				if err := w.WriteBatch([]*Message{r1, r2}); err != nil {
					t.Fatal(err)
				}
				check(MethodPing, []byte(buf.String()))
			}
		})
	}
}

func sampleResults(rev string) map[string]*CallToolResult {
	size := int64(12)
	out := map[string]*CallToolResult{
		"text":          TextResult("hello <world> & you\nline 2"),
		"empty text":    TextResult(""),
		"no content":    {Content: []Content{}},
		"error":         ErrorResult("timed out after 30s"),
		"image":         {Content: []Content{ImageContent("iVBORw0KGgo=", "image/png")}},
		"embedded text": {Content: []Content{EmbeddedTextResource("file:///a.txt", "text/plain", "abc")}},
		"embedded blob": {Content: []Content{EmbeddedBlobResource("file:///a.bin", "application/octet-stream", "AAEC")}},
	}
	if rev >= Rev20250326 {
		out["audio"] = &CallToolResult{Content: []Content{AudioContent("UklGRg==", "audio/wav")}}
	}
	if rev >= Rev20250618 {
		link := ResourceLinkContent("file:///a.txt", "a.txt")
		link.Title, link.Description, link.MimeType, link.Size = "A", "a file", "text/plain", &size
		out["resource link"] = &CallToolResult{Content: []Content{link}}
		out["structured"] = &CallToolResult{Content: []Content{TextContent(`{"os":"linux"}`)}, StructuredContent: json.RawMessage(`{"os":"linux"}`)}
	}
	return out
}

func TestConformanceClientMessages(t *testing.T) {
	spectest.Dir(t)
	client := Implementation{Name: "mcp-call", Version: "0.0.1"}
	for _, rev := range Revisions {
		t.Run(rev, func(t *testing.T) {
			check := func(m *Message, err error) {
				t.Helper()
				spectest.CheckClientMessage(t, rev, mustLine(t, m, err))
			}
			if IsLegacyRevision(rev) {
				check(NewRequest(IntID(0), MethodInitialize, InitializeParams{ProtocolVersion: rev, Capabilities: ClientCapabilities{}, ClientInfo: client}))
				check(NewNotification(MethodInitialized, nil))
				check(NewRequest(IntID(1), MethodPing, nil))
				check(NewRequest(IntID(2), MethodToolsList, nil))
				check(NewRequest(IntID(3), MethodToolsList, ListToolsParams{Cursor: "c2"}))
				check(NewRequest(StringID("c"), MethodToolsCall, CallToolParams{Name: "fs_read", Arguments: json.RawMessage(`{"path":"a"}`)}))
				check(NewRequest(StringID("c"), MethodToolsCall, CallToolParams{Name: "fs_read", Meta: map[string]json.RawMessage{MetaProgressToken: json.RawMessage(`"p1"`)}}))
			} else {
				meta := ModernRequestMeta(rev, client, nil)
				check(NewRequest(IntID(1), MethodDiscover, map[string]any{"_meta": meta}))
				check(NewRequest(IntID(2), MethodToolsList, ListToolsParams{Meta: meta}))
				check(NewRequest(IntID(3), MethodToolsList, ListToolsParams{Cursor: "c2", Meta: meta}))
				withToken := ModernRequestMeta(rev, client, json.RawMessage(`5`))
				check(NewRequest(StringID("c"), MethodToolsCall, CallToolParams{Name: "fs_read", Arguments: json.RawMessage(`{"path":"a"}`), Meta: withToken}))
			}
			id := StringID("c")
			check(NewNotification(MethodCancelled, CancelledParams{RequestID: &id, Reason: "user"}))
		})
	}
}

// codec decodes every example of 2026-07-28: messages through DecodeFrame,
// payloads into the matching codec type, and re-encodes them to documents
// that still validate.
func TestConformanceExamples(t *testing.T) {
	dir := filepath.Join(spectest.Dir(t), Rev20260728, "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no examples in %s", dir)
	}
	decoded := 0
	for _, f := range files {
		def := filepath.Base(filepath.Dir(f))
		t.Run(def+"/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var probe map[string]json.RawMessage
			_ = json.Unmarshal(data, &probe)
			if _, ok := probe["jsonrpc"]; ok {
				msgs, _, err := DecodeFrame(data, false)
				if err != nil {
					t.Fatalf("DecodeFrame: %v", err)
				}
				out, err := msgs[0].MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				spectest.Validate(t, Rev20260728, def, out)
				decoded++
			}
			target := exampleTarget(def)
			if target == nil {
				return
			}
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(target); err != nil {
				t.Fatalf("decode into %T: %v", target, err)
			}
			out, err := Marshal(target)
			if err != nil {
				t.Fatal(err)
			}
			spectest.Validate(t, Rev20260728, def, out)
			decoded++
		})
	}
	if decoded == 0 {
		t.Error("no example was decoded")
	}
}

func exampleTarget(def string) any {
	switch def {
	case "CallToolResult":
		return new(CallToolResult)
	case "CallToolRequestParams":
		return new(CallToolParams)
	case "DiscoverResult":
		return new(DiscoverResult)
	case "ListToolsResult":
		return new(ListToolsResult)
	case "Tool":
		return new(Tool)
	case "ProgressNotificationParams":
		return new(ProgressParams)
	case "CancelledNotificationParams":
		return new(CancelledParams)
	case "TextContent", "ImageContent", "AudioContent", "ResourceLink", "EmbeddedResource":
		return new(Content)
	case "TextResourceContents", "BlobResourceContents":
		return new(ResourceContents)
	case "ServerCapabilities":
		return new(ServerCapabilities)
	case "Implementation":
		return new(Implementation)
	case "PaginatedRequestParams":
		return new(ListToolsParams)
	}
	return nil
}
