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
// official Go SDK client (one session each), at 1, 16 and 64 calls in
// flight: mcp-route --http with a sh tool (a process per call) and a
// worker tool (the Go tool `mcp-route new` writes, examples/tools/src/
// hello, as it comes: 2 workers), and, as the reference, the official Go
// SDK's Streamable HTTP server with an in-process tool, twice: as a server
// is deployed, in its own process (e2e/interop/gosdk-server --http, its
// greet tool, Go's defaults), and inside the benchmark's process, beside
// the client. Reports calls/s, p50 and p99 per call, all in 2025-11-25.
//
// The paths above run one after the other, and a shared machine's speed
// drifts between them. worker-vs-sdk/REV/64 is the goal measured
// fairly, in each way a revision is served: 2025-11-25 with sessions on
// both sides, and 2026-07-28, stateless, against the SDK's stateless
// server. Each side speaks the same revision: 2026-07-28 costs the client
// more per call (it derives the Mcp-Method and Mcp-Name headers from each
// body) and the server too (each request carries the client's _meta), and
// an SDK server with sessions answers a 2026-07-28 client in 2025-11-25.
// Rounds of calls alternate between the worker path and the references
// (each in turn first), 64 in flight. It reports each path's calls/s over
// all its rounds, the CPU time per call of the benchmark's process (the
// client; the in-process reference's server too) and of each server
// process (mcp-route with its workers), and the ratios: worker/sdk
// against the SDK server in its own process, a server process against a
// server process with the same client (at least 1 is the goal), and
// worker/sdk-inprocess against the one that shares the client's process,
// runtime and scheduler. With MCP_ROUTE_OLD=PATH (another build of
// mcp-route) its worker path joins the rounds too, and worker/old compares
// the two builds.
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
	route := startHTTP(b, routeArgs...)
	var old *httpRoute
	if bin := os.Getenv("MCP_ROUTE_OLD"); bin != "" {
		old = startHTTPBin(b, bin, routeArgs...)
	}

	for _, rev := range []struct {
		name      string
		stateless bool
	}{{"2025-11-25", false}, {"2026-07-28", true}} {
		worker := benchTarget{url: route.url + "/mcp", tool: "hello", arg: "name", rev: rev.name, pid: route.cmd.Process.Pid}
		sdk := startGoSDKServer(b, rev.name, rev.stateless)
		sdkInProcess := startInProcessSDKServer(b, rev.name, rev.stateless)
		if !rev.stateless {
			sh := benchTarget{url: route.url + "/mcp", tool: "echo", arg: "output", rev: rev.name}
			for _, target := range []namedTarget{{"mcp-route-sh", sh}, {"mcp-route-worker", worker}, {"go-sdk-server", sdk}, {"go-sdk-inprocess", sdkInProcess}} {
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
		}
		paths := []namedTarget{{"worker", worker}, {"sdk", sdk}, {"sdk-inprocess", sdkInProcess}}
		if old != nil {
			paths = append(paths, namedTarget{"old", benchTarget{url: old.url + "/mcp", tool: worker.tool, arg: worker.arg, rev: rev.name, pid: old.cmd.Process.Pid}})
		}
		b.Run("worker-vs-sdk/"+rev.name+"/64", func(b *testing.B) { alternate(b, paths, 64) })
	}
}

// alternate drives paths in rounds, inFlight calls at a time, each path in
// turn first, and reports their calls/s, their CPU time per call and the
// ratios of paths[0]'s calls/s to the others'.
func alternate(b *testing.B, paths []namedTarget, inFlight int) {
	sessions := make([]*mcp.ClientSession, len(paths))
	for i, p := range paths {
		sessions[i] = p.connect(b)
	}
	const rounds = 6
	perRound := max(inFlight, b.N/rounds)
	spent := make([]time.Duration, len(paths))
	clientCPU := make([]time.Duration, len(paths))
	serverCPU := make([]time.Duration, len(paths))
	for r := range rounds {
		for k := range paths {
			i := (r + k) % len(paths)
			p := paths[i]
			client, server := testbin.CPUTime(b, os.Getpid()), time.Duration(0)
			if p.pid > 0 {
				server = testbin.TreeCPUTime(b, p.pid)
			}
			d, _ := p.drive(b, sessions[i], perRound, inFlight)
			spent[i] += d
			clientCPU[i] += testbin.CPUTime(b, os.Getpid()) - client
			if p.pid > 0 {
				serverCPU[i] += testbin.TreeCPUTime(b, p.pid) - server
			}
		}
	}
	calls := float64(rounds * perRound)
	perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / calls }
	for i, p := range paths {
		b.ReportMetric(calls/spent[i].Seconds(), p.name+"-calls/s")
		b.ReportMetric(perCall(clientCPU[i]), p.name+"-client-µs/call")
		if p.pid > 0 {
			b.ReportMetric(perCall(serverCPU[i]), p.name+"-server-µs/call")
		}
	}
	for i, p := range paths[1:] {
		b.ReportMetric(spent[i+1].Seconds()/spent[0].Seconds(), paths[0].name+"/"+p.name)
	}
}

// startGoSDKServer starts the official Go SDK's Streamable HTTP server
// (e2e/interop/gosdk-server), with sessions or stateless, on a loopback
// port, stopped when b ends, and returns its greet tool in revision rev.
func startGoSDKServer(b *testing.B, rev string, stateless bool) benchTarget {
	bin := testbin.Path(b, "MCP_GOSDK_SERVER_BIN", "e2e/interop/gosdk-server")
	args := []string{"--http", "127.0.0.1:0"}
	if stateless {
		args = append(args, "--stateless")
	}
	cmd := exec.Command(bin, args...)
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
	return benchTarget{url: endpoint, tool: "greet", arg: "name", rev: rev, pid: cmd.Process.Pid}
}

// startInProcessSDKServer serves the Go SDK's Streamable HTTP handler, with
// sessions or stateless, from the benchmark's own process, until b ends,
// and returns its echo tool in revision rev.
func startInProcessSDKServer(b *testing.B, rev string, stateless bool) benchTarget {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ref", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(in)}}}, nil, nil
	})
	ref := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	b.Cleanup(ref.Close)
	return benchTarget{url: ref.URL, tool: "echo", arg: "output", rev: rev}
}

// benchTarget is a tool to call over Streamable HTTP: its endpoint, its
// name, the argument it takes a string in, the revision to speak, and the
// server's process (0: the benchmark's own).
type benchTarget struct {
	url, tool, arg, rev string
	pid                 int
}

type namedTarget struct {
	name string
	benchTarget
}

// connect opens a session (closed when b ends) with the Go SDK's client,
// and checks that the server speaks the revision asked for.
func (t benchTarget) connect(b *testing.B) *mcp.ClientSession {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: t.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: t.rev})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != t.rev {
		b.Fatalf("%s speaks %s, not %s", t.url, got, t.rev)
	}
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
