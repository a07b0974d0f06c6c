package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The upstream parser trims the URL (" https://u:p@host/" is an HTTP
// upstream with credentials), so config print and the secret-file check
// must trim it too: a leading space no longer prints the password or lets
// the file sit where tools read it. The same URL without credentials
// still prints.
func TestAttackConfigSpacedUpstreamURL(t *testing.T) {
	dir := configDir(t, `tools = ["tools"]
[upstream]
spaced = " https://user:SECRET-SPACED@mcp.example.com/mcp"
tabbed = "	HTTPS://mcp.example.com/mcp?key=SECRET-TABBED"
plain = " https://mcp.example.com/mcp"
`)
	cfg := filepath.Join(dir, "mcp-route.toml")
	code, out, errs := runIn(t, t.TempDir(), "", "config", "print", "--config", cfg)
	if code != 0 {
		t.Fatalf("config print: exit %d; stderr %s", code, errs)
	}
	for _, secret := range []string{"SECRET-SPACED", "SECRET-TABBED"} {
		if strings.Contains(out, secret) || strings.Contains(errs, secret) {
			t.Errorf("config print shows the secret %s:\n%s%s", secret, out, errs)
		}
	}
	if !strings.Contains(out, `plain = " https://mcp.example.com/mcp"`) {
		t.Errorf("the upstream without credentials is not printed:\n%s", out)
	}

	// The same file inside a --readonly root (tools read it) is refused.
	root := filepath.Dir(cfg)
	code, _, errs = runIn(t, t.TempDir(), "", "--config", cfg, "--readonly", "--root", root)
	if code != 1 || !strings.Contains(errs, "it holds an upstream's header or URL credentials") {
		t.Errorf("a config with a spaced URL's credentials, readable by tools: exit %d, stderr %q", code, errs)
	}
}
