package codec_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/spectest"
)

// meta is the _meta a 2026-07-28 request carries.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

type checkCase struct {
	name   string
	revs   []string // nil: every revision
	from   codec.Direction
	method string // the request a response answers
	line   string
	def    string // schema definition the line must (good) or must not (bad) satisfy; "" skips the schema check
	want   string // "" for a valid message, else a substring of the error
	code   int
}

var legacy = codec.LegacyRevisions
var modern = []string{codec.Rev20260728}

var checkCases = []checkCase{
	// Valid legacy client messages.
	{name: "initialize", revs: legacy, from: codec.FromClient, def: "InitializeRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
	{name: "initialized", revs: legacy, from: codec.FromClient, def: "InitializedNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{name: "ping", revs: legacy, from: codec.FromClient, def: "PingRequest",
		line: `{"jsonrpc":"2.0","id":"p","method":"ping"}`},
	{name: "tools/list", revs: legacy, from: codec.FromClient, def: "ListToolsRequest",
		line: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}}`},
	{name: "tools/call", revs: legacy, from: codec.FromClient, def: "CallToolRequest",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`},
	{name: "tools/call with _meta", revs: legacy, from: codec.FromClient, def: "CallToolRequest",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"tok","x":1},"name":"echo"}}`},
	{name: "progress with _meta", from: codec.FromServer, def: "ProgressNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"progressToken":"x","k":[1]},"progressToken":"t","progress":1}}`},
	{name: "initialize with full client info", revs: []string{codec.Rev20251125}, from: codec.FromClient, def: "InitializeRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","title":"C","version":"1","icons":[{"src":"https://x/i.png","sizes":["48x48"]}]},"_meta":{"progressToken":1}}}`},
	{name: "initialize result with full server info", revs: []string{codec.Rev20251125}, from: codec.FromServer, method: "initialize", def: "InitializeResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{},"completions":{},"prompts":{},"resources":{"subscribe":true}},"serverInfo":{"name":"s","title":"S","version":"1","websiteUrl":"https://x"},"instructions":"hi","_meta":{"a":1}}}`},
	{name: "rich tool list", revs: []string{codec.Rev20251125, codec.Rev20260728}, from: codec.FromServer, method: "tools/list", def: "ListToolsResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"t","title":"T","description":"d","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"icons":[{"src":"https://x/i.png"}],"_meta":{"k":1}}]}}`},
	{name: "prompts and resources", revs: []string{codec.Rev20250618}, from: codec.FromServer, method: "prompts/list", def: "ListPromptsResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"p","title":"P","description":"d","arguments":[{"name":"a","required":true,"description":"x","title":"A"}]}],"nextCursor":"c"}}`},
	{name: "resources/list result", revs: []string{codec.Rev20250618}, from: codec.FromServer, method: "resources/list", def: "ListResourcesResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resources":[{"uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":3,"annotations":{"priority":0.5}}]}}`},
	{name: "resources/read result", revs: []string{codec.Rev20250618}, from: codec.FromServer, method: "resources/read", def: "ReadResourceResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"x"},{"uri":"file:///b","blob":"AA=="}]}}`},
	{name: "completion with resource ref", revs: []string{codec.Rev20250618}, from: codec.FromClient, def: "CompleteRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"file:///{x}"},"argument":{"name":"x","value":"a"}}}`},
	{name: "cancelled", revs: legacy, from: codec.FromClient, def: "CancelledNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"bored"}}`},
	{name: "extension method", from: codec.FromClient,
		line: `{"jsonrpc":"2.0","method":"x-vendor/hello","params":{"anything":[1]}}`},
	{name: "client answers a server ping", revs: legacy, from: codec.FromClient, method: "ping",
		line: `{"jsonrpc":"2.0","id":7,"result":{}}`},

	// Valid legacy server messages.
	{name: "initialize result", revs: legacy, from: codec.FromServer, method: "initialize", def: "InitializeResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
	{name: "tools/list result", revs: legacy, from: codec.FromServer, method: "tools/list", def: "ListToolsResult",
		line: `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`},
	{name: "tools/call result", revs: legacy, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}`},
	{name: "result of unknown request", revs: legacy, from: codec.FromServer,
		line: `{"jsonrpc":"2.0","id":3,"result":{"whatever":true}}`},
	{name: "error response", from: codec.FromServer,
		line: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found"}}`},
	{name: "progress", from: codec.FromServer, def: "ProgressNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2}}`},
	{name: "list_changed", from: codec.FromServer, def: "ToolListChangedNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	{name: "log message", from: codec.FromServer, def: "LoggingMessageNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"x":1}}}`},
	{name: "server ping", revs: legacy, from: codec.FromServer, def: "PingRequest",
		line: `{"jsonrpc":"2.0","id":"s1","method":"ping"}`},
	{name: "roots/list", revs: legacy, from: codec.FromServer, def: "ListRootsRequest",
		line: `{"jsonrpc":"2.0","id":"s2","method":"roots/list"}`},

	// Valid 2026-07-28 messages.
	{name: "modern discover", revs: modern, from: codec.FromClient, def: "DiscoverRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
	{name: "modern tools/call", revs: modern, from: codec.FromClient, def: "CallToolRequest",
		line: `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{}}}`},
	{name: "modern tools/list", revs: modern, from: codec.FromClient, def: "ListToolsRequest",
		line: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`},
	{name: "modern extension request", revs: modern, from: codec.FromClient,
		line: `{"jsonrpc":"2.0","id":2,"method":"x/y","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
	{name: "modern discover result", revs: modern, from: codec.FromServer, method: "server/discover", def: "DiscoverResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"public"}}`},
	{name: "modern tools/list result", revs: modern, from: codec.FromServer, method: "tools/list", def: "ListToolsResult",
		line: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"ttlMs":1000,"cacheScope":"private"}}`},
	{name: "modern tools/call result", revs: modern, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":"c","result":{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`},
	{name: "modern input_required", revs: modern, from: codec.FromServer, method: "tools/call", def: "InputRequiredResult",
		line: `{"jsonrpc":"2.0","id":"c","result":{"resultType":"input_required","requestState":"abc"}}`},

	// Bad: direction.
	{name: "server sends tools/call", from: codec.FromServer, want: "tools/call is sent by the client, not the server", code: codec.CodeInvalidRequest,
		revs: legacy, line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`},
	{name: "client sends list_changed", from: codec.FromClient, want: "sent by the server, not the client", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
	{name: "server sends initialized", revs: legacy, from: codec.FromServer, want: "sent by the client", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{name: "modern client response", revs: modern, from: codec.FromClient, want: "client sends no responses", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`},
	{name: "modern server request", revs: modern, from: codec.FromServer, want: "server sends no requests", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","id":1,"method":"x/y","params":{}}`},

	// Bad: era.
	{name: "initialize in 2026", revs: modern, from: codec.FromClient, want: "initialize is not a method of revision 2026-07-28", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
	{name: "discover in legacy", revs: legacy, from: codec.FromClient, want: "server/discover is not a method of revision", code: codec.CodeInvalidRequest,
		line: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`},
	{name: "modern request without _meta", revs: modern, from: codec.FromClient, def: "ListToolsRequest", code: codec.CodeInvalidRequest,
		want: `tools/list: missing params._meta["io.modelcontextprotocol/protocolVersion"]`,
		line: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
	{name: "modern request _meta without version", revs: modern, from: codec.FromAny, def: "CallToolRequest", code: codec.CodeInvalidRequest,
		want: `missing params._meta["io.modelcontextprotocol/protocolVersion"]`,
		line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{},"name":"x"}}`},
	{name: "modern request without capabilities", revs: modern, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidRequest,
		want: `missing params._meta.io.modelcontextprotocol/clientCapabilities`,
		line: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"x"}}`},
	{name: "modern result without resultType", revs: modern, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "tools/call result: missing resultType",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
	{name: "modern result of unknown request without resultType", revs: modern, from: codec.FromServer, def: "Result", code: codec.CodeInvalidRequest,
		want: "result: missing resultType",
		line: `{"jsonrpc":"2.0","id":2,"result":{}}`},
	{name: "modern tools/list without ttlMs", revs: modern, from: codec.FromServer, method: "tools/list", def: "ListToolsResult", code: codec.CodeInvalidRequest,
		want: "tools/list result: missing ttlMs",
		line: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[],"cacheScope":"public"}}`},

	// Bad: params and results of known methods.
	{name: "tools/call without name", revs: legacy, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "tools/call: missing params.name",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}`},
	{name: "tools/call name not a string", revs: legacy, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "tools/call: params.name must be a string, not a number",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`},
	{name: "modern tools/call name not a string", revs: modern, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "tools/call: params.name must be a string, not a number",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":5}}`},
	{name: "tools/call without params", revs: legacy, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "tools/call: missing params",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call"}`},
	{name: "tools/call arguments an array", revs: legacy, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "params.arguments must be an object, not an array",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":[1]}}`},
	{name: "initialize without clientInfo.version", revs: legacy, from: codec.FromClient, def: "InitializeRequest", code: codec.CodeInvalidParams,
		want: "initialize: missing params.clientInfo.version",
		line: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c"}}}`},
	{name: "initialize result without serverInfo", revs: legacy, from: codec.FromServer, method: "initialize", def: "InitializeResult", code: codec.CodeInvalidRequest,
		want: "initialize result: missing serverInfo",
		line: `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`},
	{name: "tools/list result tool without inputSchema", revs: legacy, from: codec.FromServer, method: "tools/list", def: "ListToolsResult", code: codec.CodeInvalidRequest,
		want: "tools/list result: missing tools[0].inputSchema",
		line: `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x"}]}}`},
	{name: "tools/call result content not an array", revs: legacy, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "content must be an array, not a string",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":"hi"}}`},
	{name: "progress without token", from: codec.FromServer, def: "ProgressNotification", code: codec.CodeInvalidParams,
		want: "notifications/progress: missing params.progressToken",
		line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`},
	{name: "progress token a bool", from: codec.FromServer, def: "ProgressNotification", code: codec.CodeInvalidParams,
		want: "params.progressToken must be a string or an integer, not a boolean",
		line: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":true,"progress":1}}`},
	// A request's progress token is echoed in notifications/progress: a
	// string or an integer in every revision (JSONRPCRequest until
	// 2025-06-18, the request's own params from 2025-11-25).
	{name: "tools/call progress token an object", revs: []string{codec.Rev20241105, codec.Rev20250326, codec.Rev20250618}, from: codec.FromClient, def: "JSONRPCRequest", code: codec.CodeInvalidParams,
		want: "tools/call: params._meta.progressToken must be a string or an integer, not an object",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":{"a":1}},"name":"echo"}}`},
	{name: "tools/call progress token a float", revs: []string{codec.Rev20241105, codec.Rev20250326, codec.Rev20250618}, from: codec.FromClient, def: "JSONRPCRequest", code: codec.CodeInvalidParams,
		want: "tools/call: params._meta.progressToken must be a string or an integer, not the fractional number 1.5",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":1.5},"name":"echo"}}`},
	{name: "tools/call progress token an object 2025-11-25", revs: []string{codec.Rev20251125}, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidParams,
		want: "tools/call: params._meta.progressToken must be a string or an integer, not an object",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":{"a":1}},"name":"echo"}}`},
	{name: "tools/call progress token a float modern", revs: modern, from: codec.FromClient, def: "CallToolRequest", code: codec.CodeInvalidRequest,
		want: "params._meta.progressToken must be a string or an integer, not the fractional number 2.5",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":2.5},"name":"echo"}}`},
	{name: "tools/call progress token an integer", revs: legacy, from: codec.FromClient, def: "CallToolRequest",
		line: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"echo"}}`},
	// structuredContent is an object from 2025-06-18 (where it appears) to
	// 2025-11-25; before, an unknown member; from 2026-07-28, any value.
	{name: "tools/call result structuredContent a string", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "tools/call result: structuredContent must be an object, not a string",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":"hi"}}`},
	{name: "tools/call result structuredContent null", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "tools/call result: structuredContent must be an object, not null",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":null}}`},
	{name: "tools/call result structuredContent an array", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "tools/call result: structuredContent must be an object, not an array",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":[1]}}`},
	{name: "tools/call result structuredContent an object", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":{"n":1}}}`},
	{name: "tools/call result structuredContent before 2025-06-18", revs: []string{codec.Rev20241105, codec.Rev20250326}, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":2,"result":{"content":[],"structuredContent":"free"}}`},
	{name: "tools/call result structuredContent modern", revs: modern, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[],"structuredContent":"any value"}}`},
	// Other methods, held to their schema definitions.
	{name: "resources/read", revs: legacy, from: codec.FromClient, def: "ReadResourceRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}`},
	{name: "resources/read without uri", revs: legacy, from: codec.FromClient, def: "ReadResourceRequest", code: codec.CodeInvalidParams,
		want: "resources/read: missing params.uri",
		line: `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}`},
	{name: "prompts/get", revs: legacy, from: codec.FromClient, def: "GetPromptRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}}`},
	{name: "prompts/get result", revs: legacy, from: codec.FromServer, method: "prompts/get", def: "GetPromptResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}}`},
	{name: "prompts/get result message without role", revs: legacy, from: codec.FromServer, method: "prompts/get", def: "GetPromptResult", code: codec.CodeInvalidRequest,
		want: "missing messages[0].role",
		line: `{"jsonrpc":"2.0","id":1,"result":{"messages":[{"content":{"type":"text","text":"hi"}}]}}`},
	{name: "completion/complete", revs: legacy, from: codec.FromClient, def: "CompleteRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}}`},
	{name: "completion/complete without argument.value", revs: legacy, from: codec.FromClient, def: "CompleteRequest", code: codec.CodeInvalidParams,
		want: "missing params.argument.value",
		line: `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a"}}}`},
	{name: "sampling from the server", revs: legacy, from: codec.FromServer, def: "CreateMessageRequest",
		line: `{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`},
	{name: "sampling maxTokens not an integer", revs: legacy, from: codec.FromServer, def: "CreateMessageRequest", code: codec.CodeInvalidParams,
		want: "params.maxTokens must be an integer, not the fractional number 1.5",
		line: `{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1.5}}`},
	{name: "sampling from the client", revs: legacy, from: codec.FromClient, code: codec.CodeInvalidRequest,
		want: "sampling/createMessage is sent by the server, not the client",
		line: `{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`},
	{name: "elicitation before 2025-06-18", revs: []string{codec.Rev20241105, codec.Rev20250326}, from: codec.FromServer, code: codec.CodeInvalidRequest,
		want: "elicitation/create is not a method of revision",
		line: `{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}`},
	{name: "elicitation", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, def: "ElicitRequest",
		line: `{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}`},
	{name: "tasks/get only in 2025-11-25", revs: []string{codec.Rev20250618}, from: codec.FromClient, code: codec.CodeInvalidRequest,
		want: "tasks/get is not a method of revision 2025-06-18",
		line: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}`},
	{name: "tasks/get", revs: []string{codec.Rev20251125}, from: codec.FromServer, def: "GetTaskRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}`},
	{name: "log message without level", from: codec.FromServer, def: "LoggingMessageNotification", code: codec.CodeInvalidParams,
		want: "notifications/message: missing params.level",
		line: `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`},
	{name: "resources/updated", from: codec.FromServer, def: "ResourceUpdatedNotification",
		line: `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`},
	{name: "setLevel in 2026", revs: modern, from: codec.FromClient, code: codec.CodeInvalidRequest,
		want: "logging/setLevel is not a method of revision 2026-07-28",
		line: `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{` + meta + `,"level":"info"}}`},
	{name: "modern subscriptions/listen", revs: modern, from: codec.FromClient, def: "SubscriptionsListenRequest",
		line: `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"toolsListChanged":true}}}`},
	{name: "modern resources/list result without cacheScope", revs: modern, from: codec.FromServer, method: "resources/list", def: "ListResourcesResult", code: codec.CodeInvalidRequest,
		want: "resources/list result: missing cacheScope",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","resources":[],"ttlMs":5}}`},

	// Content blocks and tool schemas.
	{name: "every content type", revs: []string{codec.Rev20250618, codec.Rev20251125}, from: codec.FromServer, method: "tools/call", def: "CallToolResult",
		line: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"resource","resource":{"uri":"file:///a","text":"x"}},{"type":"resource","resource":{"uri":"file:///b","blob":"AA=="}}]}}`},
	{name: "text block without text", from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "missing content[1].text",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"},{"type":"text"}]}}`},
	{name: "image without mimeType", from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "missing content[0].mimeType",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"image","data":"AA=="}]}}`},
	{name: "unknown content type", from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: `content[0].type "video" is not a content type of revision`,
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"video","data":"AA=="}]}}`},
	{name: "resource_link before 2025-06-18", revs: []string{codec.Rev20241105, codec.Rev20250326}, from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: `"resource_link" is not a content type of revision`,
		line: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}}`},
	{name: "embedded resource without text or blob", from: codec.FromServer, method: "tools/call", def: "CallToolResult", code: codec.CodeInvalidRequest,
		want: "missing content[0].resource.text or content[0].resource.blob",
		line: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"resource","resource":{"uri":"file:///a"}}]}}`},
	{name: "inputSchema not an object schema", revs: legacy, from: codec.FromServer, method: "tools/list", def: "ListToolsResult", code: codec.CodeInvalidRequest,
		want: `tools[0].inputSchema.type must be "object", not "string"`,
		line: `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"string"}}]}}`},
	{name: "inputSchema without type", revs: legacy, from: codec.FromServer, method: "tools/list", def: "ListToolsResult", code: codec.CodeInvalidRequest,
		want: `missing tools[0].inputSchema.type`,
		line: `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{}}]}}`},

	// Stricter than the legacy schemas, which do not forbid the member.
	{name: "notification with an id", revs: legacy, from: codec.FromClient, code: codec.CodeInvalidRequest,
		want: "notifications/initialized is a notification: it must not carry an id",
		line: `{"jsonrpc":"2.0","id":9,"method":"notifications/initialized"}`},
	{name: "request without an id", revs: legacy, from: codec.FromClient, code: codec.CodeInvalidRequest,
		want: "ping is a request: it needs an id",
		line: `{"jsonrpc":"2.0","method":"ping"}`},
}

func revsOf(c checkCase) []string {
	if c.revs == nil {
		return codec.Revisions
	}
	return c.revs
}

func TestCheckMessage(t *testing.T) {
	for _, c := range checkCases {
		for _, rev := range revsOf(c) {
			t.Run(rev+"/"+c.name, func(t *testing.T) {
				msgs, _, err := codec.DecodeFrame([]byte(c.line), false)
				if err != nil {
					t.Fatalf("DecodeFrame: %v", err)
				}
				err = codec.CheckMessage(rev, c.from, msgs[0], c.method)
				if c.want == "" {
					if err != nil {
						t.Fatalf("CheckMessage = %v, want nil", err)
					}
				} else {
					if err == nil || !strings.Contains(err.Error(), c.want) {
						t.Fatalf("CheckMessage = %v, want an error containing %q", err, c.want)
					}
					if e := codec.AsError(err); e.Code != c.code {
						t.Errorf("code = %d, want %d", e.Code, c.code)
					}
				}
			})
		}
	}
}

// TestCheckMessageAgreesWithSchema holds the hand-written rules against the
// official schemas: each valid case satisfies its definition, and each bad
// case with a definition violates it.
func TestCheckMessageAgreesWithSchema(t *testing.T) {
	spectest.Dir(t)
	for _, c := range checkCases {
		if c.def == "" {
			continue
		}
		for _, rev := range revsOf(c) {
			t.Run(rev+"/"+c.name, func(t *testing.T) {
				if !spectest.HasDef(t, rev, c.def) {
					t.Skipf("%s has no %s", rev, c.def)
				}
				doc := []byte(c.line)
				if c.method != "" || strings.HasSuffix(c.def, "Result") {
					var env struct{ Result json.RawMessage }
					if err := json.Unmarshal(doc, &env); err != nil || env.Result == nil {
						t.Fatalf("case %s: no result", c.name)
					}
					doc = env.Result
				}
				err := spectest.Check(t, rev, c.def, doc)
				if c.want == "" && err != nil {
					t.Errorf("valid case fails the schema: %v", err)
				}
				if c.want != "" && err == nil {
					t.Errorf("bad case (%s) passes the schema's %s", c.want, c.def)
				}
			})
		}
	}
}

// TestCheckMessageExamples runs every JSON-RPC message among the official
// 2026-07-28 examples through DecodeFrame and CheckMessage.
func TestCheckMessageExamples(t *testing.T) {
	dir := filepath.Join(spectest.Dir(t), codec.Rev20260728, "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		t.Fatalf("no examples under %s", dir)
	}
	n := 0
	for _, f := range files {
		def := filepath.Base(filepath.Dir(f))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var probe struct {
			JSONRPC *string `json:"jsonrpc"`
		}
		if json.Unmarshal(b, &probe) != nil || probe.JSONRPC == nil {
			continue // a params object or a type, not a message
		}
		msgs, _, err := codec.DecodeFrame(b, false)
		if err != nil {
			t.Errorf("%s: DecodeFrame: %v", f, err)
			continue
		}
		method := ""
		if strings.HasSuffix(def, "ResultResponse") {
			method = exampleMethods[strings.TrimSuffix(def, "ResultResponse")]
		}
		from := codec.FromClient
		if msgs[0].IsResponse() || strings.HasSuffix(def, "Notification") && def != "CancelledNotification" {
			from = codec.FromServer
		}
		wantErr := strings.HasSuffix(def, "Error") && !msgs[0].IsResponse()
		if filepath.Base(f) == "read-resource-result-response.json" {
			// This example has no ttlMs and cacheScope, which ReadResourceResult
			// requires; it passes the schema only as an InputRequiredResult
			// (resultType any string). CheckMessage follows ReadResourceResult.
			wantErr = true
		}
		err = codec.CheckMessage(codec.Rev20260728, from, msgs[0], method)
		if (err != nil) != wantErr {
			t.Errorf("%s (%s, from %s): CheckMessage = %v", filepath.Base(f), def, from, err)
		}
		n++
	}
	t.Logf("checked %d example messages", n)
}

var exampleMethods = map[string]string{
	"CallTool": "tools/call", "Complete": "completion/complete", "Discover": "server/discover",
	"GetPrompt": "prompts/get", "ListPrompts": "prompts/list", "ListResourceTemplates": "resources/templates/list",
	"ListResources": "resources/list", "ListTools": "tools/list", "ReadResource": "resources/read",
	"SubscriptionsListen": "subscriptions/listen",
}

func TestDeclaredRevision(t *testing.T) {
	for _, c := range []struct {
		line, method, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "", "2025-03-26"},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, "", "2024-11-05"},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, "initialize", "2024-11-05"},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05"}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","serverInfo":{}}}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`, "", "2026-07-28"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", ""},
	} {
		msgs, _, err := codec.DecodeFrame([]byte(c.line), false)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := codec.DeclaredRevision(msgs[0], c.method)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("DeclaredRevision(%s, %q) = %q, %v; want %q", c.line, c.method, got, ok, c.want)
		}
	}
}

func TestGuessResultMethod(t *testing.T) {
	for line, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`: "initialize",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`:                                                           "",
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":[]}}`:                                           "server/discover",
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`:                                                                               "tools/list",
		`{"jsonrpc":"2.0","id":1,"result":{"content":"nope"}}`:                                                                         "tools/call",
		`{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`:                                                                            "resources/read",
		`{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}`:                                                                   "resources/templates/list",
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                                                                         "",
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`:                                                                    "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                                                                               "",
	} {
		m, err := codec.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.GuessResultMethod(m); got != want {
			t.Errorf("GuessResultMethod(%s) = %q, want %q", line, got, want)
		}
	}
}

func TestGuessAnyResultMethod(t *testing.T) {
	sampling := `{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
	elicit := `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"x"}}}`
	for _, c := range []struct{ rev, line, want string }{
		{codec.Rev20250618, sampling, "sampling/createMessage"},
		{codec.Rev20250618, elicit, "elicitation/create"},
		{codec.Rev20250326, elicit, ""}, // no elicitation yet: a client's answer all the same
		{codec.Rev20241105, `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`, "roots/list"},
		{codec.Rev20241105, `{"jsonrpc":"2.0","id":1,"result":{"content":"nope"}}`, "tools/call"},
		{codec.Rev20260728, sampling, "tools/call"}, // clients send no responses in 2026-07-28
		{codec.Rev20260728, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`, "tools/list"},
		{"1999-01-01", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[]}}`, "tools/list"},
		{codec.Rev20241105, `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`, ""},
		{codec.Rev20241105, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
	} {
		m, err := codec.DecodeMessage([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if got := codec.GuessAnyResultMethod(c.rev, m); got != c.want {
			t.Errorf("GuessAnyResultMethod(%s, %s) = %q, want %q", c.rev, c.line, got, c.want)
		}
	}
}

func TestParseDirection(t *testing.T) {
	for _, s := range []string{"any", "client", "server"} {
		d, err := codec.ParseDirection(s)
		if err != nil || d.String() != s {
			t.Errorf("ParseDirection(%q) = %v, %v", s, d, err)
		}
	}
	if _, err := codec.ParseDirection("both"); err == nil {
		t.Error("ParseDirection(both) succeeded")
	}
}

func TestCheckMessageErrorIs(t *testing.T) {
	msgs, _, _ := codec.DecodeFrame([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}`), false)
	err := codec.CheckMessage(codec.Rev20250618, codec.FromClient, msgs[0], "")
	if !errors.Is(err, codec.ErrInvalidParams) {
		t.Errorf("errors.Is(%v, ErrInvalidParams) = false", err)
	}
}

// TestCheckMessageNoFalsePositives mutates valid messages (each member of
// params or result, down to a few levels: removed, or replaced by a value of
// every JSON type) and requires that whenever CheckMessage refuses a
// mutant, the official schema refuses it too (its definition of the
// message, or for a request JSONRPCRequest). A filter that drops valid
// traffic is worse than one that misses a deep defect.
func TestCheckMessageNoFalsePositives(t *testing.T) {
	spectest.Dir(t)
	type seed struct {
		rev, def, method string
		from             codec.Direction
		line             string
	}
	var seeds []seed
	for _, c := range checkCases {
		if c.want != "" || c.def == "" {
			continue
		}
		for _, rev := range revsOf(c) {
			seeds = append(seeds, seed{rev, c.def, c.method, c.from, c.line})
		}
	}
	// The 2026-07-28 examples, checked against their plain definitions (a
	// ...ResultResponse admits any result as an InputRequiredResult).
	dir := filepath.Join(spectest.Dir(t), codec.Rev20260728, "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	for _, f := range files {
		def := filepath.Base(filepath.Dir(f))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var probe struct {
			JSONRPC *string `json:"jsonrpc"`
		}
		if json.Unmarshal(b, &probe) != nil || probe.JSONRPC == nil || strings.HasSuffix(def, "Error") {
			continue
		}
		s := seed{rev: codec.Rev20260728, def: def, from: codec.FromClient, line: string(b)}
		if strings.HasSuffix(def, "ResultResponse") {
			base := strings.TrimSuffix(def, "ResultResponse")
			s.def, s.method, s.from = base+"Result", exampleMethods[base], codec.FromServer
		} else if strings.HasSuffix(def, "Notification") && def != "CancelledNotification" {
			s.from = codec.FromServer
		}
		if !spectest.HasDef(t, s.rev, s.def) {
			continue
		}
		seeds = append(seeds, s)
	}
	replacements := []any{"s", 1, 1.5, true, nil, map[string]any{}, []any{}}
	mutants, refused, missed := 0, 0, 0
	for _, sd := range seeds {
		var msg map[string]any
		if err := json.Unmarshal([]byte(sd.line), &msg); err != nil {
			t.Fatal(err)
		}
		body := "params"
		if _, ok := msg["result"]; ok {
			body = "result"
		}
		if _, ok := msg[body]; !ok {
			continue
		}
		if m, _, err := codec.DecodeFrame([]byte(sd.line), false); err != nil || codec.CheckMessage(sd.rev, sd.from, m[0], sd.method) != nil {
			continue // a baseline CheckMessage refuses: the examples' known gap
		}
		var paths [][]any
		var walk func(v any, path []any, depth int)
		walk = func(v any, path []any, depth int) {
			if depth > 4 {
				return
			}
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					p := append(append([]any{}, path...), k)
					paths = append(paths, p)
					walk(e, p, depth+1)
				}
			case []any:
				if len(x) > 0 {
					p := append(append([]any{}, path...), 0)
					paths = append(paths, p)
					walk(x[0], p, depth+1)
				}
			}
		}
		walk(msg[body], []any{body}, 0)
		for _, p := range paths {
			for _, r := range append([]any{deleteMarker{}}, replacements...) {
				mut := mutate(msg, p, r)
				line, _ := json.Marshal(mut)
				ms, _, err := codec.DecodeFrame(line, false)
				if err != nil {
					continue // no longer a JSON-RPC message: DecodeFrame's business
				}
				mutants++
				cerr := codec.CheckMessage(sd.rev, sd.from, ms[0], sd.method)
				doc := line
				if body == "result" || strings.HasSuffix(sd.def, "Result") {
					doc, _ = json.Marshal(mut["result"])
				}
				schemaErr := spectest.Check(t, sd.rev, sd.def, doc)
				if _, isReq := mut["id"]; schemaErr == nil && body == "params" && isReq && spectest.HasDef(t, sd.rev, "JSONRPCRequest") {
					// Every request on the wire is a JSONRPCRequest too,
					// which until 2025-06-18 is where params._meta and its
					// progressToken are defined.
					schemaErr = spectest.Check(t, sd.rev, "JSONRPCRequest", line)
				}
				if cerr == nil {
					if schemaErr != nil {
						missed++
					}
					continue
				}
				refused++
				if schemaErr == nil {
					t.Errorf("%s %s: CheckMessage refuses what the schema's %s accepts: %v\n%s", sd.rev, sd.def, sd.def, cerr, line)
				}
			}
		}
	}
	// missed counts mutants only the schema refuses: the deep corners
	// CheckMessage leaves alone (see the comment at the top of check.go).
	t.Logf("%d seeds, %d mutants: %d refused by CheckMessage, %d more by the schema only", len(seeds), mutants, refused, missed)
}

type deleteMarker struct{}

// mutate returns a deep copy of v with the member at path deleted (r is a
// deleteMarker) or replaced by r.
func mutate(v map[string]any, path []any, r any) map[string]any {
	b, _ := json.Marshal(v)
	var c map[string]any
	json.Unmarshal(b, &c)
	var cur any = c
	for i, k := range path {
		last := i == len(path)-1
		switch x := cur.(type) {
		case map[string]any:
			key := k.(string)
			if last {
				if _, del := r.(deleteMarker); del {
					delete(x, key)
				} else {
					x[key] = r
				}
				return c
			}
			cur = x[key]
		case []any:
			idx := k.(int)
			if last {
				if _, del := r.(deleteMarker); del {
					x[idx] = "deleted"
				} else {
					x[idx] = r
				}
				return c
			}
			cur = x[idx]
		}
	}
	return c
}

// TestCheckToolResult: a tool's own CallToolResult is held to the content
// rules of every revision, and its structuredContent may be any value (the
// server fits it to the client's revision).
func TestCheckToolResult(t *testing.T) {
	for raw, want := range map[string]string{
		`{"content":[{"type":"text","text":"a"}]}`:                            "",
		`{"content":[],"structuredContent":[1,2]}`:                            "",
		`{"content":[],"structuredContent":"s","isError":true}`:               "",
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a"}]}`: "",
		`{"content":[{"type":"text","text":1}]}`:                              "tools/call result: content[0].text must be a string, not a number",
		`{"content":"x"}`:                                                     "tools/call result: content must be an array, not a string",
		`{}`:                                                                  "tools/call result: missing content",
		`{"content":[],"isError":"yes"}`:                                      "tools/call result: isError must be a boolean, not a string",
		`[1]`:                                                                 "tools/call result must be an object, not an array",
	} {
		err := codec.CheckToolResult(json.RawMessage(raw))
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("%s: %q, want %q", raw, got, want)
			}
		} else if want != "" {
			t.Errorf("%s: accepted, want %q", raw, want)
		}
	}
}
