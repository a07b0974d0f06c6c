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
// as it comes: 2 workers), and the Go SDK's own Streamable HTTP server with
// an in-process tool as the reference. Reports calls/s, p50 and p99 per
// call.
//
// The paths above run one after the other, and a shared machine's speed
// drifts between them; worker-vs-sdk/64 is the goal measured fairly:
// rounds of calls alternate between the worker path and the reference (in
// turn first), 64 in flight, and it reports each path's calls/s over all
// its rounds and their ratio (worker/sdk; at least 1 is the goal).
//
//	go test -run '^$' -bench HTTPCalls -benchtime 3000x ./mcp-route
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

	sh := benchTarget{url: route + "/mcp", tool: "echo", arg: "output"}
	worker := benchTarget{url: route + "/mcp", tool: "hello", arg: "name"}
	sdk := benchTarget{url: ref.URL, tool: "echo", arg: "output"}
	for _, target := range []struct {
		name string
		benchTarget
	}{{"mcp-route-sh", sh}, {"mcp-route-worker", worker}, {"go-sdk-inprocess", sdk}} {
		for _, inFlight := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/%d", target.name, inFlight), func(b *testing.B) {
				cs := target.connect(b)
				b.ResetTimer()
				elapsed, lat := target.drive(b, cs, b.N, inFlight)
				b.StopTimer()
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}

	b.Run("worker-vs-sdk/64", func(b *testing.B) {
		const rounds = 6
		perRound := max(64, b.N/rounds)
		wcs, scs := worker.connect(b), sdk.connect(b)
		var wTime, sTime time.Duration
		for r := range rounds {
			if r%2 == 0 {
				d, _ := worker.drive(b, wcs, perRound, 64)
				wTime += d
				d, _ = sdk.drive(b, scs, perRound, 64)
				sTime += d
			} else {
				d, _ := sdk.drive(b, scs, perRound, 64)
				sTime += d
				d, _ = worker.drive(b, wcs, perRound, 64)
				wTime += d
			}
		}
		calls := float64(rounds * perRound)
		b.ReportMetric(calls/wTime.Seconds(), "worker-calls/s")
		b.ReportMetric(calls/sTime.Seconds(), "sdk-calls/s")
		b.ReportMetric(sTime.Seconds()/wTime.Seconds(), "worker/sdk")
	})
}

// benchTarget is a tool to call over Streamable HTTP: its endpoint, its
// name, and the argument it takes a string in.
type benchTarget struct{ url, tool, arg string }

// connect opens a session (closed when b ends) with the Go SDK's client.
func (t benchTarget) connect(b *testing.B) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: t.url, DisableStandaloneSSE: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// drive makes n calls, inFlight at a time, and returns how long they took
// and each call's latency, sorted.
func (t benchTarget) drive(b *testing.B, cs *mcp.ClientSession, n, inFlight int) (time.Duration, []time.Duration) {
	ctx := context.Background()
	lat := make([]time.Duration, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var failed sync.Once
	start := time.Now()
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.tool, Arguments: map[string]any{t.arg: "ok"}})
				lat[i] = time.Since(t0)
				if err != nil || res.IsError {
					failed.Do(func() { b.Errorf("%s call %d: %v %+v", t.tool, i, err, res) })
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return elapsed, lat
}
