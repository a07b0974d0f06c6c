package router

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/servertest"
	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// recvTimeout bounds every wait for a server line: a hung server fails the
// test instead of hanging it.
const recvTimeout = servertest.Wait

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

// harness runs Serve over in-memory pipes (internal/servertest).
type harness struct {
	t    *testing.T
	p    *servertest.Pipe
	dir  string // the tool directory
	root string
	log  *servertest.Log // every event; routine ones (Debug) marked "debug: "
	rev  string          // revision for schema checks of what the server writes
}

func newHarness(t *testing.T, dir string, edit func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir, root: t.TempDir(), log: &servertest.Log{}}
	opts := Options{
		Registry:   registry.New(registry.Options{Dirs: []string{dir}, Logger: h.log.Logger(), DescribeEnv: []string{"PATH=/usr/bin:/bin"}}),
		ServerInfo: codec.Implementation{Name: "test-route", Version: "1.2.3"},
		Root:       h.root,
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"},
		Timeout:    10 * time.Second,
		Grace:      200 * time.Millisecond,
		Poll:       -1,
		Logger:     h.log.Logger(),
	}
	if edit != nil {
		edit(&opts)
	}
	h.p = servertest.Start(t, h.log, func(in io.Reader, out io.Writer) error {
		return Serve(context.Background(), in, out, opts)
	})
	return h
}

func (h *harness) send(lines ...string) {
	h.t.Helper()
	h.p.Send(lines...)
}

// recv returns the next line the server wrote.
func (h *harness) recv() []byte {
	h.t.Helper()
	return h.p.Recv()
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
	return h.p.CloseAndDrain()
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
