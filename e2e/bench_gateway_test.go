package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkGatewayHop measures what one hop through mcp-route's gateway
// adds to a call: the Go SDK server's add (interop/gosdk-server) called
//
//   - direct: by the Go SDK client over stdio (client → gosdk-server);
//   - gateway: by the same client through `mcp-route --upstream
//     gosdk=gosdk-server` (client → mcp-route → gosdk-server), as
//     gosdk__add;
//   - relay: through internal/testbin/relay, which only copies bytes both
//     ways: the floor any process in between costs on this machine;
//   - old, when MCP_ROUTE_OLD names another mcp-route binary (the build
//     before a change): as gateway, side by side.
//
// The paths take turns in rounds, each round rotating who goes first, so a
// load spike on the shared machine hits all alike; one call in flight. It
// prints the p50 and p99 of each and the p50 the hop adds. Latency on a
// virtual machine is mostly process wake-ups (a hop adds two per call), so
// it also prints the CPU time (user+system, from /proc) the server process
// spent per call (gosdk-server's on the direct path, mcp-route's or the
// relay's on the others) and its upstream's. The goals are against the
// relay, measured in the same rounds: mcp-route's added p50 at most 1.25x
// the relay's, and its CPU per call at most 20 µs above the relay's. All
// connections use the SDK's default era
// (2026-07-28, which mcp-route also speaks to the upstream). Run it once:
//
//	go test -run '^$' -bench GatewayHop -benchtime 1x ./e2e
func BenchmarkGatewayHop(b *testing.B) {
	dir := b.TempDir()
	gosdk := testbin.Path(b, "MCP_GOSDK_SERVER_BIN", "e2e/interop/gosdk-server")
	route := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	paths := []*benchPath{
		{name: "direct", tool: "add", argv: []string{gosdk}},
		{name: "gateway", tool: "gosdk__add", argv: []string{route, "--root", dir, "--upstream", "gosdk=" + shellQuote(gosdk)}},
	}
	relay := testbin.Path(b, "MCP_RELAY_BIN", "internal/testbin/relay")
	paths = append(paths, &benchPath{name: "relay", tool: "add", argv: []string{relay, gosdk}})
	// MCP_ROUTE_OLD=PATH also measures another build of mcp-route (the
	// one before a change), in the same rounds.
	if old := os.Getenv("MCP_ROUTE_OLD"); old != "" {
		paths = append(paths, &benchPath{name: "old", tool: "gosdk__add", argv: []string{old, "--root", dir, "--upstream", "gosdk=" + shellQuote(gosdk)}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, p := range paths {
		p.connect(ctx, b, dir)
	}
	const (
		rounds = 10
		serial = 500 // calls per round and path
		warmup = 200
	)
	for _, p := range paths {
		for range warmup {
			p.call(ctx, b)
		}
	}
	for _, p := range paths {
		p.cpu = -testbin.CPUTime(b, p.cmd.Process.Pid)
		if kids := testbin.Children(p.cmd.Process.Pid); len(kids) > 0 {
			p.child = kids[0]
			p.childCPU = -testbin.CPUTime(b, p.child)
		}
	}
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			for i := range paths {
				p := paths[(r+i)%len(paths)]
				for range serial {
					start := time.Now()
					p.call(ctx, b)
					p.lat = append(p.lat, time.Since(start))
				}
			}
		}
	}
	b.StopTimer()
	for _, p := range paths {
		p.cpu += testbin.CPUTime(b, p.cmd.Process.Pid)
		if p.child > 0 {
			p.childCPU += testbin.CPUTime(b, p.child)
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-8s %10s %10s %16s %16s   (Go SDK client, one call in flight, %d calls)\n", "path", "p50", "p99", "server CPU/call", "upstream CPU/call", len(paths[0].lat))
	for _, p := range paths {
		slices.Sort(p.lat)
		p.p50, p.p99 = p.lat[len(p.lat)/2], p.lat[len(p.lat)*99/100]
		perCall := p.cpu / time.Duration(len(p.lat))
		upstream := "-"
		if p.child > 0 {
			upstream = (p.childCPU / time.Duration(len(p.lat))).Round(time.Microsecond).String()
		}
		fmt.Fprintf(&table, "%-8s %10v %10v %16v %16s  (%s)\n", p.name, p.p50.Round(time.Microsecond), p.p99.Round(time.Microsecond),
			perCall.Round(time.Microsecond), upstream, filepath.Base(p.argv[0]))
		b.ReportMetric(float64(p.p50.Nanoseconds())/1e3, p.name+"-p50-µs")
		b.ReportMetric(float64(p.p99.Nanoseconds())/1e3, p.name+"-p99-µs")
		b.ReportMetric(float64(perCall.Nanoseconds())/1e3, p.name+"-serverCPU-µs/call")
	}
	direct, gateway, relayPath := paths[0], paths[1], paths[2]
	cpuPerCall := func(p *benchPath) time.Duration { return p.cpu / time.Duration(len(p.lat)) }
	added := gateway.p50 - direct.p50
	floor := relayPath.p50 - direct.p50
	hopRatio := float64(added) / float64(floor)
	cpuAbove := cpuPerCall(gateway) - cpuPerCall(relayPath)
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	fmt.Fprintf(&table, "the hop adds %v at p50, a relay that only copies bytes %v\n", added.Round(time.Microsecond), floor.Round(time.Microsecond))
	fmt.Fprintf(&table, "hop p50 mcp-route/relay      %6.2f   goal <= 1.25   %s\n", hopRatio, verdict(hopRatio <= 1.25))
	fmt.Fprintf(&table, "CPU/call mcp-route - relay   %6v  goal <= 20µs   %s\n", cpuAbove.Round(time.Microsecond), verdict(cpuAbove <= 20*time.Microsecond))
	if len(paths) > 3 {
		old := paths[3]
		fmt.Fprintf(&table, "old: hop p50 old/relay %.2f, CPU/call old - relay %v\n",
			float64(old.p50-direct.p50)/float64(floor), (cpuPerCall(old) - cpuPerCall(relayPath)).Round(time.Microsecond))
	}
	b.ReportMetric(float64(floor.Nanoseconds())/1e3, "relay-hop-p50-µs")
	b.ReportMetric(float64(added.Nanoseconds())/1e3, "hop-p50-µs")
	b.ReportMetric(hopRatio, "hop/relay-p50")
	b.ReportMetric(float64(cpuAbove.Nanoseconds())/1e3, "CPU-above-relay-µs/call")
	b.Log(table.String())
	for _, p := range paths {
		if err := p.cs.Close(); err != nil {
			b.Errorf("%s: close: %v", p.name, err)
		}
	}
}

// benchPath is one way to the Go SDK server's add, and what it measured.
type benchPath struct {
	name, tool string
	argv       []string
	cmd        *exec.Cmd
	cs         *mcp.ClientSession
	lat        []time.Duration
	cpu        time.Duration // the server process's, over the measured calls
	child      int           // the server's own server (the upstream), if any
	childCPU   time.Duration // its CPU over the measured calls
	p50, p99   time.Duration
	n          int
}

func (p *benchPath) connect(ctx context.Context, b *testing.B, dir string) {
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("%s: connect: %v", p.name, err)
	}
	p.cs, p.cmd = cs, cmd
	b.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	// The gateway lists its upstream's tools in the background: wait.
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			b.Fatalf("%s: tools/list: %v", p.name, err)
		}
		if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == p.tool }) {
			return
		}
		if ctx.Err() != nil {
			b.Fatalf("%s: %s never listed", p.name, p.tool)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call adds two numbers that change per call and checks the sum.
func (p *benchPath) call(ctx context.Context, b *testing.B) {
	p.n++
	start := time.Now()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: p.tool, Arguments: map[string]any{"a": p.n, "b": 1}})
	if err != nil {
		b.Fatalf("%s: add(%d, 1) after %v: %v", p.name, p.n, time.Since(start), err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	sum, _ := out["sum"].(float64)
	if res.IsError || int(sum) != p.n+1 {
		j, _ := json.Marshal(res)
		b.Fatalf("%s: add(%d, 1) after %v: %s", p.name, p.n, time.Since(start), j)
	}
}
