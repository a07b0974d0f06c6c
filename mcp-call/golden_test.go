package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/internal/transcript"
	"github.com/mcpipe/mcpipe/internal/version"
)

// goldenArgs is a transcript's command line: its args, then the fake
// server its "mode" section names (none: no server).
func goldenArgs(tr *transcript.Transcript) []string {
	argv := tr.Args()
	if mode, _ := tr.Section("mode"); strings.TrimSpace(mode) != "" {
		argv = append(argv, fake(strings.TrimSpace(mode))...)
	}
	return argv
}

// devStamp makes stderr say "dev" whatever version the build stamps (the
// trace transcripts show clientInfo).
func devStamp(s string) string {
	stamp := `{"name":"mcp-call","version":` + strconv.Quote(version.Number) + `}`
	return strings.ReplaceAll(s, stamp, `{"name":"mcp-call","version":"dev"}`)
}

// TestGolden runs each testdata/*.txtar (the internal/transcript format;
// "mode" names the fake server) through run; -update rewrites the expected
// sections.
func TestGolden(t *testing.T) {
	transcript.Run(t, "testdata/*.txtar", func(t *testing.T, tr *transcript.Transcript) transcript.Result {
		r := runT(t, tr.Stdin(), nil, goldenArgs(tr)...)
		return transcript.Result{Stdout: r.stdout, Stderr: devStamp(r.stderr), Exit: r.code}
	})
}

// TestBinaryGolden runs the same transcripts through the built mcp-call,
// with no $MCP_SERVER in its environment.
func TestBinaryGolden(t *testing.T) {
	bin := testbin.Path(t, "MCP_CALL_BIN", "mcp-call")
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MCP_SERVER=") {
			environ = append(environ, kv)
		}
	}
	transcript.Verify(t, "testdata/*.txtar", func(t *testing.T, tr *transcript.Transcript) transcript.Result {
		cmd := exec.CommandContext(t.Context(), bin, goldenArgs(tr)...)
		cmd.Env = environ
		cmd.Stdin = strings.NewReader(tr.Stdin())
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return transcript.Result{Stdout: out.String(), Stderr: devStamp(errb.String()), Exit: code}
	})
}
