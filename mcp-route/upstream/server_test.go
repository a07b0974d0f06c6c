package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/server"
)

// The test binary is also the upstream server of these tests: run as
// "BINARY upstream-test-server MODE DIR", TestMain serves MCP on
// stdin/stdout instead.
// Modes: "dual" (both eras), "legacy" (server/discover is -32601, so the
// client falls back to initialize), "hang" (reads its stdin, never
// answers), "exit" (writes "boom" to stderr and exits 3), "deaf" (on its
// first start only, stops reading its stdin at the first tools/call; later
// starts serve as "dual"), "slowread" (reads its stdin 4 KiB every 10ms),
// "chatty" (first writes 1000 lines of 3 KB, "chatter N xxx...", to its
// stderr, then serves as "dual").
// DIR is where it leaves notes: "pids" (one line per start),
// "started-slow", "cancelled", "child" (the pid of a child it started).
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "upstream-test-server" {
		os.Exit(testServer(os.Args[2], os.Args[3]))
	}
	os.Exit(m.Run())
}

func note(dir, name, text string) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		fmt.Fprintln(f, text)
		f.Close()
	}
}

func testServer(mode, dir string) int {
	note(dir, "pids", strconv.Itoa(os.Getpid()))
	switch mode {
	case "hang":
		io.Copy(io.Discard, os.Stdin)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "boom")
		return 3
	case "chatty":
		pad := strings.Repeat("x", 3000)
		for i := range 1000 {
			fmt.Fprintf(os.Stderr, "chatter %d %s\n", i, pad)
		}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	var mu sync.Mutex
	tools := []codec.Tool{
		{Name: "echo", Description: "Echo text.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "structured", Description: "Structured output and an image.", InputSchema: obj, OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &codec.ToolAnnotations{ReadOnlyHint: codec.Bool(true)}},
		{Name: "fail", Description: "isError.", InputSchema: obj},
		{Name: "progress", Description: "Two progress notifications.", InputSchema: obj},
		{Name: "slow", Description: "Waits until cancelled.", InputSchema: obj},
		{Name: "sample", Description: "Asks the client for a sampling.", InputSchema: obj},
		{Name: "change", Description: "Adds a tool and says so.", InputSchema: obj},
		{Name: "child", Description: "Starts a child that sleeps.", InputSchema: obj},
		{Name: "crash", Description: "Exits at once.", InputSchema: obj},
		{Name: "bad name", Description: "A name with a space.", InputSchema: obj},
		{Name: strings.Repeat("x", 61), Description: "Too long once prefixed.", InputSchema: obj},
	}
	conv := server.New(server.Options{
		ServerInfo:   codec.Implementation{Name: "testupstream", Version: "1"},
		Capabilities: codec.ServerCapabilities{Tools: &codec.ToolsCapability{ListChanged: true}},
	})
	if mode == "legacy" {
		conv.HandleFunc(codec.MethodDiscover, func(context.Context, *server.Request) (any, error) {
			return nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: server/discover")
		})
	}
	conv.HandleFunc(codec.MethodToolsList, func(context.Context, *server.Request) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		return codec.ListToolsResult{Tools: append([]codec.Tool(nil), tools...)}, nil
	})
	conv.HandleFunc(codec.MethodToolsCall, func(ctx context.Context, req *server.Request) (any, error) {
		var p codec.CallToolParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
		}
		switch p.Name {
		case "echo":
			var a struct{ Text string }
			json.Unmarshal(p.Arguments, &a)
			return codec.TextResult(a.Text), nil
		case "structured":
			return &codec.CallToolResult{
				Content: []codec.Content{
					codec.TextContent(`{"n":42}`),
					{Type: codec.ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"},
				},
				StructuredContent: json.RawMessage(`{"n":42}`),
			}, nil
		case "fail":
			return codec.ErrorResult("it failed"), nil
		case "progress":
			tok, _ := req.ProgressToken()
			for i := 1; i <= 2; i++ {
				req.Progress(codec.ProgressParams{Progress: float64(i), Message: "step " + strconv.Itoa(i)})
			}
			return codec.TextResult("done; my token was " + string(tok)), nil
		case "slow":
			note(dir, "started-slow", "1")
			<-ctx.Done()
			note(dir, "cancelled", context.Cause(ctx).Error())
			return nil, server.ErrNoResponse
		case "sample":
			ans, err := req.Call(ctx, "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
			if err != nil {
				return codec.TextResult("no answer: " + err.Error()), nil
			}
			if ans.Error != nil {
				return codec.TextResult(fmt.Sprintf("client answered error %d: %s", ans.Error.Code, ans.Error.Message)), nil
			}
			return codec.TextResult("client answered " + string(ans.Result)), nil
		case "change":
			mu.Lock()
			tools = append(tools, codec.Tool{Name: "added", Description: "Added later.", InputSchema: obj})
			mu.Unlock()
			conv.ListChanged(codec.MethodToolsListChanged)
			return codec.TextResult("changed"), nil
		case "crash":
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(2)
		case "child":
			cmd := exec.Command("sleep", "1000")
			if err := cmd.Start(); err != nil {
				return codec.ErrorResult(err.Error()), nil
			}
			note(dir, "child", strconv.Itoa(cmd.Process.Pid))
			return codec.TextResult("started"), nil
		}
		return nil, codec.Errorf(codec.CodeInvalidParams, "unknown tool %q", p.Name)
	})
	var in io.Reader = os.Stdin
	switch mode {
	case "deaf":
		if b, _ := os.ReadFile(filepath.Join(dir, "pids")); strings.Count(string(b), "\n") == 1 {
			in = deafReader{os.Stdin}
		}
	case "slowread":
		in = slowReader{os.Stdin}
	}
	if err := conv.Serve(context.Background(), server.NewStreamConn(in, os.Stdout, 0)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// deafReader stops reading for good once it has read a tools/call: what
// was read with it is lost, and the writer's next frames fill the pipe.
type deafReader struct{ r io.Reader }

func (d deafReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	for bytes.Contains(p[:n], []byte(`"tools/call"`)) {
		time.Sleep(time.Hour) // a timer: the runtime sees no deadlock
	}
	return n, err
}

// slowReader reads at most 4 KiB every 10ms: a slow reader, but one that
// keeps reading.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(10 * time.Millisecond)
	return s.r.Read(p[:min(len(p), 4<<10)])
}
