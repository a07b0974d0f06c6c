package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/internal/cmdline"
	"github.com/mcpipe/mcpipe/internal/termsafe"
	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-call/args"
)

const prog = "mcp-call"

// Exit statuses (see usage).
const (
	exitOK       = 0
	exitIsError  = 1
	exitProtocol = 2
	exitServer   = 3
)

// defaultTimeout bounds each request. It must outlast a server's own
// per-call timeout plus its kill grace (mcp-route: 30s + 2s), so that a
// slow tool ends with the server's "timed out" result rather than with
// mcp-call giving up first and printing nothing useful.
const defaultTimeout = 45 * time.Second

// options are the parsed flags.
type options struct {
	json, structured, progress, failFast bool
	showVersion, trace, raw, safe        bool
	timeout                              time.Duration
	era, version, serverStderr           string
	// url, headers and tokenFile reach a Streamable HTTP server instead
	// of starting one.
	url       string
	headers   headerFlags
	tokenFile string
}

// headerFlags collects repeated --header 'Name: value'.
type headerFlags []string

func (h *headerFlags) String() string { return strings.Join(*h, ", ") }

func (h *headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("--header %q: want 'Name: value'", v)
	}
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("--header %q: a value must not contain a line break", v)
	}
	*h = append(*h, v)
	return nil
}

// usageError is a mistake on the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// env is what run reads from the environment; tests replace it.
type env struct {
	getenv func(string) string
}

func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(ctx, argv, stdin, stdout, stderr, env{getenv: os.Getenv})
}

// lockedWriter serializes writes to stderr: progress and protocol reports
// arrive on the client's read goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func runEnv(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	opts, pos, serverArgv, err := parseArgs(argv, stdout)
	// Before anything is printed: from here on, both streams may carry the
	// server's text.
	stdout, stderr = terminalSafe(stdout, opts), terminalSafe(stderr, opts)
	errw := &lockedWriter{w: stderr}
	fail := func(code int, err error) int {
		fmt.Fprintf(errw, "%s: %v\n", prog, err)
		return code
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return fail(exitProtocol, err)
	}
	if opts.showVersion {
		fmt.Fprintf(stdout, "%s %s\n", prog, version.String())
		return exitOK
	}
	if len(pos) == 0 {
		return fail(exitProtocol, usagef("no command (try --help)"))
	}
	cmdName, cmdArgs := pos[0], pos[1:]
	if cmdName == "completion" {
		return completion(cmdArgs, stdout, stderr)
	}
	if err := checkArity(cmdName, cmdArgs); err != nil {
		return fail(exitProtocol, err)
	}
	if _, err := client.ResolveEra(opts.era, opts.version); err != nil {
		return fail(exitProtocol, usagef("%v", err))
	}
	if opts.url != "" {
		if len(serverArgv) > 0 {
			return fail(exitProtocol, usagef("--url and a server command after -- exclude each other"))
		}
		hopts, err := httpOptions(opts)
		if err != nil {
			return fail(exitProtocol, err)
		}
		s := &session{opts: opts, stdin: stdin, stdout: stdout, stderr: errw}
		if cmdName == "raw" {
			return s.rawHTTP(ctx, hopts)
		}
		return s.connected(ctx, func(ctx context.Context, copts client.Options) (*client.Conn, *client.Info, error) {
			return client.DialHTTP(ctx, opts.url, hopts, copts)
		}, cmdName, cmdArgs)
	}
	if len(opts.headers) > 0 || opts.tokenFile != "" {
		return fail(exitProtocol, usagef("--header and --token-file need --url"))
	}
	if len(serverArgv) == 0 {
		line := e.getenv("MCP_SERVER")
		if strings.TrimSpace(line) == "" {
			return fail(exitProtocol, usagef("no server: give it after --, or set MCP_SERVER"))
		}
		serverArgv, err = cmdline.Split(line)
		if err != nil {
			return fail(exitProtocol, usagef("MCP_SERVER: %v", err))
		}
	}
	serverStderr, closeStderr, err := openServerStderr(opts.serverStderr, stderr, errw)
	if err != nil {
		return fail(exitProtocol, err)
	}
	defer closeStderr()

	s := &session{opts: opts, stdin: stdin, stdout: stdout, stderr: errw}
	cmd := client.Command{Argv: serverArgv, Stderr: serverStderr}
	if cmdName == "raw" {
		return s.raw(ctx, cmd)
	}
	return s.connected(ctx, func(ctx context.Context, copts client.Options) (*client.Conn, *client.Info, error) {
		return client.Dial(ctx, cmd, copts)
	}, cmdName, cmdArgs)
}

// httpOptions turns --header and --token-file into request headers.
func httpOptions(o options) (client.HTTPOptions, error) {
	hdr := http.Header{}
	for _, h := range o.headers {
		name, value, _ := strings.Cut(h, ":")
		hdr.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if o.tokenFile != "" {
		tok, err := readToken(o.tokenFile)
		if err != nil {
			return client.HTTPOptions{}, err
		}
		if hdr.Get("Authorization") != "" {
			return client.HTTPOptions{}, usagef("--token-file and --header 'Authorization: …' exclude each other")
		}
		hdr.Set("Authorization", "Bearer "+tok)
	}
	return client.HTTPOptions{Header: hdr}, nil
}

// readToken reads a bearer token: the file's first non-blank line, trimmed.
// A file kept out of argv keeps the token out of ps and shell history.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usagef("--token-file: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if tok := strings.TrimSpace(line); tok != "" {
			for i := 0; i < len(tok); i++ {
				if tok[i] < 0x21 || tok[i] > 0x7e {
					return "", usagef("--token-file %s: the token has a character that is not visible ASCII (byte %d)", path, i+1)
				}
			}
			return tok, nil
		}
	}
	return "", usagef("--token-file %s: no token in it (want the token on its first non-blank line)", path)
}

// terminalSafe wraps w so that control characters are escaped (see
// internal/termsafe) when it is a terminal, or always with --safe; --raw
// passes everything unchanged. Pipes and files get the bytes as the server
// sent them: scripts may need them.
func terminalSafe(w io.Writer, o options) io.Writer {
	if o.raw {
		return w
	}
	if f, ok := w.(*os.File); o.safe || ok && termsafe.IsTerminal(f) {
		return termsafe.Writer{W: w}
	}
	return w
}

// defineFlags defines mcp-call's flags on fs, into o; it returns --help's.
// The usage text is the const usage; these one-line usages feed the
// completion scripts (`mcp-call completion SHELL`), whose value kinds come
// from the back-quoted names (FILE: files).
func defineFlags(fs *flag.FlagSet, o *options) (help *bool) {
	fs.BoolVar(&o.json, "json", false, "JSON output")
	fs.BoolVar(&o.structured, "structured", false, "call: print structuredContent")
	fs.BoolVar(&o.progress, "progress", false, "print progress notifications on stderr")
	fs.BoolVar(&o.failFast, "fail-fast", false, "script: stop at the first failed call")
	fs.BoolVar(&o.trace, "trace", false, "print every frame on stderr")
	fs.BoolVar(&o.raw, "raw", false, "print the server's text unescaped, even on a terminal")
	fs.BoolVar(&o.safe, "safe", false, "escape control characters, even into a pipe")
	fs.DurationVar(&o.timeout, "timeout", defaultTimeout, "bound on the handshake and on each request")
	fs.StringVar(&o.era, "era", client.EraAuto, "protocol era")
	fs.StringVar(&o.version, "protocol-version", "", "pin one protocol `VERSION`")
	fs.StringVar(&o.serverStderr, "server-stderr", "inherit", "where the server's stderr goes: inherit, discard or a `FILE`")
	fs.StringVar(&o.url, "url", "", "a Streamable HTTP server's `URL`")
	fs.Var(&o.headers, "header", "an HTTP header 'Name: value', repeatable")
	fs.StringVar(&o.tokenFile, "token-file", "", "a `FILE` holding the bearer token")
	fs.BoolVar(&o.showVersion, "version", false, "print the version")
	help = fs.Bool("help", false, "print the usage")
	fs.BoolVar(help, "h", false, "print the usage")
	return help
}

// parseArgs splits argv at the first "--" and parses flags anywhere before
// it, so `mcp-call call echo text=hi --json -- server` works.
func parseArgs(argv []string, stdout io.Writer) (o options, pos, server []string, err error) {
	ours := argv
	for i, a := range argv {
		if a == "--" {
			ours, server = argv[:i], argv[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	help := defineFlags(fs, &o)
	rest := ours
	for {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, usage)
			}
			return o, nil, nil, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
	if *help {
		fmt.Fprint(stdout, usage)
		return o, nil, nil, flag.ErrHelp
	}
	if o.json && o.structured {
		return o, nil, nil, usagef("--json and --structured exclude each other")
	}
	if o.raw && o.safe {
		return o, nil, nil, usagef("--raw and --safe exclude each other")
	}
	if o.timeout < 0 {
		return o, nil, nil, usagef("--timeout must not be negative")
	}
	return o, pos, server, nil
}

func checkArity(name string, a []string) error {
	switch name {
	case "tools", "discover", "ping", "raw", "script", "resources", "templates", "prompts":
		if len(a) > 0 {
			return usagef("%s takes no arguments (got %q)", name, a)
		}
	case "describe":
		if len(a) != 1 {
			return usagef("describe takes one TOOL")
		}
	case "call":
		if len(a) < 1 {
			return usagef("call needs a TOOL")
		}
	case "read":
		if len(a) != 1 {
			return usagef("read takes one URI")
		}
	case "prompt":
		if len(a) < 1 {
			return usagef("prompt needs a NAME")
		}
	case "complete":
		if len(a) < 3 || len(a) > 4 {
			return usagef("complete takes prompt NAME ARG [VALUE] or resource URITEMPLATE VAR [VALUE]")
		}
	default:
		return usagef("unknown command %q (try --help)", name)
	}
	return nil
}

// openServerStderr resolves --server-stderr. An *os.File stderr goes to the
// server as is, so its lines are not reordered through a copy goroutine.
func openServerStderr(where string, stderr io.Writer, locked io.Writer) (io.Writer, func(), error) {
	switch where {
	case "inherit", "":
		if f, ok := stderr.(*os.File); ok {
			return f, func() {}, nil
		}
		return locked, func() {}, nil
	case "discard":
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(where, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, usagef("--server-stderr: %v", err)
	}
	return f, func() { f.Close() }, nil
}

// exitCode maps an error to the exit status table.
func exitCode(err error) int {
	var ae *args.Error
	var ue *usageError
	var se *client.StartError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ae), errors.As(err, &ue):
		return exitProtocol
	case errors.As(err, &se), errors.Is(err, client.ErrClosed), errors.Is(err, client.ErrUnreachable),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return exitServer
	}
	// JSON-RPC error answers, protocol errors and anything unforeseen.
	return exitProtocol
}

// describeErr words an error for the one stderr line.
func describeErr(err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return timeoutMessage("no answer from the server", timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("%v (interrupted)", err)
	}
	var he *client.HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized {
		return err.Error() + "; the server wants a credential it accepts: give its bearer token with --token-file FILE (first line of FILE), or another scheme with --header 'Authorization: ...'"
	}
	return err.Error()
}

// timeoutMessage says which timeout fired and how to raise it: "no answer
// from the server within 45s (--timeout); raise it with --timeout 2m".
func timeoutMessage(what string, timeout time.Duration) string {
	return fmt.Sprintf("%s within %s (--timeout); raise it with --timeout %s", what, shortDuration(timeout), shortDuration(raisedTimeout(timeout)))
}

// raisedTimeout suggests a --timeout worth trying: twice the one that
// fired, rounded up to a whole minute (or second) so it is easy to type.
func raisedTimeout(d time.Duration) time.Duration {
	d *= 2
	switch {
	case d >= time.Minute:
		return (d + time.Minute - 1).Truncate(time.Minute)
	case d >= time.Second:
		return (d + time.Second - 1).Truncate(time.Second)
	}
	return d
}

// shortDuration prints 2m for 2m0s and 1h for 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
