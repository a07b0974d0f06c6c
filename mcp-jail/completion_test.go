package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/complete/completetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// mcp-jail's bash completion, from the real binary, in a real bash: the
// flags, directories after --root, paths as arguments.
func TestCompletionBinary(t *testing.T) {
	bin := testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail")
	script, err := exec.Command(bin, "completion", "bash").Output()
	if err != nil {
		t.Fatalf("mcp-jail completion bash: %v", err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "some.txt"), nil, 0o644)
	complete := func(line string) string {
		t.Helper()
		return strings.Join(completetest.Bash(t, string(script), dir, line), " ")
	}
	if got := complete("mcp-jail --"); !strings.Contains(got, "--root") || !strings.Contains(got, "--exec") || !strings.Contains(got, "--allow-write") {
		t.Errorf("mcp-jail --: %q", got)
	}
	if got := complete("mcp-jail --root s"); got != "sub" {
		t.Errorf("mcp-jail --root s: %q, want the directory only", got)
	}
	if got := complete("mcp-jail --root sub s"); got != "some.txt sub" && got != "sub some.txt" {
		t.Errorf("mcp-jail --root sub s: %q, want the paths", got)
	}
	cmd := exec.Command(bin, "completion", "csh")
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "want bash, zsh, fish") {
		t.Errorf("mcp-jail completion csh: exit %d, %q", cmd.ProcessState.ExitCode(), out)
	}
}
