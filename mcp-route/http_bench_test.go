package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPCalls: tools/call over loopback Streamable HTTP with the
// official Go SDK client (one session, 2026-07-28), at 1, 16 and 64 calls
// in flight: mcp-route --http with a sh tool (a process per call) and a
// worker tool (the Go tool `mcp-route new` writes, examples/tools/src/hello,
// as it comes: 2 workers), and the
// Go SDK's own Streamable HTTP server with an in-process tool as the
// reference. Reports calls/s, p50 and p99 per call.
//
//	go test -run '^$' -bench HTTPCalls -benchtime 400x ./mcp-route
func BenchmarkHTTPCalls(b *testing.B) {
	tools := httpTools(b)
	// The worker path: the tool `mcp-route new` writes (examples/tools/src/
	// hello, package mcp-route/tool), as it comes: 2 workers, one call
	// each at a time.
	hello := testbin.Path(b, "MCP_HELLO_BIN", "examples/tools/src/hello")
	if err := os.Symlink(hello, filepath.Join(tools, "hello")); err != nil {
		b.Fatal(err)
	}
	route := startHTTP(b, "--tools", tools, "--max-procs", "64", "--max-queue", "256").url

	srv := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in)}}}, nil, nil
	})
	ref := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ref.Close()

	for _, target := range []struct{ name, url, tool, arg string }{
		{"mcp-route-sh", route + "/mcp", "echo", "output"},
		{"mcp-route-worker", route + "/mcp", "hello", "name"},
		{"go-sdk-inprocess", ref.URL, "echo", "output"},
	} {
		for _, inFlight := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/%d", target.name, inFlight), func(b *testing.B) {
				ctx := context.Background()
				client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: target.url, DisableStandaloneSSE: true}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				lat := make([]time.Duration, b.N)
				next := make(chan int, b.N)
				for i := range b.N {
					next <- i
				}
				close(next)
				var wg sync.WaitGroup
				var failed sync.Once
				b.ResetTimer()
				start := time.Now()
				for range inFlight {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range next {
							t0 := time.Now()
							res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: target.tool, Arguments: map[string]any{target.arg: "ok"}})
							lat[i] = time.Since(t0)
							if err != nil || res.IsError {
								failed.Do(func() { b.Errorf("call %d: %v %+v", i, err, res) })
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}
