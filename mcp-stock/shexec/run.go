package shexec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
	"github.com/mcpipe/mcpipe/internal/toolenv"
)

// DefaultPath is the PATH programs are looked up in when the call's
// environment has none.
const DefaultPath = toolenv.DefaultPath

// LookPath finds the allowlisted program name in the directories of
// pathList (a PATH value), as exec.LookPath would, with two differences
// that keep the root's own files from standing in for a system program:
// relative PATH entries (".", "bin") are skipped, and so is a program that
// lies inside root (its directory or its symlink-free path), since a client
// with the write tools could have put it there. name must be a plain name.
func LookPath(name, pathList, root string) (string, error) {
	if !plainName(name) {
		return "", refusef("%q: not a plain program name", name)
	}
	rootReal := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		rootReal = r
	}
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		// name is a plain name (no slash, not . or ..), so the join stays in
		// dir; dir is the operator's PATH, not a client's path.
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || within(real, rootReal) || within(filepath.Clean(dir), filepath.Clean(root)) || within(filepath.Clean(dir), rootReal) {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("%q: not found in PATH (%s), outside the root", name, pathList)
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// Env returns the minimal environment argv runs with in root:
// toolenv.Command (PATH without relative entries or entries inside the
// root, TERM=dumb, NO_COLOR=1, PAGER=cat, and HOME, LANG, LC_ALL, TZ and
// TMPDIR when the call has them, HOME inside the root becoming
// /nonexistent). For git it adds gitEnv: no system or global configuration,
// overrides for the settings that name programs, and GIT_DIR and
// GIT_WORK_TREE pinned to the root (see CheckGitRepo for what the
// repository's own configuration may not hold).
func Env(getenv func(string) string, argv []string, root string) []string {
	env := toolenv.Command(getenv, root)
	if len(argv) > 0 && argv[0] == "git" {
		env = append(env, gitEnv(root, GitSubcommand(argv[1:]))...)
	}
	return env
}

// Command is one program to run.
type Command struct {
	Path      string        // the program, as LookPath found it
	Argv      []string      // argv, the program's name first
	Dir       string        // working directory (the root)
	Env       []string      // the whole environment (see Env)
	Timeout   time.Duration // > 0; the process group is stopped when it passes
	MaxOutput int           // bytes kept of stdout (the first) and of stderr (the last), each
	// ReadLimit is how many bytes of each stream are read, and counted
	// past MaxOutput, before the program is killed; 0 means MaxDrain.
	ReadLimit int64
	// Spawn, when set, starts the process instead of cmd.Start (see
	// proc.Cmd.Spawn): sh_exec passes a nested confine.Spawner's Start.
	Spawn func(*exec.Cmd) error
}

// Result is what a Command did. Output beyond MaxOutput is read and
// counted but not kept.
type Result struct {
	Outcome     proc.Outcome // how it ended; its String is the wording to show
	ExitCode    int          // the exit status; -1 when killed by a signal
	Signal      string       // the signal that killed it ("SIGKILL"), "" otherwise
	TimedOut    bool         // stopped because the timeout passed
	Overflowed  bool         // killed because it wrote more than ReadLimit bytes
	Stdout      []byte       // at most MaxOutput bytes, the first ones
	Stderr      []byte       // at most MaxOutput bytes, the last ones
	StdoutTotal int64        // bytes written to stdout
	StderrTotal int64        // bytes written to stderr
}

// MaxDrain is how many bytes of output, per stream, Run reads before it
// kills the program when Command.ReadLimit is 0: output past MaxOutput is
// counted, for the note that says how much was cut, until this much.
const MaxDrain int64 = 64 << 20

// drainAfterExit is how long the output pipes may stay open after the
// program exits: a background grandchild that keeps them open longer is
// killed with the group.
const drainAfterExit = 2 * time.Second

// Run runs c without a shell, under internal/proc: stdin is /dev/null, the
// program is the leader of a new process group, and the group is stopped
// when the timeout passes or ctx is cancelled (SIGTERM, SIGKILL after
// proc.DefaultGrace), killed when one stream passes the ReadLimit, and
// killed after the program exits (so no background child outlives the
// call). The error is for a program that could not start; a program that
// ran and failed is a Result with a non-zero ExitCode.
func Run(ctx context.Context, c Command) (*Result, error) {
	if len(c.Argv) == 0 || c.Path == "" {
		return nil, errors.New("shexec: empty command")
	}
	if c.Timeout <= 0 {
		return nil, errors.New("shexec: timeout must be positive")
	}
	limit := c.ReadLimit
	if limit <= 0 {
		limit = MaxDrain
	}
	pr := proc.Run(ctx, proc.Cmd{
		Path:      c.Path,
		Args:      c.Argv,
		Dir:       c.Dir,
		Env:       c.Env,
		Timeout:   c.Timeout,
		Drain:     drainAfterExit,
		MaxOutput: int64(c.MaxOutput),
		MaxStderr: c.MaxOutput,
		ReadLimit: limit,
		Spawn:     c.Spawn,
	})
	o := pr.Outcome
	if o.Ending == proc.NotStarted {
		return nil, o.Err
	}
	r := &Result{
		Outcome:     o,
		ExitCode:    o.ExitCode,
		TimedOut:    o.Ending == proc.TimedOut,
		Overflowed:  o.Ending == proc.OutputExceeded,
		Stdout:      pr.Stdout,
		Stderr:      pr.Stderr,
		StdoutTotal: pr.StdoutTotal,
		StderrTotal: pr.StderrTotal,
	}
	if o.Signal != 0 {
		r.Signal = proc.SignalName(o.Signal)
	}
	return r, nil
}
