package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkColdStart measures what serving stdio costs mcp-route beside
// the least a Go stdio server costs (internal/testbin/nullserver), in one
// run of the built binaries:
//
//   - cold start: from exec to the answer to initialize, the servers
//     started in turns (20 rounds, each round rotating who goes first, so a
//     load spike hits all alike); goal: mcp-route's p50 <= 1.3x the null
//     server's;
//   - idle RSS: VmRSS once initialize and tools/list have been answered and
//     the server has sat idle for 300 ms; goal <= 12.5 MiB;
//   - peak RSS with sh tools: mcp-route's own VmHWM (its tools' are not
//     counted) after 400 calls to a sh tool, 16 in flight;
//   - the binary's size, and which build it is: the one MCP_ROUTE_BIN names
//     (Bazel's), else `go build` with no flags, as a user gets it (DWARF
//     and symbols kept); goal <= 12 MB (12e6 bytes).
//
// MCP_ROUTE_OLD=PATH measures another build of mcp-route (the one before a
// change) in the same rounds, as "old". Run it once:
//
//	go test -run '^$' -bench ColdStart -benchtime 1x ./mcp-route
func BenchmarkColdStart(b *testing.B) {
	type subject struct {
		name, bin string
		argv      []string
		cold      []time.Duration
		idle      []int64
		peak      int64
		size      int64
	}
	dir := b.TempDir()
	toolPath := filepath.Join(dir, "ok")
	if err := os.WriteFile(toolPath, []byte("#!/bin/sh\necho ok\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(toolPath+".json", []byte(`{"description":"prints ok"}`), 0o644); err != nil {
		b.Fatal(err)
	}
	routeArgs := []string{"--tools", dir, "--root", b.TempDir(), "--max-procs", "16"}
	null := testbin.Path(b, "MCP_NULL_SERVER_BIN", "internal/testbin/nullserver")
	route := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	subjects := []*subject{
		{name: "null", bin: null},
		{name: "mcp-route", bin: route, argv: routeArgs},
	}
	if old := os.Getenv("MCP_ROUTE_OLD"); old != "" {
		subjects = append(subjects, &subject{name: "old", bin: old, argv: routeArgs})
	}
	for _, s := range subjects {
		fi, err := os.Stat(s.bin)
		if err != nil {
			b.Fatal(err)
		}
		s.size = fi.Size()
	}
	const rounds = 20
	for range b.N {
		for r := range rounds {
			for i := range subjects {
				s := subjects[(r+i)%len(subjects)]
				start := time.Now()
				p := startProc(b, s.bin, s.argv...)
				p.send(initLine)
				p.recv()
				s.cold = append(s.cold, time.Since(start))
				p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
				p.recv()
				time.Sleep(300 * time.Millisecond)
				s.idle = append(s.idle, procStatus(p.cmd.Process.Pid, "VmRSS:"))
				p.stop()
			}
		}
		for _, s := range subjects[1:] {
			p := startProc(b, s.bin, s.argv...)
			p.send(initLine)
			p.recv()
			var mu sync.Mutex
			sent := 0
			call := func() {
				mu.Lock()
				defer mu.Unlock()
				sent++
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, sent+10))
			}
			const inFlight, total = 16, 400
			for range inFlight {
				call()
			}
			for done := 0; done < total; done++ {
				if l := p.recv(); !strings.Contains(string(l), `"ok\n"`) {
					b.Fatalf("%s: call: %s", s.name, l)
				}
				if sent < total {
					call()
				}
			}
			s.peak = procStatus(p.cmd.Process.Pid, "VmHWM:")
			p.stop()
		}
	}
	build := "go build with no flags: DWARF and symbols kept"
	if env := os.Getenv("MCP_ROUTE_BIN"); env != "" {
		build = "MCP_ROUTE_BIN=" + env + ": Bazel's build under Bazel"
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-10s %12s %12s %14s %14s %12s\n", "server", "cold p50", "cold p90", "idle RSS p50", "peak RSS(sh)", "binary")
	for _, s := range subjects {
		peak := "-"
		if s.peak > 0 {
			peak = fmt.Sprintf("%.1f MiB", float64(s.peak)/(1<<20))
		}
		fmt.Fprintf(&table, "%-10s %12v %12v %10.1f MiB %14s %9.1f MB\n", s.name,
			pct(s.cold, 50).Round(time.Microsecond), pct(s.cold, 90).Round(time.Microsecond),
			float64(median(s.idle))/(1<<20), peak, float64(s.size)/1e6)
		b.ReportMetric(float64(pct(s.cold, 50).Microseconds())/1000, s.name+"-cold-ms")
		b.ReportMetric(float64(median(s.idle))/(1<<20), s.name+"-idleRSS-MiB")
		if s.peak > 0 {
			b.ReportMetric(float64(s.peak)/(1<<20), s.name+"-peakRSS-MiB")
		}
		b.ReportMetric(float64(s.size)/1e6, s.name+"-binary-MB")
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	rt := subjects[1]
	ratio := float64(pct(rt.cold, 50)) / float64(pct(subjects[0].cold, 50))
	idle := float64(median(rt.idle)) / (1 << 20)
	fmt.Fprintf(&table, "cold start mcp-route/null p50  %6.2f     goal <= 1.3      %s\n", ratio, verdict(ratio <= 1.3))
	fmt.Fprintf(&table, "idle RSS                       %6.1f MiB goal <= 12.5 MiB %s\n", idle, verdict(idle <= 12.5))
	fmt.Fprintf(&table, "binary size                    %6.1f MB  goal <= 12 MB    %s  (%s)\n", float64(rt.size)/1e6, verdict(rt.size <= 12e6), build)
	if len(subjects) > 2 {
		old := subjects[2]
		fmt.Fprintf(&table, "old: cold start old/null p50 %6.2f, idle RSS %.1f MiB, binary %.1f MB\n",
			float64(pct(old.cold, 50))/float64(pct(subjects[0].cold, 50)), float64(median(old.idle))/(1<<20), float64(old.size)/1e6)
	}
	b.ReportMetric(ratio, "cold-route/null")
	b.Log(table.String())
}

// startProc starts bin with args alone, its stdio on pipes (startServer
// adds mcp-route's flags, which the null server has not).
func startProc(b *testing.B, bin string, args ...string) *server {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, args...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &server{b: b, cmd: cmd, in: in, r: codec.NewReader(out, 0), ctx: ctx, close: cancel}
}

// procStatus is a field of /proc/PID/status in bytes (VmRSS:, VmHWM:), 0
// when it cannot be read.
func procStatus(pid int, field string) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(l, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func median(v []int64) int64 {
	d := make([]time.Duration, len(v))
	for i, x := range v {
		d[i] = time.Duration(x)
	}
	return int64(pct(d, 50))
}
