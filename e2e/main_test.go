// Package e2e holds end-to-end tests: the real mcpipe binaries driven
// through pipes, with real tool processes written into t.TempDir().
//
// Under Bazel the binaries come from runfiles (MCP_ROUTE_BIN=$(rootpath
// //mcp-route)); under plain `go test` they are built once per run
// (internal/testbin). The MCP schemas every message is checked against are
// the vendored third_party/mcp-spec (internal/spectest finds them, or
// $MCP_SPEC_DIR); without them the run fails at once.
package e2e

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

func TestMain(m *testing.M) {
	closeStrayFDs()
	// Every exchange is checked against the schemas: without them no test
	// here would prove conformance, so none runs.
	if _, err := spectest.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// closeStrayFDs marks every descriptor above stderr close-on-exec. A test
// process may inherit descriptors from whatever started it (a shell, a CI
// runner); without this they would pass through mcp-route to every tool and
// hide, or fake, a descriptor the router itself leaks.
func closeStrayFDs() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
