// gosdk-server is a small MCP server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), for mcp-call's interop tests: a
// server we did not write, speaking stdio.
//
// Tools: greet(name string) → "Hello, NAME!"; add(a, b integer) →
// structuredContent {"sum": a+b}; fail(reason string) → an isError result.
//
// Flags: -legacy restricts the server to the legacy revisions (2025-11-25 and
// older), so clients must fall back to the initialize handshake.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type addIn struct {
	A int `json:"a" jsonschema:"first addend"`
	B int `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type failIn struct {
	Reason string `json:"reason,omitempty" jsonschema:"what to fail with"`
}

func main() {
	legacy := flag.Bool("legacy", false, "speak only the legacy revisions")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gosdk-server: ")

	opts := &mcp.ServerOptions{Instructions: "A Go SDK test server."}
	if *legacy {
		opts.SupportedProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-server", Version: "1.0.0"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone by name."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Hello, %s!", in.Name)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two integers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
			if in.Reason == "" {
				in.Reason = "failed on purpose"
			}
			return nil, nil, errors.New(in.Reason)
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}
