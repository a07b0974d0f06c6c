package confine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// TestSystemSecretsDenied: a confined program, even root's, reads neither
// the secrets of /etc nor another process's /proc files, while the files
// every program needs (users, hosts, DNS, the machine's /proc facts) read
// as they do unconfined.
func TestSystemSecretsDenied(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := spawner(t, confine.Policy{Root: f.root})
	readable := func(p string) bool { _, err := os.ReadFile(p); return err == nil }
	attacks := 0
	for _, p := range []string{
		"/etc/shadow", "/etc/gshadow", "/etc/sudoers",
		"/proc/1/environ", fmt.Sprintf("/proc/%d/environ", os.Getpid()), "/proc/self/status",
	} {
		if !readable(p) {
			continue // not here, or not ours to read even unconfined
		}
		attacks++
		out, code := sh(t, s, f.root, "cat "+p)
		if code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("cat %s confined: status %d, %.200q", p, code, out)
		}
	}
	if fi, err := os.Stat("/etc/ssl/private"); err == nil && fi.IsDir() {
		attacks++
		if out, code := sh(t, s, f.root, "ls /etc/ssl/private"); code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("ls /etc/ssl/private confined: status %d, %q", code, out)
		}
	}
	if attacks == 0 {
		t.Skip("none of /etc/shadow, /etc/sudoers, /etc/ssl/private nor /proc/PID/environ is readable here, confined or not")
	}
	// The counterparts: the same content as unconfined.
	allowed := 0
	for _, p := range []string{"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg", "/proc/version"} {
		want, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		allowed++
		out, code := run(t, s, f.root, nil, "/bin/cat", p)
		if code != 0 || (!strings.HasPrefix(p, "/proc/") && out != string(want)) {
			t.Errorf("cat %s confined: status %d, %.200q", p, code, out)
		}
	}
	if allowed < 4 {
		t.Errorf("only %d of the usual /etc and /proc files exist here", allowed)
	}
	if out, code := sh(t, s, f.root, "ls /etc"); code == 0 {
		t.Errorf("ls /etc confined: status 0, %.200q: /etc is granted whole", out)
	}
	rep := s.Report()
	if d := rep.Detail(); !strings.Contains(d, "/proc/cpuinfo (file)  [proc]") || !strings.Contains(d, "/proc/self and every /proc/<pid> denied") {
		t.Errorf("Detail does not show the /proc files:\n%s", d)
	}
}

// TestNeverRefused: a policy path that would open a secret of /etc (at,
// below or above it, as named or through a symlink) is refused, whatever
// flag names it; a file of /etc beside it is accepted.
func TestNeverRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := os.Stat("/etc/shadow"); err != nil {
		t.Skip("no /etc/shadow here")
	}
	link := filepath.Join(f.outside, "etc-link")
	must(t, os.Symlink("/etc", link))
	for _, p := range []confine.Policy{
		{Root: f.root, AllowRead: []string{"/etc"}},
		{Root: f.root, AllowRead: []string{link}},
		{Root: f.root, AllowRead: []string{"/etc/shadow"}},
		{Root: f.root, AllowWrite: []string{"/etc"}},
		{Root: f.root, AllowExec: []string{"/etc"}},
		{Root: "/etc", ReadOnlyRoot: true},
		{Root: f.root, Grants: []confine.Grant{{Path: "/etc", Access: confine.AccessRead, Source: "interpreter"}}},
	} {
		var ne *confine.NeverError
		err := p.Check()
		if !errors.As(err, &ne) || ne.Secret != "/etc/shadow" || !strings.Contains(err.Error(), "never granted") {
			t.Errorf("%+v: %v, want a NeverError for /etc/shadow", p, err)
		}
		if r := p.Plan(); r.Complete() {
			t.Errorf("%+v: Plan is complete", p)
		}
	}
	if err := (confine.Policy{Root: f.root, AllowRead: []string{"/etc/passwd", "/etc/hosts"}}).Check(); err != nil {
		t.Errorf("--allow-read of /etc/passwd: %v", err)
	}
}

// TestAllowExec: a program in an AllowExec directory runs, one in an
// AllowRead directory does not; an AllowExec inside the root or an
// AllowWrite, as named or through a symlink, is refused.
func TestAllowExec(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bin := filepath.Join(f.outside, "bin")
	must(t, os.Mkdir(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "hello"), []byte("#!/bin/sh\necho hello from bin\n"), 0o755))
	out, code := run(t, spawner(t, confine.Policy{Root: f.root, AllowExec: []string{bin}}), f.root, nil, filepath.Join(bin, "hello"))
	if code != 0 || out != "hello from bin\n" {
		t.Errorf("AllowExec: status %d, %q", code, out)
	}
	out, code = sh(t, spawner(t, confine.Policy{Root: f.root, AllowRead: []string{bin}}), f.root, filepath.Join(bin, "hello"))
	if code != 126 || !strings.Contains(out, "Permission denied") {
		t.Errorf("AllowRead only: status %d, %q, want 126 Permission denied", code, out)
	}

	sub := filepath.Join(f.root, "bin")
	must(t, os.Mkdir(sub, 0o755))
	into := filepath.Join(f.outside, "into-root")
	must(t, os.Symlink(sub, into))
	w := filepath.Join(f.outside, "w")
	must(t, os.Mkdir(w, 0o755))
	for _, c := range []struct {
		p     confine.Policy
		place string
	}{
		{confine.Policy{Root: f.root, AllowExec: []string{sub}}, f.root},
		{confine.Policy{Root: f.root, AllowExec: []string{f.root}}, f.root},
		{confine.Policy{Root: f.root, AllowExec: []string{into}}, f.root},
		{confine.Policy{Root: f.root, AllowWrite: []string{w}, AllowExec: []string{w}}, w},
		{confine.Policy{Root: f.root, Grants: []confine.Grant{{Path: sub, Access: confine.AccessReadExec, Source: "interpreter"}}}, f.root},
	} {
		var we *confine.WritableExecError
		if err := c.p.Check(); !errors.As(err, &we) || we.Place != c.place || !strings.Contains(err.Error(), "could put a program there") {
			t.Errorf("%+v: %v, want a WritableExecError for %s", c.p, err, c.place)
		}
		if got := c.p.InWritable(append(c.p.AllowExec, "")[0]); len(c.p.AllowExec) > 0 && got != c.place {
			t.Errorf("InWritable(%s) = %q, want %s", c.p.AllowExec[0], got, c.place)
		}
	}
	// A read-only grant inside the root is no exec grant: accepted.
	if err := (confine.Policy{Root: f.root, Grants: []confine.Grant{{Path: sub, Access: confine.AccessRead, Source: "x"}}}).Check(); err != nil {
		t.Errorf("a read grant inside the root: %v", err)
	}
}
