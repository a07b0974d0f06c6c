// Package version holds the one release number every mcpipe binary reports:
// in --version, in the serverInfo mcp-route sends and in the clientInfo
// mcp-call sends. The binaries are released together, so they share it.
//
// A release build (tools/release.sh) stamps both variables with the linker:
//
//	go build -ldflags "-X github.com/mcpipe/mcpipe/internal/version.Number=1.2.3 -X github.com/mcpipe/mcpipe/internal/version.Commit=GITHASH"
//
// Only --version shows the commit (String); the protocol's serverInfo and
// clientInfo carry Number alone, a plain version as MCP expects.
package version

// Number is the release.
var Number = "0.1.0"

// Commit is the git commit a release was built from ("-dirty" appended when
// the tree had changes); empty in builds that were not stamped (go build,
// go install, Bazel).
var Commit = ""

// String is what --version prints after the program's name: the number, and
// the commit when the build was stamped ("1.2.3 (commit 0123abcd...)").
func String() string {
	if Commit == "" {
		return Number
	}
	return Number + " (commit " + Commit + ")"
}
