// Command hello is a tool for mcp-route, written by `mcp-route new`.
//
// It imports the module github.com/mcpipe/mcpipe, which is not on the Go
// module proxy (`go get` cannot fetch it). Inside a checkout of mcpipe (or a
// module that replaces it by one), build it from the tools directory, the
// one that holds src/:
//
//	go build -o hello ./src/hello
//
// Anywhere else, make this directory a module of its own that uses a
// checkout at /path/to/mcpipe, then build it into the tools directory:
//
//	go mod init hello
//	go mod edit -replace github.com/mcpipe/mcpipe=/path/to/mcpipe
//	go mod tidy
//	go build -o ../../hello .
//
// mcp-route asks the binary for its
// definition with `hello --mcp-describe`; package tool answers that, reads
// the arguments from stdin and turns a returned error into exit status 1.
// The definition says run.mode "worker", so mcp-route keeps the binary
// running and sends it calls over a pipe (package tool serves that too):
// keep per-call state in the handler and the Call, never in globals.
package main

import (
	"encoding/json"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

var definition = tool.Definition{
	Name:        "hello",
	Description: "Say hello to someone. (Written by mcp-route new: say here what hello does, for the model that will call it.)",
	InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "Who to greet (default: world)."}
		},
		"additionalProperties": false
	}`),
	Annotations: &codec.ToolAnnotations{
		ReadOnlyHint:   codec.Bool(true),
		IdempotentHint: codec.Bool(true),
		OpenWorldHint:  codec.Bool(false),
	},
	Run: &tool.Run{Mode: tool.ModeWorker},
}

func main() {
	tool.Main(definition, func(c *tool.Call) error {
		var args struct {
			Name string `json:"name"`
		}
		if err := c.Args(&args); err != nil {
			return err
		}
		if args.Name == "" {
			args.Name = "world"
		}
		c.Progress(1, 1, "greeting")
		c.Textf("Hello, %s!\n", args.Name)
		return nil
	})
}
