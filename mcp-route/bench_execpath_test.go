//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkExecPath measures, in one run, what the exec path of a sh
// tool costs and whether that cost grows with the host: with the host as
// it is (phase a) and with 2,000 idle processes added (phase b), the p50
// of one call at a time and calls/s with 16 in flight, for mcp-route
// with --confine off, with the default (auto) and for the exec floor (the
// same script exec'd directly by the benchmark, 16 at a time for the
// rate). The phases alternate (a b, then b a) and the three paths take
// turns within each, so that a load spike on a shared machine hits all
// alike. It prints the ratios against the goals: b/a
// within 10% (0.9-1.1), route/floor p50 <= 1.2, route/floor calls/s >=
// 0.9, auto/off p50 <= 1.10. The idle processes are `sleep 600`s in one
// process group, killed when the benchmark ends, however it ends (and
// gone after ten minutes whatever happens). Run it once:
//
//	go test -run '^$' -bench ExecPath -benchtime 1x ./mcp-route
func BenchmarkExecPath(b *testing.B) {
	bin := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	dir := b.TempDir()
	toolPath := filepath.Join(dir, "ok")
	if err := os.WriteFile(toolPath, []byte("#!/bin/sh\necho ok\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(toolPath+".json", []byte(`{"description":"prints ok"}`), 0o644); err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	const (
		rounds   = 4
		serial   = 60 // calls a round, one in flight
		inFlight = 16
		parallel = 160 // calls a round, inFlight at once
	)
	type path struct {
		name   string
		args   []string // mcp-route's; nil: the floor
		s      *server
		p50    [2]time.Duration // phase a, b
		rate   [2]float64
		nextID int
	}
	paths := []*path{{name: "floor"}, {name: "off", args: []string{"--confine", "off"}}, {name: "auto", args: []string{}}}
	callLine := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, id)
	}
	check := func(p *path, l []byte) {
		if !strings.Contains(string(l), `"ok\n"`) {
			b.Fatalf("%s: %s", p.name, l)
		}
	}
	floorCall := func() {
		cmd := exec.Command(toolPath)
		cmd.Stdin = strings.NewReader("{}")
		if out, err := cmd.Output(); err != nil || string(out) != "ok\n" {
			b.Fatalf("floor: %v %q", err, out)
		}
	}
	one := func(p *path) time.Duration {
		start := time.Now()
		if p.s == nil {
			floorCall()
		} else {
			p.nextID++
			p.s.send(callLine(p.nextID))
			check(p, p.s.recv())
		}
		return time.Since(start)
	}
	many := func(p *path, n int) time.Duration {
		start := time.Now()
		if p.s == nil {
			var left sync.WaitGroup
			work := make(chan struct{}, n)
			for range n {
				work <- struct{}{}
			}
			close(work)
			for range inFlight {
				left.Go(func() {
					for range work {
						floorCall()
					}
				})
			}
			left.Wait()
			return time.Since(start)
		}
		sent := 0
		for ; sent < min(inFlight, n); sent++ {
			p.nextID++
			p.s.send(callLine(p.nextID))
		}
		for range n {
			check(p, p.s.recv())
			if sent < n {
				p.nextID++
				p.s.send(callLine(p.nextID))
				sent++
			}
		}
		return time.Since(start)
	}
	var hostProcs [2]int
	var lat [2][3][]time.Duration
	var n [2][3]int
	var d [2][3]time.Duration
	for range b.N {
		// a, b, then b, a, ...: drift over the run hits both phases alike.
		for r := range rounds {
			for k := range 2 {
				phase := (r + k) % 2
				stop := func() {}
				if phase == 1 {
					stop = idleProcesses(b, 2000)
				}
				if c := countProcesses(); hostProcs[phase] == 0 || (phase == 0) == (c < hostProcs[phase]) {
					hostProcs[phase] = c // a: the fewest seen, b: the most
				}
				for _, p := range paths {
					if p.args != nil {
						p.s = startServer(b, bin, dir, append([]string{"--root", root}, p.args...)...)
						p.s.send(initLine)
						p.s.recv()
					}
					for range 20 {
						one(p)
					}
				}
				for i := range paths {
					j := (r + k + i) % len(paths)
					p := paths[j]
					for range serial {
						lat[phase][j] = append(lat[phase][j], one(p))
					}
					d[phase][j] += many(p, parallel)
					n[phase][j] += parallel
				}
				for _, p := range paths {
					if p.s != nil {
						p.s.stop()
						p.s = nil
					}
				}
				stop()
			}
		}
	}
	for phase := range 2 {
		for j, p := range paths {
			p.p50[phase], p.rate[phase] = pct(lat[phase][j], 50), float64(n[phase][j])/d[phase][j].Seconds()
		}
	}
	b.StopTimer()
	var t strings.Builder
	fmt.Fprintf(&t, "\nprocesses on the host: a %d, b %d\n", hostProcs[0], hostProcs[1])
	fmt.Fprintf(&t, "%-6s %10s %10s %12s %12s %8s %8s\n", "path", "p50 a", "p50 b", "calls/s@16 a", "calls/s@16 b", "p50 b/a", "rate b/a")
	for _, p := range paths {
		fmt.Fprintf(&t, "%-6s %10v %10v %12.1f %12.1f %8.2f %8.2f\n", p.name,
			p.p50[0].Round(10*time.Microsecond), p.p50[1].Round(10*time.Microsecond), p.rate[0], p.rate[1],
			float64(p.p50[1])/float64(p.p50[0]), p.rate[1]/p.rate[0])
		b.ReportMetric(float64(p.p50[0].Microseconds()), p.name+"-p50-a-µs")
		b.ReportMetric(float64(p.p50[1].Microseconds()), p.name+"-p50-b-µs")
		b.ReportMetric(p.rate[0], p.name+"-calls/s@16-a")
		b.ReportMetric(p.rate[1], p.name+"-calls/s@16-b")
	}
	floor, off, auto := paths[0], paths[1], paths[2]
	goal := func(name string, v float64, ok bool, want string) {
		verdict := "met"
		if !ok {
			verdict = "MISSED"
		}
		fmt.Fprintf(&t, "%-30s %6.2f  goal %-10s %s\n", name, v, want, verdict)
	}
	for _, p := range []*path{off, auto} {
		v := float64(p.p50[1]) / float64(p.p50[0])
		goal(p.name+" p50 b/a", v, v <= 1.1, "<= 1.10")
		v = p.rate[1] / p.rate[0]
		goal(p.name+" calls/s@16 b/a", v, v >= 0.9, ">= 0.90")
	}
	for phase, name := range []string{"a", "b"} {
		for _, p := range []*path{off, auto} {
			v := float64(p.p50[phase]) / float64(floor.p50[phase])
			goal(fmt.Sprintf("%s/floor p50 (%s)", p.name, name), v, v <= 1.2, "<= 1.2")
			v = p.rate[phase] / floor.rate[phase]
			goal(fmt.Sprintf("%s/floor calls/s@16 (%s)", p.name, name), v, v >= 0.9, ">= 0.9")
		}
		v := float64(auto.p50[phase]) / float64(off.p50[phase])
		goal(fmt.Sprintf("auto/off p50 (%s)", name), v, v <= 1.1, "<= 1.10")
	}
	os.Stdout.WriteString(t.String())
}

// idleProcesses starts n idle processes (sleep 600, in a process group
// of their own) and returns what kills them, which also runs when the
// benchmark ends, however it ends. The shell that starts them dies with
// this process (Pdeathsig); the sleeps end by themselves after ten
// minutes should no cleanup ever run.
func idleProcesses(b *testing.B, n int) (stop func()) {
	cmd := exec.Command("/bin/sh", "-c", `i=0; while [ $i -lt "$0" ]; do sleep 600 </dev/null >/dev/null 2>&1 & i=$((i+1)); done; echo started; exec sleep 600 </dev/null >/dev/null`, strconv.Itoa(n))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	b.Cleanup(stop)
	if l, err := bufio.NewReader(out).ReadString('\n'); err != nil || l != "started\n" {
		b.Fatalf("starting %d idle processes: %q %v", n, l, err)
	}
	return stop
}

// countProcesses is the number of processes /proc shows.
func countProcesses() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}
