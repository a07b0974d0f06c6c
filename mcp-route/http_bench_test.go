package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPCalls: tools/call over loopback Streamable HTTP with the
// official Go SDK client (one session, 2026-07-28), at 1, 16 and 64 calls
// in flight: mcp-route --http with a sh tool (a process per call) and a
// worker tool (the Go tool `mcp-route new` writes, examples/tools/src/
// hello, as it comes: 2 workers), and, as the reference, the official Go
// SDK's Streamable HTTP server with an in-process tool, twice: as a server
// is deployed, its own process (e2e/interop/gosdk-server --http, its
// greet tool), and inside the benchmark's process, beside the client.
// Reports calls/s, p50 and p99 per call.
//
// The paths above run one after the other, and a shared machine's speed
// drifts between them; worker-vs-sdk/64 is the goal measured fairly:
// rounds of calls alternate between the worker path and the references
// (each in turn first), 64 in flight, and it reports each path's calls/s
// over all its rounds and the ratios: worker/sdk against the Go SDK server
// in its own process, a server process against a server process with the
// same client (at least 1 is the goal), and worker/sdk-inprocess against
// the one that shares the client's process, runtime and scheduler. With
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
	routeProc := startHTTP(b, routeArgs...)
	route := routeProc.url

	srv := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in)}}}, nil, nil
	})
	ref := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ref.Close()

	sh := benchTarget{url: route + "/mcp", tool: "echo", arg: "output"}
	worker := benchTarget{url: route + "/mcp", tool: "hello", arg: "name"}
	sdkURL, sdkPid := startGoSDKServer(b)
	sdk := benchTarget{url: sdkURL, tool: "greet", arg: "name"}
	sdkInProcess := benchTarget{url: ref.URL, tool: "echo", arg: "output"}
	for _, target := range []struct {
		name string
		benchTarget
	}{{"mcp-route-sh", sh}, {"mcp-route-worker", worker}, {"go-sdk-server", sdk}, {"go-sdk-inprocess", sdkInProcess}} {
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
		// pid: the server's process, whose CPU time (with its children's,
		// the workers) is the server's cost per call; 0 in process.
		type path struct {
			name string
			benchTarget
			pid int
		}
		paths := []path{{"worker", worker, routeProc.cmd.Process.Pid}, {"sdk", sdk, sdkPid}, {"sdk-inprocess", sdkInProcess, 0}}
		if old := os.Getenv("MCP_ROUTE_OLD"); old != "" {
			oldRoute := startHTTPBin(b, old, routeArgs...)
			paths = append(paths, path{"old", benchTarget{url: oldRoute.url + "/mcp", tool: worker.tool, arg: worker.arg}, oldRoute.cmd.Process.Pid})
		}
		sessions := make([]*mcp.ClientSession, len(paths))
		for i, p := range paths {
			sessions[i] = p.connect(b)
		}
		const rounds = 6
		perRound := max(64, b.N/rounds)
		spent := make([]time.Duration, len(paths))
		serverCPU := make([]time.Duration, len(paths))
		for r := range rounds {
			for k := range paths {
				i := (r + k) % len(paths) // each path in turn first
				var before time.Duration
				if paths[i].pid > 0 {
					before = testbin.TreeCPUTime(b, paths[i].pid)
				}
				d, _ := paths[i].drive(b, sessions[i], perRound, 64)
				spent[i] += d
				if paths[i].pid > 0 {
					serverCPU[i] += testbin.TreeCPUTime(b, paths[i].pid) - before
				}
			}
		}
		calls := float64(rounds * perRound)
		for i, p := range paths {
			b.ReportMetric(calls/spent[i].Seconds(), p.name+"-calls/s")
			if p.pid > 0 {
				b.ReportMetric(float64(serverCPU[i].Microseconds())/calls, p.name+"-server-µs/call")
			}
		}
		for i, p := range paths[1:] {
			b.ReportMetric(spent[i+1].Seconds()/spent[0].Seconds(), "worker/"+p.name)
		}
	})
}

// startGoSDKServer starts the official Go SDK's Streamable HTTP server
// (e2e/interop/gosdk-server) on a loopback port, stopped when b ends, and
// returns its endpoint and process id.
func startGoSDKServer(b *testing.B) (string, int) {
	bin := testbin.Path(b, "MCP_GOSDK_SERVER_BIN", "e2e/interop/gosdk-server")
	cmd := exec.Command(bin, "--http", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		b.Fatalf("gosdk-server did not say where it listens: %q %v", line, err)
	}
	return endpoint, cmd.Process.Pid
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
