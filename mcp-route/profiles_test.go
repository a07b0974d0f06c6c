package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// TestUpstreamProfileCheck: --confine-check shows an npx upstream's
// launcher profile, found in its environment (a node installation laid
// out as nvm lays it out, a home of its own), and --upstream-profile
// NAME=none takes it away; the tools' own rules never hold the npm cache.
// A bad --upstream-profile exits 2 naming what is wrong.
func TestUpstreamProfileCheck(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prefix, home, root := filepath.Join(base, "node-v20"), filepath.Join(base, "home"), filepath.Join(base, "root")
	npmBin := filepath.Join(prefix, "lib", "node_modules", "npm", "bin")
	for _, d := range []string{filepath.Join(prefix, "bin"), npmBin, home, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(prefix, "bin", "node"), filepath.Join(npmBin, "npx-cli.js")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../lib/node_modules/npm/bin/npx-cli.js", filepath.Join(prefix, "bin", "npx")); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--root", root}, args...)...)
		cmd.Env = []string{"PATH=" + filepath.Join(prefix, "bin") + ":/usr/bin:/bin", "HOME=" + home}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	fs := "fs=npx -y @modelcontextprotocol/server-filesystem " + root
	for _, tc := range []struct{ args, want string }{
		{"--upstream-profile fs=bogus", `profile "bogus": want npx, uvx or none`},
		{"--upstream-profile other=npx", "no --upstream other=COMMAND"},
		{"--upstream-profile fs", "want NAME=npx, NAME=uvx or NAME=none"},
		{"--upstream-profile fs=npx --upstream-profile fs=none", "fs is given a profile twice"},
	} {
		code, _, errs := run(append([]string{"--confine-check", "--upstream", fs}, strings.Fields(tc.args)...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: want exit 2 saying %q; got %d %q", tc.args, tc.want, code, errs)
		}
	}

	confinetest.Need(t, 1)
	cache := filepath.Join(home, ".npm")
	code, out, errs := run("--confine-check", "--upstream", fs)
	if code != 0 {
		t.Fatalf("--confine-check: exit %d: %s", code, errs)
	}
	tools, profile, ok := strings.Cut(out, "upstream fs: npx profile:")
	if !ok {
		t.Fatalf("--confine-check shows no npx profile for fs:\n%s", out)
	}
	for _, want := range []string{
		"read+write " + cache + " (npm cache)",
		"read+exec " + filepath.Join(prefix, "bin", "node") + " (node)",
		"read+exec " + filepath.Join(prefix, "lib", "node_modules") + " (node global modules)",
	} {
		if !strings.Contains(profile, want) {
			t.Errorf("the profile lacks %q:\n%s", want, profile)
		}
	}
	if strings.Contains(tools, cache) || strings.Contains(tools, prefix) {
		t.Errorf("the tools' rules hold the launcher's places:\n%s", tools)
	}
	code, out, _ = run("--confine-check", "--upstream", fs, "--upstream-profile", "fs=none")
	if code != 0 || strings.Contains(out, "npx profile") || strings.Contains(out, cache) {
		t.Errorf("--upstream-profile fs=none: exit %d, the profile is still there:\n%s", code, out)
	}
	// A cache inside the root is the root's: not granted again, and said.
	code, out, _ = run("--confine-check", "--upstream", fs, "--env", "npm_config_cache="+filepath.Join(root, ".npm"))
	if code != 0 || !strings.Contains(out, "not granted: read+write "+filepath.Join(root, ".npm")+" (npm cache): inside "+root) {
		t.Errorf("a cache inside --root: exit %d, want it left to the root:\n%s", code, out)
	}
}
