package registry

import (
	"context"
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
	r := New(Options{Dirs: []string{dir}, Logf: lb.logf, Debugf: lb.debugf, CacheDir: cache,
		DescribeEnv: append([]string{"PATH=/usr/bin:/bin"}, env...)})
	r.Reload(context.Background())
	return r, lb
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
	r, _ = fresh(t, dir, cache, "MCP_ROOT=/elsewhere")
	if runs(t, count) != 4 {
		t.Errorf("another environment used the cached entry: %d runs", runs(t, count))
	}
	// A corrupt entry is ignored and rewritten.
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		os.WriteFile(filepath.Join(cache, e.Name()), []byte("{garbage"), 0o600)
	}
	r, _ = fresh(t, dir, cache)
	if desc(r, "d") != "two, LONGER" || runs(t, count) != 5 {
		t.Errorf("corrupt entry: %q, %d runs", desc(r, "d"), runs(t, count))
	}
	r, _ = fresh(t, dir, cache)
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
		if !lb.has("bad left out") || desc(r, "recent") != "new" {
			t.Errorf("load: %q, log %q", desc(r, "recent"), lb.lines)
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
			t.Errorf("load: %q, log %q", desc(r, "d"), lb.lines)
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
	ents, _ := os.ReadDir(cache)
	if len(ents) != 1 {
		t.Fatalf("%d entries, want 1", len(ents))
	}
	used := filepath.Join(cache, ents[0].Name())
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
