// Package testbin finds the mcpipe binaries that tests run as real processes.
//
// Under Bazel a test declares the binary as data and passes its runfiles path
// in an environment variable, for example
//
//	data = ["//mcp-route"],
//	env = {"MCP_ROUTE_BIN": "$(rootpath //mcp-route)"},
//
// and Path resolves it under $TEST_SRCDIR/$TEST_WORKSPACE. Under plain
// `go test` the variable is unset, and Path builds the package with `go build`
// into a directory that lives as long as the test process, once per package.
//
// Path is safe for concurrent use by parallel tests.
package testbin

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const modulePath = "github.com/mcpipe/mcpipe"

var (
	mu     sync.Mutex
	built  = map[string]string{}
	tmpDir string
)

// Path returns the absolute path of the binary built from pkg, a directory
// relative to the module root such as "mcp-route". envVar names the variable
// a Bazel test sets to the binary's runfiles path. It fails the test when the
// binary cannot be found or built.
func Path(t testing.TB, envVar, pkg string) string {
	t.Helper()
	if rel := os.Getenv(envVar); rel != "" {
		if filepath.IsAbs(rel) {
			return rel
		}
		return filepath.Join(os.Getenv("TEST_SRCDIR"), os.Getenv("TEST_WORKSPACE"), rel)
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkg]; ok {
		return p
	}
	if tmpDir == "" {
		d, err := os.MkdirTemp("", "mcpipe-testbin-")
		if err != nil {
			t.Fatalf("testbin: %v", err)
		}
		tmpDir = d
	}
	out := filepath.Join(tmpDir, path.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, modulePath+"/"+strings.TrimPrefix(pkg, "./"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testbin: go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out
}

// Cleanup removes the binaries Path built. Call it from TestMain after m.Run;
// it is harmless when nothing was built.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
		tmpDir = ""
		built = map[string]string{}
	}
}
