// Package capture generates realistic MCP session captures (both sides of a
// legacy stdio session, one frame per line) for mcp-frame's tests and
// benchmarks. It is test data, not protocol code: every frame is valid for
// 2025-06-18 and compact, so the filter's output must equal its input.
package capture

import (
	"bytes"
	"fmt"
	"strings"
)

// Session returns a capture of at least size bytes: an initialize exchange,
// then rounds of a tools/list result with 30 tools, tool calls with
// arguments, their results (mostly short text, one 64 KiB text per round)
// and progress notifications.
func Session(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 128<<10)
	b.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"mcp-route","version":"1.0.0"}}}` + "\n")
	b.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	var tools []string
	for i := range 30 {
		tools = append(tools, fmt.Sprintf(`{"name":"fs_tool_%d","title":"Tool %d","description":"Reads things under the jail root and reports them in a useful, bounded way (%d).","inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"a path under the root"},"limit":{"type":"integer","minimum":1}},"required":["path"]},"annotations":{"readOnlyHint":true}}`, i, i, i))
	}
	toolList := strings.Join(tools, ",")
	big := strings.Repeat(`line of file content with \"quotes\", tabs\tand unicode é ✓\n`, 64<<10/64)
	id := 1
	for b.Len() < size {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`+"\n", id)
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}`+"\n", id, toolList)
		id++
		for j := range 20 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fs_tool_%d","arguments":{"path":"src/pkg/file_%d.go","limit":100},"_meta":{"progressToken":"tok-%d"}}}`+"\n", id, j, j, id)
			if j%2 == 0 {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-%d","progress":1,"total":2,"message":"halfway"}}`+"\n", id)
			}
			text := strings.Repeat("result text of a typical tool call. ", 30)
			if j == 0 {
				text = big
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`+"\n", id, text)
			id++
		}
	}
	return b.Bytes()
}
