package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// TestDemo runs the README's main job, examples/demo/demo.sh, with the
// binaries under test (as `./bazelw run //examples/demo` does), and checks
// that it shows a user what the README promises: discovery, the tool list,
// calls and their results, a crash answered as an error, a refused escape,
// and a script that goes on after a crash.
func TestDemo(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash in PATH")
	}
	route := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	call := testbin.Path(t, "MCP_CALL_BIN", "mcp-call")
	stock := testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock")
	primes := testbin.Path(t, "EXAMPLE_PRIMES_BIN", "examples/tools/src/primes")
	// Only catches a hang: the demo takes seconds, a loaded machine
	// running the race-built binaries minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("..", "examples", "demo", "demo.sh"),
		route, call, stock, primes, filepath.Join("..", "examples", "tools"))
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{
		// 5 example tools, primes and the 32 stock tools; not the
		// directory's BUILD.bazel (plain go test passes the source tree).
		"mcp-route serving 38 executables from a tools directory",
		"era:               modern",
		"fs_read",
		"hello from a shell script over MCP",
		`{"count":10,"largest":29}`,
		"notes/todo.txt:2:fix the jail test",
		"3 notes/todo.txt",
		"killed by SIGSEGV",
		"../secret.txt: path escapes root",
		"still serving after the crash",
		"the worst of the three calls",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "a secret outside the jail") {
		t.Errorf("the demo printed the secret outside the jail:\n%s", out)
	}
}
