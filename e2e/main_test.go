// Package e2e holds end-to-end tests: the real mcpipe binaries driven
// through pipes, with real tool processes written into t.TempDir().
//
// Under Bazel the binaries come from runfiles (MCP_ROUTE_BIN=$(rootpath
// //mcp-route)) and the MCP schemas from MCP_SPEC_DIR; under plain `go test`
// the binaries are built once per run (internal/testbin) and the schemas are
// found by walking up to shared/mcp-spec. Without schemas the tests still
// run, minus the schema checks (logged once).
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

// haveSpec reports whether the MCP schemas are available; set in TestMain.
var haveSpec bool

// specProbe is enough of a testing.TB for spectest.Dir (which calls only
// Helper and Skipf) to tell whether the schemas exist without skipping a
// real test; any other method would panic on the nil embedded TB.
type specProbe struct {
	testing.TB
	skipped bool
}

func (p *specProbe) Helper()              {}
func (p *specProbe) Skipf(string, ...any) { p.skipped = true }
func (p *specProbe) Skip(...any)          { p.skipped = true }
func (p *specProbe) SkipNow()             { p.skipped = true }

func TestMain(m *testing.M) {
	closeStrayFDs()
	p := &specProbe{}
	haveSpec = spectest.Dir(p) != "" && !p.skipped
	if !haveSpec {
		fmt.Fprintf(os.Stderr, "e2e: MCP schemas not found (set %s): schema checks skipped\n", spectest.EnvDir)
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
