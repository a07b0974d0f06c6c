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

// The completion scripts of the real binary: bash sourced in a real bash
// completes the flags, the subcommands, pin's own flags only after pin,
// and a flag's values; zsh and fish read theirs without a syntax error
// (where installed). A shell that is not bash, zsh or fish is a usage
// error.
func TestCompletionBinary(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	script := func(shell string) string {
		t.Helper()
		out, err := exec.Command(bin, "completion", shell).Output()
		if err != nil {
			t.Fatalf("mcp-route completion %s: %v", shell, err)
		}
		return string(out)
	}
	bashScript := script("bash")
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "tools"), 0o755)
	os.WriteFile(filepath.Join(dir, "tokens"), nil, 0o600)
	complete := func(line string) []string {
		t.Helper()
		return completetest.Bash(t, bashScript, dir, line)
	}
	has := completetest.Has
	if got := complete("mcp-route --"); !has(got, "--tools", "--root", "--http", "--session-key-file", "--pin", "--upstream", "--confine", "--verbose") || has(got, "--dry-run") {
		t.Errorf("mcp-route --: %q", got)
	}
	if got := complete("mcp-route "); !has(got, "new", "pin", "completion") {
		t.Errorf("mcp-route: %q", got)
	}
	if got := complete("mcp-route pin --"); !has(got, "--dry-run", "--accept", "--all", "--pin", "--upstream") {
		t.Errorf("mcp-route pin --: %q", got)
	}
	if got := complete("mcp-route --confine "); strings.Join(got, " ") != "auto require off" {
		t.Errorf("mcp-route --confine: %q", got)
	}
	if got := complete("mcp-route new --lang "); strings.Join(got, " ") != "sh go python node" {
		t.Errorf("mcp-route new --lang: %q", got)
	}
	if got := complete("mcp-route --tools t"); strings.Join(got, " ") != "tools" {
		t.Errorf("mcp-route --tools t: %q, want the directory only", got)
	}
	if got := complete("mcp-route --http-token-file t"); !has(got, "tools", "tokens") {
		t.Errorf("mcp-route --http-token-file t: %q", got)
	}
	if got := complete("mcp-route completion "); strings.Join(got, " ") != "bash zsh fish" {
		t.Errorf("mcp-route completion: %q", got)
	}
	for _, c := range []struct{ shell, flag string }{{"zsh", "-n"}, {"fish", "--no-execute"}} {
		path, err := exec.LookPath(c.shell)
		if err != nil {
			t.Logf("%s not installed: its script is not checked", c.shell)
			continue
		}
		f := filepath.Join(dir, "script."+c.shell)
		os.WriteFile(f, []byte(script(c.shell)), 0o644)
		if out, err := exec.Command(path, c.flag, f).CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", c.shell, c.flag, err, out)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "bash") {
			t.Errorf("mcp-route %q: exit %d (%v), %q", args, code, err, out)
		}
	}
}

// --help and the README say the same about the terminal: confined tools
// may not open /dev/tty (internal/confine's Devices leave it out).
func TestHelpSaysNoTTY(t *testing.T) {
	_, out, _ := runWith(t, "", "--help")
	if !strings.Contains(out, "use /dev/null, zero, random and\nurandom (not /dev/tty:") || strings.Contains(out, "urandom and tty") {
		t.Errorf("--help on devices:\n%s", out)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Skip("README.md not beside the test:", err)
	}
	if !strings.Contains(string(readme), "(not `/dev/tty`") {
		t.Errorf("README.md does not say tools may not use /dev/tty")
	}
}
