// Command mcp-route is an MCP server that turns directories of executables
// into tools: every executable file in a --tools directory is a tool, in any
// language. A host launches it over stdio, e.g.
//
//	{"command": "mcp-route", "args": ["--tools", "/opt/mcp-tools", "--root", "/home/you/project"]}
//
// Usage:
//
//	mcp-route [flags]                 serve MCP on stdin/stdout
//	mcp-route --http ADDR [flags]     serve MCP over Streamable HTTP at ADDR/mcp
//	                                  (package mcp-route/httpserve; see README's HTTP)
//	mcp-route --config FILE [flags]   take the flags from a TOML file, a key per
//	                                  flag; flags given here win (config.go)
//	mcp-route config print [--config FILE] [flags]
//	                                  print the effective configuration as TOML
//	mcp-route new NAME [--lang sh|go|python|node] [--dir DIR]
//	                                  write a tool skeleton
//	mcp-route pin --pin FILE --upstream NAME=CMD... --dry-run|--accept NAME__TOOL...|--all [flags]
//	                                  review and pin the upstreams' tool definitions
//	mcp-route completion bash|zsh|fish
//	                                  print the shell completion script
//
// With --pin FILE, upstream tools are served only as they were approved
// (package mcp-route/pin): an upstream the file does not know has its tools
// pinned when first listed (trust on first use); later, a tool whose
// definition (name, title, description, schemas, annotations) no longer
// matches its pin, or a new tool, is withheld: left out of tools/list, a
// call to it gets isError naming the change, and the log shows a diff.
// `mcp-route pin` takes the server's flags, starts the upstreams as the
// server would, and shows their changed definitions field by field
// (--dry-run) or pins them on purpose, one tool (--accept NAME__TOOL) or
// all (--all), one line per tool on stdout.
//
// It serves every MCP revision from 2024-11-05 to 2026-07-28: the legacy
// initialize handshake and the stateless 2026-07-28 requests with
// server/discover. Each tools/call runs the tool in its own process group,
// with the arguments JSON on stdin, a minimal environment (PATH, HOME, LANG,
// TMPDIR, MCP_TOOL, MCP_ROOT, MCP_PROTOCOL_VERSION, MCP_ARG_<NAME>, and what
// --env/--pass-env or the tool's "run" settings add: nothing else from the
// host), the working directory at --root and fd 3 as a progress channel. A
// tool's definition comes from a sidecar NAME.json or `NAME --mcp-describe`,
// whose output is kept across runs (--describe-cache) until the tool changes.
// See DESIGN.md, "Tools as executables", and packages router, registry and
// runner for the details.
//
// stdout carries only MCP messages; logs go to stderr or --log, one line per
// event, through log/slog: --log-format text (the default, "mcp-route: "
// then slog's key=value record) or json (one object per line). A record's
// message is constant; the attributes tool, id (the JSON-RPC request id),
// outcome, elapsed, upstream and session (over --http, a digest of the
// session id) say which call and how it ended, so that
// `jq 'select(.tool=="fs_read")'` finds one tool's records. By default stderr shows only what an operator must see: tools left
// out and why, call failures worth a look (timeouts, kills, output caps, bad
// results), errors and startup problems; a call that went fine, initialize
// and shutdown are logged only with --verbose, or into a --log file, which
// always gets every event. EOF on stdin, SIGTERM or SIGINT: running calls get --grace to
// finish (their answers are still written), the rest are killed, exit 0.
// A client that closes its end of stdout gets the same at once, without the
// grace: no answer could reach it.
//
// Every tool process (calls and --mcp-describe runs) starts confined by the
// kernel (Landlock; package mcp-route/confinement, --confine auto by
// default): it reads and executes the system directories, the tool
// directories and their symlinks' targets, each tool's interpreter chain
// (shebang, env NAME by the tools' PATH, pyenv shims, venvs, PREFIX/lib;
// never inside --root or an --allow-write path), reads and writes --root (read
// only with --readonly) and a private TMPDIR, the --allow-read and
// --allow-write paths, and nothing else (no /proc, no home directory); with
// --no-network no TCP. The rules are proved at start by a probe child;
// where the kernel cannot confine, auto runs tools unconfined with one
// warning and require exits 1. --confine-check prints the rules.
//
// Exit status: 0 after a clean shutdown (or --help/--version, or a skeleton
// written, or --confine-check when require would start, or the upstreams
// pinned); 1 when it cannot run (bad --root, a --tools directory missing at
// startup or inside a --root the tools can write, a missing --allow-read or
// --allow-write path, unwritable --log, --confine require that cannot be
// met, a skeleton refused; --confine-check when require would refuse; a
// token or session key file that tools can read; a --pin file that is
// corrupt or where tools can write; a --config file unreadable, where
// tools can write or in a --tools directory; pin: an upstream not listed,
// the file not written); 2 for a usage error (a bad key or value in the
// --config file among them).
//
// --upstream NAME=CMD mounts another MCP server: mcp-route starts it like a
// tool (own process group, the tools' environment, --root, confinement),
// connects with the best era it offers, and serves its tools as NAME__TOOL,
// restarting it with backoff (--upstream-backoff MIN,MAX) when it dies;
// one started through npx or uvx gets that launcher's profile in a
// confinement of its own (--upstream-profile NAME=none turns it off)
// (package mcp-route/upstream and
// README's Upstreams say the whole contract: names left out, clashes with
// local tools, errors, what is refused).
//
// Nothing a tool can write is trusted (DESIGN.md, "Trust"): without
// --readonly, a --tools directory under --root, or a tool that leads there
// through a symlink, refuses the start (a client could write a tool, then
// call it), and at a reload such a tool is left out; a describe cache
// under --root is not used.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/proc"
	"github.com/mcpipe/mcpipe/internal/selfguard"
	"github.com/mcpipe/mcpipe/internal/toolenv"
	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-route/confinement"
	"github.com/mcpipe/mcpipe/mcp-route/pin"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/router"
	"github.com/mcpipe/mcpipe/mcp-route/scaffold"
	"github.com/mcpipe/mcpipe/mcp-route/surface"
	"github.com/mcpipe/mcpipe/mcp-route/tooldef"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

const prog = "mcp-route"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	// With SIGPIPE caught, a write to a closed stdout is an EPIPE error that
	// ends the conversation cleanly (codec/server) instead of a death by
	// signal; tools still start with the default disposition (handlers are
	// reset across exec, unlike SIG_IGN).
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// Before any tool runs: tools must not read our environment or memory
	// through /proc (os.Getenv keeps working: the runtime holds a copy).
	if err := selfguard.Apply(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: warning: %v\n", prog, err)
	}
	// A tool's daemon (setsid, parent gone) is reparented to us and killed
	// after the call (Linux; elsewhere this is a no-op, see internal/proc).
	_ = proc.Subreap()
	stdioLoaded = oneProcessor
	httpLoaded = halfTheProcessors
	lessGC()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	proc.Sweep()
	proc.ReleaseLimits() // the empty cgroups kept for reuse
	stop()
	os.Exit(code)
}

// stdioLoaded is what a stdio server does once its tools have loaded
// (router.Options.Loaded). main sets it to oneProcessor; the tests that
// call run in-process leave it nil, so their process keeps its processors.
var stdioLoaded func()

// httpLoaded is stdioLoaded for --http: main sets it to halfTheProcessors.
var httpLoaded func()

// halfTheProcessors leaves mcp-route --http half the processors (at least
// one) unless GOMAXPROCS is in its environment. It serves many clients, but
// the work of a call is mostly its tool's, in other processes (workers,
// exec'd tools), which need the other half; a Go program with more
// processors than it keeps busy pays for waking and parking them. Measured
// with BenchmarkHTTPCalls (worker path, 64 in flight) on a 2-core machine:
// one processor served 4-17% more calls/s than two in 3 rounds.
func halfTheProcessors() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()/2))
	}
}

// lessGC makes the garbage collector run a quarter as often as Go's
// default (GOGC=400), unless GOGC is set, within a soft limit of 256 MiB
// unless GOMEMLIMIT is set. Why: mcp-route's live heap is a few MiB, so at
// the default every few MiB of a call's garbage (HTTP requests, JSON) ran a
// collection, ~8% of its CPU at 2,000 calls/s; the limit makes collections
// come sooner again if the heap ever grows large (big results in flight).
func lessGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(256 << 20)
	}
}

// oneProcessor drops the process to one processor (GOMAXPROCS 1) unless
// the GOMAXPROCS variable is set. A stdio server serves one client, and
// each call is a little work between pipe reads and writes: a second
// processor mostly adds the cost of waking it and handing goroutines over
// (measured: BenchmarkToolServers in e2e). The first load, which compiles
// every tool's schemas in parallel, runs before, with every processor.
// It also goes back to Go's default GOGC=100 unless GOGC is set: lessGC's
// 400 pays off for HTTP requests' garbage at thousands of calls a second,
// while a stdio call's garbage is a few kB (at 100, a collection per few
// hundred calls), and at 400 the heap of 16 calls in flight to sh tools
// grew the peak RSS from 17 to 28 MiB (BenchmarkColdStart). And it hands
// the start-up's garbage back to the system once (the trust checks,
// definitions and schemas leave about 0.6 MiB of freed heap): an idle
// stdio server's RSS is what a host pays for each one it keeps. In its own
// goroutine, so that the first calls do not wait for it.
func oneProcessor() {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		runtime.GOMAXPROCS(1)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(100)
	}
	go debug.FreeOSMemory()
}

const usageText = `Usage:
  mcp-route [flags]          serve MCP over stdin/stdout
  mcp-route --http ADDR [flags]
                             serve MCP over Streamable HTTP at http://ADDR/mcp
  mcp-route --config FILE [flags]
                             take the flags from a TOML file: a key per flag
                             (max-procs = 4; [upstream] fs = "npx ..."); a
                             flag given here replaces the file's key
  mcp-route config print [--config FILE] [flags]
                             print the effective configuration, in the same
                             format, secrets withheld
  mcp-route new NAME [--lang sh|go|python|node] [--dir DIR]
                             write a tool skeleton into DIR (default .)
  mcp-route completion bash|zsh|fish
                             print the shell completion script (made from
                             these flags): source <(mcp-route completion bash)
  mcp-route pin --pin FILE --upstream NAME=CMD... --dry-run|--accept NAME__TOOL...|--all [flags]
                             review and pin the upstreams' current tool
                             definitions in FILE (the server's flags: they
                             start as served): --dry-run prints each added,
                             changed or removed tool with a diff of its
                             fields and writes nothing; --accept pins one
                             tool (repeatable), --all every one, one
                             "ACTION UPSTREAM TOOL sha256:..." line per tool
                             on stdout; with changes and neither, exit 2

Every executable file in a --tools directory is a tool; its definition comes
from a sidecar NAME.json or from NAME --mcp-describe.

stderr shows only what needs a look: tools left out and why, failed calls
worth a look (timeouts, kills, output caps, bad results), errors. --verbose
logs every event; a --log FILE always gets every event. --log-format picks
text (key=value) or json records, one line per event; records carry
tool, id, outcome, elapsed, upstream and session as attributes.

Confinement (Linux Landlock; --confine auto by default): every tool process,
and all it starts, may read and execute the system directories (/usr /bin
/sbin /lib* /opt), the --tools directories and the targets of their
symlinks, --allow-exec paths, and each tool's interpreter chain, granted
automatically (its shebang, #!/usr/bin/env NAME found in the tools' PATH,
pyenv shims, a venv and its python's lib, PREFIX/lib; never inside --root
or an --allow-write path); read the files of /etc programs need (passwd,
group, hosts, resolv.conf, localtime, ld.so.cache, the public
certificates...; never /etc whole, never shadow, sudoers, ssl/private or
SSH host keys) and the machine's files of /proc (cpuinfo, meminfo, loadavg,
stat, uptime, version...); read and write --root (read only with
--readonly) and a private TMPDIR made for this server; read --allow-read
and read and write --allow-write paths; use /dev/null, zero, random and
urandom (not /dev/tty: through it a tool could type commands into the
terminal that started mcp-route). Nothing else: not the home directory,
not /run, not /proc/<pid> nor /proc/self (ps does not work confined).
Tools hold no capability (of a root mcp-route too) and are refused mount,
unshare, setns, chroot, bpf, kexec, module loading, clone with a namespace
flag and the like (seccomp).
With --no-network (Landlock ABI 4, Linux 6.7, and seccomp) no TCP connect
or bind, MPTCP and TCP Fast Open included, no UDP, raw or packet socket,
and no io_uring; on ABI 6
(Linux 6.12) tools cannot signal mcp-route or reach abstract Unix sockets
outside. A tool's definition cannot widen this. A call that fails on a
path the policy refused says so in its error, with the flag that grants
it. auto runs tools unconfined, with one warning, where the kernel cannot
(Landlock needs Linux 5.13); require exits 1 then. The rules are proved at
start by a probe child. --confine-check prints them, and each tool's
interpreter chain.

Limits: each tool process tree (a call's, a worker's) may use --limit-mem
(1GiB) of memory and --limit-pids (512) processes at once, through the
cgroup memory and pids controllers (v1, or v2 as root or delegated)
where mcp-route can make cgroups; --limit-cpu bounds each process's CPU time (RLIMIT_CPU). Without a
memory controller each process gets RLIMIT_DATA; without a pids
controller there is no process limit (RLIMIT_NPROC counts all the user's
processes and never binds root). A limit hit ends the call with an
isError naming it, and every process left in the tree is killed. A tool's
run.limitMem, run.limitPids and run.limitCpu win. --confine-check says
how each is enforced here.

Upstreams (--upstream NAME=CMD, repeatable): another MCP server, started
like a tool (own process group, the tools' environment and confinement,
--root as working directory) and connected with the best era it offers; its
tools are served as NAME__TOOL. NAME is 1-32 of A-Z a-z 0-9 -; CMD is split
like a shell would, none runs; NAME=https://HOST/PATH (http only on
loopback) mounts a Streamable HTTP server (--upstream-header NAME='K: V'
and --upstream-token-file NAME=FILE add headers to its requests). Left out
with a log line: a tool name breaking the MCP rules or longer than 64
characters as NAME__TOOL, and both of a local and an upstream tool that
share a name. An upstream that
dies fails its calls at once ("upstream NAME died: ..."), is restarted with
backoff (--upstream-backoff: 0.5s doubling to 30s, jittered; down after 5
failed starts, then retried every 30s) and its calls meanwhile fail fast
("upstream NAME is restarting; retry in 2s"). Its sampling, elicitation and roots requests get
a JSON-RPC error. tools/list waits at most --upstream-timeout for it.
An upstream started through a package launcher gets its launcher profile
(--upstream-profile NAME=none turns it off), in a confinement of its own
that the tools do not share: npx and npm exec read and write the npm cache
and read and execute node and the global node_modules, and read the user
and global npmrc; uvx and uv tool run read and write the uv cache and read
and execute uv and its tools and Pythons; with --no-network they run
offline (npm_config_offline, UV_OFFLINE). Never a place inside --root or an
--allow-write path, nor a writable one holding the home directory, a tool
directory or the root. Its first start may fetch the package: until it has
listed its tools once, a start may take 3m and tools/list waits for it 15s
(or --upstream-timeout when given). A start that fails because the
confinement refused a file says which, and the flag that grants it.

--pin FILE: upstream tools are served only as pinned. An upstream FILE does
not know is pinned when first listed (trust on first use); then a tool whose
name, title, description, schemas, annotations or _meta changed, or a new tool, is
withheld (left out of tools/list; a call gets isError naming the change; the
log shows a diff) until mcp-route pin --accept NAME__TOOL (or --all)
records it; mcp-route pin --dry-run shows every change field by field.

Flags:
`

const exitText = `
Exit status:
  0  clean shutdown (stdin or stdout closed, SIGTERM or SIGINT), --help,
     --version
  1  cannot run: bad --root, a --tools directory missing, or inside --root
     (or a tool in it linked there) without --readonly, or inside an
     --allow-write path, an --allow-read, --allow-write or --allow-exec
     path missing, an --allow-exec inside --root or an --allow-write path,
     an --allow-read (or other path) that would open a secret of /etc
     (/etc, /etc/ssl, /etc/shadow...), --log not writable, --confine require and
     the confinement cannot be applied in full (no Landlock, --no-network
     before ABI 4, the probe failed), skeleton refused; --confine-check:
     --confine require would refuse to start; --http: the address cannot
     be bound, a bad --session-key-file or --http-token-file; an
     --upstream-token-file unreadable or without a token; a secret file
     (--http-token-file, --session-key-file, --upstream-token-file,
     --tls-key) that
     tools can read: under --root (--readonly or not), an --allow-read,
     --allow-write or --allow-exec path, a --tools directory, the system
     directories or the files of /etc the tools read; --pin: the
     file is corrupt, a symbolic link, in a missing directory, or inside
     --root (without --readonly) or an --allow-write path; pin: an
     upstream could not be listed (nothing pinned), FILE not written, an
     --accept naming no tool or whose digest is no longer the listed one;
     a launcher profile that cannot be made (npx without node in PATH,
     no home directory for the cache); --config: the file unreadable, or
     where tools can write (--root without --readonly, an --allow-write
     path, a launcher's cache), in a --tools directory, or holding an
     upstream's header or URL credentials where tools can read
  2  usage error (a bad flag or value, e.g. --confine other than auto,
     require or off; an --upstream with a bad NAME or CMD, a NAME given
     twice, or plain http beyond loopback; an --upstream-header or
     --upstream-token-file whose NAME is no HTTP upstream, a header the
     transport sets or with CR/LF; --upstream-backoff not MIN,MAX;
     --upstream-profile not NAME=npx|uvx|none for a command upstream;
     --upstream-allow not NAME=elicitation|sampling[,...] of an upstream;
     --http beyond loopback without --http-token-file or --http-insecure;
     an --allow-host with /, comma or white space;
     pin without --pin or --upstream, --dry-run with --accept or --all,
     --accept not NAME__TOOL[=sha256:HEX]; pin with tools added, changed
     or removed and neither --accept nor --all; completion without one
     of bash, zsh, fish; a bad key or value in the --config file:
     FILE:LINE and what is wanted)
`

// listFlag is a repeatable string flag; split, when set, also splits each
// value on it (--tools a:b).
type listFlag struct {
	vals  []string
	split string
}

func (l *listFlag) String() string { return strings.Join(l.vals, ",") }
func (l *listFlag) Set(v string) error {
	if l.split == "" {
		l.vals = append(l.vals, v)
		return nil
	}
	for _, p := range strings.Split(v, l.split) {
		if p != "" {
			l.vals = append(l.vals, p)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "new" {
		return runNew(args[1:], stdout, stderr)
	}
	// `mcp-route pin` takes the server's flags: its upstreams must start
	// as the server starts them (environment, root, confinement) to list
	// the definitions it will serve.
	pinning := len(args) > 0 && args[0] == "pin"
	// `mcp-route completion SHELL` is generated from the flags below.
	completing := len(args) > 0 && args[0] == "completion"
	if pinning || completing {
		args = args[1:]
	}
	args, printing, err := configCommand(args)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return 2
	}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below as one line
	tools := &listFlag{split: ":"}
	passEnv := &listFlag{}
	envs := &listFlag{}
	fs.Var(tools, "tools", "tool directory (repeatable, or several `DIRS` separated by ':')")
	resources, prompts := &listFlag{split: ":"}, &listFlag{split: ":"}
	fs.Var(resources, "resources", "resource directory: files are resources, executables dynamic ones, NAME.json sidecars (repeatable, or `DIRS` separated by ':'; see README's Resources and prompts)")
	fs.Var(prompts, "prompts", "prompt directory: templates and executables that print messages, NAME.json sidecars (repeatable, or `DIRS` separated by ':'; see README's Resources and prompts)")
	root := fs.String("root", "", "working directory `DIR` of every tool and its MCP_ROOT (default the current directory)")
	readonly := fs.Bool("readonly", false, "serve only tools annotated readOnlyHint: true")
	timeout := fs.Duration("timeout", router.DefaultTimeout, "default per-call timeout (a tool's run.timeout wins); also how long a write to a stdio upstream may make no progress before it is taken as hung and restarted")
	maxOutput := fs.Int64("max-output", router.DefaultMaxOutput, "default cap on a tool's stdout in bytes (a tool's run.maxOutput wins); also caps an upstream tool's result (its JSON) and error")
	maxProcs := fs.Int("max-procs", router.DefaultMaxProcs, "tool processes running at once; further calls wait")
	maxQueue := fs.Int("max-queue", router.DefaultMaxQueue, "calls that may wait for a process; beyond, a call gets an isError result \"server busy\" at once (0: none wait)")
	logFile := fs.String("log", "", "append logs to `FILE` instead of stderr, every event (as --verbose)")
	verbose := fs.Bool("verbose", false, "log every event (a call that went fine, initialize, shutdown), not only what needs a look")
	logFormat := fs.String("log-format", "text", "log record format: `text` (one \"mcp-route: time=… level=… msg=…\" line per event) or json (one JSON object per line)")
	fs.Var(passEnv, "pass-env", "pass environment variable `NAME` from mcp-route's environment to every tool (repeatable)")
	fs.Var(envs, "env", "set `NAME=VALUE` in every tool's environment (repeatable)")
	name := fs.String("name", prog, "server name in serverInfo")
	maxFrame := fs.Int("max-frame", codec.DefaultMaxFrame, "largest input line in bytes; longer ones get an error answer and are skipped")
	grace := fs.Duration("grace", router.DefaultGrace, "SIGTERM→SIGKILL delay for a tool, and how long shutdown waits for running calls")
	pageSize := fs.Int("page-size", router.DefaultPageSize, "tools per tools/list page")
	poll := fs.Duration("poll", router.DefaultPoll, "how often tool directories are checked for changes (0 disables)")
	describeCache := fs.String("describe-cache", "", "keep --mcp-describe outputs in `DIR` across runs; a changed tool is described again; '' turns it off; not used under --root, where tools could forge entries (default $XDG_CACHE_HOME/mcpipe/describe or ~/.cache/mcpipe/describe, off when neither exists)")
	describeTimeout := fs.Duration("describe-timeout", registry.DescribeTimeout, "time limit of one NAME --mcp-describe run (tools without a sidecar)")
	confineMode := fs.String("confine", string(confinement.Auto), "kernel confinement (Landlock) of every tool process: `auto` (when the kernel can; otherwise one warning and unconfined), require (confined in full or exit 1), off; see the policy below")
	allowRead := &listFlag{}
	allowWrite := &listFlag{}
	allowExec := &listFlag{}
	fs.Var(allowRead, "allow-read", "let confined tools read `DIR` (or a file) too (repeatable; not one that holds or contains a secret of /etc such as /etc/shadow or /etc/ssl/private: refused)")
	fs.Var(allowWrite, "allow-write", "let confined tools read and write `DIR` (or a file) too (repeatable)")
	fs.Var(allowExec, "allow-exec", "let confined tools read and execute `DIR` (or a file) too, e.g. a toolchain outside /usr (repeatable; refused inside --root or an --allow-write path, where a client could put a program)")
	noNetwork := fs.Bool("no-network", false, "confined tools may not make or accept TCP connections (Landlock ABI 4, Linux 6.7) nor open UDP, raw, packet or other non-Unix sockets (seccomp); Unix sockets are not covered")
	limitMem := fs.String("limit-mem", proc.FormatSize(DefaultLimitMem), "memory of each tool process tree (a call's, a worker's) together, as `SIZE` (512MiB, 2G; 0: none); a tool's run.limitMem wins; cgroup memory controller, else RLIMIT_DATA per process (see README, Limits)")
	limitPids := fs.Int("limit-pids", DefaultLimitPids, "processes and threads of each tool process tree at once (0: none); a tool's run.limitPids wins; needs the cgroup pids controller: with none there is no process limit (see README, Limits)")
	limitCPU := fs.Duration("limit-cpu", 0, "CPU time of each tool process, as a duration (0: none, the default; --timeout bounds a call); a tool's run.limitCpu wins; RLIMIT_CPU, per process")
	confineCheck := fs.Bool("confine-check", false, "print the Landlock ABI and every rule the other flags would enforce on this kernel, then exit: 0, or 1 when --confine require would refuse to start")
	upstreams := &listFlag{}
	fs.Var(upstreams, "upstream", "mount the MCP server `NAME=CMD` (or NAME=https://HOST/PATH; http only on loopback): its tools are served as NAME__TOOL; NAME is 1-32 of [A-Za-z0-9-]; CMD is split like a shell would, without one (repeatable; see README's Upstreams)")
	upstreamHeaders := &listFlag{}
	fs.Var(upstreamHeaders, "upstream-header", "send the header `NAME='Key: value'` with every request to the HTTP upstream NAME (repeatable; not a header the MCP transport sets: Content-Type, Accept, Host, Mcp-Session-Id, MCP-Protocol-Version...)")
	upstreamTokens := &listFlag{}
	fs.Var(upstreamTokens, "upstream-token-file", "send Authorization: Bearer with the token on the first non-blank line of FILE (read at start) to the HTTP upstream NAME: `NAME=FILE` (repeatable, one per upstream)")
	pinPath := fs.String("pin", "", "serve upstream tools only as pinned in `FILE`: an upstream FILE does not know is pinned when first listed; a changed or new tool is withheld until `mcp-route pin` records it")
	upstreamBackoff := fs.String("upstream-backoff", upstream.DefaultMinBackoff.String()+","+upstream.DefaultMaxBackoff.String(), "restart delay of an upstream that died or failed to start: `MIN,MAX`, two positive durations; MIN doubles per restart up to MAX (jittered ±20%), MAX is also the retry interval of an upstream that is down")
	upstreamTimeout := fs.Duration("upstream-timeout", upstream.DefaultListTimeout, "how long tools/list waits for upstreams that have not listed their tools yet; it then serves what it has (default 3s; "+upstream.LauncherFirstList.String()+" for an upstream started through npx or uvx, whose first start may fetch its package)")
	upstreamAllow := &listFlag{}
	fs.Var(upstreamAllow, "upstream-allow", "pass the upstream's requests of `NAME=WHAT` on to the client of the call in flight to it: WHAT elicitation, sampling, or both comma-separated (repeatable); otherwise an upstream's elicitation/create and sampling/createMessage get -32601")
	upstreamProfiles := &listFlag{}
	fs.Var(upstreamProfiles, "upstream-profile", "the launcher profile of the upstream NAME: `NAME=PROFILE`, npx, uvx or none (repeatable; by default chosen from its program: npx and npm exec get npx, uvx and uv tool run get uvx; see README's Upstreams)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	confirmSpec := fs.String("confirm", "", "ask the user to approve each call (by elicitation: the tool, its arguments and their digest) of the tools in `LIST`, comma-separated: destructive (every tool not annotated readOnlyHint or destructiveHint false; every upstream tool unless --pin holds its definition), all, or tool names; declined, unanswered or a client that cannot be asked: an isError result, and nothing runs")
	confirmTimeout := fs.Duration("confirm-timeout", router.DefaultConfirmTimeout, "how long an approval question of --confirm waits for the user")
	hf := httpFlags(fs)
	configPath := configFlag(fs)
	if completing {
		return completionMain(fs, args, stdout, stderr)
	}
	var po *pinOpts
	if pinning {
		po = pinFlags(fs)
	}
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprint(w, usageText)
		fs.PrintDefaults()
		fmt.Fprint(w, exitText)
	}
	fs.Usage = func() {} // printed below, to stdout for --help
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return 2
	}
	if *showVersion {
		fmt.Fprintf(stdout, "%s %s\n", prog, version.String())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected argument %q (see --help)\n", prog, fs.Arg(0))
		return 2
	}
	cfg, err := applyConfig(fs, *configPath)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return configExit(err)
	}
	if printing {
		return printConfig(fs, args, cfg, stdout, stderr)
	}
	// The first flag out of range, with what was written and what is wanted.
	for _, c := range []struct {
		bad        bool
		flag, want string
	}{
		{*maxProcs < 1, "max-procs", "a positive number"},
		{*maxOutput < 1, "max-output", "a positive number of bytes"},
		{*timeout <= 0, "timeout", "a positive duration"},
		{*grace <= 0, "grace", "a positive duration"},
		{*maxFrame < 1, "max-frame", "a positive number of bytes"},
		{*pageSize < 1, "page-size", "a positive number"},
		{*poll < 0, "poll", "a positive duration, or 0 to turn polling off"},
		{*describeTimeout <= 0, "describe-timeout", "a positive duration"},
		{*maxQueue < 0, "max-queue", "0 or more"},
		{*upstreamTimeout <= 0, "upstream-timeout", "a positive duration"},
		{*limitPids < 0, "limit-pids", "a number of processes, or 0 for none"},
		{*limitCPU < 0, "limit-cpu", "a positive duration, or 0 for none"},
		{*confirmTimeout <= 0, "confirm-timeout", "a positive duration"},
	} {
		if c.bad {
			fmt.Fprintf(stderr, "%s: --%s %s: want %s%s (see --help)\n", prog, c.flag, fs.Lookup(c.flag).Value, c.want, cfg.fromFile(c.flag))
			return 2
		}
	}
	limitMemBytes, err := tooldef.ParseSize(*limitMem)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --limit-mem %v%s (see --help)\n", prog, err, cfg.fromFile("limit-mem"))
		return 2
	}
	limits := proc.Limits{Memory: limitMemBytes, Pids: *limitPids, CPU: *limitCPU}
	var approval *router.Confirm
	if *confirmSpec != "" {
		if approval, err = router.ParseConfirm(*confirmSpec); err != nil {
			fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
			return 2
		}
		approval.Timeout = *confirmTimeout
		approval.UpstreamHints = *pinPath != ""
	}
	mode, err := confinement.ParseMode(*confineMode)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	specs, err := upstream.ParseSpecs(upstreams.vals)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	if err := upstream.SetHeaders(specs, upstreamHeaders.vals, upstreamTokens.vals); err != nil {
		var tfe *upstream.TokenFileError
		if errors.As(err, &tfe) {
			fmt.Fprintf(stderr, "%s: %v%s\n", prog, err, cfg.about(err.Error()))
			return 1
		}
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	if err := setAllow(specs, upstreamAllow.vals); err != nil {
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	chosenProfiles, err := parseProfiles(upstreamProfiles.vals, specs)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	minBackoff, maxBackoff, err := upstream.ParseBackoff(*upstreamBackoff)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v%s (see --help)\n", prog, err, cfg.about(err.Error()))
		return 2
	}
	if pinning && (*pinPath == "" || len(specs) == 0) {
		fmt.Fprintf(stderr, "%s: pin: want --pin FILE and at least one --upstream NAME=CMD (see --help)\n", prog)
		return 2
	}
	if *logFormat != "text" && *logFormat != "json" {
		fmt.Fprintf(stderr, "%s: --log-format %q: want text or json%s\n", prog, *logFormat, cfg.fromFile("log-format"))
		return 2
	}
	queue := *maxQueue
	if queue == 0 {
		queue = -1 // router: < 0 lets no call wait
	}

	logw := stderr
	everything := *verbose
	if *logFile != "" {
		// A file the operator asked for: it gets every event.
		everything = true
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		defer f.Close()
		logw = f
	}
	// By default only what an operator must see (Warn); --verbose and
	// --log add the routine events (Debug).
	level := slog.LevelInfo
	if everything {
		level = slog.LevelDebug
	}
	logger := newLogger(*logFormat, logw, level)

	rootDir := *root
	if rootDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		rootDir = wd
	}
	rootDir, err = filepath.Abs(rootDir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(rootDir); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s: not a directory", rootDir)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: --root: %v\n", prog, err)
		return 1
	}

	readPaths, err := absExisting("allow-read", allowRead.vals)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	writePaths, err := absExisting("allow-write", allowWrite.vals)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	execPaths, err := absExisting("allow-exec", allowExec.vals)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	var pins *pin.File
	if *pinPath != "" {
		abs, err := filepath.Abs(*pinPath)
		if err == nil {
			err = checkPinPlace(abs, rootDir, *readonly, writePaths)
		}
		if err == nil {
			pins, err = pin.Load(abs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
	}
	cacheDir := *describeCache
	cacheSet := false
	fs.Visit(func(f *flag.Flag) { cacheSet = cacheSet || f.Name == "describe-cache" })
	if !cacheSet {
		cacheDir, _ = registry.DefaultCacheDir() // "" (off) when there is none
	}
	if cacheDir != "" {
		if abs, err := filepath.Abs(cacheDir); err == nil {
			cacheDir = abs
		}
	}
	var dirs []string
	for _, d := range tools.vals {
		abs, err := filepath.Abs(d)
		if err != nil {
			abs = d
		}
		// A typo here would otherwise serve no tools and exit 0 later;
		// only a directory that disappears while serving is logged and
		// its tools dropped (the registry's poll).
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			why := "no such directory"
			if err == nil {
				why = "not a directory"
			} else if !errors.Is(err, os.ErrNotExist) {
				why = err.Error()
			}
			fmt.Fprintf(stderr, "%s: --tools %s: %s\n", prog, d, why)
			return 1
		}
		dirs = append(dirs, abs)
	}
	resDirs, ok := surfaceDirs("--resources", resources.vals, stderr)
	if !ok {
		return 1
	}
	promptDirs, ok := surfaceDirs("--prompts", prompts.vals, stderr)
	if !ok {
		return 1
	}
	// Resource and prompt directories hold executables run as tools are:
	// the same trust rules and confinement grants.
	execDirs := slices.Concat(dirs, resDirs, promptDirs)
	if !*readonly {
		// Tools can write under the root: one there would be a tool a
		// client could write, then call (DESIGN.md, "Trust").
		if err := registry.CheckToolsOutsideRoot(execDirs, rootDir); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
	}
	for _, w := range writePaths {
		// --readonly does not make these read-only.
		if err := registry.CheckToolsOutsideWritable(execDirs, w); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
	}
	// Upstreams started by a launcher (npx, uvx) get a confinement of
	// their own, with the places their launcher's profile grants.
	var profiles []profiled
	if mode != confinement.Off || *confineCheck {
		// The profile reads the upstream's environment as it will be
		// (TMPDIR aside, which no launcher's places depend on).
		penv, err := toolenv.Base(envs.vals, passEnv.vals, os.LookupEnv)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 2
		}
		penv = slices.Concat(penv, []string{"MCP_ROOT=" + rootDir})
		profiles, err = loadProfiles(specs, chosenProfiles, penv, upstream.Bounds{Root: rootDir, ReadOnly: *readonly, AllowWrite: writePaths, ToolDirs: execDirs, NoNetwork: *noNetwork})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
	}
	var programs []string
	for _, sp := range specs {
		// Upstreams without a launcher profile start on the tools'
		// confined spawner: their programs must be executable there.
		if !slices.ContainsFunc(profiles, func(p profiled) bool { return p.spec.Name == sp.Name }) {
			programs = append(programs, programPaths(sp.Argv)...)
		}
	}
	policy := confinement.Config{
		Programs:   programs,
		Mode:       mode,
		Root:       rootDir,
		ReadOnly:   *readonly,
		ToolDirs:   execDirs,
		AllowRead:  readPaths,
		AllowWrite: writePaths,
		AllowExec:  execPaths,
		NoNetwork:  *noNetwork,
		Logger:     logger,
	}
	// What no kernel makes acceptable (a secret of /etc opened, an
	// --allow-exec where tools write), refused whatever --confine says.
	toolPolicy := policy.Policy()
	if err := policyError(toolPolicy.Check()); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	// The files of secrets, out of the tools' reach: a client could read
	// a token, the session key or the TLS private key with any reading
	// tool. What the tools can read is what the confinement grants, the
	// system's places included (confine is the one list of them).
	secrets := [][2]string{{"--http-token-file", hf.tokenFile}, {"--session-key-file", hf.keyFile}, {"--tls-key", hf.key}}
	for _, tf := range upstreamTokens.vals {
		name, file, _ := strings.Cut(tf, "=") // SetHeaders checked the form
		secrets = append(secrets, [2]string{"--upstream-token-file " + name, file})
	}
	secrets = append(secrets, cfg.secretFiles()...)
	var granted []place
	if mode != confinement.Off {
		// What the tools' interpreter chains are granted, they can read.
		chains := confinement.Config{Root: rootDir, ToolDirs: execDirs, AllowWrite: writePaths, Env: os.Environ()}.Chains()
		for _, tc := range chains {
			for _, g := range tc.Grants {
				granted = append(granted, place{"the interpreter grant of tool " + tc.Tool + ",", g.Path})
			}
		}
	}
	for _, p := range profiles {
		granted = append(granted, p.places()...)
	}
	readable := readablePlaces(toolPolicy, execDirs, granted...)
	for _, s := range secrets {
		if s[1] == "" {
			continue
		}
		if err := checkSecretPlace(s[0], s[1], readable); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
	}
	if err := cfg.checkPlace(rootDir, *readonly, writePaths, dirs, profiles); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if *confineCheck {
		// The interpreter chains shown are those the tools' PATH finds.
		if policy.Env, err = toolenv.Base(envs.vals, passEnv.vals, os.LookupEnv); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 2
		}
		return confineCheckMain(policy, limits, profiles, stdout, stderr)
	}
	// lookup is mcp-route's environment as the tools see it: under
	// confinement TMPDIR is the server's private directory, the one
	// place besides the root where they can write.
	lookup := os.LookupEnv
	if mode != confinement.Off {
		tmp, err := os.MkdirTemp("", "mcp-route-tmp-")
		if err != nil {
			fmt.Fprintf(stderr, "%s: private TMPDIR for the tools: %v\n", prog, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		policy.TempDir = tmp
		lookup = func(k string) (string, bool) {
			if k == "TMPDIR" {
				return tmp, true
			}
			return os.LookupEnv(k)
		}
	}
	env, err := toolenv.Base(envs.vals, passEnv.vals, lookup)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	policy.Env = env
	conf, err := confinement.Start(policy)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer conf.Close()
	upstreamTimeoutSet := false
	fs.Visit(func(f *flag.Flag) { upstreamTimeoutSet = upstreamTimeoutSet || f.Name == "upstream-timeout" })
	for i := range specs {
		sp := &specs[i]
		if sp.URL == "" && mode != confinement.Off {
			sp.Rules = rulesOf(conf)
		}
		// A launcher's first start may fetch its package, confined or
		// not: the first-start allowance.
		if l, ok := chosenProfiles[sp.Name]; (ok && l != upstream.ProfileNone) || (!ok && upstream.Launcher(sp.Argv) != "") {
			sp.Launcher = cmp.Or(l, upstream.Launcher(sp.Argv))
			sp.FirstConnect, sp.FirstList = upstream.LauncherFirstConnect, upstream.LauncherFirstList
			if upstreamTimeoutSet {
				sp.FirstList = *upstreamTimeout
			}
		}
	}
	for _, p := range profiles {
		// A launcher upstream runs in a domain of its own: the tools do
		// not get its launcher's cache.
		pc, err := confinement.Start(p.config(policy))
		if err != nil {
			fmt.Fprintf(stderr, "%s: --upstream %s (%s profile): %v\n", prog, p.spec.Name, p.prof.Name, err)
			return 1
		}
		defer pc.Close()
		// Under auto its verdict comes in the background, as the tools'
		// does: an upstream that runs unconfined must be said.
		verdict := make(chan struct{})
		go func() {
			defer close(verdict)
			if w := pc.Warning(); w != "" {
				logger.Warn("upstream launcher profile not enforced in full", slog.String("upstream", p.spec.Name), slog.String("profile", p.prof.Name), slog.String("why", w))
			}
		}()
		defer func() { <-verdict }()
		p.spec.Spawn, p.spec.Rules, p.spec.Env = pc.Spawn(), rulesOf(pc), p.prof.Env
		logger.Debug("upstream launcher profile", slog.String("upstream", p.spec.Name), slog.String("profile", fmt.Sprint(p.prof)))
		for _, d := range p.prof.Dropped {
			logger.Warn("upstream launcher profile: a place not granted", slog.String("upstream", p.spec.Name), slog.String("profile", p.prof.Name), slog.String("why", d))
		}
	}
	// Under --confine auto the probe runs while mcp-route starts serving
	// (tool starts wait for it); its verdict is logged when it comes, and
	// before mcp-route exits.
	announced := make(chan struct{})
	defer func() { <-announced }()
	go func() {
		defer close(announced)
		switch rep := conf.Report(); {
		case mode == confinement.Off:
			logger.Debug("tools are not confined: --confine off")
		case !conf.Enforced():
			logger.Warn(conf.Warning())
		case len(rep.Missing) > 0:
			logger.Warn("tools confined, not in full", slog.String("report", rep.String()))
		case everything:
			logger.Info("tools confined", slog.String("report", rep.String()))
		}
		if !limits.IsZero() {
			logger.Debug("limits per tool process tree", slog.String("limits", limitsText(limits)), slog.String("enforced_by", proc.LimitSupport()))
		}
	}()

	describeEnv := slices.Concat(env, []string{"MCP_ROOT=" + rootDir})
	uopts := upstream.Options{
		Env:         describeEnv,
		Dir:         rootDir,
		Spawn:       conf.Spawn(),
		Grace:       *grace,
		CallTimeout: *timeout,
		MaxOutput:   *maxOutput,
		ListTimeout: *upstreamTimeout,
		MinBackoff:  minBackoff,
		MaxBackoff:  maxBackoff,
		ReadOnly:    *readonly,
		ClientInfo:  codec.Implementation{Name: *name, Version: version.Number},
		Logger:      logger,
	}
	if pinning {
		return pinMain(ctx, pins, specs, uopts, po, stdout, stderr)
	}
	if len(dirs) == 0 && len(specs) == 0 && len(resDirs)+len(promptDirs) == 0 {
		logger.Warn("no --tools directory: serving no tools")
	}
	reg := registry.New(registry.Options{
		Dirs:            dirs,
		ReadOnly:        *readonly,
		DescribeEnv:     describeEnv,
		DescribeDir:     rootDir,
		DescribeTimeout: *describeTimeout,
		Spawn:           conf.Spawn(),
		CacheDir:        cacheDir,
		CacheKeyEnv:     cacheKeyEnv(describeEnv, policy.TempDir),
		Root:            rootDir,
		Writable:        writePaths,
		Logger:          logger,
		Explain:         conf.ExplainFailure,
	})
	defer reg.Close()
	pollEvery := *poll
	if pollEvery == 0 {
		pollEvery = -1 // router: < 0 disables
	}
	cacheNote := reg.CacheDir()
	if cacheNote == "" {
		cacheNote = "off"
	}
	logger.Debug("serving", slog.String("version", version.Number), slog.Int("tool_dirs", len(dirs)), slog.String("root", rootDir), slog.String("describe_cache", cacheNote))
	ropts := router.Options{
		Registry:   reg,
		ServerInfo: codec.Implementation{Name: *name, Version: version.Number},
		Root:       rootDir,
		Env:        env,
		LookupEnv:  lookup,
		Spawn:      conf.Spawn(),
		Limits:     limits,
		Timeout:    *timeout,
		MaxOutput:  *maxOutput,
		MaxProcs:   *maxProcs,
		MaxQueue:   queue,
		Grace:      *grace,
		MaxFrame:   *maxFrame,
		PageSize:   *pageSize,
		Poll:       pollEvery,
		Logger:     logger,
		Explain:    conf.ExplainFailure,
		Confirm:    approval,
	}
	if len(resDirs)+len(promptDirs) > 0 {
		ropts.Surface = surface.New(surface.Options{
			ResourceDirs: resDirs,
			PromptDirs:   promptDirs,
			PageSize:     *pageSize,
			MaxOutput:    *maxOutput,
			TTL:          max(pollEvery, 0),
			Logger:       logger,
		})
	}
	if len(specs) > 0 {
		var gate *pinGate
		if pins != nil {
			gate = &pinGate{file: pins, logger: logger, logged: map[string]string{}}
			uopts.Admit = gate.admit
			uopts.AdmitSurface = gate.admitSurface
		}
		set := upstream.NewSet(specs, uopts)
		if gate != nil {
			gate.set = set // before Start: Admit runs only once lists come
			if *poll > 0 {
				// `mcp-route pin` run beside this server: its tools come
				// back without a restart.
				wctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() {
					defer close(done)
					gate.watch(wctx, *poll)
				}()
				defer func() { cancel(); <-done }()
			}
		}
		// Started before serving, so the first tools/list finds them
		// under way; stopped (and reaped) after the last answer.
		set.Start(context.WithoutCancel(ctx))
		defer set.Close()
		ropts.Upstreams = set
	}
	if hf.addr != "" {
		ropts.Loaded = httpLoaded
		return serveHTTP(ctx, hf, ropts, logger, stderr)
	}
	ropts.Loaded = stdioLoaded
	err = router.Serve(ctx, stdin, stdout, ropts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	logger.Debug("exit")
	return 0
}

// absExisting returns the --flag paths made absolute, or an error naming
// the first one that does not exist: a typo would otherwise widen nothing
// and go unnoticed.
func absExisting(flag string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %v", flag, p, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// policyError says confine.Policy.Check's refusals that hold in every
// --confine mode, with mcp-route's flag names; nil for the rest.
func policyError(err error) error {
	var ne *confine.NeverError
	var we *confine.WritableExecError
	switch {
	case errors.As(err, &ne):
		return fmt.Errorf("%s %s: would let tools read %s, which holds secrets and is never granted to them; name the files the tools need instead", sourceFlag(ne.Source), ne.Path, ne.Secret)
	case errors.As(err, &we):
		return fmt.Errorf("%s %s is inside %s %s, where tools can write: a client could put a program there and run it; name a directory outside it", sourceFlag(we.Source), we.Path, sourceFlag(we.PlaceSource), we.Place)
	}
	// Anything else (a policy that opens "/") is the confinement's to
	// judge by --confine: require refuses, auto warns and runs unconfined.
	return nil
}

// cacheKeyEnv is env with the private TMPDIR (new at every start) written
// as a placeholder, so the describe cache still hits across runs.
func cacheKeyEnv(env []string, tmp string) []string {
	if tmp == "" {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = strings.ReplaceAll(kv, tmp, "$PRIVATE_TMPDIR")
	}
	return out
}

// Defaults of --limit-mem and --limit-pids; see README, Limits.
const (
	DefaultLimitMem  = 1 << 30
	DefaultLimitPids = 512
)

// limitsText is l as a line: "memory 1GiB, pids 512, cpu none".
func limitsText(l proc.Limits) string {
	mem, pids, cpu := "none", "none", "none"
	if l.Memory > 0 {
		mem = proc.FormatSize(l.Memory)
	}
	if l.Pids > 0 {
		pids = fmt.Sprint(l.Pids)
	}
	if l.CPU > 0 {
		cpu = l.CPU.String() + " per process"
	}
	return "memory " + mem + ", pids " + pids + ", cpu " + cpu
}

// confineCheckMain is --confine-check: the rules on stdout, the verdict
// for --confine require as the exit status and, when it would refuse, one
// line on stderr.
func confineCheckMain(c confinement.Config, limits proc.Limits, profiles []profiled, stdout, stderr io.Writer) int {
	// The tools' private TMPDIR is part of the policy: a stand-in for the
	// one a server would make.
	tmp, err := os.MkdirTemp("", "mcp-route-tmp-")
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if c.Mode != confinement.Off {
		c.TempDir = tmp
	}
	detail, err := confinement.Check(c)
	if c.Mode == confinement.Off {
		fmt.Fprintln(stdout, "--confine off: tools would run unconfined; with auto or require this kernel would enforce:")
	}
	fmt.Fprint(stdout, detail)
	fmt.Fprintf(stdout, "limits per tool process tree: %s\n", limitsText(limits))
	fmt.Fprintf(stdout, "limits enforced by: %s\n", proc.LimitSupport())
	if err != nil {
		fmt.Fprintf(stderr, "%s: --confine require would refuse to start: %v\n", prog, err)
		return 1
	}
	// Each launcher upstream has a domain of its own: the tools' rules
	// and its profile's, proved the same way.
	for _, p := range profiles {
		fmt.Fprintf(stdout, "upstream %s: %s\n", p.spec.Name, p.prof)
		if _, err := confinement.Check(p.config(c)); err != nil {
			fmt.Fprintf(stderr, "%s: --confine require would refuse to start upstream %s: %v\n", prog, p.spec.Name, err)
			return 1
		}
	}
	return 0
}

// rulesOf is what conf opens once in force (nil when not), for the
// explanation of a denial in an upstream's stderr.
func rulesOf(conf *confinement.Confinement) func() []confine.Rule {
	return func() []confine.Rule {
		if !conf.Enforced() {
			return nil
		}
		return conf.Report().Rules
	}
}

// newLogger returns the logger of --log-format: text lines prefixed with
// the program's name (stderr may be shared with the host), or JSON objects.
// Both escape newlines and control characters: one line per event,
// whatever a tool put in its stderr or name.
func newLogger(format string, w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(prefixWriter{prog + ": ", w}, opts))
}

// prefixWriter puts prefix before each Write: a slog handler writes one
// record per Write.
type prefixWriter struct {
	prefix string
	w      io.Writer
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write(append([]byte(p.prefix), b...)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// runNew is `mcp-route new NAME [--lang L] [--dir DIR]`.
// newFlags defines the flags of `mcp-route new`.
func newFlags(fs *flag.FlagSet) (lang, dir *string) {
	lang = fs.String("lang", scaffold.Languages[0], "tool language: "+strings.Join(scaffold.Languages, ", "))
	dir = fs.String("dir", ".", "`DIR`ectory to write the tool into (created when missing)")
	return lang, dir
}

func runNew(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(prog+" new", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lang, dir := newFlags(fs)
	fs.Usage = func() {}
	usage := func(w io.Writer) {
		fs.SetOutput(w)
		fmt.Fprintf(w, "Usage: %s new NAME [--lang %s] [--dir DIR]\n\nWrites a working tool skeleton with its definition; never overwrites.\n\nFlags:\n",
			prog, strings.Join(scaffold.Languages, "|"))
		fs.PrintDefaults()
		fmt.Fprint(w, exitText)
	}
	// Accept flags before or after NAME.
	var names []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage(stdout)
				return 0
			}
			fmt.Fprintf(stderr, "%s: new: %v (see %s new --help)\n", prog, err, prog)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) != 1 {
		fmt.Fprintf(stderr, "%s: new: want exactly one NAME (see %s new --help)\n", prog, prog)
		return 2
	}
	files, err := scaffold.Write(*dir, names[0], *lang)
	if err != nil {
		fmt.Fprintf(stderr, "%s: new: %v\n", prog, err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	if h := scaffold.Hint(*dir, names[0], *lang); h != "" {
		fmt.Fprintln(stderr, h)
	}
	return 0
}

// setAllow applies --upstream-allow NAME=WHAT to the specs: NAME must be
// an --upstream.
func setAllow(specs []upstream.Spec, vals []string) error {
	for _, v := range vals {
		name, what, err := upstream.ParseAllow(v)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(specs, func(s upstream.Spec) bool { return s.Name == name })
		if i < 0 {
			return fmt.Errorf("--upstream-allow %s: no --upstream %s=... to allow it for", v, name)
		}
		for _, w := range what {
			if !slices.Contains(specs[i].Allow, w) {
				specs[i].Allow = append(specs[i].Allow, w)
			}
		}
	}
	return nil
}
