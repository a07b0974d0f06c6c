package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// multiFlag is a repeatable flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// execOptions are the flags of --exec.
type execOptions struct {
	root                  string
	allowRead, allowWrite []string
	allowExec             []string
	noNetwork, readonly   bool
	bestEffort            bool
	argv                  []string
}

// runExec runs o.argv confined to o.root (see the usage) and returns
// only when it could not: 1 when the kernel cannot confine (without
// --best-effort), 126 when the command cannot be executed, 127 when it is
// not found, 2 for a directory that does not exist.
func runExec(o execOptions, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: %s\n", prog, fmt.Sprintf(format, a...))
		return code
	}
	root, err := filepath.Abs(o.root)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(root); err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
	}
	if err != nil {
		return fail(1, "--root %s: %v", o.root, unwrapPathError(err))
	}
	for flag, dirs := range map[string][]string{"--allow-read": o.allowRead, "--allow-write": o.allowWrite, "--allow-exec": o.allowExec} {
		for _, d := range dirs {
			if _, err := os.Stat(d); err != nil {
				return fail(2, "%s %s: %v", flag, d, unwrapPathError(err))
			}
		}
	}
	p := confine.Policy{Root: root, ReadOnlyRoot: o.readonly, AllowRead: o.allowRead, AllowWrite: o.allowWrite, AllowExec: o.allowExec, NoNetwork: o.noNetwork}
	// Refused whatever the kernel, --best-effort or not: a secret of /etc
	// opened, an --allow-exec where CMD can write.
	var ne *confine.NeverError
	var we *confine.WritableExecError
	switch err := p.Check(); {
	case errors.As(err, &ne):
		return fail(2, "--%s %s: would let CMD read %s, which holds secrets and is never granted; name the files it needs instead", ne.Source, ne.Path, ne.Secret)
	case errors.As(err, &we):
		place := "--root"
		if we.PlaceSource != "root" {
			place = "--" + we.PlaceSource
		}
		return fail(2, "--%s %s is inside %s %s, which CMD can write: it could put a program there and run it; name a directory outside it", we.Source, we.Path, place, we.Place)
	}
	priv, env, err := ownPrivateTmp(os.Environ())
	if err != nil {
		return fail(1, "%v", err)
	}
	switch {
	case priv != "":
		p.TempDir = priv
		env = setEnv(env, "TMPDIR", priv)
	case !keepTmpDir(env, p):
		return withPrivateTmp(env, stderr)
	}
	if _, err := confine.LookPath(root, o.argv[0], env); err != nil {
		return fail(127, "%s", strings.TrimPrefix(err.Error(), "confine: "))
	}
	plan := p.Plan()
	if !plan.Complete() {
		why := strings.Join(plan.Missing, "; ")
		if !o.bestEffort {
			return fail(1, "cannot confine %s: %s (--best-effort runs it anyway)", o.argv[0], why)
		}
		if plan.ABI == 0 {
			fmt.Fprintf(stderr, "%s: warning: not confined: %s; running %s unconfined\n", prog, why, o.argv[0])
			return execUnconfined(root, o.argv, env, fail)
		}
	}
	// What the kernel lacks shows in the plan; what it lets past (the
	// ways around the TCP rules) only in the check on the thread, so the
	// decision is taken there, on what was seen.
	partial := func(r confine.Report) bool {
		if o.bestEffort {
			fmt.Fprintf(stderr, "%s: warning: confined in part: not enforced: %s\n", prog, strings.Join(r.Missing, "; "))
		}
		return o.bestEffort
	}
	err = confine.Exec(p, o.argv, env, partial)
	var ee *confine.ExecError
	if errors.As(err, &ee) {
		return fail(126, "%s: %v", o.argv[0], ee.Err)
	}
	var ie *confine.IncompleteError
	if errors.As(err, &ie) {
		return fail(1, "cannot confine %s: %s (--best-effort runs it anyway)", o.argv[0], strings.Join(ie.Missing, "; "))
	}
	if o.bestEffort {
		fmt.Fprintf(stderr, "%s: warning: not confined: %v; running %s unconfined\n", prog, err, o.argv[0])
		return execUnconfined(root, o.argv, env, fail)
	}
	return fail(1, "cannot confine %s: %v", o.argv[0], strings.TrimPrefix(err.Error(), "confine: "))
}

func execUnconfined(root string, argv, env []string, fail func(int, string, ...any) int) int {
	path, err := confine.LookPath(root, argv[0], env)
	if err != nil {
		return fail(127, "%s", strings.TrimPrefix(err.Error(), "confine: "))
	}
	if err := os.Chdir(root); err != nil {
		return fail(1, "%v", err)
	}
	return fail(126, "%s: %v", argv[0], syscall.Exec(path, argv, env))
}

// keepTmpDir reports whether CMD may keep the inherited TMPDIR (default
// /tmp): when the policy lets it write there and it is not DIR itself (the
// Go command ignores a go.mod in the temporary directory). Otherwise CMD
// gets a private one (tmpdir.go).
func keepTmpDir(env []string, p confine.Policy) bool {
	writable := p.AllowWrite
	if !p.ReadOnlyRoot {
		writable = append([]string{p.Root}, writable...)
	}
	cur := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			cur = v
		}
	}
	if within(cur, p.Root) && within(p.Root, cur) {
		return false
	}
	for _, w := range writable {
		if within(cur, w) {
			return true
		}
	}
	return false
}

// setEnv returns env with k set to v.
func setEnv(env []string, k, v string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	return append(out, k+"="+v)
}

// within reports whether path is dir or beneath it, both resolved.
func within(path, dir string) bool {
	rp, err1 := filepath.EvalSymlinks(path)
	rd, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		return false
	}
	return rp == rd || strings.HasPrefix(rp, strings.TrimSuffix(rd, "/")+"/")
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
