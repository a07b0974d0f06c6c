//go:build linux

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestMain lets TestSubreap run this binary as a supervisor with Subreap
// on: a process attribute the other tests must not share.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PROC_TEST_SUBREAP_DIR"); dir != "" {
		os.Exit(subreapHelper(dir))
	}
	os.Exit(m.Run())
}

// daemonScript daemonizes (setsid, stdio detached), records the daemon's
// pid and its child's, and exits.
const daemonScript = `setsid sh -c 'sleep 300 & echo $! > "$D/child.pid"; echo $$ > "$D/daemon.pid"; wait' </dev/null >/dev/null 2>&1 &
while [ ! -s "$D/daemon.pid" ] || [ ! -s "$D/child.pid" ]; do sleep 0.02; done`

// subreapHelper runs the daemonizing tool, with Subreap unless
// PROC_TEST_NO_SUBREAP is set, and then a plain one, and reports how they
// ended.
func subreapHelper(dir string) int {
	if os.Getenv("PROC_TEST_NO_SUBREAP") == "" {
		if err := Subreap(); err != nil {
			fmt.Println("Subreap:", err)
			return 1
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "D=" + dir}
	r := Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", daemonScript}, Env: env, Timeout: 20 * time.Second})
	fmt.Println("daemonize:", r.Outcome)
	for _, f := range []string{"daemon.pid", "child.pid"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		fmt.Printf("%s alive after the run: %v\n", f, proctest.Alive(pid))
	}
	r = Run(context.Background(), Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "echo plain"}, Env: env})
	fmt.Printf("plain: %s %q\n", r.Outcome, r.Stdout)
	Sweep()
	return 0
}

// TestSubreap: with Subreap, the daemon a run leaves behind, and its
// child, are gone when Run returns, and a plain run still works; without
// it they survive (and are killed here).
func TestSubreap(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip(err)
	}
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "PROC_TEST_SUBREAP_DIR="+dir)
		if !on {
			cmd.Env = append(cmd.Env, "PROC_TEST_NO_SUBREAP=1")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		want := fmt.Sprintf("daemonize: exit status 0\ndaemon.pid alive after the run: %v\nchild.pid alive after the run: %v\nplain: exit status 0 \"plain\\n\"\n", !on, !on)
		if string(out) != want {
			t.Errorf("subreaper %v: helper said\n%s\nwant\n%s", on, out, want)
		}
		if !on { // the escaped daemon is ours to clean up
			for _, f := range []string{"daemon.pid", "child.pid"} {
				b, _ := os.ReadFile(filepath.Join(dir, f))
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
}
