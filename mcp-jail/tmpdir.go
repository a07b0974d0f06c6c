package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A private TMPDIR for --exec. TMPDIR used to be DIR itself, and the Go
// command ignores a go.mod in the system temporary directory: `go build`
// and `go test` in DIR then ran outside their module. So CMD gets a fresh
// directory outside DIR, read-write under the policy, removed when CMD
// ends. mcp-jail execs CMD (its status, its signals), and nothing would be
// left to remove the directory: so mcp-jail first re-runs itself as a
// child with the directory named in privateTmpEnv, waits for it, removes
// the directory and ends as the child did (the same status, or the same
// signal). The child, seeing the variable, drops it from the environment,
// adds the directory to its policy and execs CMD as before.

// privateTmpEnv names the private TMPDIR to the re-run mcp-jail.
const privateTmpEnv = "MCP_JAIL_PRIVATE_TMPDIR"

// privateTmpPrefix is the name of a private TMPDIR, in the inherited
// TMPDIR (default /tmp).
const privateTmpPrefix = "mcp-jail-tmp-"

// ownPrivateTmp returns the private TMPDIR the parent mcp-jail made, taken
// out of env, when env names one. Only a directory that is ours, mode
// 0700, empty and named as the parent names them is taken: the variable
// must not turn a directory of the caller's choosing read-write.
func ownPrivateTmp(env []string) (dir string, rest []string, err error) {
	for i, kv := range env {
		v, ok := strings.CutPrefix(kv, privateTmpEnv+"=")
		if !ok {
			continue
		}
		rest = append(append([]string(nil), env[:i]...), env[i+1:]...)
		fi, err := os.Lstat(v)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(v), privateTmpPrefix) || !filepath.IsAbs(v) {
			return "", nil, fmt.Errorf("%s=%s: not a private TMPDIR made by mcp-jail", privateTmpEnv, v)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			return "", nil, fmt.Errorf("%s=%s: not ours", privateTmpEnv, v)
		}
		if ents, err := os.ReadDir(v); err != nil || len(ents) > 0 {
			return "", nil, fmt.Errorf("%s=%s: not empty", privateTmpEnv, v)
		}
		return v, rest, nil
	}
	return "", env, nil
}

// withPrivateTmp runs this mcp-jail again with a fresh private TMPDIR (see
// above) and returns its status; a child killed by a signal is re-raised
// on this process once the directory is gone. SIGTERM and SIGHUP are
// passed on to the child; SIGINT and SIGQUIT are not (a terminal sends
// them to the child too), and while the child runs they do not end this
// process, so the directory is removed whatever the child does with them.
func withPrivateTmp(env []string, stderr io.Writer) int {
	base := os.TempDir()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			base = v
		}
	}
	dir, err := os.MkdirTemp(base, privateTmpPrefix)
	if err != nil {
		fmt.Fprintf(stderr, "%s: private TMPDIR: %v\n", prog, err)
		return 1
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: private TMPDIR: %v\n", prog, err)
		return 1
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(append([]string(nil), env...), privateTmpEnv+"="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 126
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGTERM || s == syscall.SIGHUP {
					cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		sig := ws.Signal()
		os.RemoveAll(dir)
		// Only signals whose default the Go runtime leaves at "end the
		// process by this signal" (SIGQUIT would dump goroutines).
		switch sig {
		case syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGKILL, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGUSR1, syscall.SIGUSR2:
			signal.Stop(sigs)
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig)
			// The runtime handles the signal on another thread; it ends
			// the process long before this.
			time.Sleep(5 * time.Second)
		}
		return 128 + int(sig)
	}
	return cmd.ProcessState.ExitCode()
}
