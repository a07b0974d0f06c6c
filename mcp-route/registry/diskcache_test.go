package registry

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// old backdates a file's mtime past racyWindow, as for a tool installed a
// while ago (an entry for a file changed just now is not kept).
func old(t *testing.T, path string) {
	t.Helper()
	ts := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, ts, ts); err != nil {
		t.Fatal(err)
	}
}

// describeTool writes an executable whose --mcp-describe counts its runs
// in count and prints the description desc.
func describeTool(t *testing.T, path, count, desc string) {
	t.Helper()
	write(t, path, `#!/bin/sh
echo x >> `+count+`
echo '{"description":"`+desc+`"}'
`, 0o755)
	old(t, path)
}

func runs(t *testing.T, count string) int {
	t.Helper()
	b, _ := os.ReadFile(count)
	return strings.Count(string(b), "x")
}

// fresh loads dir in a new Registry, as a new mcp-route process would.
func fresh(t *testing.T, dir, cache string, env ...string) (*Registry, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	r := New(Options{Dirs: []string{dir}, Logger: lb.logger(), CacheDir: cache,
		DescribeEnv: append([]string{"PATH=/usr/bin:/bin"}, env...)})
	r.Reload(context.Background())
	return r, lb
}

// entries lists the cache's entry files (not its key).
func entries(t *testing.T, cache string) []string {
	t.Helper()
	ents, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	return ents
}

func desc(r *Registry, name string) string {
	if t := r.Lookup(name); t != nil {
		return t.Def.Description
	}
	return "(missing)"
}

func TestDiskCacheAcrossRegistries(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	count := filepath.Join(t.TempDir(), "count")
	tool := filepath.Join(dir, "d")
	describeTool(t, tool, count, "one")

	r, _ := fresh(t, dir, cache)
	if desc(r, "d") != "one" || runs(t, count) != 1 {
		t.Fatalf("first load: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache dir: %v %v", fi, err)
	}
	r, _ = fresh(t, dir, cache)
	if desc(r, "d") != "one" || runs(t, count) != 1 {
		t.Errorf("second load: %q, %d runs; want the cached definition", desc(r, "d"), runs(t, count))
	}

	// Edited (another size): described again.
	describeTool(t, tool, count, "two, longer")
	r, _ = fresh(t, dir, cache)
	if desc(r, "d") != "two, longer" || runs(t, count) != 2 {
		t.Errorf("after an edit: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	// Replaced by a file of the same size and mtime (cp -p of a build):
	// the inode and ctime differ, so it is described again.
	fi, _ := os.Stat(tool)
	repl := filepath.Join(t.TempDir(), "d")
	describeTool(t, repl, count, "two, LONGER")
	os.Chtimes(repl, fi.ModTime(), fi.ModTime())
	if err := os.Rename(repl, tool); err != nil {
		t.Fatal(err)
	}
	r, _ = fresh(t, dir, cache)
	if desc(r, "d") != "two, LONGER" || runs(t, count) != 3 {
		t.Errorf("after a same-size same-mtime replacement: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	// Another describe environment (--env, --root) is another entry.
	fresh(t, dir, cache, "MCP_ROOT=/elsewhere")
	if runs(t, count) != 4 {
		t.Errorf("another environment used the cached entry: %d runs", runs(t, count))
	}
	// A corrupt entry is ignored and rewritten.
	for _, e := range entries(t, cache) {
		os.WriteFile(e, []byte("{garbage"), 0o600)
	}
	r, _ = fresh(t, dir, cache)
	if desc(r, "d") != "two, LONGER" || runs(t, count) != 5 {
		t.Errorf("corrupt entry: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	fresh(t, dir, cache)
	if runs(t, count) != 5 {
		t.Errorf("entry not rewritten after corruption: %d runs", runs(t, count))
	}
}

// TestDiskCacheKeepsOnlyWhatServes: a tool whose definition is invalid, or
// which changed just now (racy stamp), is described at every start.
func TestDiskCacheKeepsOnlyWhatServes(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	count := filepath.Join(t.TempDir(), "count")
	describeTool(t, filepath.Join(dir, "bad"), count, "") // empty description: invalid
	recent := filepath.Join(dir, "recent")
	write(t, recent, `#!/bin/sh
echo x >> `+count+`
echo '{"description":"new"}'
`, 0o755)
	now := time.Now()
	os.Chtimes(recent, now, now)
	for range 2 {
		r, lb := fresh(t, dir, cache)
		if !lb.has("tool left out tool=bad ") || desc(r, "recent") != "new" {
			t.Errorf("load: %q, log %q", desc(r, "recent"), lb.Lines())
		}
	}
	if n := runs(t, count); n != 4 {
		t.Errorf("%d describe runs, want 4 (nothing kept)", n)
	}
}

func TestDiskCacheRefusesSharedDir(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(t.TempDir(), "count")
	describeTool(t, filepath.Join(dir, "d"), count, "one")
	for range 2 {
		r, lb := fresh(t, dir, cache)
		if desc(r, "d") != "one" || !lb.has("describe cache off") || !lb.has("writable by group or others") {
			t.Errorf("load: %q, log %q", desc(r, "d"), lb.Lines())
		}
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 || runs(t, count) != 2 {
		t.Errorf("a shared cache dir was used: %d entries, %d runs", len(ents), runs(t, count))
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, err := DefaultCacheDir(); err != nil || d != "/xdg/mcpipe/describe" {
		t.Errorf("with XDG_CACHE_HOME: %q %v", d, err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if d, err := DefaultCacheDir(); err == nil {
		t.Errorf("without HOME: %q", d)
	}
}

// TestDiskCachePrune: entries unused for pruneAfter go when a Registry
// opens the cache; a used one is kept (its mtime refreshed), and files the
// cache did not write are left alone.
func TestDiskCachePrune(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	count := filepath.Join(t.TempDir(), "count")
	describeTool(t, filepath.Join(dir, "d"), count, "one")
	fresh(t, dir, cache)
	ents := entries(t, cache)
	if len(ents) != 1 {
		t.Fatalf("%d entries, want 1", len(ents))
	}
	used := ents[0]
	stale := filepath.Join(cache, "0123456789abcdef0123456789abcdef.json")
	other := filepath.Join(cache, "README")
	for _, f := range []string{stale, other} {
		os.WriteFile(f, []byte("{}"), 0o600)
	}
	long := time.Now().Add(-pruneAfter + time.Hour) // used, close to pruning
	os.Chtimes(used, long, long)
	r, _ := fresh(t, dir, cache)
	if desc(r, "d") != "one" || runs(t, count) != 1 {
		t.Fatalf("cached entry not used: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	older := time.Now().Add(-pruneAfter - time.Hour)
	for _, f := range []string{stale, other} {
		os.Chtimes(f, older, older)
	}
	fresh(t, dir, cache) // prunes
	for f, want := range map[string]bool{used: true, stale: false, other: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(f), err == nil, want)
		}
	}
	if runs(t, count) != 1 {
		t.Errorf("the used entry was pruned: %d runs", runs(t, count))
	}
}

// tamper rewrites the one entry of cache with edit applied to its
// definition, keeping its MAC: what a client with fs_write could do.
func tamper(t *testing.T, cache string, edit func(def map[string]any)) {
	t.Helper()
	ents := entries(t, cache)
	if len(ents) != 1 {
		t.Fatalf("%d entries, want 1", len(ents))
	}
	data, err := os.ReadFile(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	var e cacheEntry
	var def map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(e.Def, &def); err != nil {
		t.Fatal(err)
	}
	edit(def)
	if e.Def, err = json.Marshal(def); err != nil {
		t.Fatal(err)
	}
	if data, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ents[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDiskCacheTamperedEntry: an entry rewritten to claim readOnlyHint, or
// to pass a host variable, fails its MAC: it is logged and ignored, and the
// tool's real definition (described again) is what is served.
func TestDiskCacheTamperedEntry(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	count := filepath.Join(t.TempDir(), "count")
	tool := filepath.Join(dir, "fs_write")
	write(t, tool, `#!/bin/sh
echo x >> `+count+`
echo '{"description":"writes","annotations":{"readOnlyHint":false}}'
`, 0o755)
	old(t, tool)
	load := func(readOnly bool) (*Registry, *logBuf) {
		lb := &logBuf{}
		r := New(Options{Dirs: []string{dir}, ReadOnly: readOnly, CacheDir: cache, Logger: lb.logger()})
		r.Reload(context.Background())
		return r, lb
	}
	load(false)
	if r, lb := load(true); r.Lookup("fs_write") != nil || runs(t, count) != 1 || len(lb.warns()) != 0 {
		t.Fatalf("untampered: served read-only %v, %d runs, log %q; want left out, 1 run (cached)", r.Lookup("fs_write") != nil, runs(t, count), lb.Lines())
	}

	tamper(t, cache, func(def map[string]any) { def["annotations"] = map[string]any{"readOnlyHint": true} })
	r, lb := load(true)
	if r.Lookup("fs_write") != nil {
		t.Error("a tampered entry claiming readOnlyHint made --readonly serve fs_write")
	}
	if runs(t, count) != 2 || !lb.has("fails authentication") {
		t.Errorf("tampered entry: %d runs, log %q; want described again, and logged", runs(t, count), lb.Lines())
	}

	tamper(t, cache, func(def map[string]any) { def["run"] = map[string]any{"passEnv": []string{"AWS_SECRET_ACCESS_KEY"}} })
	r, lb = load(false)
	if tl := r.Lookup("fs_write"); tl == nil || len(tl.Run.PassEnv) != 0 || tl.Def.Description != "writes" {
		t.Errorf("tampered run.passEnv: %+v; want the real definition", tl)
	}
	if runs(t, count) != 3 || !lb.has("fails authentication") {
		t.Errorf("tampered entry: %d runs, log %q", runs(t, count), lb.Lines())
	}
	// Rewritten by that describe: the cache speeds the next start again.
	if r, lb := load(false); r.Lookup("fs_write") == nil || runs(t, count) != 3 || len(lb.warns()) != 0 {
		t.Errorf("after the rewrite: %d runs, log %q; want a cache hit", runs(t, count), lb.Lines())
	}
}

// TestDiskCacheKeyRevoked: entries signed with a key that is gone (revoked)
// are stale, not tampered with: described again without a log line, and
// signed with the new key.
func TestDiskCacheKeyRevoked(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "cache")
	count := filepath.Join(t.TempDir(), "count")
	describeTool(t, filepath.Join(dir, "d"), count, "one")
	fresh(t, dir, cache)
	key1, err := os.ReadFile(filepath.Join(cache, keyFile))
	if err != nil || len(key1) != keySize {
		t.Fatalf("key: %d bytes, %v", len(key1), err)
	}
	if fi, _ := os.Stat(filepath.Join(cache, keyFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
	revokeKey(cache)
	r, lb := fresh(t, dir, cache)
	if desc(r, "d") != "one" || runs(t, count) != 2 || len(lb.warns()) != 0 {
		t.Errorf("after revocation: %q, %d runs, log %q", desc(r, "d"), runs(t, count), lb.Lines())
	}
	if key2, _ := os.ReadFile(filepath.Join(cache, keyFile)); len(key2) != keySize || string(key2) == string(key1) {
		t.Error("no new key after revocation")
	}
	if fresh(t, dir, cache); runs(t, count) != 2 {
		t.Errorf("new key: %d runs, want a cache hit", runs(t, count))
	}
	// A key that is not one is a clear error, not a silent cache.
	os.WriteFile(filepath.Join(cache, keyFile), []byte("short"), 0o600)
	if _, lb := fresh(t, dir, cache); !lb.has("describe cache off") || !lb.has("want a 32-byte key") {
		t.Errorf("bad key: log %q", lb.Lines())
	}
}

// TestDiskCacheUnderRoot: a cache the tools can write (under Options.Root)
// is not used, ReadOnly or not, with one log line; its key is revoked when
// the Registry opens and again at Close; the tools are still served.
func TestDiskCacheUnderRoot(t *testing.T) {
	root := t.TempDir()
	cache := filepath.Join(root, ".cache", "mcpipe", "describe")
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "count")
	describeTool(t, filepath.Join(dir, "d"), count, "one")
	fresh(t, dir, cache) // no root: a cache like any other
	if len(entries(t, cache)) != 1 {
		t.Fatal("setup: no entry")
	}
	for _, readOnly := range []bool{false, true} {
		lb := &logBuf{}
		r := New(Options{Dirs: []string{dir}, Root: root, ReadOnly: readOnly, CacheDir: cache, Logger: lb.logger()})
		r.Reload(context.Background())
		if _, err := os.Stat(filepath.Join(cache, keyFile)); err == nil {
			t.Errorf("readOnly %v: key not revoked at open", readOnly)
		}
		if r.CacheDir() != "" || !lb.has("describe cache off dir="+cache+" error="+cache+" is under the root") || len(lb.warns()) != 1 {
			t.Errorf("readOnly %v: cache %q, log %q", readOnly, r.CacheDir(), lb.Lines())
		}
		if !readOnly && desc(r, "d") != "one" { // ReadOnly: d is not read-only
			t.Errorf("readOnly %v: tool not served: %q", readOnly, desc(r, "d"))
		}
		// A key the tools made up while the session ran goes at Close.
		os.WriteFile(filepath.Join(cache, keyFile), make([]byte, keySize), 0o600)
		r.Close()
		if _, err := os.Stat(filepath.Join(cache, keyFile)); err == nil {
			t.Errorf("readOnly %v: key not revoked at Close", readOnly)
		}
	}
	// The entries are still there, but were not used: 2 more describe runs.
	if runs(t, count) != 3 {
		t.Errorf("%d describe runs, want 3: a cache under the root was used", runs(t, count))
	}
	// Reached through a symlink: the same cache.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(filepath.Join(root, ".cache"), link)
	lb := &logBuf{}
	r := New(Options{Dirs: []string{dir}, Root: root, CacheDir: filepath.Join(link, "mcpipe", "describe"), Logger: lb.logger()})
	if r.CacheDir() != "" || !lb.has("is under the root") {
		t.Errorf("through a symlink: cache %q, log %q", r.CacheDir(), lb.Lines())
	}
}
