package codec_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// A minimal server loop: read frames, answer bad ones with the error the
// decoder gives, classify each request by era, and answer ping.
func Example() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
not json

{"jsonrpc":"2.0","id":"p","method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}
`)
	r := codec.NewReader(in, 0)
	w := codec.NewWriter(os.Stdout)
	sess := codec.NewSession()
	server := codec.Implementation{Name: "demo", Version: "1.0"}
	for {
		frame, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil { // an oversized line: answer it and go on
			_ = w.Write(codec.NewErrorResponse(nil, codec.AsError(err)))
			continue
		}
		msgs, _, err := codec.DecodeFrame(frame, sess.AllowBatch())
		var de *codec.DecodeError
		if errors.As(err, &de) {
			_ = w.Write(de.Response())
			continue
		}
		for _, m := range msgs {
			rev, cerr := sess.Classify(m)
			if !m.IsRequest() {
				continue
			}
			if cerr != nil {
				_ = w.Write(codec.NewErrorResponse(m.ID, cerr))
				continue
			}
			var result any = struct{}{}
			if m.Method == codec.MethodInitialize {
				result = codec.InitializeResult{ProtocolVersion: rev, ServerInfo: server,
					Capabilities: codec.ServerCapabilities{Tools: &codec.ToolsCapability{}}}
			}
			resp, _ := codec.NewResultFor(rev, server, *m.ID, result)
			_ = w.Write(resp)
		}
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{}},"protocolVersion":"2025-06-18","serverInfo":{"name":"demo","version":"1.0"}}}
	// {"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null at offset 1"}}
	// {"jsonrpc":"2.0","id":"p","result":{}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32022,"message":"unsupported protocol version \"2099-01-01\"","data":{"supported":["2024-11-05","2025-03-26","2025-06-18","2025-11-25","2026-07-28"],"requested":"2099-01-01"}}}
}

func ExampleSchema_Validate() {
	s, _ := codec.CompileSchema([]byte(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["path"]}`))
	fmt.Println(s.Validate([]byte(`{"count":"3"}`)))
	// Output: missing required argument "path"; argument "count": got string, want integer
}

func ExampleCallToolResult_Text() {
	r := codec.CallToolResult{Content: []codec.Content{codec.TextContent("one"), codec.ImageContent("AA==", "image/png"), codec.TextContent("two")}}
	fmt.Printf("%q %v\n", r.Text(), r.ContentTypes())
	// Output: "one\ntwo" [text image text]
}
