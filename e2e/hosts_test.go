package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

type hostConfig struct {
	MCPServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	} `json:"mcpServers"`
}

func readHostConfig(t *testing.T, path string) hostConfig {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("host configuration not available: %v", err)
	}
	var c hostConfig
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(c.MCPServers) == 0 {
		t.Fatalf("%s: no mcpServers", path)
	}
	return c
}

// The Claude Code configuration works as written, from the repository root:
// its server lists the example tools.
func TestHostConfigClaudeCode(t *testing.T) {
	c := readHostConfig(t, "../examples/hosts/claude-code/.mcp.json")
	srv := c.MCPServers["mcpipe"]
	if filepath.Base(srv.Command) != "mcp-route" {
		t.Fatalf("command %q, want mcp-route", srv.Command)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, repo, nil, srv.Args...)
	s.initialize(codec.LatestLegacyRevision)
	got := names(s.listTools())
	for _, want := range []string{"echo", "wordcount", "steps", "crash", "sleep"} {
		if !slices.Contains(got, want) {
			t.Errorf("tools %q lack %s", got, want)
		}
	}
}

// The Claude Desktop configuration holds placeholder paths; its flags must
// be ones mcp-route knows.
func TestHostConfigClaudeDesktop(t *testing.T) {
	c := readHostConfig(t, "../examples/hosts/claude-desktop/claude_desktop_config.json")
	cmd := exec.CommandContext(ctxTimeout(t), routeBin(t), "--help")
	cmd.Env = baseEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for name, srv := range c.MCPServers {
		if filepath.Base(srv.Command) != "mcp-route" || !filepath.IsAbs(srv.Command) {
			t.Errorf("%s: command %q, want an absolute path to mcp-route", name, srv.Command)
		}
		for _, a := range srv.Args {
			if strings.HasPrefix(a, "--") && !strings.Contains(out.String(), "-"+strings.TrimLeft(a, "-")+" ") &&
				!strings.Contains(out.String(), "-"+strings.TrimLeft(a, "-")+"\n") {
				t.Errorf("%s: flag %s is not in mcp-route --help", name, a)
			}
		}
	}
}
