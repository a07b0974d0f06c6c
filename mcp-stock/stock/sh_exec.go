package stock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec"
)

// sh_exec limits: the timeout a call may ask for, and the output kept of
// each stream. The result repeats the output as text and as
// structuredContent, so two streams at the cap stay well under the
// router's output cap set below.
const (
	shDefaultTimeout = 30
	shMaxTimeout     = 300
	shDefaultOutput  = 64 << 10
	shMaxOutput      = 256 << 10
)

func init() { register("sh_exec", shExecTool) }

func shExecTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "sh_exec",
			Title: "Run a command (no shell)",
			Description: "Run one program from the operator's allowlist (MCP_SH_ALLOW) with arguments, in the root directory, WITHOUT a shell. " +
				"The command line is split into words with sh-style quoting ('...', \"...\", backslash); pipes, lists, redirections, subshells, $VAR, $(...), backquotes, unquoted globs (*?[), ~ and # comments are refused, never interpreted: quote such characters to pass them literally. " +
				"The first word must be a bare program name on the allowlist (none when it is empty). Shells, interpreters (awk, sed, perl, python ...), wrappers (env, xargs, sudo, timeout ...) and editors are never run, under any name; programs that run the project's code (make, npm, go ...) only when the operator also lists them in MCP_SH_ALLOW_RUNNERS. Options that make a program run another or follow symlinks out of the root (find -exec/-delete/-L, git -c/aliases/config, tar --to-command/-I/-h, rsync -e, wget -e/--use-askpass, curl -K, --upload-pack, --compress-program ...) are refused; any argument naming a place outside the root (including a value glued to an option, -C/, and file: URLs) is refused. git runs only on the repository at the root, and not when its configuration names programs (filter, diff, merge drivers ...). " +
				"The program gets a minimal environment, no stdin, timeoutSeconds (default 30, at most 300) after which its process group is killed, and maxBytes of stdout and of stderr kept (default 64 KiB each). " +
				"Returns stdout, stderr and the exit status; a non-zero exit or a kill is an error result.",
			InputSchema: objectSchema([]string{"command"},
				`"command": {"type": "string", "minLength": 1, "maxLength": 8192,
					"description": "The command line, e.g. \"git log --oneline -n 5\" or \"grep -rn 'TODO' src\"."}`,
				`"timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": 300, "default": 30,
					"description": "Kill the command after this many seconds."}`,
				`"maxBytes": {"type": "integer", "minimum": 1, "maximum": 262144, "default": 65536,
					"description": "Bytes of stdout, and of stderr, to return; the rest is counted and cut with a note."}`,
			),
			OutputSchema: objectSchema([]string{"argv", "exitCode", "timedOut", "stdout", "stderr", "stdoutBytes", "stderrBytes", "truncated"},
				`"argv": {"type": "array", "items": {"type": "string"}, "description": "The words the command line was split into."}`,
				`"exitCode": {"type": "integer", "description": "The exit status; -1 when killed by a signal."}`,
				`"signal": {"type": "string", "description": "The signal that killed the program, if any, e.g. \"SIGKILL\"."}`,
				`"timedOut": {"type": "boolean", "description": "Killed because timeoutSeconds passed."}`,
				`"stdout": {"type": "string"}`,
				`"stderr": {"type": "string"}`,
				`"stdoutBytes": {"type": "integer", "description": "Bytes the program wrote to stdout (more than shown when truncated)."}`,
				`"stderrBytes": {"type": "integer", "description": "Bytes the program wrote to stderr."}`,
				`"truncated": {"type": "boolean", "description": "stdout or stderr was cut to maxBytes."}`,
			),
			Annotations: &codec.ToolAnnotations{
				Title:           "Run a command (no shell)",
				ReadOnlyHint:    codec.Bool(false),
				DestructiveHint: codec.Bool(true),
				IdempotentHint:  codec.Bool(false),
				// An allowed program may reach the network (git fetch, curl).
				OpenWorldHint: codec.Bool(true),
			},
			Run: &tool.Run{
				Result: tool.ResultMCP,
				// Above the longest timeoutSeconds, so that sh_exec kills its
				// program and reports, before the router kills sh_exec.
				Timeout:   fmt.Sprintf("%ds", shMaxTimeout+30),
				MaxOutput: 8 << 20,
			},
		},
		Handler: shExec,
	}
}

type shResult struct {
	Argv        []string `json:"argv"`
	ExitCode    int      `json:"exitCode"`
	Signal      string   `json:"signal,omitempty"`
	TimedOut    bool     `json:"timedOut"`
	Stdout      string   `json:"stdout"`
	Stderr      string   `json:"stderr"`
	StdoutBytes int64    `json:"stdoutBytes"`
	StderrBytes int64    `json:"stderrBytes"`
	Truncated   bool     `json:"truncated"`
}

func shExec(c *tool.Call) error {
	var args struct {
		Command        string `json:"command"`
		TimeoutSeconds int    `json:"timeoutSeconds"`
		MaxBytes       int    `json:"maxBytes"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if err := shexec.CheckConfined(confinement(), c.Getenv); err != nil {
		return err
	}
	timeout := capInt(args.TimeoutSeconds, shDefaultTimeout, shMaxTimeout)
	maxBytes := capInt(args.MaxBytes, shDefaultOutput, shMaxOutput)
	argv, err := shexec.Split(args.Command)
	if err != nil {
		return err
	}
	allow := shexec.ParseAllowlist(c.Getenv("MCP_SH_ALLOW"), c.Getenv("MCP_SH_ALLOW_RUNNERS"))
	if err := allow.Check(argv); err != nil {
		return err
	}
	r, done, err := openRoot(c)
	if err != nil {
		return err
	}
	defer done()
	// inside refuses a path that names a place outside the root.
	inside := func(p string) error {
		switch _, err := r.Resolve(p); {
		case errors.Is(err, jail.ErrEscapes):
			return fmt.Errorf("%q names a place outside the root", p)
		case err != nil:
			return err
		}
		return nil
	}
	dirs := shexec.ChangeDirs(argv)
	for _, w := range argv[1:] {
		for _, p := range shexec.PathCandidates(w) {
			// A relative argument after -C DIR names DIR/ARG as well.
			for _, d := range dirs {
				if !filepath.IsAbs(p) {
					if err := inside(filepath.Join(d, p)); err != nil {
						return fmt.Errorf("%w: argument %q, taken in the directory %q an option moved to: %v", shexec.ErrRefused, w, d, err)
					}
				}
			}
			// Strict: an argument the jail cannot resolve (too long, a
			// symlink chain longer than the jail follows, an unreadable
			// directory) is refused too, since the program would follow it
			// further than the jail did.
			switch _, err := r.Resolve(p); {
			case errors.Is(err, jail.ErrEscapes) && strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--"):
				return fmt.Errorf("%w: argument %q names a place outside the root (%q): any letter of a short-option cluster may take the rest of the word as its value, so each is checked; pass a value as its own word, or start it with ./", shexec.ErrRefused, w, p)
			case errors.Is(err, jail.ErrEscapes) && p != w:
				return fmt.Errorf("%w: argument %q names a place outside the root (%q)", shexec.ErrRefused, w, p)
			case errors.Is(err, jail.ErrEscapes):
				return fmt.Errorf("%w: argument %q names a place outside the root", shexec.ErrRefused, w)
			case err != nil:
				return fmt.Errorf("%w: argument %q: %v", shexec.ErrRefused, w, err)
			}
		}
	}
	// Directory operands some programs read through their symlinks.
	isDir := func(p string) bool {
		fi, err := r.Stat(p) // in the jail, as the path check saw it
		return err == nil && fi.IsDir()
	}
	if err := shexec.CheckOperands(argv, isDir); err != nil {
		return err
	}
	prog, err := shexec.LookPath(argv[0], c.Getenv("PATH"), r.Path())
	if err != nil && c.Getenv("PATH") == "" {
		prog, err = shexec.LookPath(argv[0], shexec.DefaultPath, r.Path())
	}
	if err != nil {
		return err
	}
	// By what the program is, not what it is called: editor may be vim,
	// cc may be gcc.
	if err := allow.CheckProgram(argv[0], prog); err != nil {
		return err
	}
	env := shexec.Env(c.Getenv, argv, r.Path())
	if argv[0] == "git" {
		if err := shexec.CheckGitRepo(prog, r.Path(), argv[1:], env, inside); err != nil {
			return err
		}
	}
	spawn, err := shieldedSpawn()
	if err != nil {
		return err
	}
	res, err := shexec.Run(c.Context(), shexec.Command{
		Path:      prog,
		Argv:      argv,
		Dir:       r.Path(),
		Env:       env,
		Timeout:   time.Duration(timeout) * time.Second,
		MaxOutput: maxBytes,
		Spawn:     spawn,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	out := shResult{
		Argv:        argv,
		ExitCode:    res.ExitCode,
		Signal:      res.Signal,
		TimedOut:    res.TimedOut,
		Stdout:      text(res.Stdout),
		Stderr:      text(res.Stderr),
		StdoutBytes: res.StdoutTotal,
		StderrBytes: res.StderrTotal,
		Truncated:   res.StdoutTotal > int64(len(res.Stdout)) || res.StderrTotal > int64(len(res.Stderr)),
	}
	structured, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return c.Result(&codec.CallToolResult{
		Content:           []codec.Content{codec.TextContent(shText(out, res, timeout))},
		StructuredContent: structured,
		IsError:           res.ExitCode != 0 || res.Signal != "",
	})
}

// nested is the spawner of every program sh_exec runs: a Landlock domain
// nested in ours, so that a program cannot ptrace or signal this process
// (in worker mode it holds the whole environment, other calls' arguments)
// nor the other tools' processes in mcp-route's domain.
var nested = sync.OnceValues(confine.NewNestedSpawner)

// shieldedSpawn is nested's Start, or nil (a plain start) where the
// kernel has no Landlock; failing to nest on a kernel that has it is an
// error, not a silent plain start.
func shieldedSpawn() (func(*exec.Cmd) error, error) {
	s, err := nested()
	switch {
	case err == nil:
		return s.Start, nil
	case errors.Is(err, confine.ErrUnsupported):
		return nil, nil
	default:
		return nil, fmt.Errorf("sh_exec: cannot start programs in a nested domain: %w", err)
	}
}

// confinement says whether this process runs under Landlock, and why not.
func confinement() shexec.Confinement {
	if confine.InForce() {
		return shexec.Confinement{InForce: true}
	}
	if confine.ABI() == 0 {
		return shexec.Confinement{Why: "this kernel has no Landlock"}
	}
	return shexec.Confinement{Why: "sh_exec was not started confined (mcp-route --confine off, or run outside mcp-route)"}
}

// shText is the text block of a result: stdout, then stderr under a
// heading, then notes on truncation and on how the program ended.
func shText(out shResult, res *shexec.Result, timeout int) string {
	var b strings.Builder
	b.WriteString(out.Stdout)
	if out.Stdout != "" && !strings.HasSuffix(out.Stdout, "\n") {
		b.WriteByte('\n')
	}
	if res.StdoutTotal > int64(len(res.Stdout)) {
		fmt.Fprintf(&b, "[truncated: %d of %d stdout bytes shown]\n", len(res.Stdout), res.StdoutTotal)
	}
	if out.Stderr != "" {
		b.WriteString("[stderr]\n")
		b.WriteString(out.Stderr)
		if !strings.HasSuffix(out.Stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	if res.StderrTotal > int64(len(res.Stderr)) {
		fmt.Fprintf(&b, "[truncated: %d of %d stderr bytes shown]\n", len(res.Stderr), res.StderrTotal)
	}
	if !res.Outcome.OK() {
		fmt.Fprintf(&b, "[%s]\n", res.Outcome)
	}
	if b.Len() == 0 {
		b.WriteString("[no output; exit status 0]\n")
	}
	return b.String()
}
