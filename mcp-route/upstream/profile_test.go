package upstream

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
)

func TestLauncher(t *testing.T) {
	for _, tc := range []struct {
		argv string
		want string
	}{
		{"npx -y @modelcontextprotocol/server-filesystem /x", ProfileNpx},
		{"/usr/local/bin/npx pkg", ProfileNpx},
		{"npm exec -y pkg", ProfileNpx},
		{"npm --yes x pkg", ProfileNpx},
		{"npm run start", ""},
		{"uvx mcp-server-fetch", ProfileUvx},
		{"uv tool run mcp-server-fetch", ProfileUvx},
		{"uv --quiet tool x mcp-server-fetch", ProfileUvx},
		{"uv run server.py", ""},
		{"node server.js", ""},
		{"my-npx-wrapper pkg", ""},
	} {
		if got := Launcher(strings.Fields(tc.argv)); got != tc.want {
			t.Errorf("Launcher(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// nodeTree makes a node installation as nvm or the official tarball lays
// it out, in a fresh directory: PREFIX/bin/node, PREFIX/bin/npx linked to
// npm's script, and a home. It returns the prefix, the home and the
// environment of an upstream (PATH, HOME).
func nodeTree(t *testing.T) (prefix, home string, env []string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prefix, home = filepath.Join(base, "node-v20"), filepath.Join(base, "home")
	npmBin := filepath.Join(prefix, "lib", "node_modules", "npm", "bin")
	for _, d := range []string{filepath.Join(prefix, "bin"), npmBin, home} {
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
	return prefix, home, []string{"PATH=" + filepath.Join(prefix, "bin") + ":/usr/bin:/bin", "HOME=" + home}
}

func grantOf(p *Profile, why string) (Grant, bool) {
	i := slices.IndexFunc(p.Grants, func(g Grant) bool { return g.Why == why })
	if i < 0 {
		return Grant{}, false
	}
	return p.Grants[i], true
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestNpxProfile(t *testing.T) {
	argv := []string{"npx", "-y", "pkg"}
	t.Run("defaults", func(t *testing.T) {
		prefix, home, env := nodeTree(t)
		writeFile(t, filepath.Join(home, ".npmrc"), "registry=https://registry.example/\n")
		p, err := LoadProfile(ProfileNpx, argv, env, Bounds{})
		if err != nil {
			t.Fatal(err)
		}
		for why, want := range map[string]Grant{
			"npm cache":           {filepath.Join(home, ".npm"), confine.AccessReadWrite, "npm cache"},
			"node":                {filepath.Join(prefix, "bin", "node"), confine.AccessReadExec, "node"},
			"node global modules": {filepath.Join(prefix, "lib", "node_modules"), confine.AccessReadExec, "node global modules"},
			"user npmrc":          {filepath.Join(home, ".npmrc"), confine.AccessRead, "user npmrc"},
		} {
			if g, ok := grantOf(p, why); !ok || g != want {
				t.Errorf("%s: got %+v (present %v), want %+v; profile %s", why, g, ok, want, p)
			}
		}
		if fi, err := os.Stat(filepath.Join(home, ".npm")); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the npm cache was not made 0700 as npm would make it: %v %v", fi, err)
		}
		if _, ok := grantOf(p, "global npmrc"); ok {
			t.Errorf("a global npmrc that does not exist is granted: %s", p)
		}
	})
	t.Run("npmrc-and-env", func(t *testing.T) {
		prefix, home, env := nodeTree(t)
		writeFile(t, filepath.Join(prefix, "etc", "npmrc"), "cache = \"/nonexistent-global-cache\"\n")
		writeFile(t, filepath.Join(home, ".npmrc"), "; comment\ncache=~/.cache/npm-${SUFFIX}\n")
		env = append(env, "SUFFIX=x")
		p, err := LoadProfile(ProfileNpx, argv, env, Bounds{})
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := grantOf(p, "npm cache"); g.Path != filepath.Join(home, ".cache", "npm-x") {
			t.Errorf("the user npmrc's cache (~, ${VAR}) wins over the global one: got %s", p)
		}
		if g, _ := grantOf(p, "global npmrc"); g.Path != filepath.Join(prefix, "etc", "npmrc") {
			t.Errorf("global npmrc: %s", p)
		}
		// The environment wins over both, whatever its case.
		envCache := filepath.Join(home, "env-cache")
		p, err = LoadProfile(ProfileNpx, argv, append(env, "NPM_CONFIG_CACHE="+envCache), Bounds{})
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := grantOf(p, "npm cache"); g.Path != envCache {
			t.Errorf("NPM_CONFIG_CACHE: got %s", p)
		}
	})
	t.Run("symlinked-cache", func(t *testing.T) {
		_, home, env := nodeTree(t)
		real := filepath.Join(home, "disk", "npm")
		if err := os.MkdirAll(real, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(home, ".npm")); err != nil {
			t.Fatal(err)
		}
		p, err := LoadProfile(ProfileNpx, argv, env, Bounds{})
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := grantOf(p, "npm cache"); g.Path != real {
			t.Errorf("the cache's link is not resolved (the kernel's rule holds its target): %s", p)
		}
	})
	t.Run("no-network", func(t *testing.T) {
		_, _, env := nodeTree(t)
		p, err := LoadProfile(ProfileNpx, argv, env, Bounds{NoNetwork: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Env, []string{"npm_config_offline=true"}) {
			t.Errorf("--no-network: want npm offline, got %q", p.Env)
		}
		// The operator's own setting stands.
		p, err = LoadProfile(ProfileNpx, argv, append(env, "NPM_CONFIG_OFFLINE=false"), Bounds{NoNetwork: true})
		if err != nil || p.Env != nil {
			t.Errorf("--no-network with the operator's npm offline setting: want nothing added, got %q (%v)", p.Env, err)
		}
		p, err = LoadProfile(ProfileNpx, argv, env, Bounds{})
		if err != nil || p.Env != nil {
			t.Errorf("with the network: want nothing added, got %q (%v)", p.Env, err)
		}
	})
	t.Run("no-node", func(t *testing.T) {
		_, home, _ := nodeTree(t)
		_, err := LoadProfile(ProfileNpx, argv, []string{"PATH=" + home, "HOME=" + home}, Bounds{})
		if err == nil || !strings.Contains(err.Error(), "no node") {
			t.Errorf("no node in PATH: want an error saying so, got %v", err)
		}
	})
}

// TestProfileBounds: a profile never widens what the operator decided, and
// never opens for writing a place that holds the home, a tool directory or
// the root.
func TestProfileBounds(t *testing.T) {
	argv := []string{"npx", "pkg"}
	for _, tc := range []struct {
		name  string
		cache func(home string) string // npm_config_cache
		b     func(home string) Bounds
	}{
		{"cache-inside-root", func(h string) string { return filepath.Join(h, "proj", ".npm") },
			func(h string) Bounds { return Bounds{Root: filepath.Join(h, "proj"), ReadOnly: true} }},
		{"cache-inside-allow-write", func(h string) string { return filepath.Join(h, "w", "npm") },
			func(h string) Bounds { return Bounds{AllowWrite: []string{filepath.Join(h, "w")}} }},
		{"cache-is-home", func(h string) string { return h }, func(string) Bounds { return Bounds{} }},
		{"cache-holds-tools", func(h string) string { return filepath.Join(h, "c") },
			func(h string) Bounds { return Bounds{ToolDirs: []string{filepath.Join(h, "c", "bin")}} }},
		{"cache-holds-root", func(h string) string { return filepath.Join(h, "c") },
			func(h string) Bounds { return Bounds{Root: filepath.Join(h, "c", "proj")} }},
		{"cache-is-etc", func(string) string { return "/etc" }, func(string) Bounds { return Bounds{} }},
		{"cache-inside-etc", func(string) string { return "/etc/ssl/certs" }, func(string) Bounds { return Bounds{} }},
		{"cache-inside-usr", func(string) string { return "/usr/share" }, func(string) Bounds { return Bounds{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, home, env := nodeTree(t)
			b := tc.b(home)
			for _, d := range append(append([]string{b.Root}, b.AllowWrite...), b.ToolDirs...) {
				if d != "" {
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			cache := tc.cache(home)
			p, err := LoadProfile(ProfileNpx, argv, append(env, "npm_config_cache="+cache), b)
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := grantOf(p, "npm cache"); ok {
				t.Errorf("cache %s granted %s; profile %s", cache, g.Access, p)
			}
			if !slices.ContainsFunc(p.Dropped, func(d string) bool { return strings.Contains(d, "npm cache") }) {
				t.Errorf("the cache left out without a reason: %s", p)
			}
			if _, ok := grantOf(p, "node"); !ok {
				t.Errorf("node not granted: %s", p)
			}
			if tc.name == "cache-inside-root" {
				if _, err := os.Lstat(cache); err == nil {
					t.Errorf("the cache %s was made inside the root, where it is not granted", cache)
				}
			}
		})
	}
}

func TestUvxProfile(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, bin := filepath.Join(base, "home"), filepath.Join(base, "home", ".local", "bin")
	for _, d := range []string{bin, filepath.Join(home, ".local", "share", "uv", "tools"), filepath.Join(home, ".local", "share", "uv", "python")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"uv", "uvx"} {
		if err := os.WriteFile(filepath.Join(bin, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":/usr/bin", "HOME=" + home}
	argv := []string{"uvx", "mcp-server-fetch"}
	p, err := LoadProfile(ProfileUvx, argv, env, Bounds{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Grant{
		{filepath.Join(bin, "uvx"), confine.AccessReadExec, "uv"},
		{filepath.Join(bin, "uv"), confine.AccessReadExec, "uv"},
		{filepath.Join(home, ".local", "share", "uv", "tools"), confine.AccessReadExec, "uv tools"},
		{filepath.Join(home, ".local", "share", "uv", "python"), confine.AccessReadExec, "uv pythons"},
		{filepath.Join(home, ".cache", "uv"), confine.AccessReadWrite, "uv cache"},
	}
	if !slices.Equal(p.Grants, want) {
		t.Errorf("uvx defaults:\ngot  %s\nwant %v", p, want)
	}
	// UV_CACHE_DIR wins; XDG_DATA_HOME moves the tools and Pythons.
	xdg := filepath.Join(base, "xdg")
	for _, d := range []string{filepath.Join(xdg, "uv", "tools"), filepath.Join(xdg, "uv", "python")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err = LoadProfile(ProfileUvx, argv, append(env, "UV_CACHE_DIR="+filepath.Join(base, "uvc"), "XDG_DATA_HOME="+xdg), Bounds{})
	if err != nil {
		t.Fatal(err)
	}
	for why, path := range map[string]string{"uv cache": filepath.Join(base, "uvc"), "uv tools": filepath.Join(xdg, "uv", "tools"), "uv pythons": filepath.Join(xdg, "uv", "python")} {
		if g, _ := grantOf(p, why); g.Path != path {
			t.Errorf("%s: want %s; profile %s", why, path, p)
		}
	}
}

// TestExplainDenial: an upstream's start failure whose stderr reports a
// file the confinement refused names it and the flag (the tools'
// explainer, confine.Explain), and the stderr kept is the lines about it,
// without npm's "sudo chown" advice.
func TestExplainDenial(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".npm"), 0o700); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	ro := t.TempDir()
	npm := `npm error code EACCES
npm error syscall open
npm error path ` + home + `/.npm/_cacache/tmp/***
npm error errno EACCES
npm error
npm error Your cache folder contains root-owned files, due to a bug in previous versions of npm which has since been addressed.
npm error
npm error To permanently fix this problem, please run:
npm error   sudo chown -R 0:0 "` + home + `/.npm"`
	rules := []confine.Rule{
		{Path: "/usr", Access: confine.AccessReadExec},
		{Path: proj, Access: confine.AccessReadWrite},
		{Path: ro, Access: confine.AccessRead},
	}
	fail := func(name, stderr string, rules []confine.Rule) string {
		u := &Upstream{spec: Spec{Name: name}}
		if rules != nil {
			u.spec.Rules = func() []confine.Rule { return rules }
		}
		tl := &tail{log: func(string) {}}
		tl.Write([]byte(stderr))
		return u.withStderr("upstream "+name+" failed to start", tl).Error()
	}
	got := fail("fs", npm, rules)
	// _cacache is missing: the grant is the first missing directory, to
	// be made, not the whole .npm nor the home.
	cache := filepath.Join(home, ".npm", "_cacache")
	want := "confinement refused " + home + "/.npm/_cacache/tmp (tools are granted nothing there); mkdir -p " + cache + ", then --allow-write " + cache + " grants it"
	if !strings.Contains(got, want) {
		t.Errorf("npm's EACCES: want %q; got %q", want, got)
	}
	if strings.Contains(got, "sudo chown") || !strings.Contains(got, "npm error path "+home+"/.npm/_cacache/tmp/***") {
		t.Errorf("the lines kept: want the denial without npm's advice; got %q", got)
	}
	got = fail("py", "PermissionError: [Errno 13] Permission denied: '"+ro+"/x.lock'", rules)
	if want := "refused " + ro + "/x.lock (tools may only read there); --allow-write " + ro + " grants it"; !strings.Contains(got, want) {
		t.Errorf("a read-only place: want %q; got %q", want, got)
	}
	for _, s := range []string{
		"Error: EACCES: permission denied, open '" + proj + "/a.txt'", // the rules open it: not confinement
		"npm error code E404\nnpm error path " + home + "/.npm/x",     // no denial
		"EACCES fetching https://registry.npmjs.org/pkg",              // a URL is no path
	} {
		if got := fail("fs", s, rules); strings.Contains(got, "confinement") {
			t.Errorf("%q: want no explanation, got %q", s, got)
		}
	}
	if got := fail("fs", npm, nil); strings.Contains(got, "confinement") || !strings.Contains(got, "sudo chown") {
		t.Errorf("unconfined: want the stderr as it is, no explanation; got %q", got)
	}
}
