package confine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// TestExplainAdvice: the advice for a refused path is the narrowest grant
// that lets the access through, never "/" nor one that opens a secret, and
// a path the rules allow (or the file's mode refuses) is not blamed on the
// confinement.
func TestExplainAdvice(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	root := t.TempDir()
	data := filepath.Join(out, "data")
	os.MkdirAll(filepath.Join(data, "sub"), 0o755)
	os.WriteFile(filepath.Join(data, "x.txt"), []byte("x"), 0o644)
	// An ELF binary whose loader lies in a granted place runs on its own.
	bin := filepath.Join(out, "tools", "true")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	elf, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true")
	}
	os.WriteFile(bin, elf, 0o755)
	// A script whose interpreter is granted runs on its own; one whose
	// interpreter lies in its own installation needs the installation.
	alone := filepath.Join(out, "tools", "alone")
	os.WriteFile(alone, []byte("#!/bin/sh\necho\n"), 0o755)
	venv := filepath.Join(out, "venv")
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.WriteFile(filepath.Join(venv, "bin", "python"), elf, 0o755)
	script := filepath.Join(venv, "bin", "tool")
	os.WriteFile(script, []byte("#!"+filepath.Join(venv, "bin", "python")+"\n"), 0o755)
	ro := filepath.Join(out, "ro")
	os.Mkdir(ro, 0o755)
	rules := []confine.Rule{
		{Path: "/usr", Access: confine.AccessReadExec},
		{Path: "/lib64", Access: confine.AccessReadExec},
		{Path: "/lib", Access: confine.AccessReadExec},
		{Path: root, Access: confine.AccessReadWrite},
		{Path: ro, Access: confine.AccessRead},
	}
	for _, r := range rules[:3] {
		if real, err := filepath.EvalSymlinks(r.Path); err == nil {
			rules = append(rules, confine.Rule{Path: real, Access: r.Access})
		}
	}
	for _, c := range []struct{ failure, want string }{
		{"exit status 1: cat: " + data + "/x.txt: Permission denied", "refused " + data + "/x.txt (tools are granted nothing there); --allow-read " + data + "/x.txt grants it"},
		{"exit status 2: ls: cannot open directory '" + data + "/sub': Permission denied", "; --allow-read " + data + "/sub grants it"},
		{"exit status 2: sh: 1: cannot create " + data + "/new.txt: Permission denied", "refused " + data + "/new.txt (tools are granted nothing there); --allow-write " + data + " grants it"},
		{"exit status 1: mkdir: cannot create directory '" + data + "/a/b/c': Permission denied", "mkdir -p " + data + "/a, then --allow-write " + data + "/a grants it"},
		{"exit status 1: open " + ro + "/x: permission denied", "(tools may only read there); --allow-write " + ro + " grants it"},
		{"exit status 126: sh: 1: " + bin + ": Permission denied", "; --allow-exec " + bin + " grants it"},
		{"exit status 126: sh: 1: " + alone + ": Permission denied", "; --allow-exec " + alone + " grants it"},
		{"exit status 126: sh: 1: " + script + ": Permission denied", "; --allow-exec " + venv + " grants it"},
		// The path nearest the words is the one refused, not the
		// program's own name before it.
		{"exit status 2: " + bin + ": 2: cannot create " + data + "/y: Permission denied", "refused " + data + "/y "},
		// npm names the path on a line of its own.
		{"npm error code EACCES\nnpm error path " + data + "/x.txt", "--allow-read " + data + "/x.txt grants it"},
		// A nested mcp-route: its /proc/self is no grant to advise (the
		// advice named the explainer's own pid); the next path is.
		{"mcp-route: warning: selfguard: open /proc/self/stat: permission denied\nmcp-route: --tools " + data + "/sub: open " + data + "/sub: permission denied", "; --allow-read " + data + "/sub grants it"},
	} {
		d, ok := confine.Explain(c.failure, rules)
		if !ok || !strings.Contains(d.String(), c.want) {
			t.Errorf("%q: got %v %q; want %q", c.failure, ok, d.String(), c.want)
		}
	}
	// A file of /etc: the file, since --allow-read /etc opens /etc/shadow.
	for _, p := range []string{"/etc/machine-id", "/etc/debian_version", "/etc/hostname"} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 != 0 {
			continue
		}
		d, ok := confine.Explain("cat: "+p+": Permission denied", rules)
		if !ok || d.Flag != "--allow-read "+p {
			t.Errorf("%s: got %v %q", p, ok, d.Flag)
		}
		break
	}
	for _, failure := range []string{
		"cat: /etc/shadow: Permission denied",                    // a secret: no flag grants it
		"cat: " + root + "/a: Permission denied",                 // the rules allow everything there
		"exit status 1: cat: " + data + "/x.txt: No such file",   // no denial
		"mkdir: cannot create directory '/x': Permission denied", // never "/"
		"EACCES fetching https://registry.npmjs.org/pkg",         // a URL is no path
		"cat: " + data + "/x.txt/y: Permission denied",           // a path through a file
		"cat: /proc/self/environ: Permission denied",             // a process's own entry
		"cat: /proc/1/cmdline: Permission denied",
	} {
		if d, ok := confine.Explain(failure, rules); ok {
			t.Errorf("%q: want no explanation, got %q", failure, d.String())
		}
	}
	if d, ok := confine.Explain("cat: "+data+"/x.txt: Permission denied", nil); ok {
		t.Errorf("unconfined: want no explanation, got %q", d.String())
	}
	if os.Geteuid() != 0 { // root reads a mode-000 file anyway
		locked := filepath.Join(out, "locked")
		os.WriteFile(locked, []byte("x"), 0)
		if d, ok := confine.Explain("cat: "+locked+": Permission denied", rules); ok {
			t.Errorf("a file its mode refuses: want no explanation, got %q", d.String())
		}
	}
}
