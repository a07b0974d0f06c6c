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
// its rounds and their ratio (worker/sdk; at least 1 is the goal). With
// MCP_ROUTE_OLD=PATH (another build of mcp-route) its worker path joins
// the rounds too, and worker/old compares the two builds.
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
	routeArgs := []string{"--tools", tools, "--max-procs", "64", "--max-queue", "256"}
	route := startHTTP(b, routeArgs...).url

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
		paths := []struct {
			name string
			benchTarget
		}{{"worker", worker}, {"sdk", sdk}}
		if old := os.Getenv("MCP_ROUTE_OLD"); old != "" {
			oldRoute := startHTTPBin(b, old, routeArgs...).url
			paths = append(paths, struct {
				name string
				benchTarget
			}{"old", benchTarget{url: oldRoute + "/mcp", tool: worker.tool, arg: worker.arg}})
		}
		sessions := make([]*mcp.ClientSession, len(paths))
		for i, p := range paths {
			sessions[i] = p.connect(b)
		}
		const rounds = 6
		perRound := max(64, b.N/rounds)
		spent := make([]time.Duration, len(paths))
		for r := range rounds {
			for k := range paths {
				i := (r + k) % len(paths) // each path in turn first
				d, _ := paths[i].drive(b, sessions[i], perRound, 64)
				spent[i] += d
			}
		}
		calls := float64(rounds * perRound)
		for i, p := range paths {
			b.ReportMetric(calls/spent[i].Seconds(), p.name+"-calls/s")
		}
		b.ReportMetric(spent[1].Seconds()/spent[0].Seconds(), "worker/sdk")
		if len(paths) > 2 {
			b.ReportMetric(spent[2].Seconds()/spent[0].Seconds(), "worker/old")
		}
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
