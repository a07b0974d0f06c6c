// Package version holds the one release number every mcpipe binary reports:
// in --version, in the serverInfo mcp-route sends and in the clientInfo
// mcp-call sends. The binaries are released together, so they share it.
package version

// Number is the release. A build may override it:
//
//	go build -ldflags "-X github.com/mcpipe/mcpipe/internal/version.Number=1.2.3"
var Number = "0.1.0"
