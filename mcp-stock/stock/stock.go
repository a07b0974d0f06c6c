// Package stock is the stock tool pack of mcpipe: 32 tools for working on
// files under a root, served by mcp-route from one multi-call binary,
// mcp-stock (DESIGN.md, "mcp-stock"). [Main] is the whole program;
// [Install] fills a tool directory with links; [Tools] and [Lookup] give the
// roster.
//
// # Roster
//
//   - read (18): fs_read, fs_list, fs_glob, fs_count, fs_grep, fs_grep_count,
//     fs_first_match, fs_find, fs_stat, fs_readlink, fs_realpath, fs_du,
//     fs_head, fs_tail, fs_slice, fs_hash, fs_exists, fs_lines
//   - mutating (11): fs_write, fs_append, fs_replace, fs_chmod, fs_mkdir,
//     fs_touch, fs_rmdir, fs_delete, fs_copy, fs_move, sh_exec
//   - system (3): env_get, time_now, sys_info
//
// Read and system tools are read-only (21 tools) and say so with
// readOnlyHint; `install --readonly` installs only those, and mcp-route
// --readonly serves only those. Every definition is checked by
// codec.ValidateTool in the tests; every input schema is closed
// (additionalProperties: false) and bounds its strings and numbers.
//
// # Paths
//
// Every path argument goes through mcp-jail's jail package under MCP_ROOT
// (the working directory when unset): a tool opens the root once per call
// and does every file operation relative to that handle, so no "..", no
// absolute path outside, no symlink (absolute, relative, chained, or a
// /proc magic link) and no directory swapped for a symlink mid-call leads
// outside it. A refused path fails the call with "PATH: path escapes root";
// a name with a NUL byte or longer than 4095 bytes with "invalid path". An
// absolute path inside the root is accepted. The path argument is always
// called path (source and destination for fs_copy and fs_move).
//
// Contents are read from regular files only: a FIFO, socket or device is
// refused ("not a regular file") without blocking. Metadata tools (fs_stat,
// fs_exists, fs_list, fs_du) may describe such files. A symlink that leads
// out is never followed and its target is never shown; fs_list still lists
// it by name.
//
// # Walks and searches
//
// fs_glob, fs_find, fs_grep, fs_grep_count, fs_first_match and fs_du walk
// trees in name order, never follow symlinks (fs_grep and friends search a
// symlinked file only when it is the path given), and visit at most MaxWalk
// entries. All but fs_du skip directories named .git below the starting
// point. The searches use Go's RE2 regular expressions, whose matching time
// is linear in the input (no catastrophic backtracking); they skip binary
// files (a NUL byte in the first 8000 bytes), match lines up to
// MaxMatchLine bytes and read at most MaxScanBytes per call. Text tools
// refuse binary files; fs_slice reads them as base64 or hex.
//
// # Output
//
// Every output is bounded: bytes (DefaultMaxBytes, at most MaxBytesLimit),
// lines (DefaultMaxLines, at most MaxLinesLimit), results
// (DefaultMaxResults, at most MaxResultsLimit) and shown line length
// (MaxLineBytes; longer lines end in "… [line cut: N bytes]"). Text output
// that was cut ends with a note in brackets such as "[truncated: 1000 of
// 52311 lines shown]"; a list that found nothing says "[no matches]"; a walk
// or search that hit a limit says so. Tools whose output is data (fs_stat,
// fs_list, fs_du, fs_hash, fs_exists, fs_count, fs_slice, fs_realpath,
// fs_grep_count, fs_first_match and the system tools) use the "json" result
// mode with an outputSchema, and report cuts with "truncated" or
// "complete" fields. Range reads (fs_head, fs_tail, fs_slice, fs_lines)
// read only what they return (fs_tail reads backwards from the end; fs_lines
// reads up to its last line), so a file of any size is fine. Invalid UTF-8
// in text output becomes U+FFFD.
//
// # Calls
//
// A tool reads its arguments object on stdin (mcp-route/tool), writes its
// result on stdout and exits 0; a failure is exit 1 with "TOOL: message" on
// stderr, which mcp-route turns into an isError result. A worker (below)
// answers each request with the same output or message. On SIGTERM (from
// mcp-route, at a timeout or a cancellation) or SIGINT a mutating tool's
// context is cancelled: it stops at its next safe point with exit 1, and
// sh_exec stops its command's process group first. A read or system tool
// keeps the default disposition and dies at once, having changed nothing.
// In a worker a cancel request cancels the call's context instead. fs_hash
// reports progress when mcp-route asks for it (on fd 3, or in-band in a
// worker).
//
// # Workers
//
// Every definition says run.mode "worker" (mcp-route/README.md, "Workers")
// and run.concurrency WorkerConcurrency, so mcp-route keeps mcp-stock
// processes running and sends them calls over a pipe, several at once,
// instead of starting one per call. A worker (MCP_WORKER=1 in
// its environment, started through any tool's link or as plain mcp-stock)
// serves every stock tool: each request names the tool it is for, and
// Install writes nothing more than the links. MCP_ROOT and the sh_exec and
// env_get settings come from the worker's environment, set once at its
// start; the arguments, MCP_TOOL and MCP_PROTOCOL_VERSION are the
// request's (package mcp-route/tool). The root is opened once and shared by
// the worker's calls; each call checks, with one stat, that MCP_ROOT still
// names the directory held and opens it again when it does not (the root was
// renamed or replaced), so a call works where MCP_ROOT points when it starts,
// as in a process of its own. Like every Go worker on mcp-route/tool it
// runs with GOMAXPROCS 1 unless GOMAXPROCS is in its environment: its
// concurrent calls mostly wait on files, and share one processor.
// sh_exec's program still runs in a process group of its own
// that is killed when the call ends, times out or is cancelled, so nothing a
// call starts outlives it. SIGTERM cancels every call, and the worker exits
// once they have answered.
//
// # Source layout
//
// A tool's file (fs_read.go, sh_exec.go ...) holds its definition and the
// logic that is its own. Every shared rule is written once: rooted
// (registry.go) decodes and checks a call's arguments and opens the root;
// openRegular and openText (files.go) open a regular, or text, file under
// the root, and eachLine reads it line by line under the caps of caps.go;
// walker.list and writeList walk a tree with a matcher and report; describe
// (fs_stat.go) reports an lstat for fs_stat and fs_list;
// transferArgs.preflight (mutating.go) checks a copy or a move before it
// happens; searcher (search.go) runs the content searches.
//
// # Concurrency
//
// The registry is filled by init functions and read-only afterwards; a tool
// is built once, on first lookup, safely from any goroutine. Each
// call is independent; handlers keep no state between calls and may run
// concurrently in one process (the tests do).
package stock

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// Prog is the name mcp-stock reports itself by when it is not run as a
// tool.
const Prog = "mcp-stock"

// Usage is mcp-stock's --help text.
const Usage = `usage: mcp-stock install DIR [--readonly]
       mcp-stock list [--readonly] [--json]
       mcp-stock TOOL [--mcp-describe | --help]
       TOOL [--mcp-describe | --help]      (run through a link made by install)

The stock tool pack for mcp-route: 32 tools that work on files under
MCP_ROOT (18 read, 11 mutating, 3 system; 21 read-only).

  install DIR   make DIR (if needed) and put one symbolic link per tool in it,
                pointing at this executable; serve them with
                mcp-route --tools DIR --root ROOT, a ROOT that holds neither
                DIR nor this executable (mcp-route refuses it without
                --readonly: the tools write there). An existing link of the same
                name is replaced; any other file of that name is an error.
                --readonly installs only the 21 read-only tools and removes
                links to the mutating ones left by an earlier install.
                --exe PATH points the links at PATH, an absolute path,
                instead of this executable (for an image or a file system
                built elsewhere, where mcp-stock will be at PATH).
  list          print each tool's name, kind and title; --json prints the
                definitions as one JSON array; --readonly lists the 21
                read-only tools.
  TOOL          run as that tool: the arguments are a JSON object on stdin,
                MCP_ROOT is the root (the working directory when unset).
                With MCP_WORKER=1 (mcp-route sets it: every stock tool says
                run.mode "worker") it serves calls of any stock tool, one
                JSON request per line, until EOF.

Configuration (environment, set through mcp-route --env):
  MCP_ROOT        the jail root every path stays under
  MCP_SH_ALLOW    sh_exec: comma-separated programs it may run (empty: none)
  MCP_SH_ALLOW_RUNNERS
                  sh_exec: programs that run the project's code (make, npm,
                  go, cc ...), allowed only when named here and in
                  MCP_SH_ALLOW
  MCP_SH_UNCONFINED
                  sh_exec: 1 lets it run without kernel confinement
                  (Landlock), which mcp-route applies by default; without
                  it, only the allowlist's checks keep programs in the root
  MCP_ENV_ALLOW   env_get: comma-separated variables it may reveal

Exit status: 0 ok; 1 the call or command failed (message on stderr);
2 usage error.
`

// Main runs mcp-stock as the process p describes and returns its exit
// status: as a tool when its program name or first argument names one, else
// as the install/list command line. version is what --version prints.
func Main(p tool.Process, version string) int {
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.Stderr == nil {
		p.Stderr = io.Discard
	}
	var self string
	if len(p.Args) > 0 {
		self = filepath.Base(p.Args[0])
	}
	if p.Getenv != nil && p.Getenv(tool.EnvWorker) == "1" && worker(self, p.Args) {
		// SIGTERM cancels every call; the worker exits once they have
		// answered.
		if p.Context == nil {
			p.Context = context.Background()
		}
		ctx, stop := signal.NotifyContext(p.Context, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		ctx, closeRoot := withRootCache(ctx)
		defer closeRoot()
		p.Context = ctx
		return tool.ExecMany(p, execAll())
	}
	// Build only the tool that runs (see register).
	if t, ok := Lookup(self); ok {
		return t.run(p)
	}
	if len(p.Args) < 2 {
		fmt.Fprint(p.Stderr, Usage)
		return 2
	}
	cmd, rest := p.Args[1], p.Args[2:]
	if t, ok := Lookup(cmd); ok {
		return t.run(p)
	}
	var err error
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(p.Stdout, Usage)
		return 0
	case "-version", "--version":
		fmt.Fprintf(p.Stdout, "%s %s\n", Prog, version)
		return 0
	case "install":
		err = cmdInstall(rest, p.Stdout)
	case "list":
		err = cmdList(rest, p.Stdout)
	default:
		err = usageError{fmt.Errorf("unknown command or tool %q (see --help)", cmd)}
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(p.Stdout, Usage)
		return 0
	}
	fmt.Fprintf(p.Stderr, "%s: %v\n", Prog, err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// worker reports whether args (the program self and its arguments) ask for
// a worker: run through a tool's link, as `mcp-stock TOOL`, or as plain
// mcp-stock, with no further argument.
func worker(self string, args []string) bool {
	if _, ok := Lookup(self); ok {
		return len(args) <= 1
	}
	switch len(args) {
	case 0, 1:
		return true
	case 2:
		_, ok := Lookup(args[1])
		return ok
	}
	return false
}

// execAll returns every tool as mcp-route/tool runs it.
func execAll() []tool.Tool {
	ts := Tools(false)
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = t.Exec()
	}
	return out
}

// usageError marks a command-line mistake: exit status 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// run runs p as t. A mutating tool gets SIGTERM and SIGINT as the
// cancellation of its context, so that it stops at its next safe point (and
// sh_exec stops its command's process group, which mcp-route's signal to the
// tool's group does not reach). A read or system tool keeps the default
// disposition and dies at once: it changes nothing, and catching the signals
// would cost every call a goroutine and a thread.
func (t *Tool) run(p tool.Process) int {
	if t.Kind == KindMutating {
		if p.Context == nil {
			p.Context = context.Background()
		}
		ctx, stop := signal.NotifyContext(p.Context, syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		p.Context = ctx
	}
	return tool.ExecMany(p, []tool.Tool{t.Exec()})
}

// Exec returns t as mcp-route/tool runs it.
func (t *Tool) Exec() tool.Tool { return tool.Tool{Definition: t.Def, Handler: t.Handler} }

// parseFlags parses a subcommand's flags, which may come before or after
// its operands (install DIR --readonly), and returns the operands.
func parseFlags(fset *flag.FlagSet, args []string) ([]string, error) {
	fset.SetOutput(io.Discard)
	var operands []string
	for {
		if err := fset.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fset.Args()
		if len(args) == 0 {
			return operands, nil
		}
		if args[0] == "--" {
			return append(operands, args[1:]...), nil
		}
		operands = append(operands, args[0])
		args = args[1:]
	}
}

func cmdInstall(args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("install", flag.ContinueOnError)
	readOnly := fset.Bool("readonly", false, "install only the read-only tools")
	target := fset.String("exe", "", "point the links at this absolute path instead of this executable")
	operands, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return usageError{errors.New("install: want exactly one directory: install DIR [--readonly] [--exe PATH]")}
	}
	exe := *target
	if exe != "" {
		// The links are for another file system (an image being built,
		// perhaps for another platform), so PATH need not exist here; a
		// relative one would resolve against DIR, not the caller's cwd.
		if !filepath.IsAbs(exe) {
			return usageError{fmt.Errorf("install: --exe %s is not an absolute path: give the path mcp-stock will have where the links are used, such as /usr/local/bin/mcp-stock", exe)}
		}
	} else {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("install: finding this executable: %w", err)
		}
		if exe, err = filepath.EvalSymlinks(exe); err != nil {
			return fmt.Errorf("install: finding this executable: %w", err)
		}
	}
	n, err := Install(operands[0], exe, *readOnly)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	fmt.Fprintf(stdout, "installed %d tools in %s\n", n, operands[0])
	return nil
}

// Install makes dir (with its parents) and puts in it one symbolic link per
// tool, named after the tool and pointing at exe, and returns how many it
// made. A symbolic link already there under a tool's name is replaced; any
// other file of that name is an error, left as it was. With readOnly only
// the read-only tools are linked, and links named after mutating tools are
// removed, so that dir then serves the read-only roster exactly.
func Install(dir, exe string, readOnly bool) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, t := range Tools(false) {
		// dir is the operator's own command-line argument, not a client's
		// path, so it is not jailed; names are tool names.
		link := filepath.Join(dir, t.Def.Name)
		fi, err := os.Lstat(link)
		switch {
		case err == nil && fi.Mode().Type() != fs.ModeSymlink:
			return n, fmt.Errorf("%s exists and is not a symbolic link", link)
		case err == nil:
			if err := os.Remove(link); err != nil {
				return n, err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return n, err
		}
		if readOnly && !t.ReadOnly() {
			continue
		}
		if err := os.Symlink(exe, link); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func cmdList(args []string, stdout io.Writer) error {
	fset := flag.NewFlagSet("list", flag.ContinueOnError)
	readOnly := fset.Bool("readonly", false, "list only the read-only tools")
	asJSON := fset.Bool("json", false, "print the definitions as a JSON array")
	operands, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	if len(operands) != 0 {
		return usageError{fmt.Errorf("list: unexpected argument %q", operands[0])}
	}
	ts := Tools(*readOnly)
	if *asJSON {
		defs := make([]tool.Definition, len(ts))
		for i, t := range ts {
			defs[i] = t.Def
		}
		b, err := json.Marshal(defs)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	var b strings.Builder
	for _, t := range ts {
		title := t.Def.Title
		if title == "" && t.Def.Annotations != nil {
			title = t.Def.Annotations.Title
		}
		fmt.Fprintf(&b, "%-15s %-8s %s\n", t.Def.Name, t.Kind, title)
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}
