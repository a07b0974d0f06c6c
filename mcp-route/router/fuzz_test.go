package router

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// FuzzServe feeds arbitrary input to a server with no tools: it must not
// panic or hang, must end when the input ends, and must write nothing but
// complete JSON lines.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" + `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"none","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"YWZ0ZXI6","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`[]` + "\n" + `[1,2]` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		"\x00\xff\n\n{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), bytes.NewReader(in), &out, Options{
				Registry:   registry.New(registry.Options{Dirs: []string{t.TempDir()}}),
				ServerInfo: codec.Implementation{Name: "fuzz", Version: "0"},
				Root:       t.TempDir(),
				Poll:       -1,
				MaxFrame:   4096,
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return at the end of its input")
		}
		r := codec.NewReader(&out, 0)
		for {
			l, err := r.ReadFrame()
			if err == io.EOF {
				break
			}
			if err != nil || !json.Valid(l) {
				t.Fatalf("bad output line %q: %v", l, err)
			}
		}
	})
}
