package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkToolServers puts the stock pack's fs_read, served by mcp-route
// from a worker, beside the reference servers the performance goals of
// persistent workers name:
//
//   - route-worker: mcp-route over `mcp-stock install`ed tools (run.mode
//     "worker", as installed), fs_read of a small file;
//   - route-exec: the same, with a sidecar fs_read.json that says run.mode
//     "exec" (a process per call);
//   - server-fs: @modelcontextprotocol/server-filesystem, read_text_file of
//     the same file;
//   - gosdk-add: the Go SDK server (interop/gosdk-server), its in-process
//     add.
//
// One minimal JSON-RPC client (benchConn) drives every server the same
// way over stdio pipes. The servers take turns in rounds, each round
// rotating who goes first, so a load spike on the shared machine hits all
// alike. Per server: p50 and p99 with one call in flight, calls/s with 16
// in flight, and the peak RSS (VmHWM summed over the server's process tree
// at the end: mcp-route and its workers). Then the goals as ratios:
// fs_read(worker)/read_text_file p50 (goal <= 0.5), calls/s@16
// worker/server-fs (goal >= 1), worker/gosdk-add p50 (goal <= 2).
//
// It needs the Node servers: MCP_INTEROP_NODE_DIR, or else
// ~/.cache/mcpipe-interop, filled by interop/setup-node.sh; without them
// it skips, saying so. Run it once:
//
//	go test -run '^$' -bench ToolServers -benchtime 1x ./e2e
func BenchmarkToolServers(b *testing.B) {
	fsBin := benchNodeFilesystem(b)
	dir := b.TempDir()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	const content = "hello from the benchmark root\n"
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(root, "a.txt")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	workerTools := benchStockInstall(b, filepath.Join(dir, "tools-worker"), "")
	execTools := benchStockInstall(b, filepath.Join(dir, "tools-exec"), "exec")
	route := testbin.Path(b, "MCP_ROUTE_BIN", "mcp-route")
	routeArgs := func(tools string) []string {
		return []string{route, "--tools", tools, "--root", root, "--poll", "0"}
	}
	readArgs := `{"name":"fs_read","arguments":{"path":"a.txt"}}`
	wantText := `"text":` + strconv.Quote(content)
	servers := []*benchServer{
		{name: "route-worker", argv: routeArgs(workerTools), params: readArgs, want: wantText},
		{name: "route-exec", argv: routeArgs(execTools), params: readArgs, want: wantText},
		{name: "server-fs", argv: []string{fsBin, root},
			params: `{"name":"read_text_file","arguments":{"path":` + strconv.Quote(file) + `}}`, want: wantText},
		{name: "gosdk-add", argv: []string{testbin.Path(b, "MCP_GOSDK_SERVER_BIN", "e2e/interop/gosdk-server")},
			params: `{"name":"add","arguments":{"a":20,"b":22}}`, want: `"sum":42`},
	}
	for _, s := range servers {
		s.start(b, dir)
	}

	const (
		rounds   = 5
		serial   = 200 // calls per round, one in flight
		inFlight = 16
		parallel = 800 // calls per round, inFlight at once
		warmup   = 50
	)
	for _, s := range servers {
		for range warmup {
			s.call(b)
		}
		s.runParallel(b, inFlight, 4*inFlight)
	}
	b.ResetTimer()
	for range b.N {
		for r := range rounds {
			for i := range servers {
				s := servers[(r+i)%len(servers)]
				s.lat = append(s.lat, s.runSerial(b, serial)...)
				n, d := s.runParallel(b, inFlight, parallel)
				s.parCalls += n
				s.parTime += d
			}
		}
	}
	b.StopTimer()
	for _, s := range servers {
		s.rss = treeHWM(s.conn.cmd.Process.Pid)
	}

	var table strings.Builder
	fmt.Fprintf(&table, "\n%-13s %10s %10s %12s %10s\n", "server", "p50", "p99", "calls/s@16", "peak RSS")
	for _, s := range servers {
		slices.Sort(s.lat)
		s.p50, s.p99 = s.lat[len(s.lat)/2], s.lat[len(s.lat)*99/100]
		s.rate = float64(s.parCalls) / s.parTime.Seconds()
		fmt.Fprintf(&table, "%-13s %10v %10v %12.0f %9.1fM\n", s.name,
			s.p50.Round(time.Microsecond), s.p99.Round(time.Microsecond), s.rate, float64(s.rss)/(1<<20))
		b.ReportMetric(float64(s.p50.Microseconds()), s.name+"-p50-µs")
		b.ReportMetric(float64(s.p99.Microseconds()), s.name+"-p99-µs")
		b.ReportMetric(s.rate, s.name+"-calls/s@16")
		b.ReportMetric(float64(s.rss)/(1<<20), s.name+"-peakRSS-MB")
	}
	worker, fs, gosdk := servers[0], servers[2], servers[3]
	ratios := []struct {
		name, goal string
		v          float64
		met        bool
	}{
		{"fs_read(worker)/read_text_file p50", "<= 0.5", float64(worker.p50) / float64(fs.p50), float64(worker.p50) <= 0.5*float64(fs.p50)},
		{"calls/s@16 worker/server-fs", ">= 1", worker.rate / fs.rate, worker.rate >= fs.rate},
		{"fs_read(worker)/gosdk add p50", "<= 2", float64(worker.p50) / float64(gosdk.p50), float64(worker.p50) <= 2*float64(gosdk.p50)},
	}
	for _, r := range ratios {
		verdict := "met"
		if !r.met {
			verdict = "MISSED"
		}
		fmt.Fprintf(&table, "%-36s %6.2f  goal %-6s %s\n", r.name, r.v, r.goal, verdict)
	}
	b.ReportMetric(ratios[0].v, "worker/fs-p50")
	b.ReportMetric(ratios[1].v, "worker/fs-calls/s")
	b.ReportMetric(ratios[2].v, "worker/gosdk-p50")
	b.Log(table.String())
}

// benchNodeFilesystem returns server-filesystem's executable, or skips.
func benchNodeFilesystem(b *testing.B) string {
	dir := os.Getenv("MCP_INTEROP_NODE_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			b.Skipf("MCP_INTEROP_NODE_DIR not set and no home directory (%v): run e2e/interop/setup-node.sh DIR and set MCP_INTEROP_NODE_DIR=DIR", err)
		}
		dir = filepath.Join(home, ".cache", "mcpipe-interop")
	}
	if _, err := exec.LookPath("node"); err != nil {
		b.Skipf("node is not in PATH (%v): server-filesystem cannot run", err)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("no server-filesystem in %s (%v): run e2e/interop/setup-node.sh %s, or set MCP_INTEROP_NODE_DIR to where it ran", dir, err, dir)
	}
	return bin
}

// benchStockInstall installs the stock pack into dir; with mode set, a
// sidecar fs_read.json gives fs_read that run.mode, the rest of its
// definition as the tool describes itself.
func benchStockInstall(b *testing.B, dir, mode string) string {
	out, err := exec.Command(testbin.Path(b, "MCP_STOCK_BIN", "mcp-stock"), "install", dir).CombinedOutput()
	if err != nil {
		b.Fatalf("mcp-stock install %s: %v\n%s", dir, err, out)
	}
	if mode == "" {
		return dir
	}
	desc, err := exec.Command(filepath.Join(dir, "fs_read"), "--mcp-describe").Output()
	if err != nil {
		b.Fatalf("fs_read --mcp-describe: %v", err)
	}
	var def map[string]any
	if err := json.Unmarshal(desc, &def); err != nil {
		b.Fatalf("fs_read --mcp-describe: %v", err)
	}
	run, _ := def["run"].(map[string]any)
	if run == nil {
		run = map[string]any{}
	}
	run["mode"] = mode
	delete(run, "concurrency")
	def["run"] = run
	sidecar, err := json.Marshal(def)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs_read.json"), sidecar, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchServer is one server under the benchmark and what it measured.
type benchServer struct {
	name   string
	argv   []string
	params string // of each tools/call
	want   string // in each result

	conn     *benchConn
	lat      []time.Duration
	parCalls int
	parTime  time.Duration

	p50, p99 time.Duration
	rate     float64
	rss      int64
}

func (s *benchServer) start(b *testing.B, dir string) {
	c, err := startBenchConn(s.argv, dir)
	if err != nil {
		b.Fatalf("%s: %v", s.name, err)
	}
	s.conn = c
	b.Cleanup(func() {
		if err := c.close(); err != nil {
			b.Errorf("%s: %v", s.name, err)
		}
	})
	init := `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`
	if _, err := c.call("initialize", init); err != nil {
		b.Fatalf("%s: initialize: %v", s.name, err)
	}
	if err := c.notify("notifications/initialized"); err != nil {
		b.Fatalf("%s: %v", s.name, err)
	}
}

// call makes one tools/call and checks its answer.
func (s *benchServer) call(b *testing.B) {
	res, err := s.conn.call("tools/call", s.params)
	if err != nil {
		b.Fatalf("%s: %v", s.name, err)
	}
	if !bytes.Contains(res, []byte(s.want)) || bytes.Contains(res, []byte(`"isError":true`)) {
		b.Fatalf("%s: result %s, want one with %s", s.name, res, s.want)
	}
}

func (s *benchServer) runSerial(b *testing.B, n int) []time.Duration {
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		s.call(b)
		lat[i] = time.Since(start)
	}
	return lat
}

// runParallel makes n calls, inFlight at a time, and returns how many and
// how long they took.
func (s *benchServer) runParallel(b *testing.B, inFlight, n int) (int, time.Duration) {
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				res, err := s.conn.call("tools/call", s.params)
				if err != nil || !bytes.Contains(res, []byte(s.want)) {
					b.Errorf("%s: %v %s", s.name, err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	return n, time.Since(start)
}

// benchConn is a minimal JSON-RPC client over a server's stdio: requests
// written whole in one write each, answers matched by id by one reader.
type benchConn struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proctest.Buffer
	wmu    sync.Mutex
	next   atomic.Int64

	mu      sync.Mutex
	waiting map[int64]chan benchReply
	dead    error
	done    chan struct{}
}

type benchReply struct {
	result json.RawMessage
	err    error
}

func startBenchConn(argv []string, dir string) (*benchConn, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c := &benchConn{cmd: cmd, stderr: &proctest.Buffer{}, waiting: map[int64]chan benchReply{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go c.read(stdout)
	return c, nil
}

func (c *benchConn) read(stdout io.Reader) {
	defer close(c.done)
	r := bufio.NewReaderSize(stdout, 1<<16)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		if err != nil {
			break
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err = json.Unmarshal(line, &m); err != nil {
			err = fmt.Errorf("bad line %q: %w", line, err)
			break
		}
		if m.Method != "" {
			if m.ID != nil { // a request of the server's: we serve none
				c.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not served"}}`+"\n", m.ID))
			}
			continue
		}
		id, perr := strconv.ParseInt(string(m.ID), 10, 64)
		c.mu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.mu.Unlock()
		if perr != nil || ch == nil {
			err = fmt.Errorf("answer to no request: %s", line)
			break
		}
		if m.Error != nil {
			ch <- benchReply{err: fmt.Errorf("error %s", m.Error)}
		} else {
			ch <- benchReply{result: m.Result}
		}
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its stdout")
	}
	c.mu.Lock()
	c.dead = fmt.Errorf("%w; stderr: %s", err, c.stderr.String())
	for id, ch := range c.waiting {
		ch <- benchReply{err: c.dead}
		delete(c.waiting, id)
	}
	c.mu.Unlock()
}

func (c *benchConn) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(line)
	return err
}

func (c *benchConn) call(method, params string) (json.RawMessage, error) {
	id := c.next.Add(1)
	ch := make(chan benchReply, 1)
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return nil, c.dead
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	if err := c.write(line); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-time.After(waitLong):
		return nil, fmt.Errorf("%s: no answer within %v", method, waitLong)
	}
}

func (c *benchConn) notify(method string) error {
	return c.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q}`+"\n", method))
}

// close closes the server's stdin and waits for it, killing its process
// group if it lingers.
func (c *benchConn) close() error {
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(waitLong):
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(waitLong):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return fmt.Errorf("did not exit within %v of EOF", waitLong)
	}
}

// treeHWM is the peak RSS (VmHWM) in bytes summed over pid and its
// descendants that are alive now.
func treeHWM(pid int) int64 {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var sum int64
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for l := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					sum += kb << 10
				}
			}
		}
	}
	return sum
}
