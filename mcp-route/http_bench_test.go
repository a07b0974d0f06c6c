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
// official Go SDK client (one session a path), at 1, 16 and 64 calls in
// flight, on these paths:
//   - worker: mcp-route --http with a worker tool (the Go tool `mcp-route
//     new` writes, examples/tools/src/hello, as it comes: 2 workers);
//   - sh: mcp-route --http with a sh tool (a process per call), in
//     2025-11-25 only;
//   - sdk: the reference, the official Go SDK's Streamable HTTP server with
//     an in-process tool, in its own process as a server is deployed
//     (e2e/interop/gosdk-server --http, its greet tool, Go's defaults);
//   - sdk-inprocess: the same SDK server inside the benchmark's process,
//     beside the client, sharing its runtime and scheduler;
//   - old: with MCP_ROUTE_OLD=PATH, another build of mcp-route's worker
//     path (the one before a change).
//
// In each way a revision is served, each side speaking the same one:
// 2025-11-25 with sessions on both sides, and 2026-07-28 stateless,
// against the SDK's stateless server. 2026-07-28 costs more per call (the
// client derives the Mcp-Method and Mcp-Name headers from each body, each
// request carries the client's _meta), and an SDK server with sessions
// answers a 2026-07-28 client in 2025-11-25: a ratio across revisions
// would measure the revisions.
//
// The paths take turns in rounds (each in turn first), so that a shared
// machine's drift hits all alike. For each path it reports calls/s over
// all its rounds, p50 and p99 per call, the CPU time per call of the
// benchmark's process (the client, and sdk-inprocess's server) and of the
// server's processes (mcp-route with its workers and tools, gosdk-server),
// and worker/PATH: how many times PATH's calls/s the worker path made.
// The goal: worker/sdk at least 1 at 64 in flight.
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
		paths := []namedTarget{
			{"worker", benchTarget{url: route.url + "/mcp", tool: "hello", arg: "name", rev: rev.name, pid: route.cmd.Process.Pid}},
			{"sdk", startGoSDKServer(b, rev.name, rev.stateless)},
			{"sdk-inprocess", startInProcessSDKServer(b, rev.name, rev.stateless)},
		}
		if old != nil {
			paths = append(paths, namedTarget{"old", benchTarget{url: old.url + "/mcp", tool: "hello", arg: "name", rev: rev.name, pid: old.cmd.Process.Pid}})
		}
		if !rev.stateless {
			paths = append(paths, namedTarget{"sh", benchTarget{url: route.url + "/mcp", tool: "echo", arg: "output", rev: rev.name, pid: route.cmd.Process.Pid}})
		}
		for _, inFlight := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/%d", rev.name, inFlight), func(b *testing.B) { alternate(b, paths, inFlight) })
		}
	}
}

// alternate drives paths in rounds, inFlight calls at a time, each path in
// turn first, and reports their calls/s, latencies, CPU time per call,
// and paths[0]'s calls/s over each other's.
func alternate(b *testing.B, paths []namedTarget, inFlight int) {
	sessions := make([]*mcp.ClientSession, len(paths))
	for i, p := range paths {
		sessions[i] = p.connect(b)
	}
	const rounds = 6
	perRound := max(inFlight, b.N/rounds)
	spent := make([]time.Duration, len(paths))
	lats := make([][]time.Duration, len(paths))
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
			d, lat := p.drive(b, sessions[i], perRound, inFlight)
			spent[i] += d
			lats[i] = append(lats[i], lat...)
			clientCPU[i] += testbin.CPUTime(b, os.Getpid()) - client
			if p.pid > 0 {
				serverCPU[i] += testbin.TreeCPUTime(b, p.pid) - server
			}
		}
	}
	calls := float64(rounds * perRound)
	perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / calls }
	for i, p := range paths {
		slices.Sort(lats[i])
		b.ReportMetric(calls/spent[i].Seconds(), p.name+"-calls/s")
		b.ReportMetric(float64(lats[i][len(lats[i])/2].Microseconds())/1000, p.name+"-p50-ms")
		b.ReportMetric(float64(lats[i][len(lats[i])*99/100].Microseconds())/1000, p.name+"-p99-ms")
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
