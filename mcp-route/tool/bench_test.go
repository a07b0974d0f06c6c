package tool_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// BenchmarkWorkerServe measures what the worker protocol costs a Go tool
// per call, without pipes or processes: b.N requests of a trivial tool
// read from a buffer, run and answered into another.
func BenchmarkWorkerServe(b *testing.B) {
	hello := tool.Tool{
		Definition: tool.Definition{Name: "hello", Description: "Greet."},
		Handler:    func(c *tool.Call) error { c.Textf("hello %s\n", c.Arg("name")); return nil },
	}
	var in bytes.Buffer
	for i := range b.N {
		fmt.Fprintf(&in, `{"id":%d,"tool":"hello","arguments":{"name":"x"},"protocolVersion":"2025-06-18"}`+"\n", i+1)
	}
	var out bytes.Buffer
	env := map[string]string{tool.EnvWorker: "1"}
	b.ResetTimer()
	code := tool.Exec(tool.Process{
		Args:   []string{"hello"},
		Stdin:  &in,
		Stdout: &out,
		Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] },
	}, hello)
	b.StopTimer()
	if code != 0 || bytes.Count(out.Bytes(), []byte("\n")) != b.N {
		b.Fatalf("exit %d, %d answers for %d requests", code, bytes.Count(out.Bytes(), []byte("\n")), b.N)
	}
}
