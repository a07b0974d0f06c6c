package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
)

// MaxArgs is the most bytes of arguments a call reads from stdin; more is an
// error. mcp-route's own frame cap (16 MiB by default) is smaller.
const MaxArgs = 64 << 20

// Handler runs one call. Returning an error fails the call: its message
// goes to stderr and the exit status is 1.
type Handler func(c *Call) error

// Tool is a definition and the handler that implements it.
type Tool struct {
	Definition
	Handler Handler
}

// Process is what a tool process gets from the system; Exec and ExecMany
// act on it, so tests can give them buffers instead of the real thing.
type Process struct {
	Args     []string            // argv, the program name first
	Stdin    io.Reader           // nil: empty
	Stdout   io.Writer           // nil: discarded
	Stderr   io.Writer           // nil: discarded
	Progress io.Writer           // the progress channel (fd 3); nil: none
	Answers  io.Reader           // the answers to the tool's questions (fd 4); nil: none
	Getenv   func(string) string // nil: an empty environment
	Context  context.Context     // nil: context.Background()
}

// OS returns the Process of the running program: os.Args, the standard
// files, fd 3 when mcp-route opened it for progress, and os.Getenv.
func OS() Process {
	p := Process{
		Args:    os.Args,
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Getenv:  os.Getenv,
		Context: context.Background(),
	}
	if f := progressFile(); f != nil {
		p.Progress = f
	}
	if f := answerFile(); f != nil {
		p.Answers = f
	}
	return p
}

// Main runs the program as the tool def implemented by h, and exits.
func Main(def Definition, h Handler) {
	os.Exit(Exec(OS(), Tool{def, h}))
}

// Dispatch runs the program as whichever of tools its base name or first
// argument names (see ExecMany), and exits.
func Dispatch(tools ...Tool) {
	os.Exit(ExecMany(OS(), tools))
}

// Exec runs p as tool t, whatever p's program name, and returns the exit
// status: with no arguments it is a call, or with MCP_WORKER=1 a worker
// that serves t under whatever tool name a request gives (see the package
// doc); with --mcp-describe it prints the definition; with --help, a
// description for people.
func Exec(p Process, t Tool) int {
	p = p.withDefaults()
	var rest []string
	if len(p.Args) > 0 {
		rest = p.Args[1:]
	}
	if isWorker(p, rest) {
		return serveOne(p, t)
	}
	return run(p, t, rest)
}

// ExecMany runs p as one of tools and returns the exit status. The tool is
// the one named by the base name of p.Args[0] (a link named after the tool),
// else by p.Args[1] (`prog TOOL [--mcp-describe]`). When neither names a tool
// it lists the tools: on stdout with exit 0 for --help, else on stderr with
// exit 2. Names must be unique.
//
// With MCP_WORKER=1 and no argument after the tool (or no argument at all)
// it is a worker that serves every one of tools, each request picking one
// by name; a request naming none of them goes to the tool the command line
// chose, as MCP_TOOL does in exec mode, and is an error when it chose none.
func ExecMany(p Process, tools []Tool) int {
	p = p.withDefaults()
	prog := "tool"
	if len(p.Args) > 0 {
		prog = filepath.Base(p.Args[0])
	}
	byName := make(map[string]Tool, len(tools))
	for _, t := range tools {
		if _, dup := byName[t.Name]; dup {
			fmt.Fprintf(p.Stderr, "%s: tool %q defined twice\n", prog, t.Name)
			return 2
		}
		byName[t.Name] = t
	}
	if t, ok := byName[prog]; ok {
		if isWorker(p, p.Args[1:]) {
			return serveMany(p, byName, &t)
		}
		return run(p, t, p.Args[1:])
	}
	if len(p.Args) > 1 {
		if t, ok := byName[p.Args[1]]; ok {
			if isWorker(p, p.Args[2:]) {
				return serveMany(p, byName, &t)
			}
			return run(p, t, p.Args[2:])
		}
	}
	if len(p.Args) <= 1 && isWorker(p, nil) {
		return serveMany(p, byName, nil)
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	usage := fmt.Sprintf("usage: %s TOOL [--mcp-describe]\ntools: %s\n", prog, strings.Join(names, " "))
	if len(p.Args) > 1 && (p.Args[1] == "--help" || p.Args[1] == "-h") {
		io.WriteString(p.Stdout, usage)
		return 0
	}
	if len(p.Args) > 1 {
		fmt.Fprintf(p.Stderr, "%s: unknown tool %q\n", prog, p.Args[1])
	}
	io.WriteString(p.Stderr, usage)
	return 2
}

// Invocation is a call made in-process by InvokeWith.
type Invocation struct {
	Args     []byte            // the arguments object; empty means {}
	Env      map[string]string // the whole environment of the call
	Stdout   io.Writer         // nil: discarded
	Stderr   io.Writer         // nil: discarded
	Progress io.Writer         // nil: no progress channel
	Context  context.Context   // nil: context.Background()
}

// Invoke calls t's handler in-process with the arguments args, the
// environment env (nothing else: set MCP_ROOT for a tool that touches
// files) and buffers for stdout and stderr, exactly as a process would run it,
// and returns the exit status.
func Invoke(t Tool, args []byte, env map[string]string, stdout, stderr io.Writer) int {
	return InvokeWith(t, Invocation{Args: args, Env: env, Stdout: stdout, Stderr: stderr})
}

// InvokeWith is Invoke with a progress writer and a context.
func InvokeWith(t Tool, inv Invocation) int {
	env := inv.Env
	p := Process{
		Args:     []string{t.Name},
		Stdin:    bytes.NewReader(inv.Args),
		Stdout:   inv.Stdout,
		Stderr:   inv.Stderr,
		Progress: inv.Progress,
		Getenv:   func(k string) string { return env[k] },
		Context:  inv.Context,
	}
	return call(p.withDefaults(), t)
}

// Describe returns the document --mcp-describe prints (without the
// newline), after checking the definition.
func Describe(def Definition) ([]byte, error) {
	if err := def.Validate(); err != nil {
		return nil, fmt.Errorf("invalid definition of %q: %w", def.Name, err)
	}
	return def.MarshalJSON()
}

func (p Process) withDefaults() Process {
	if p.Stdin == nil {
		p.Stdin = strings.NewReader("")
	}
	if p.Stdout == nil {
		p.Stdout = io.Discard
	}
	if p.Stderr == nil {
		p.Stderr = io.Discard
	}
	if p.Getenv == nil {
		p.Getenv = func(string) string { return "" }
	}
	if p.Context == nil {
		p.Context = context.Background()
	}
	return p
}

func run(p Process, t Tool, rest []string) int {
	switch {
	case len(rest) == 0:
		return call(p, t)
	case len(rest) == 1 && rest[0] == "--mcp-describe":
		b, err := Describe(t.Definition)
		if err != nil {
			fmt.Fprintf(p.Stderr, "%s: %v\n", t.Name, err)
			return 2
		}
		p.Stdout.Write(append(b, '\n'))
		return 0
	case len(rest) == 1 && (rest[0] == "--help" || rest[0] == "-h"):
		help(p.Stdout, t.Definition)
		return 0
	}
	fmt.Fprintf(p.Stderr, "%s: unexpected argument %q: a tool reads its arguments as JSON on stdin (--help, --mcp-describe)\n", t.Name, rest[0])
	return 2
}

func help(w io.Writer, d Definition) {
	fmt.Fprintf(w, "%s: %s\n\n", d.Name, d.Description)
	t := d.MCP()
	var in bytes.Buffer
	if json.Indent(&in, t.InputSchema, "  ", "  ") == nil {
		fmt.Fprintf(w, "Arguments (a JSON object on stdin):\n  %s\n\n", in.String())
	}
	fmt.Fprintf(w, "An MCP tool for mcp-route: --mcp-describe prints its definition.\n"+
		"Exit status: 0 ok, 1 the call failed (message on stderr), 2 usage error.\n")
}

// call runs the handler once; the exit status is the process's.
func call(p Process, t Tool) int {
	name := t.Name
	if n := p.Getenv(EnvTool); n != "" {
		name = n
	}
	args, err := readArgs(p.Stdin)
	if err != nil {
		fmt.Fprintf(p.Stderr, "%s: %v\n", name, err)
		return 1
	}
	out := bufio.NewWriter(p.Stdout)
	c := &Call{
		ctx:      p.Context,
		name:     t.Name,
		args:     args,
		env:      p.Getenv,
		progress: p.Progress,
		channel:  p.Progress,
		stdout:   out,
		stderr:   p.Stderr,
	}
	if p.Answers != nil {
		c.answers = newLineAnswers(p.Answers)
	}
	panicked, herr := runHandler(t, c, p.Stderr)
	if panicked || errors.Is(herr, errNoHandler) {
		fmt.Fprintf(p.Stderr, "%s: %v\n", name, herr)
		return 2
	}
	c.mu.Lock()
	ferr := out.Flush()
	c.mu.Unlock()
	switch {
	case herr != nil:
		fmt.Fprintf(p.Stderr, "%s: %v\n", name, herr)
		return 1
	case ferr != nil:
		fmt.Fprintf(p.Stderr, "%s: writing the result: %v\n", name, ferr)
		return 1
	}
	return 0
}

var errNoHandler = errors.New("no handler")

// runHandler runs t's handler on c and returns its error. When the handler
// panics, its stack goes to stderr (so that the caller's "NAME: panic: V"
// is the last line) and panicked is set.
func runHandler(t Tool, c *Call, stderr io.Writer) (panicked bool, err error) {
	if t.Handler == nil {
		return false, errNoHandler
	}
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr, "%s\n", debug.Stack())
			panicked, err = true, fmt.Errorf("panic: %v", v)
		}
	}()
	return false, t.Handler(c)
}

var errNotObject = errors.New("the arguments on stdin are not a JSON object")

func readArgs(r io.Reader) (json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxArgs+1))
	if err != nil {
		return nil, fmt.Errorf("reading the arguments: %w", err)
	}
	if len(b) > MaxArgs {
		return nil, fmt.Errorf("the arguments on stdin exceed %d bytes", MaxArgs)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' || !json.Valid(b) {
		return nil, errNotObject
	}
	return b, nil
}
