// Mcp-jail resolves paths under a root directory and refuses every path
// that would lead outside it.
//
// Usage:
//
//	mcp-jail --root DIR [--lexical] [--relative] [-0] [PATH...]
//	mcp-jail --root DIR --exec [--allow-read DIR]... [--allow-write DIR]... [--allow-exec DIR]...
//	         [--no-network] [--readonly] [--best-effort] -- CMD [ARGS...]
//
// Each PATH, from the arguments or else one per line on standard input, is
// resolved under DIR and printed as an absolute path, one per line. A
// relative PATH anchors at DIR; an absolute PATH is accepted only inside
// DIR. ".", repeated and trailing slashes collapse; ".." is resolved, and a
// path that would climb above DIR is refused, never clamped to DIR.
// Symlinks that exist are followed and must stay inside DIR (an absolute
// symlink target is refused); components that do not exist yet are kept as
// written. /proc magic links are never followed. A path with a NUL byte, an
// empty path and a path over 4095 bytes are invalid.
//
// A refused path prints "mcp-jail: PATH: path escapes root" (or the reason
// it could not be resolved) on standard error, and processing goes on.
//
// Options:
//
//	--root DIR   the jail root (required)
//	--lexical    resolve without touching the file system: no symlinks are
//	             followed, ".." removes the previous component
//	--relative   print paths relative to DIR (DIR itself is ".")
//	-0           NUL-separated records on standard input and output
//	--help       print this help and exit 0
//	--version    print the version and exit 0
//
// Exit status:
//
//	0  every path resolved inside DIR
//	1  at least one path was refused or could not be resolved, or DIR
//	   could not be opened, or an I/O error
//	2  usage error
//
// With --exec, mcp-jail instead runs CMD confined by the kernel (Landlock)
// to DIR: it may read and write DIR (read only with --readonly) and the
// --allow-write directories, read the --allow-read ones, the files of /etc
// programs need (never /etc's secrets: shadow, sudoers, ssl/private ...)
// and the machine's files of /proc (cpuinfo, meminfo ...), read and
// execute the system directories (/usr /bin /sbin /lib* /opt), the
// --allow-exec directories (refused inside DIR or an --allow-write one)
// and its own executable (found by PATH; with a slash, relative to DIR),
// and use /dev/null, /dev/zero, /dev/urandom and /dev/random (not
// /dev/tty); everything else, the home directory, /tmp, the rest of /etc,
// /proc/<pid>, /proc/self and /sys included, is refused. With --no-network it cannot bind or connect TCP sockets (MPTCP
// and TCP Fast Open included; io_uring is refused). From
// Landlock ABI 6 it cannot signal processes outside, nor reach abstract
// Unix sockets made outside. CMD runs in DIR with TMPDIR set to a fresh
// private directory outside DIR, read-write, removed when CMD ends (unless
// the inherited TMPDIR is writable under the policy and is not DIR): for
// that, mcp-jail runs itself once more as a child, waits for it and ends
// as it did; the child execs CMD, so the exit status is CMD's. When the kernel cannot confine, mcp-jail
// exits 1 with one line on standard error; with --best-effort it warns
// and runs CMD anyway. CMD not found: 127; not executable: 126.
//
// The library behind it, github.com/mcpipe/mcpipe/mcp-jail/jail, is what the
// stock tools use for every path.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

const prog = "mcp-jail"

const usage = `Usage: mcp-jail --root DIR [--lexical] [--relative] [-0] [PATH...]
       mcp-jail --root DIR --exec [--allow-read DIR]... [--allow-write DIR]...
                [--allow-exec DIR]... [--no-network] [--readonly]
                [--best-effort] -- CMD [ARGS...]
       mcp-jail completion bash|zsh|fish   (print the shell completion script)

Resolve each PATH (from the arguments, else one per line on standard input)
under DIR and print it as an absolute path. A path that leads outside DIR -
through "..", an absolute path elsewhere, or a symlink - is refused with
"mcp-jail: PATH: path escapes root" on standard error; the rest go on.
Existing symlinks are followed and must stay inside DIR; a symlink with an
absolute target is refused even when it points inside (the rule of the
kernel's RESOLVE_BENEATH, which the stock tools' opens use too, so that what
mcp-jail accepts they can open). Missing components are kept as written.

Options:
  --root DIR   the jail root (required)
  --lexical    resolve without touching the file system (symlinks not followed)
  --relative   print paths relative to DIR (DIR itself is ".")
  -0           NUL-separated records on standard input and output
  --help       print this help and exit 0
  --version    print the version and exit 0

With --exec, run CMD confined by the kernel (Landlock) to DIR instead: it
may read and write DIR and nothing else, bar reading and executing the
system directories (/usr /bin /sbin /lib* /opt) and CMD itself, reading
the files of /etc programs need (passwd, hosts, resolv.conf, localtime,
ssl/certs...; never shadow, sudoers, ssl/private, SSH host keys) and the
machine's files of /proc (cpuinfo, meminfo, loadavg...), and /dev/null,
zero, urandom, random (not /dev/tty; a terminal given to CMD as its
stdin, stdout or stderr stays usable: run an untrusted CMD </dev/null).
Home, /tmp, the rest of /etc, /proc/<pid>,
/proc/self and /sys are refused. CMD runs in DIR with TMPDIR a fresh
private directory outside DIR, read-write and removed when CMD ends (the
inherited TMPDIR is kept when it is writable and not DIR). The exit
status is CMD's (a CMD killed by a signal: mcp-jail ends by the same
signal). SIGTERM and SIGHUP are passed on to CMD; SIGINT and SIGQUIT
reach it from the terminal.
  --allow-read DIR   also readable (repeatable)
  --allow-write DIR  also readable and writable (repeatable)
  --allow-exec DIR   also readable and executable (repeatable; refused
                     inside DIR or an --allow-write directory, where CMD
                     could put a program); a path that would open a
                     secret of /etc (--allow-read /etc) is refused too
  --no-network       no TCP bind or connect, MPTCP and TCP Fast Open
                     included, and no io_uring (Landlock ABI 4, Linux 6.7,
                     and seccomp; UDP is not covered)
  --readonly         DIR is read-only too
  --best-effort      when the kernel cannot confine (in full), warn and run
                     CMD anyway instead of exiting 1

Exit status:
  0  every path resolved inside DIR
  1  a path was refused or could not be resolved, DIR could not be opened,
     or an I/O error; with --exec: the kernel cannot confine CMD
  2  usage error
  with --exec, CMD's own status, or 126 (cannot execute), 127 (not found)
`

// main leaves SIGINT and SIGTERM at their default: a filter blocked on its
// input must die at once, as cat or grep would.
func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is the whole program; ctx is there for the common signature of our
// binaries (a filter has nothing to cancel: EOF or a signal ends it).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet(prog, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	// The usage strings feed the completion scripts; --help prints usage.
	root := fl.String("root", "", "the jail root `DIR`")
	lexical := fl.Bool("lexical", false, "resolve without touching the file system")
	relative := fl.Bool("relative", false, "print paths relative to DIR")
	nul := fl.Bool("0", false, "NUL-separated records")
	showVersion := fl.Bool("version", false, "print the version")
	execMode := fl.Bool("exec", false, "run CMD confined to DIR")
	var allowRead, allowWrite, allowExec multiFlag
	fl.Var(&allowRead, "allow-read", "also readable `DIR` (repeatable)")
	fl.Var(&allowWrite, "allow-write", "also readable and writable `DIR` (repeatable)")
	fl.Var(&allowExec, "allow-exec", "also readable and executable `DIR` (repeatable)")
	noNetwork := fl.Bool("no-network", false, "no TCP bind or connect")
	readonly := fl.Bool("readonly", false, "DIR is read-only too")
	bestEffort := fl.Bool("best-effort", false, "run CMD unconfined when the kernel cannot confine")
	if len(args) > 0 && args[0] == "completion" {
		return completion(fl, args[1:], stdout, stderr)
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "%s %s\n", prog, version.String())
		return 0
	}
	if *root == "" {
		fmt.Fprintf(stderr, "%s: --root DIR is required (see --help)\n", prog)
		return 2
	}
	given := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *execMode {
		for _, f := range []string{"lexical", "relative", "0"} {
			if given[f] {
				fmt.Fprintf(stderr, "%s: -%s cannot be used with --exec (see --help)\n", prog, f)
				return 2
			}
		}
		if fl.NArg() == 0 {
			fmt.Fprintf(stderr, "%s: --exec needs a command: --exec [OPTIONS] -- CMD [ARGS...] (see --help)\n", prog)
			return 2
		}
		return runExec(execOptions{
			root: *root, allowRead: allowRead, allowWrite: allowWrite, allowExec: allowExec,
			noNetwork: *noNetwork, readonly: *readonly, bestEffort: *bestEffort,
			argv: fl.Args(),
		}, stderr)
	}
	for _, f := range []string{"allow-read", "allow-write", "allow-exec", "no-network", "readonly", "best-effort"} {
		if given[f] {
			fmt.Fprintf(stderr, "%s: --%s only goes with --exec (see --help)\n", prog, f)
			return 2
		}
	}

	o := jail.FilterOptions{NUL: *nul, Prog: prog}
	if *lexical {
		abs, err := jail.ResolveLexical(*root, ".")
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		o.Resolve = func(p string) (string, error) { return jail.ResolveLexical(abs, p) }
		if *relative {
			o.Rel = func(p string) string { return relTo(abs, p) }
		}
	} else {
		r, err := jail.Open(*root)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		defer r.Close()
		o.Resolve = r.Resolve
		if *relative {
			o.Rel = r.Rel
		}
	}
	var names []string
	if fl.NArg() > 0 {
		names = fl.Args()
	}
	refused, err := jail.Filter(stdin, names, stdout, stderr, o)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if refused > 0 {
		return 1
	}
	return 0
}

// relTo is root-relative display for --lexical, where no Root is open.
func relTo(root, p string) string {
	switch {
	case p == root:
		return "."
	case root == "/":
		return p[1:]
	default:
		return p[len(root)+1:]
	}
}
