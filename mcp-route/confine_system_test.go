package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// TestConfineSystemSecrets: a confined tool of a root mcp-route reads
// neither /etc's secrets (password hashes, sudo rules, TLS private keys)
// nor the /proc files of pid 1; it reads the files programs need (users,
// hosts, DNS configuration) and the machine's /proc facts, and the
// programs every tool uses (date with the time zone, ls, a resolver)
// work. --confine off shows the same reads getting through, so the
// refusals are the confinement's.
func TestConfineSystemSecrets(t *testing.T) {
	confinetest.Need(t, 1)
	readable := func(p string) bool { _, err := os.ReadFile(p); return err == nil }
	var secrets []string
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/proc/1/environ"} {
		if readable(p) {
			secrets = append(secrets, p)
		}
	}
	if len(secrets) == 0 {
		t.Skip("none of /etc/shadow, /etc/sudoers, /proc/1/environ is readable by this user even unconfined")
	}
	f := newConfineFixture(t)
	p := f.start(t)
	off := f.start(t, "--confine", "off")
	for _, s := range secrets {
		p.want(map[string]any{"op": "read", "path": s}, "refused")
		if got := off.call("attack", map[string]any{"op": "read", "path": s}); got == "refused" {
			t.Errorf("--confine off: reading %s refused: the test proves nothing", s)
		}
	}
	if fi, err := os.Stat("/etc/ssl/private"); err == nil && fi.IsDir() {
		if got := p.call("attack", map[string]any{"op": "sh", "cmd": "ls /etc/ssl/private"}); !strings.Contains(got, "Permission denied") {
			t.Errorf("ls /etc/ssl/private confined: %q", got)
		}
	}
	// The counterparts.
	for _, c := range []struct{ path, want string }{
		{"/etc/passwd", "read: root:"},
		{"/etc/hosts", "read: "},
		{"/etc/resolv.conf", "read: "},
		{"/proc/cpuinfo", "read: "},
		{"/proc/meminfo", "read: MemTotal:"},
	} {
		if !readable(c.path) {
			continue
		}
		if got := p.call("attack", map[string]any{"op": "read", "path": c.path}); !strings.HasPrefix(got, c.want) {
			t.Errorf("read %s confined: %.200q, want %q...", c.path, got, c.want)
		}
	}
	for cmd, want := range map[string]string{
		"TZ=Europe/Paris date +%Z": "CE",     // CET or CEST, from /usr/share/zoneinfo
		"ls -ld /etc/passwd":       "passwd", // ls reads passwd and group for the names
		"getent hosts localhost":   "localhost",
		"id -un":                   "",
	} {
		got := p.call("attack", map[string]any{"op": "sh", "cmd": cmd})
		if !strings.Contains(got, want) || strings.Contains(got, "denied") {
			t.Errorf("%s confined: %q, want %q", cmd, got, want)
		}
	}
	if os.Geteuid() == 0 {
		if got := p.call("attack", map[string]any{"op": "sh", "cmd": "id -un"}); strings.TrimSpace(got) != "root" {
			t.Errorf("id -un confined: %q, want root (from /etc/passwd)", got)
		}
	}
}

// TestAllowExecFlag: a program in an --allow-exec directory runs confined,
// the same under --allow-read does not; an --allow-exec inside --root or an
// --allow-write path, or an --allow-read of /etc whole, is refused at
// start with one line; --confine-check shows the rule.
func TestAllowExecFlag(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	bin := filepath.Join(f.outside, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(bin, "hello")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho hello from allow-exec\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := f.start(t, "--allow-exec", bin)
	if got := p.call("attack", map[string]any{"op": "sh", "cmd": prog}); got != "hello from allow-exec" {
		t.Errorf("--allow-exec: %q", got)
	}
	r := f.start(t, "--allow-read", bin)
	if got := r.call("attack", map[string]any{"op": "sh", "cmd": prog}); !strings.Contains(got, "Permission denied") {
		t.Errorf("--allow-read only: %q, want Permission denied", got)
	}

	inRoot := filepath.Join(f.root, "bin")
	if err := os.Mkdir(inRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(f.outside, "w")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--allow-exec", inRoot}, "--allow-exec " + inRoot + " is inside --root "},
		{[]string{"--allow-write", w, "--allow-exec", w}, "--allow-exec " + w + " is inside --allow-write " + w},
	}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"--allow-read", "/etc"}, "--allow-read /etc: would let tools read /etc/shadow, which holds secrets"})
	}
	for _, c := range cases {
		for _, mode := range []string{"auto", "off"} {
			args := append([]string{"--confine", mode, "--tools", f.tools, "--root", f.root}, c.args...)
			code, _, errs := runWith(t, "", args...)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want 1 and one line with %q", args, code, errs, c.want)
			}
		}
	}
	code, out, errs := runWith(t, "", "--confine-check", "--tools", f.tools, "--root", f.root, "--allow-exec", bin)
	realBin, _ := filepath.EvalSymlinks(bin)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("allow read+exec  %s  [allow-exec]", realBin)) {
		t.Errorf("--confine-check --allow-exec: exit %d, stderr %q:\n%s", code, errs, out)
	}
}
