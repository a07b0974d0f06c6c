package confinement

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "require", "off"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "on", "Auto", "yes"} {
		if _, err := ParseMode(s); err == nil || !strings.Contains(err.Error(), "want auto, require or off") {
			t.Errorf("ParseMode(%q): %v, want an error naming the choices", s, err)
		}
	}
}

// fixture: a root, a tool directory with a script and a link to a script
// elsewhere, and a secret outside all of them.
type fixture struct{ root, tools, elsewhere, secret string }

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{
		root:      filepath.Join(base, "root"),
		tools:     filepath.Join(base, "tools"),
		elsewhere: filepath.Join(base, "elsewhere"),
		secret:    filepath.Join(base, "secret"),
	}
	for _, d := range []string{f.root, f.tools, f.elsewhere} {
		os.Mkdir(d, 0o755)
	}
	os.WriteFile(f.secret, []byte("secret"), 0o644)
	script := "#!/bin/sh\ncat \"$1\" 2>/dev/null || echo refused\n"
	os.WriteFile(filepath.Join(f.tools, "cat"), []byte(script), 0o755)
	os.WriteFile(filepath.Join(f.elsewhere, "linked"), []byte(script), 0o755)
	os.WriteFile(filepath.Join(f.root, "in"), []byte("inside"), 0o644)
	if err := os.Symlink(filepath.Join(f.elsewhere, "linked"), filepath.Join(f.tools, "linked")); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f fixture) config(mode Mode) Config {
	return Config{Mode: mode, Root: f.root, ToolDirs: []string{f.tools}}
}

func TestPolicyTakesLinkTargets(t *testing.T) {
	f := newFixture(t)
	os.Symlink(f.secret, filepath.Join(f.tools, ".hidden")) // never a tool
	p := f.config(Auto).Policy()
	want := []string{f.tools, filepath.Join(f.elsewhere, "linked")}
	if strings.Join(p.ReadExec, " ") != strings.Join(want, " ") {
		t.Errorf("ReadExec %v, want %v", p.ReadExec, want)
	}
	if p.Root != f.root || p.ReadOnlyRoot {
		t.Errorf("root %q read-only %v", p.Root, p.ReadOnlyRoot)
	}
}

func TestOff(t *testing.T) {
	f := newFixture(t)
	c, err := Start(f.config(Off))
	if err != nil || c.Enforced() || c.Spawn() != nil || c.Warning() != "" {
		t.Fatalf("Off: %v, enforced %v, warning %q", err, c.Enforced(), c.Warning())
	}
}

// run starts tool with arg through spawn and returns its output.
func run(t *testing.T, spawn func(*exec.Cmd) error, tool, arg string) string {
	t.Helper()
	cmd := exec.Command(tool, arg)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := spawn(cmd); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return strings.TrimSpace(out.String())
}

// TestSpawnConfines: a tool started through Spawn reads the root and not
// the secret; a tool linked in after start, whose target is outside the
// domain, gets a new spawner and runs, confined too.
func TestSpawnConfines(t *testing.T) {
	confinetest.Need(t, 1)
	f := newFixture(t)
	var log bytes.Buffer
	cfg := f.config(Require)
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Enforced() || !c.Report().Verified || c.Warning() != "" {
		t.Fatalf("enforced %v, report %v, warning %q", c.Enforced(), c.Report(), c.Warning())
	}
	spawn := c.Spawn()
	cat := filepath.Join(f.tools, "cat")
	if got := run(t, spawn, cat, filepath.Join(f.root, "in")); got != "inside" {
		t.Errorf("read in the root: %q", got)
	}
	if got := run(t, spawn, cat, f.secret); got != "refused" {
		t.Errorf("read outside: %q", got)
	}
	if got := run(t, spawn, filepath.Join(f.tools, "linked"), f.secret); got != "refused" {
		t.Errorf("linked tool read outside: %q", got)
	}

	later := filepath.Join(t.TempDir(), "later")
	os.WriteFile(later, []byte("#!/bin/sh\ncat \"$1\" 2>/dev/null || echo refused\n"), 0o755)
	later, _ = filepath.EvalSymlinks(later)
	os.Symlink(later, filepath.Join(f.tools, "later"))
	if got := run(t, spawn, filepath.Join(f.tools, "later"), filepath.Join(f.root, "in")); got != "inside" {
		t.Errorf("tool linked after start: %q", got)
	}
	if got := run(t, spawn, filepath.Join(f.tools, "later"), f.secret); got != "refused" {
		t.Errorf("tool linked after start read outside: %q", got)
	}
	found := false
	for _, r := range c.Report().Rules {
		found = found || (r.Path == later && r.Access == confine.AccessReadExec)
	}
	if !found || strings.Count(log.String(), "confinement rebuilt") != 1 {
		t.Errorf("after the rebuild: target in rules %v, log:\n%s", found, log.String())
	}
}

// TestRequireRefusesWhatItCannotProve: a policy confine cannot build (it
// would open "/") fails Require with one line, and Auto runs unconfined
// with a warning that says so.
func TestRequireRefusesWhatItCannotProve(t *testing.T) {
	confinetest.Need(t, 1)
	f := newFixture(t)
	cfg := f.config(Require)
	cfg.AllowRead = []string{"/"}
	if _, err := Start(cfg); err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "--confine require: ") {
		t.Errorf("Require with --allow-read /: %v", err)
	}
	cfg.Mode = Auto
	c, err := Start(cfg)
	if err != nil || c.Enforced() || c.Spawn() != nil || !strings.Contains(c.Warning(), "NOT confined") {
		t.Errorf("Auto with --allow-read /: %v, enforced %v, warning %q", err, c.Enforced(), c.Warning())
	}
	if _, err := Check(cfg); err == nil {
		t.Errorf("Check with --allow-read /: no error")
	}
}
