// Package fakeserver is a small stdio MCP server for mcp-call's tests. It
// speaks both eras through codec and can misbehave on purpose, one way per
// mode, so that era probing and error paths can be tested without a real
// server.
//
// Modes:
//
//	dual            server/discover answers (2026-07-28 and 2025-11-25); initialize works
//	legacy          server/discover → -32601 method not found
//	legacy-invalid  server/discover → -32600 server not initialized
//	legacy-params   server/discover → -32602 invalid params
//	legacy-silent   server/discover gets no answer
//	legacy-exit     the server exits when it sees server/discover
//	unsupported     the first server/discover → -32022, later ones answer
//	noise           dual, and a line that is not JSON-RPC before every answer
//	                after the handshake (one during it fails the handshake)
//	hostile         dual, but its tools attack the terminal: see Hostile
//
// Tools: echo(text string), add(a integer, b integer), fail() → isError,
// structured() → structuredContent {"n":42}, progress() → two
// notifications/progress when the call has a progressToken, ping_client() →
// pings the client and reports its answer, ask_roots() → sends roots/list to
// the client and reports its answer, crash() → the server exits, hang() →
// one progress notification (with a token) and never an answer, and
// filler_1..filler_3. tools/list returns two tools per page.
//
// The protocol itself (eras, ping, batches, cancellation, shutdown) is
// codec/server's, the core mcp-route serves through: the fake differs from
// a real server only where a mode says so. Serve is not safe for concurrent
// use of one reader and writer.
package fakeserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/server"
)

var serverInfo = codec.Implementation{Name: "fakeserver", Version: "1.0.0"}

// ErrExit is returned by Serve when the mode or a tool made the server quit.
var ErrExit = errors.New("fakeserver: exit requested")

func tools() []codec.Tool {
	obj := func(props string, req ...string) json.RawMessage {
		r, _ := json.Marshal(req)
		if req == nil {
			r = []byte("[]")
		}
		return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s,"additionalProperties":false}`, props, r))
	}
	return []codec.Tool{
		{Name: "echo", Description: "Echo text back.", InputSchema: obj(`"text":{"type":"string","description":"What to echo."}`, "text")},
		{Name: "add", Description: "Add two integers.", InputSchema: obj(`"a":{"type":"integer"},"b":{"type":"integer"}`, "a", "b")},
		{Name: "fail", Description: "Always fails.", InputSchema: obj(``)},
		{Name: "structured", Description: "Structured output.", InputSchema: obj(``), OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		{Name: "progress", Description: "Reports progress.", InputSchema: obj(``)},
		{Name: "ping_client", Description: "Pings the client.", InputSchema: obj(``)},
		{Name: "ask_roots", Description: "Asks the client for roots.", InputSchema: obj(``)},
		{Name: "crash", Description: "Exits the server.", InputSchema: obj(``)},
		{Name: "hang", Description: "Reports progress once, then never answers.", InputSchema: obj(``)},
		{Name: "filler_1", Description: "Filler.", InputSchema: obj(``)},
		{Name: "filler_2", Description: "Filler.", InputSchema: obj(``)},
		{Name: "filler_3", Description: "Filler.", InputSchema: obj(``)},
	}
}

// Hostile is the text hostile mode puts in a tool description, a tool
// result and an isError message: control sequences a terminal would obey
// (clear the screen, set the title, write the clipboard with OSC 52, a
// hyperlink, a C1 CSI, a bell, a carriage return), with a tab and a
// newline that are harmless.
const Hostile = "clear\x1b[2J\x1b[H title\x1b]0;pwned\x07 clip\x1b]52;c;cm0gLXJmIH4=\x07 " +
	"link\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ c1\u009b31m bell\x07 cr\rtab\tnl\nend"

// HostileName is the name of hostile mode's third tool: ESC [8m hides
// what follows on a terminal.
const HostileName = "evil\x1b[8mhidden"

// hostileTools are hostile mode's tools: hostile() → Hostile as text (and
// as its description), hostile_fail() → Hostile as isError, and
// HostileName() → "ok".
func hostileTools() []codec.Tool {
	empty := json.RawMessage(`{"type":"object"}`)
	return []codec.Tool{
		{Name: "hostile", Description: Hostile, InputSchema: empty},
		{Name: "hostile_fail", Description: "Fails with Hostile.", InputSchema: empty},
		{Name: HostileName, Description: "Its name hides.", InputSchema: empty},
	}
}

const pageSize = 2

type fake struct {
	mode     string
	conv     *server.Server
	mu       sync.Mutex
	discover int // server/discover requests seen
}

// Serve runs the server until r ends (nil) or the mode makes it quit
// (ErrExit).
func Serve(r io.Reader, w io.Writer, mode string) error {
	switch mode {
	case "dual", "legacy", "legacy-invalid", "legacy-params", "legacy-silent", "legacy-exit", "unsupported", "noise", "hostile":
	default:
		return fmt.Errorf("fakeserver: unknown mode %q", mode)
	}
	f := &fake{mode: mode}
	f.conv = server.New(server.Options{
		ServerInfo:   serverInfo,
		Capabilities: codec.ServerCapabilities{Tools: &codec.ToolsCapability{}},
	})
	f.conv.HandleFunc(codec.MethodDiscover, f.handleDiscover)
	f.conv.HandleFunc(codec.MethodToolsList, f.list)
	f.conv.HandleFunc(codec.MethodToolsCall, f.call)
	if mode == "noise" {
		w = noisy{w: w, settled: new(bool)}
	}
	return f.conv.Serve(context.Background(), server.NewStreamConn(r, w, 0))
}

// noisy writes a line that is not JSON-RPC (a JSON string) before every
// message after the first, the answer that settles the handshake (a server
// that is noisy during the handshake fails it at once); a real server would
// never do it.
type noisy struct {
	w       io.Writer
	settled *bool
}

func (n noisy) Write(p []byte) (int, error) {
	if *n.settled {
		if _, err := io.WriteString(n.w, "\"this is not JSON\"\n"); err != nil {
			return 0, err
		}
	}
	*n.settled = true
	return n.w.Write(p)
}

func (f *fake) list(_ context.Context, req *server.Request) (any, error) {
	var p codec.ListToolsParams
	_ = json.Unmarshal(req.Params, &p)
	all := tools()
	if f.mode == "hostile" {
		all = hostileTools()
	}
	start := 0
	if p.Cursor != "" {
		if _, err := fmt.Sscanf(p.Cursor, "page-%d", &start); err != nil || start < 0 || start > len(all) {
			return nil, codec.Errorf(codec.CodeInvalidParams, "bad cursor %q", p.Cursor)
		}
	}
	end := min(start+pageSize, len(all))
	res := codec.ListToolsResult{Tools: all[start:end]}
	if end < len(all) {
		res.NextCursor = fmt.Sprintf("page-%d", end)
	}
	if codec.IsModernRevision(req.Revision) {
		ttl := int64(0)
		res.TTLMs = &ttl
		res.CacheScope = codec.CacheScopePublic
	}
	return res, nil
}

func (f *fake) handleDiscover(_ context.Context, req *server.Request) (any, error) {
	f.mu.Lock()
	f.discover++
	first := f.discover == 1
	f.mu.Unlock()
	legacyNow := f.conv.Session().Revision() == ""
	switch {
	case f.mode == "legacy-exit" && legacyNow:
		f.conv.Abort(ErrExit)
		return nil, server.ErrNoResponse
	case f.mode == "legacy-silent" && legacyNow:
		return nil, server.ErrNoResponse
	case f.mode == "legacy" && legacyNow:
		return nil, codec.Errorf(codec.CodeMethodNotFound, "method not found: server/discover")
	case f.mode == "legacy-invalid" && legacyNow:
		return nil, codec.Errorf(codec.CodeInvalidRequest, "server not initialized")
	case f.mode == "legacy-params" && legacyNow:
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid request parameters")
	case f.mode == "unsupported" && first:
		return nil, codec.UnsupportedVersionError("1999-01-01", []string{codec.Rev20260728})
	}
	return codec.DiscoverResult{
		ResultType:        codec.ResultTypeComplete,
		SupportedVersions: []string{codec.Rev20260728, codec.Rev20251125},
		Capabilities:      codec.ServerCapabilities{Tools: &codec.ToolsCapability{}},
		Instructions:      "A fake server for tests: <tools> & more.",
		TTLMs:             0,
		CacheScope:        codec.CacheScopePublic,
	}, nil
}

func text(s string) *codec.CallToolResult { return codec.TextResult(s) }

func (f *fake) call(ctx context.Context, req *server.Request) (any, error) {
	var p codec.CallToolParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
	}
	var args map[string]any
	_ = json.Unmarshal(p.Arguments, &args)
	switch p.Name {
	case "echo":
		t, _ := args["text"].(string)
		return text(t), nil
	case "add":
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		return text(fmt.Sprint(a + b)), nil
	case "fail":
		return codec.ErrorResult("it failed"), nil
	case "structured":
		res := text(`{"n":42}`)
		res.StructuredContent = json.RawMessage(`{"n":42}`)
		return res, nil
	case "progress":
		for i := 1; i <= 2; i++ {
			total := 2.0
			if err := req.Progress(codec.ProgressParams{Progress: float64(i), Total: &total, Message: fmt.Sprintf("step %d", i)}); err != nil {
				return nil, err
			}
		}
		return text("done"), nil
	case "ping_client", "ask_roots":
		method := codec.MethodPing
		if p.Name == "ask_roots" {
			method = "roots/list"
		}
		ans, err := req.Call(ctx, method, nil)
		if err != nil {
			return nil, err
		}
		if ans.Error != nil {
			return text(fmt.Sprintf("client answered error %d", ans.Error.Code)), nil
		}
		return text("client answered " + string(ans.Result)), nil
	case "crash":
		f.conv.Abort(ErrExit)
		return nil, server.ErrNoResponse
	case "hang":
		if err := req.Progress(codec.ProgressParams{Progress: 0, Message: "hanging"}); err != nil {
			return nil, err
		}
		return nil, server.ErrNoResponse
	case "hostile":
		return text(Hostile), nil
	case "hostile_fail":
		return codec.ErrorResult(Hostile), nil
	case HostileName:
		return text("ok"), nil
	case "filler_1", "filler_2", "filler_3":
		return text(p.Name), nil
	}
	return nil, codec.Errorf(codec.CodeInvalidParams, "unknown tool %q", p.Name)
}
