// gosdk-server is a small MCP server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), for mcp-call's interop tests: a
// server we did not write, speaking stdio, or Streamable HTTP with --http.
//
// Tools: greet(name string) → "Hello, NAME!"; add(a, b integer) →
// structuredContent {"sum": a+b}; fail(reason string) → an isError result;
// slow(steps integer) → one notifications/progress per step (10ms apart),
// then "done N"; region(region string, query string) → "REGION: QUERY", with
// region mirrored into the Mcp-Param-Region header (x-mcp-header), which the
// SDK checks against the body in 2026-07-28; pid() → the server's process id,
// as text and structuredContent {"pid": N}, so that a test can kill the
// process serving it (the one tool annotated readOnlyHint); addtool(name string) → adds a tool NAME (answering
// "NAME here"), which makes the SDK announce a list change to every session
// (notifications/tools/list_changed; in 2026-07-28 on its
// subscriptions/listen stream); mixed() → one content block of each type
// (text, image, audio, resource_link, embedded resource) and structuredContent
// {"kinds": 5}; roots() → asks the client for its roots (roots/list, a
// server-to-client request; legacy sessions only) and returns how many, or an
// isError with the client's error.
//
// Flags for supervision tests: -announce writes "gosdk-server: serving as
// PID" to stderr at start; -require FILE makes it exit 3 at once, saying so
// on stderr, when FILE does not exist (a server that cannot start until
// FILE is back); -spawn starts a child of its own (sleep 3600, its stdio on
// /dev/null, never waited for), as servers behind a launcher have;
// -spawn-stdio does the same with the child holding the server's own stdin,
// stdout and stderr (as a launcher's child does), so that they stay open
// after the server itself dies;
// -late-tool NAME adds a tool NAME when the first subscriptions/listen
// arrives and lets the listen take effect only 100ms later, after the SDK
// has announced the change (to the sessions subscribed then): a change that
// lands between a client's tools/list and its listen, which the client sees
// only by listing again once the listen is acknowledged.
//
// Flags: -legacy restricts the server to the legacy revisions (2025-11-25 and
// older), so clients must fall back to the initialize handshake. --http ADDR
// serves the SDK's StreamableHTTPHandler at /mcp on ADDR (port 0 picks one)
// and prints "listening http://HOST:PORT/mcp" on stdout once it accepts;
// --stateless makes it stateless (no Mcp-Session-Id; GET and DELETE get 405).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

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

type slowIn struct {
	Steps int `json:"steps" jsonschema:"how many progress steps"`
}

type addToolIn struct {
	Name string `json:"name" jsonschema:"name of the tool to add"`
}

type pidOut struct {
	PID int `json:"pid"`
}

type mixedOut struct {
	Kinds int `json:"kinds"`
}

type regionIn struct {
	Region string `json:"region"`
	Query  string `json:"query"`
}

func main() {
	legacy := flag.Bool("legacy", false, "speak only the legacy revisions")
	httpAddr := flag.String("http", "", "serve Streamable HTTP at /mcp on this address instead of stdio")
	stateless := flag.Bool("stateless", false, "with --http: stateless, no sessions")
	announce := flag.Bool("announce", false, "say on stderr which process serves")
	require := flag.String("require", "", "exit 3 at once unless this `FILE` exists")
	spawn := flag.Bool("spawn", false, "start a child process that outlives nothing on its own: sleep 3600")
	spawnStdio := flag.Bool("spawn-stdio", false, "as -spawn, the child holding this server's stdin, stdout and stderr")
	lateTool := flag.String("late-tool", "", "add a tool `NAME` just before the first subscriptions/listen takes effect")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gosdk-server: ")
	if *require != "" {
		if _, err := os.Stat(*require); err != nil {
			log.Printf("cannot start: %s is missing", *require)
			os.Exit(3)
		}
	}
	if *announce {
		log.Printf("serving as %d", os.Getpid())
	}
	if *spawn || *spawnStdio {
		child := exec.Command("sleep", "3600") // stdio nil: /dev/null
		if *spawnStdio {
			child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
		}
		if err := child.Start(); err != nil {
			log.Fatal(err)
		}
	}

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
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Report progress STEPS times, then answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
				}
				select {
				case <-time.After(10 * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done %d", in.Steps)}}}, nil, nil
		})
	regionSchema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}},"required":["region","query"]}`)
	mcp.AddTool(s, &mcp.Tool{Name: "region", Description: "Run QUERY in REGION.", InputSchema: regionSchema},
		func(_ context.Context, _ *mcp.CallToolRequest, in regionIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Region + ": " + in.Query}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The server's process id.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, pidOut, error) {
			pid := os.Getpid()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(pid)}}}, pidOut{PID: pid}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "addtool", Description: "Add a tool NAME that answers \"NAME here\"."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addToolIn) (*mcp.CallToolResult, any, error) {
			name := in.Name
			s.AddTool(&mcp.Tool{Name: name, Description: "Added at run time.", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " here"}}}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + name}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Ask the client for its roots."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			//lint:ignore SA1019 the interop tests exercise roots/list on purpose while clients still serve it
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("roots/list: %w", err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d roots", len(res.Roots))}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "mixed", Description: "One content block of each type."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, mixedOut, error) {
			png := []byte("\x89PNG\r\n\x1a\n")
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "five kinds"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///mixed.txt", Name: "mixed.txt", MIMEType: "text/plain"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///embedded.txt", MIMEType: "text/plain", Text: "embedded"}},
			}}, mixedOut{Kinds: 5}, nil
		})
	if *lateTool != "" {
		var once sync.Once
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "subscriptions/listen" {
					once.Do(func() {
						name := *lateTool
						s.AddTool(&mcp.Tool{Name: name, Description: "Added before the listen.", InputSchema: json.RawMessage(`{"type":"object"}`)},
							func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
								return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " here"}}}, nil
							})
						time.Sleep(100 * time.Millisecond)
					})
				}
				return next(ctx, method, req)
			}
		})
	}
	if *httpAddr != "" {
		serveHTTP(s, *httpAddr, *stateless)
		return
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}

// serveHTTP serves s over Streamable HTTP until the process is killed.
func serveHTTP(s *mcp.Server, addr string, stateless bool) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless, PropagateRequestCancellation: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
