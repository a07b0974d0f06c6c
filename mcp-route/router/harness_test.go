package router

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// recvTimeout bounds every wait for a server line: a hung server fails the
// test instead of hanging it.
const recvTimeout = 15 * time.Second

// tool writes an executable sh script NAME with an optional sidecar
// definition (def == "" writes none).
func tool(t *testing.T, dir, name, body, def string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if def != "" {
		if err := os.WriteFile(p+".json", []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// simpleDef is a definition with a description and the given run object.
func simpleDef(run string) string {
	if run == "" {
		return `{"description":"a test tool"}`
	}
	return `{"description":"a test tool","run":` + run + `}`
}

// harness runs Serve over in-memory pipes.
type harness struct {
	t     *testing.T
	dir   string // the tool directory
	root  string
	in    *io.PipeWriter
	lines chan []byte
	done  chan error
	logMu sync.Mutex
	log   []string
	rev   string // revision for schema checks of what the server writes
}

func newHarness(t *testing.T, dir string, edit func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir, root: t.TempDir(), lines: make(chan []byte, 100), done: make(chan error, 1)}
	// h.log has every event; routine ones (Debug) are marked "debug: "
	// so tests can tell what a quiet mcp-route would show.
	logf := func(format string, args ...any) {
		h.logMu.Lock()
		h.log = append(h.log, fmt.Sprintf(format, args...))
		h.logMu.Unlock()
	}
	debugf := func(format string, args ...any) { logf("debug: "+format, args...) }
	opts := Options{
		Registry:   registry.New(registry.Options{Dirs: []string{dir}, Logf: logf, Debugf: debugf, DescribeEnv: []string{"PATH=/usr/bin:/bin"}}),
		ServerInfo: codec.Implementation{Name: "test-route", Version: "1.2.3"},
		Root:       h.root,
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Timeout:    10 * time.Second,
		Grace:      200 * time.Millisecond,
		Poll:       -1,
		Logger:     slog.New(captureHandler{logf}),
	}
	if edit != nil {
		edit(&opts)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in = inW
	go func() {
		h.done <- Serve(context.Background(), inR, outW, opts)
		outW.Close()
	}()
	go func() {
		r := codec.NewReader(outR, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(h.lines)
				return
			}
			h.lines <- l
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-h.done:
		case <-time.After(recvTimeout):
			t.Error("Serve did not return after input closed")
		}
		if t.Failed() {
			h.logMu.Lock()
			t.Logf("server log:\n%s", strings.Join(h.log, "\n"))
			h.logMu.Unlock()
		}
	})
	return h
}

// captureHandler hands every record's message to logf, "debug: " before
// the routine ones (below Info).
type captureHandler struct {
	logf func(format string, args ...any)
}

func (h captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h captureHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h captureHandler) WithGroup(string) slog.Handler            { return h }
func (h captureHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelInfo {
		h.logf("debug: %s", r.Message)
	} else {
		h.logf("%s", r.Message)
	}
	return nil
}

func (h *harness) send(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(h.in, l+"\n"); err != nil {
			h.t.Fatalf("send: %v", err)
		}
	}
}

// recv returns the next line the server wrote.
func (h *harness) recv() []byte {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("server output ended")
		}
		return l
	case <-time.After(recvTimeout):
		h.t.Fatal("no answer from the server")
		return nil
	}
}

// msg is a decoded server line.
type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *codec.Error    `json:"error"`
}

// recvMsg reads the next line, checks it against the schema of h.rev as an
// answer to method, and decodes it.
func (h *harness) recvMsg(method string) msg {
	h.t.Helper()
	l := h.recv()
	if h.rev != "" {
		checkSchema(h.t, h.rev, method, l)
	}
	var m msg
	if err := json.Unmarshal(l, &m); err != nil {
		h.t.Fatalf("bad line %s: %v", l, err)
	}
	return m
}

// closeAndDrain closes the input and returns every remaining line.
func (h *harness) closeAndDrain() [][]byte {
	h.t.Helper()
	h.in.Close()
	var out [][]byte
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				return out
			}
			out = append(out, l)
		case <-time.After(recvTimeout):
			h.t.Fatal("server output did not end")
		}
	}
}

func (h *harness) initialize(rev string) {
	h.t.Helper()
	h.rev = rev
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, rev))
	m := h.recvMsg("initialize")
	var r codec.InitializeResult
	if err := json.Unmarshal(m.Result, &r); err != nil || r.ProtocolVersion != rev {
		h.t.Fatalf("initialize: %s (%v)", m.Result, err)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callResult decodes a tools/call response's result.
func callResult(t *testing.T, m msg) *codec.CallToolResult {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error response: %v", m.Error)
	}
	r := new(codec.CallToolResult)
	if err := json.Unmarshal(m.Result, r); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	return r
}

func modernMeta() string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
}

func callLine(id, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// checkSchema validates a server line against the schema of rev in a
// subtest, so that without the schemas (spectest skips) only the schema
// check is skipped, not the protocol test around it.
func checkSchema(t *testing.T, rev, method string, line []byte) {
	t.Helper()
	t.Run("schema", func(t *testing.T) {
		spectest.CheckServerMessage(t, rev, method, line)
	})
}
