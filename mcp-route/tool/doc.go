// Package tool is for writing mcp-route tools in Go: it speaks the tool side
// of the protocol in DESIGN.md ("Tools as executables"), so a tool is its
// definition and a handler.
//
//	package main
//
//	import (
//		"encoding/json"
//
//		"github.com/mcpipe/mcpipe/mcp-route/tool"
//	)
//
//	func main() {
//		tool.Main(tool.Definition{
//			Name:        "greet",
//			Description: "Say hello to someone.",
//			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
//		}, func(c *tool.Call) error {
//			var args struct{ Name string }
//			if err := c.Args(&args); err != nil {
//				return err
//			}
//			c.Textf("Hello, %s!\n", args.Name)
//			return nil
//		})
//	}
//
// # What Main does
//
// Run with --mcp-describe, the program prints its Definition as one JSON
// line (the MCP Tool object plus the optional "run" settings) and exits 0;
// an invalid Definition is reported on stderr with exit 2 instead.
// Definition.Validate applies the router's own parser (package tooldef), so
// a definition that passes is one mcp-route serves. --help
// prints the definition for a person. Run with no arguments, it is a call:
// it reads the arguments object from stdin up to EOF (empty means {}, at most
// MaxArgs bytes, anything but a JSON object is an error), runs the handler,
// and flushes what the handler wrote to stdout. Exit status:
//
//	0  the handler returned nil
//	1  the handler returned an error, or the arguments were unreadable;
//	   stderr's last line is "NAME: message", which mcp-route shows the caller
//	2  usage error, invalid definition, or the handler panicked
//
// A Call gives the handler its arguments (Args, Arg, RawArgs), its
// environment (Root for MCP_ROOT, ProtocolVersion, Getenv), a way to write
// the result in each of mcp-route's result modes (Text/Textf and Write for
// "text", JSON for "json", Result for "mcp"), Progress, which writes a
// progress line to fd 3 when mcp-route opened it and does nothing otherwise,
// Log, which sends a log record the same way, and Ask and Elicit, which
// ask the client's user or model and wait for the answer on fd 4 (or
// return mcp-route's refusal; ErrNoChannel without fd 4).
// Main installs no signal handlers: mcp-route ends a call that timed out or
// was cancelled with SIGTERM to its process group, and the default action
// ends the tool at once. Context is therefore context.Background() in an
// exec'd call; in a worker it is the request's (see Workers); under
// InvokeWith it is the caller's context.
//
// # Workers
//
// A tool whose definition says Run.Mode = ModeWorker is not run once per
// call: mcp-route keeps worker processes of it and sends them calls over a
// pipe, which saves the process start of every call (mcp-route/README.md,
// "Workers"). Main, Dispatch, Exec and ExecMany serve
// that protocol by themselves when the environment has MCP_WORKER=1 and the
// command line names nothing but the tool; a handler is written the same
// way for both modes.
//
// The protocol, one JSON object per line. Requests on stdin:
//
//	{"id":7,"tool":"greet","arguments":{...},"protocolVersion":"2025-06-18","progress":true}
//	{"cancel":7}
//	{"answer":7,"line":{"id":1,"result":{...}}}  the answer to a question of call 7
//
// answers on stdout, in any order when calls overlap:
//
//	{"id":7,"output":"..."}       what an exec'd call writes on stdout
//	{"id":7,"error":"greet: ..."}  the "NAME: message" an exec'd call ends its stderr with
//	{"id":7,"progress":{"progress":1,"total":4,"message":"..."}}
//	{"id":7,"channel":{"level":"info","data":"..."}}  Log and Ask
//
// Each request runs with a Call of its own: its
// arguments, its context (cancelled by {"cancel":ID}), its output buffer,
// progress lines only when the request asked for them, and an environment
// in which MCP_TOOL, MCP_PROTOCOL_VERSION and MCP_ARG_* are the request's
// (MCP_ARG_* from its arguments only) while everything else, MCP_ROOT
// included, is the worker's, set once when mcp-route started it. Nothing of
// one call is visible to the next. An id must be a number or a string;
// concurrent calls are run as they come (mcp-route sends at most
// run.concurrency at once). A call starts on the goroutine that read its
// request, which hands the reading on to another goroutine once the call
// has run for 250µs: so a quick call pays no hand-off, and the line after
// a call waits at most that long to be read. A line that is not a request, has no id or
// repeats one in flight is skipped with a message on stderr (it cannot be
// answered); a request for an unknown tool, or whose arguments are not an
// object, is answered with an error. A call's output is held in memory up
// to MaxWorkerOutput (or run.maxOutput, when larger); more fails the call,
// and so does output that is not valid UTF-8, which a JSON string cannot
// carry (mcp-route refuses it in a text result too).
//
// Stdout carries answers only. In the real process the worker moves the
// protocol to private descriptors first and points fd 1 at stderr and fd 0
// at /dev/null (Linux), so a stray fmt.Println in a handler or a library
// lands in mcp-route's log instead of corrupting the stream, and a read of
// os.Stdin cannot steal a request.
//
// A worker process runs with GOMAXPROCS 1 unless the GOMAXPROCS variable
// is set (in the tool's run.env): it mostly serves one call at a time, and a
// call waits on pipes and files more than it computes, so more processors
// would mostly add the scheduler's cost of waking and handing goroutines
// between them. Several calls at once still overlap their waits; a tool
// whose calls compute in parallel sets GOMAXPROCS. An exec'd call keeps the
// Go default.
//
// The worker exits 0 at EOF on stdin, once every call in flight is
// answered. A handler that panics gets its call answered with
// "NAME: panic: V" (the stack goes to stderr); then the worker stops
// reading, cancels its other calls, waits up to WorkerGrace for their
// answers and exits 2, so that mcp-route replaces a process whose state the
// panic may have broken: a panic fails its call and those running beside
// it, never a later one. When Process.Context ends (mcp-stock cancels it on
// SIGTERM) or answers can no longer be written, it stops the same way and
// exits 1. A read error on stdin ends it as EOF does, with exit status 1.
//
// Worker mode is opt-in, not this package's default, because a worker
// changes what a handler may assume: that the process is fresh for every
// call (package-level state, caches, leaked goroutines and descriptors
// outlive the call), that os.Exit or log.Fatal ends only this call, that
// os.Getenv("MCP_ARG_...") holds this call's arguments (use c.Getenv), and
// that mcp-route's SIGTERM stops a handler that ignores c.Context(). A
// handler that keeps its state in the Call and honours the context, as
// every handler written against this package should, is a worker by adding
//
//	Run: &tool.Run{Mode: tool.ModeWorker}
//
// to its definition; the binary already serves both modes, so going back is
// the same one-line change.
//
// # Many tools in one binary
//
// Dispatch serves several tools from one multi-call binary: the tool is the
// one named by the program's base name (argv[0], so a link per tool works)
// or else by its first argument (`prog TOOL --mcp-describe`).
//
// # Tests
//
// Invoke and InvokeWith run a tool's handler in-process the way a process
// would run it, with the arguments as bytes, an explicit environment and
// buffers for stdout and stderr, and return the exit status. In-process there
// is no working directory of the call's own, so a handler resolves relative
// paths against c.Root(), never the process's working directory.
//
// A Call is for the handler it was given to; its methods are safe for
// concurrent use by goroutines the handler starts and waits for.
package tool
