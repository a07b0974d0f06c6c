package registry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestThroughRoot: every way a path can lead under the root, and the ways
// that only look like it.
func TestThroughRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "home")
	for _, d := range []string{"home/proj/bin", "home/sub", "opt/tools", "opt/bin"} {
		os.MkdirAll(filepath.Join(base, d), 0o755)
	}
	link := func(name, target string) string {
		p := filepath.Join(base, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(t, filepath.Join(root, "proj/bin/pwn"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(base, "opt/bin/ok"), "#!/bin/sh\n", 0o755)
	link("home/binlink", filepath.Join(base, "opt/bin")) // a link under the root: replaceable
	link("rootlink", "home")                             // an alias of the root itself
	cases := []struct {
		path, want string
	}{
		{filepath.Join(base, "opt/tools"), ""},
		{filepath.Join(base, "opt/bin/ok"), ""},
		{root, root}, // the root itself as a tools dir
		{filepath.Join(root, "proj/bin"), filepath.Join(root, "proj")},
		{filepath.Join(base, "opt/tools/../../home/proj/bin/pwn"), filepath.Join(root, "proj")},
		{filepath.Join(base, "rootlink"), root},
		{filepath.Join(base, "rootlink/proj/bin/pwn"), filepath.Join(root, "proj")},
		{link("opt/tools/pwn", filepath.Join(root, "proj/bin/pwn")), filepath.Join(root, "proj")},
		{link("opt/tools/rel", "../../home/proj/bin/pwn"), filepath.Join(root, "proj")},
		// Resolves outside, but through a link a client could replace.
		{link("opt/tools/via", filepath.Join(root, "binlink/ok")), filepath.Join(root, "binlink")},
		// Dangling: a client could create the target.
		{link("opt/tools/later", filepath.Join(root, "new")), filepath.Join(root, "new")},
		// Through the root's entry and out again: nothing under it is consulted.
		{link("opt/tools/out", filepath.Join(root, "../opt/bin/ok")), ""},
		{link("opt/tools/chain", "via"), filepath.Join(root, "binlink")},
	}
	for _, c := range cases {
		got, err := throughRoot(c.path, root)
		if err != nil || got != c.want {
			t.Errorf("throughRoot(%s) = %q, %v; want %q", strings.TrimPrefix(c.path, base), got, err, c.want)
		}
	}
	if got, err := throughRoot(filepath.Join(base, "opt/bin/ok"), "/"); got == "" || err != nil {
		t.Errorf("root /: %q %v; want everything under it", got, err)
	}
	loop := link("loop", "loop")
	if _, err := throughRoot(loop, root); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("link loop: %v", err)
	}
}

// TestCheckToolsOutsideRoot: the startup check names what is wrong and
// what to do; tools outside the root pass.
func TestCheckToolsOutsideRoot(t *testing.T) {
	root, tools := t.TempDir(), t.TempDir()
	write(t, filepath.Join(tools, "ok"), "#!/bin/sh\n", 0o755)
	if err := CheckToolsOutsideRoot([]string{tools}, root); err != nil {
		t.Errorf("tools outside the root: %v", err)
	}
	inside := filepath.Join(root, ".mcp-tools")
	os.Mkdir(inside, 0o755)
	err := CheckToolsOutsideRoot([]string{tools, inside}, root)
	if want := "--tools " + inside + " is inside --root " + root + ", where tools can write: a client could add a tool; move the tools out of the root, or add --readonly"; err == nil || err.Error() != want {
		t.Errorf("tools inside the root: %v\nwant %s", err, want)
	}
	os.Symlink(filepath.Join(root, "stock"), filepath.Join(tools, "fs_read")) // dangling, like a link to a binary not built yet
	err = CheckToolsOutsideRoot([]string{tools}, root)
	if err == nil || !strings.Contains(err.Error(), "fs_read leads to "+filepath.Join(root, "stock")) || !strings.Contains(err.Error(), "add --readonly") {
		t.Errorf("a tool linked into the root: %v", err)
	}
}

// TestGuardAtReload: a tool whose link is retargeted into the root after
// startup is left out at the next reload, with one log line; retargeted
// back, it is served again. ReadOnly turns the guard off.
func TestGuardAtReload(t *testing.T) {
	root, tools, outside := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{root, outside} {
		write(t, filepath.Join(d, "impl"), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(d, "impl.json"), `{"description":"x","annotations":{"readOnlyHint":true}}`, 0o644)
	}
	write(t, filepath.Join(tools, "plain"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(tools, "plain.json"), `{"description":"plain"}`, 0o644)
	tool := filepath.Join(tools, "t")
	retarget := func(target string) {
		os.Remove(tool)
		if err := os.Symlink(target, tool); err != nil {
			t.Fatal(err)
		}
		os.Remove(tool + ".json")
		os.Symlink(target+".json", tool+".json")
	}
	retarget(filepath.Join(outside, "impl"))
	lb := &logBuf{}
	r := New(Options{Dirs: []string{tools}, Root: root, Logger: lb.logger()})
	r.Reload(context.Background())
	if r.Lookup("t") == nil || r.Lookup("plain") == nil {
		t.Fatalf("outside the root: log %q", lb.Lines())
	}
	retarget(filepath.Join(root, "impl"))
	for range 2 {
		r.Reload(context.Background())
	}
	write(t, filepath.Join(tools, "plain.json"), `{"description":"plain, edited"}`, 0o644) // another reload
	r.Reload(context.Background())
	if r.Lookup("t") != nil || r.Lookup("plain") == nil {
		t.Errorf("retargeted into the root: t served %v", r.Lookup("t") != nil)
	}
	n := 0
	for _, l := range lb.Lines() {
		if strings.Contains(l, "path="+tool+" why="+tool+" leads to "+filepath.Join(root, "impl")) {
			n++
		}
	}
	if n != 1 || len(lb.warns()) != 1 {
		t.Errorf("want one log line for t, got %q", lb.Lines())
	}
	// Only the sidecar leads into the root: still left out.
	os.Remove(tool)
	os.Symlink(filepath.Join(outside, "impl"), tool)
	r.Reload(context.Background())
	if r.Lookup("t") != nil || !lb.has(tool+".json leads to") {
		t.Errorf("sidecar in the root: served %v, log %q", r.Lookup("t") != nil, lb.Lines())
	}
	retarget(filepath.Join(outside, "impl"))
	r.Reload(context.Background())
	if r.Lookup("t") == nil {
		t.Errorf("retargeted back out: not served; log %q", lb.Lines())
	}
	retarget(filepath.Join(root, "impl"))
	ro := New(Options{Dirs: []string{tools}, Root: root, ReadOnly: true, Logger: lb.logger()})
	ro.Reload(context.Background())
	if ro.Lookup("t") == nil {
		t.Error("ReadOnly: a tool in the root was left out")
	}
}
