package upstream

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
)

// BenchmarkCall compares one call of the test server's echo made directly
// with codec/client and through a Set (what a forwarded call adds before
// the router's own work): go test -run '^$' -bench Call ./mcp-route/upstream
func BenchmarkCall(b *testing.B) {
	args := json.RawMessage(`{"text":"hello"}`)
	b.Run("direct", func(b *testing.B) {
		argv := []string{testBinary(), "upstream-test-server", "dual", b.TempDir()}
		conn, _, err := client.Dial(context.Background(), client.Command{Argv: argv, Env: []string{}}, client.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		b.ResetTimer()
		for range b.N {
			if _, _, err := conn.CallTool(context.Background(), "echo", args, client.CallOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("set", func(b *testing.B) {
		s := NewSet([]Spec{{Name: "up", Argv: []string{testBinary(), "upstream-test-server", "dual", b.TempDir()}}}, Options{Env: []string{}})
		s.Start(context.Background())
		defer s.Close()
		tool := s.Lookup(context.Background(), "up__echo")
		if tool == nil {
			b.Fatal("no up__echo")
		}
		b.ResetTimer()
		for range b.N {
			if _, outcome, err := s.Call(context.Background(), tool, args, codec.Rev20260728, nil); err != nil || outcome != "ok" {
				b.Fatal(outcome, err)
			}
		}
	})
}

func testBinary() string { return os.Args[0] }
