package confine_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// TestNestedSpawnerShieldsCaller: a child started through a nested
// spawner cannot ptrace nor signal the process that made the spawner (what
// sh_exec's programs would do to read the mcp-stock worker's environment
// and calls), while a child started the plain way can; the nested child
// still reads and writes what its parent may.
func TestNestedSpawnerShieldsCaller(t *testing.T) {
	t.Parallel()
	confinetest.Need(t, 6)
	s, err := confine.NewNestedSpawner()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if r := s.Report(); !r.ScopedSignals {
		t.Fatalf("report %+v: signals not scoped on ABI 6", r)
	}
	us := strconv.Itoa(os.Getpid())
	for _, mode := range []string{"ptrace", "probe-parent"} {
		argv, env, _ := helperArgv(t, mode, us)
		if out, code := run(t, nil, t.TempDir(), env, argv...); code != 0 {
			t.Fatalf("%s of our process, plain child: status %d, %q", mode, code, out)
		}
		out, code := run(t, s, t.TempDir(), env, argv...)
		if code == 0 || !strings.Contains(out, "refused") {
			t.Errorf("%s of our process, nested child: status %d, %q", mode, code, out)
		}
	}
	dir := t.TempDir()
	if out, code := sh(t, s, dir, "echo made > new && cat new && mkfifo f"); code != 0 || out != "made\n" {
		t.Errorf("nested child writing its directory: status %d, %q", code, out)
	}
	argv, env, _ := helperArgv(t, "kill-own")
	if out, code := run(t, s, dir, env, argv...); code != 0 || !strings.Contains(out, "killed own") {
		t.Errorf("nested child killing its own child: status %d, %q", code, out)
	}
}
