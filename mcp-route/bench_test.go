package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkRoute measures, in one run of the built binary, what the issue
// asks for: the p50/p99 latency of a tools/call to a trivial exec'd tool as
// a ratio to the bare fork/exec+wait of the same tool, the cold-start time to
// the first response, and calls/s with 16 calls in flight. Run it once:
//
//	go test -run '^$' -bench Route -benchtime 1x ./mcp-route
func BenchmarkRoute(b *testing.B) {
	bin := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	dir := b.TempDir()
	toolPath := filepath.Join(dir, "ok")
	if err := os.WriteFile(toolPath, []byte("#!/bin/sh\necho ok\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(toolPath+".json", []byte(`{"description":"prints ok"}`), 0o644)
	const calls = 300
	for range b.N {
		bare := make([]time.Duration, calls)
		for i := range bare {
			cmd := exec.Command(toolPath)
			cmd.Stdin = strings.NewReader("{}")
			start := time.Now()
			if out, err := cmd.Output(); err != nil || string(out) != "ok\n" {
				b.Fatalf("bare exec: %v %q", err, out)
			}
			bare[i] = time.Since(start)
		}

		var cold []time.Duration
		for range 5 {
			s := startServer(b, bin, dir)
			start := time.Now()
			s.send(initLine)
			s.recv()
			cold = append(cold, time.Since(start))
			s.stop()
		}

		s := startServer(b, bin, dir)
		s.send(initLine)
		s.recv()
		lat := make([]time.Duration, calls)
		for i := range lat {
			start := time.Now()
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, i))
			if l := s.recv(); !strings.Contains(string(l), `"ok\n"`) {
				b.Fatalf("call: %s", l)
			}
			lat[i] = time.Since(start)
		}

		const inFlight, total = 16, 800
		start := time.Now()
		sent := 0
		for ; sent < inFlight; sent++ {
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok"}}`, sent))
		}
		for done := 0; done < total; done++ {
			s.recv()
			if sent < total {
				s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok"}}`, sent))
				sent++
			}
		}
		rate := float64(total) / time.Since(start).Seconds()
		s.stop()

		bp50 := pct(bare, 50)
		b.ReportMetric(float64(pct(lat, 50))/float64(bp50), "p50/bare")
		b.ReportMetric(float64(pct(lat, 99))/float64(bp50), "p99/bare")
		b.ReportMetric(float64(bp50.Microseconds()), "bare-p50-µs")
		b.ReportMetric(float64(pct(lat, 50).Microseconds()), "call-p50-µs")
		b.ReportMetric(float64(pct(cold, 50).Microseconds())/1000, "cold-start-ms")
		b.ReportMetric(rate, "calls/s@16")
	}
}

// BenchmarkConfine measures what confinement costs a call: the p50 of a
// tools/call to a trivial sh tool through mcp-route confined (the
// default, where Landlock is) and with --confine off, both servers alive
// in the same run, called in turns so that a load spike hits both. The
// goal is confined/off <= 1.10. Run it once:
//
//	go test -run '^$' -bench Confine -benchtime 1x ./mcp-route
func BenchmarkConfine(b *testing.B) {
	confinetest.Need(b, 1)
	bin := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	dir := b.TempDir()
	toolPath := filepath.Join(dir, "ok")
	if err := os.WriteFile(toolPath, []byte("#!/bin/sh\necho ok\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(toolPath+".json", []byte(`{"description":"prints ok"}`), 0o644)
	root := b.TempDir()
	const calls = 400
	for range b.N {
		confined := startServer(b, bin, dir, "--root", root, "--confine", "require")
		off := startServer(b, bin, dir, "--root", root, "--confine", "off")
		servers := []*server{confined, off}
		lat := [2][]time.Duration{}
		for _, s := range servers {
			s.send(initLine)
			s.recv()
		}
		for i := range calls {
			for k, s := range servers {
				start := time.Now()
				s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ok","arguments":{}}}`, i+2))
				if l := s.recv(); !strings.Contains(string(l), `"ok\n"`) {
					b.Fatalf("call: %s", l)
				}
				lat[k] = append(lat[k], time.Since(start))
			}
		}
		for _, s := range servers {
			s.stop()
		}
		c50, o50 := pct(lat[0], 50), pct(lat[1], 50)
		b.ReportMetric(float64(c50)/float64(o50), "confined/off-p50")
		b.ReportMetric(float64(c50.Microseconds()), "confined-p50-µs")
		b.ReportMetric(float64(o50.Microseconds()), "off-p50-µs")
		b.ReportMetric(float64(pct(lat[0], 99))/float64(pct(lat[1], 99)), "confined/off-p99")
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

type server struct {
	b     *testing.B
	cmd   *exec.Cmd
	in    io.WriteCloser
	r     *codec.Reader
	ctx   context.Context
	close context.CancelFunc
}

func startServer(b *testing.B, bin, dir string, args ...string) *server {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, append([]string{"--tools", dir, "--log", filepath.Join(b.TempDir(), "log"), "--max-procs", "16"}, args...)...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &server{b: b, cmd: cmd, in: in, r: codec.NewReader(out, 0), ctx: ctx, close: cancel}
}

func (s *server) send(line string) {
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.b.Fatal(err)
	}
}

func (s *server) recv() []byte {
	l, err := s.r.ReadFrame()
	if err != nil {
		s.b.Fatalf("read: %v", err)
	}
	return l
}

func (s *server) stop() {
	s.in.Close()
	s.cmd.Wait()
	s.close()
}

// BenchmarkWorker compares, in one run, one tool (internal/testbin/
// testworker, a Go binary) exec'd per call and served by workers
// (run.mode "worker", 4 workers): the p50 latency of one call at a time,
// calls/s with 16 in flight, and mcp-route's peak RSS with the pool. Run
// it once:
//
//	go test -run '^$' -bench Worker -benchtime 1x ./mcp-route
func BenchmarkWorker(b *testing.B) {
	bin := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	tw := testbin.Path(b, "MCP_TESTWORKER_BIN", "internal/testbin/testworker")
	dir := b.TempDir()
	for name, run := range map[string]string{"exec": `{}`, "worker": `{"mode":"worker","workers":4}`} {
		if err := os.Symlink(tw, filepath.Join(dir, name)); err != nil {
			b.Fatal(err)
		}
		def := fmt.Sprintf(`{"description":"testworker, %s mode","run":%s}`, name, run)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(def), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	call := func(id int, tool string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"output":"ok"}}}`, id, tool)
	}
	for range b.N {
		s := startServer(b, bin, dir)
		s.send(initLine)
		s.recv()
		for _, tool := range []string{"exec", "worker"} {
			const calls = 300
			lat := make([]time.Duration, calls)
			for i := range lat {
				start := time.Now()
				s.send(call(i, tool))
				if l := s.recv(); !strings.Contains(string(l), `"text":"ok"`) {
					b.Fatalf("call: %s", l)
				}
				lat[i] = time.Since(start)
			}
			const inFlight, total = 16, 2000
			start := time.Now()
			sent := 0
			for ; sent < inFlight; sent++ {
				s.send(call(sent, tool))
			}
			for done := 0; done < total; done++ {
				if l := s.recv(); !strings.Contains(string(l), `"text":"ok"`) {
					b.Fatalf("call: %s", l)
				}
				if sent < total {
					s.send(call(sent, tool))
					sent++
				}
			}
			rate := float64(total) / time.Since(start).Seconds()
			b.ReportMetric(float64(pct(lat, 50).Microseconds()), tool+"-p50-µs")
			b.ReportMetric(float64(pct(lat, 99).Microseconds()), tool+"-p99-µs")
			b.ReportMetric(rate, tool+"-calls/s@16")
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid)); err == nil {
			for line := range strings.Lines(string(st)) {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
					var kb float64
					fmt.Sscan(f[1], &kb)
					b.ReportMetric(kb/1024, "route-peak-RSS-MiB")
				}
			}
		}
		s.stop()
	}
}

// BenchmarkWorkerInProcess runs mcp-route in this process (run, over
// in-memory pipes) in front of the stock pack's workers, and makes
// tools/call fs_read calls: one in flight (serial: ns/op is a call's
// latency) and 16 in flight (parallel: ns/op is the time per call). Its
// point is a CPU profile of mcp-route's side of the worker path:
//
//	go test -run '^$' -bench WorkerInProcess -cpuprofile cpu.out ./mcp-route
func BenchmarkWorkerInProcess(b *testing.B) {
	stock := testbin.Path(b, "MCP_STOCK_BIN", "mcp-stock")
	dir := b.TempDir()
	tools, root := filepath.Join(dir, "tools"), filepath.Join(dir, "root")
	if out, err := exec.Command(stock, "install", tools).CombinedOutput(); err != nil {
		b.Fatalf("mcp-stock install: %v\n%s", err, out)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--tools", tools, "--root", root, "--poll", "0", "--describe-cache", ""}, inR, outW, io.Discard)
		outW.Close()
	}()
	lines := codec.NewReader(outR, 0)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	recv := func() []byte {
		l, err := lines.ReadFrame()
		if err != nil {
			b.Fatalf("server output ended: %v", err)
		}
		return l
	}
	send(initLine)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a.txt"}}}`
	}
	check := func(l []byte) {
		if !strings.Contains(string(l), `"text":"hello\n"`) {
			b.Fatalf("answer %s", l)
		}
	}
	for i := range 100 { // workers started, warm
		send(call(i))
		check(recv())
	}
	b.Run("serial", func(b *testing.B) {
		for i := range b.N {
			send(call(i))
			check(recv())
		}
	})
	b.Run("16-in-flight", func(b *testing.B) {
		sent := 0
		for ; sent < min(16, b.N); sent++ {
			send(call(sent))
		}
		for range b.N {
			check(recv())
			if sent < b.N {
				send(call(sent))
				sent++
			}
		}
	})
	inW.Close()
	if code := <-done; code != 0 {
		b.Errorf("exit status %d", code)
	}
}
