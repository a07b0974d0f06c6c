package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGatewayNpxUpstream: the README's line, --upstream 'fs=npx -y
// @modelcontextprotocol/server-filesystem DIR', under the default
// confinement and no other flag, in a home of its own whose npm cache a
// first run of npx filled. mcp-route gives npx its launcher profile (the
// npm cache read and write, node and npm read and execute), in a domain
// of the upstream's own:
//   - its first start does not fail, and fs__read_text_file serves a file
//     of the root;
//   - the attack: the upstream still cannot read a file of the home
//     outside the npm cache, though server-filesystem was told it may;
//     and the tools do not get the npm cache that the upstream got.
//
// It needs node, npm and npx, and the npm registry (the first run fetches
// some 60 MB); without them it skips, saying why. The cold start under
// confinement (the first-start allowance) is measured, not tested: its
// time is the registry's and the machine's.
func TestGatewayNpxUpstream(t *testing.T) {
	for _, prog := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s not in PATH: %v", prog, err)
		}
	}
	home := gatewayDir(t)
	root := filepath.Join(home, "proj")
	private := filepath.Join(home, "private")
	tools := filepath.Join(home, "tools")
	for _, d := range []string{root, private, tools} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "a.txt"), "alpha\n", 0o644)
	write(filepath.Join(private, "secret.txt"), "private-words\n", 0o644)
	write(filepath.Join(tools, "peek"), "#!/bin/sh\nexec cat \"$MCP_ARG_PATH\"\n", 0o755)
	write(filepath.Join(tools, "peek.json"), `{"description":"print a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`, 0o644)
	env := baseEnv("HOME=" + home)

	// The registry, asked the way npx will ask it, within a bound: one
	// try of 15 s (npm's own retries would hold an offline run, Bazel's
	// sandbox among them, for a minute).
	vctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	view := exec.CommandContext(vctx, "npm", "view", "--fetch-retries=0", "--fetch-timeout=15000", "@modelcontextprotocol/server-filesystem", "version")
	view.Env, view.Dir = env, home
	if out, err := view.CombinedOutput(); err != nil {
		t.Skipf("the npm registry is not reachable (npm view: %v): %s", err, strings.TrimSpace(string(out)))
	}
	cacheFile := filepath.Join(home, ".npm", "probe.txt")

	// The cache filled by a first run of the same line, unconfined, as a
	// user's earlier npx would have filled it. Its time depends on the
	// registry and the load (26-81 s measured on 2 cores), so it has a
	// bound of its own, far above, and is only logged.
	pkg := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", root, private}
	fctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	fill := exec.CommandContext(fctx, callBin(t), append([]string{"--timeout", "10m", "tools", "--"}, pkg...)...)
	fill.Env, fill.Dir = env, root
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("the first run of npx, unconfined, to fill the cache: %v\n%s", err, out)
	}
	t.Logf("npx with a cold cache, unconfined: %v to its tool list", time.Since(began).Round(time.Second))

	args := append(upstreamFlag("fs", pkg...), "--tools", tools)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	write(cacheFile, "cache-words\n", 0o644)
	g := startGatewayEnv(t, ctx, root, env, "", nil, args...)
	g.waitTools(ctx, "fs__read_text_file", "peek")
	if problem := wantText("alpha\n")(g.call(ctx, "fs__read_text_file", map[string]any{"path": filepath.Join(root, "a.txt")})); problem != "" {
		t.Errorf("fs__read_text_file in the root: %s", problem)
	}
	// server-filesystem allows private; the kernel does not (EACCES: not
	// server-filesystem's own "Access denied" for a place it was not given).
	o := g.call(ctx, "fs__read_text_file", map[string]any{"path": filepath.Join(private, "secret.txt")})
	if o.result == nil || !o.result.IsError || !strings.Contains(o.firstText(), "EACCES") || strings.Contains(o.firstText(), "private-words") {
		t.Errorf("fs__read_text_file of a file in the home outside the npm cache: want an isError with EACCES, without its words; got %v", o)
	}
	// The tools' domain has no npm cache in it; the root it has.
	if problem := wantText("alpha\n")(g.call(ctx, "peek", map[string]any{"path": filepath.Join(root, "a.txt")})); problem != "" {
		t.Errorf("peek in the root: %s", problem)
	}
	o = g.call(ctx, "peek", map[string]any{"path": cacheFile})
	if o.result == nil || !o.result.IsError || strings.Contains(o.firstText(), "cache-words") {
		t.Errorf("peek of the npm cache, which only the npx upstream may read: want an isError without its words; got %v", o)
	}
	g.close()
	if s := g.stderr.String(); strings.Contains(s, "failed to start") {
		t.Errorf("the warm start failed:\n%s", s)
	}
}
