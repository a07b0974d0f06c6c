// Command nullserver is the least a stdio MCP server written in Go can be:
// it answers every request line on stdin with an empty result, and
// initialize with the smallest valid InitializeResult, doing nothing else
// (no tools, no checks, no logging). BenchmarkColdStart (mcp-route)
// starts it beside mcp-route: the Go runtime's start, one pipe read and
// one write are the floor a cold start cannot go below on the machine at
// hand.
//
//	nullserver
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &req) == nil && req.ID != nil {
				result := `{}`
				if req.Method == "initialize" {
					result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"nullserver","version":"0"}}`
				}
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
				out.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
