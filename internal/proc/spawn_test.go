package proc

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestRunSpawnSeam: Spawn starts the process instead of cmd.Start, sees
// the prepared command, and its refusals are NotStarted.
func TestRunSpawnSeam(t *testing.T) {
	t.Parallel()
	tool := proctest.Script(t, `echo "tool $1"`)
	var spawned []string
	r := runT(t, Cmd{Path: tool, Args: []string{"tool", "arg"}, Spawn: func(c *exec.Cmd) error {
		spawned = c.Args
		return c.Start()
	}})
	if !r.OK() || string(r.Stdout) != "tool arg\n" || len(spawned) != 2 {
		t.Errorf("%q: stdout %q, spawned %q", r.String(), r.Stdout, spawned)
	}
	refused := errors.New("not on this thread")
	r = runT(t, Cmd{Path: tool, Spawn: func(*exec.Cmd) error { return refused }})
	if r.Ending != NotStarted || !errors.Is(r.Err, refused) {
		t.Errorf("a refusing Spawn: %q", r.String())
	}
	r = runT(t, Cmd{Path: tool, Spawn: func(*exec.Cmd) error { return nil }})
	if r.Ending != NotStarted || !strings.Contains(r.String(), "without starting") {
		t.Errorf("a Spawn that starts nothing: %q", r.String())
	}
}

// confined returns a Spawner whose root is a fresh directory holding
// "inside", with the tool's directory readable and executable, and a
// file outside it.
func confined(t *testing.T, tool string) (s *confine.Spawner, root, outside string) {
	t.Helper()
	confinetest.Need(t, 1)
	root, outside = t.TempDir(), filepath.Join(t.TempDir(), "secret")
	for f, body := range map[string]string{filepath.Join(root, "inside"): "in\n", outside: "secret\n"} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := confine.NewSpawner(confine.Policy{Root: root, ReadExec: []string{filepath.Dir(tool)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, root, outside
}

// TestRunConfinedSpawner: through a confine.Spawner the tool reads inside
// the root and is refused the file outside; the same tool unconfined
// reads both, so the refusal is the spawner's doing.
func TestRunConfinedSpawner(t *testing.T) {
	t.Parallel()
	tool := proctest.Script(t, `cat "$1/inside"; cat "$2" || echo refused`)
	s, root, outside := confined(t, tool)
	c := Cmd{Path: tool, Args: []string{"tool", root, outside}, Env: []string{"PATH=/usr/bin:/bin"}}
	if r := runT(t, c); string(r.Stdout) != "in\nsecret\n" {
		t.Fatalf("unconfined: %q, stdout %q", r.String(), r.Stdout)
	}
	c.Spawn = s.Start
	r := runT(t, c)
	if !r.OK() || string(r.Stdout) != "in\nrefused\n" || !strings.Contains(string(r.Stderr), "Permission denied") {
		t.Errorf("confined: %q, stdout %q, stderr %q", r.String(), r.Stdout, r.Stderr)
	}
}

// TestStartConfinedSpawner: a long-lived process started through the
// spawner is confined for its whole life, and Stop still ends it.
func TestStartConfinedSpawner(t *testing.T) {
	t.Parallel()
	tool := proctest.Script(t, `while read f; do if cat "$f" 2>/dev/null; then :; else echo "refused $f"; fi; done`)
	s, root, outside := confined(t, tool)
	p, err := Start(Cmd{Path: tool, Env: []string{"PATH=/usr/bin:/bin"}, Spawn: s.Start})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if _, err := io.WriteString(p.Stdin(), filepath.Join(root, "inside")+"\n"+outside+"\n"); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(p.Stdout())
	for _, want := range []string{"in\n", "refused " + outside + "\n"} {
		if line, err := rd.ReadString('\n'); line != want {
			t.Errorf("read %q (%v), want %q", line, err, want)
		}
	}
	p.Stop(5 * time.Second)
	if o := p.Wait(); !o.OK() {
		t.Errorf("outcome %q", o)
	}
	s.Close()
	if _, err := Start(Cmd{Path: tool, Spawn: s.Start}); !errors.Is(err, confine.ErrClosed) {
		t.Errorf("Start through a closed spawner: %v, want ErrClosed", err)
	}
}
