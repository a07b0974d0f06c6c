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
// "text", JSON for "json", Result for "mcp"), and Progress, which writes a
// progress line to fd 3 when mcp-route opened it and does nothing otherwise.
// Main installs no signal handlers: mcp-route ends a call that timed out or
// was cancelled with SIGTERM to its process group, and the default action
// ends the tool at once. Context is therefore context.Background() in a
// process; under InvokeWith it is the caller's context.
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
