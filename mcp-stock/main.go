// Command mcp-stock is the stock tool pack for mcp-route: 32 tools that
// work on files under a root, in one multi-call binary.
//
//	mcp-stock install DIR [--readonly]
//	mcp-stock list [--readonly] [--json]
//	mcp-stock TOOL [--mcp-describe | --help]
//	TOOL [--mcp-describe | --help]      (through a link made by install)
//
// Run through a link named after a tool, or as `mcp-stock TOOL`, it is that
// tool: it reads the arguments object on stdin and works under MCP_ROOT.
// With MCP_WORKER=1 in its environment it is a worker that serves calls of
// every stock tool, one request per line, as mcp-route runs tools whose
// definitions say run.mode "worker" (all 32 do).
// The roster, the limits and the refusals are documented in package
// github.com/mcpipe/mcpipe/mcp-stock/stock.
//
// Exit status: 0 ok; 1 the call or command failed (message on stderr);
// 2 usage error.
package main

import (
	"os"

	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
	"github.com/mcpipe/mcpipe/mcp-stock/stock"
)

func main() {
	os.Exit(stock.Main(tool.OS(), version.String()))
}
