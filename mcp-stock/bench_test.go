package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// BenchmarkToolExec measures a stock tool the way mcp-route meets it: exec
// the fs_read link with its arguments on stdin and MCP_ROOT set, wait for it
// to exit. It reports the p50 of that against the p50 of a static Go
// hello-world built in the same run (the floor any Go tool pays for fork,
// exec and the runtime), so the ratio is what the stock pack adds on top:
// package init, the registry, the jail. The two are run interleaved so a
// load spike hits both. Run it once:
//
//	go test -run '^$' -bench ToolExec -benchtime 1x ./mcp-stock
func BenchmarkToolExec(b *testing.B) {
	bin := testbin.Path(b, "MCP_STOCK_BIN", "mcp-stock")
	hello := buildHello(b)
	dir := b.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello from the root\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	link := filepath.Join(dir, "fs_read")
	if err := os.Symlink(bin, link); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "MCP_ROOT=" + root}
	run := func(prog, want string) time.Duration {
		cmd := exec.Command(prog)
		cmd.Stdin = strings.NewReader(`{"path":"a.txt"}`)
		cmd.Env = env
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || !strings.Contains(string(out), want) {
			b.Fatalf("%s: %v, stdout %q", prog, err, out)
		}
		return d
	}
	const execs = 300
	for range b.N {
		tool := make([]time.Duration, execs)
		floor := make([]time.Duration, execs)
		for i := range execs {
			tool[i] = run(link, "hello from the root")
			floor[i] = run(hello, "hello")
		}
		tp50, fp50 := pct(tool, 50), pct(floor, 50)
		b.ReportMetric(float64(tp50)/float64(fp50), "tool/hello")
		b.ReportMetric(float64(tp50.Microseconds()), "tool-p50-µs")
		b.ReportMetric(float64(fp50.Microseconds()), "hello-p50-µs")
	}
}

// BenchmarkWorkerRoundTrip measures what run.mode "worker" saves: the p50
// of one fs_read request and its answer over a running mcp-stock worker
// (MCP_WORKER=1, started once through the fs_read link), against the p50
// of exec'ing the same link for the same call, interleaved so a load spike
// hits both. Run it once:
//
//	go test -run '^$' -bench WorkerRoundTrip -benchtime 1x ./mcp-stock
func BenchmarkWorkerRoundTrip(b *testing.B) {
	bin := testbin.Path(b, "MCP_STOCK_BIN", "mcp-stock")
	dir := b.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello from the root\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	link := filepath.Join(dir, "fs_read")
	if err := os.Symlink(bin, link); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "MCP_ROOT=" + root}
	execOnce := func() time.Duration {
		cmd := exec.Command(link)
		cmd.Stdin = strings.NewReader(`{"path":"a.txt"}`)
		cmd.Env, cmd.Dir = env, root
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil || string(out) != "hello from the root\n" {
			b.Fatalf("exec fs_read: %v, stdout %q", err, out)
		}
		return d
	}
	w := exec.Command(link)
	w.Env, w.Dir = append(env, "MCP_WORKER=1"), root
	stdin, err := w.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := w.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); w.Wait() }()
	answers := bufio.NewReader(stdout)
	id := 0
	roundTrip := func() time.Duration {
		id++
		req := fmt.Sprintf(`{"id":%d,"tool":"fs_read","arguments":{"path":"a.txt"},"protocolVersion":"2025-06-18"}`+"\n", id)
		want := fmt.Sprintf(`{"id":%d,"output":"hello from the root\n"}`+"\n", id)
		start := time.Now()
		if _, err := io.WriteString(stdin, req); err != nil {
			b.Fatal(err)
		}
		line, err := answers.ReadString('\n')
		d := time.Since(start)
		if err != nil || line != want {
			b.Fatalf("worker fs_read: %v, answer %q, want %q", err, line, want)
		}
		return d
	}
	roundTrip() // the worker's start is not a call's cost
	const calls = 300
	for range b.N {
		viaExec := make([]time.Duration, calls)
		viaWorker := make([]time.Duration, calls)
		for i := range calls {
			viaExec[i] = execOnce()
			viaWorker[i] = roundTrip()
		}
		// And back to back, as a busy worker runs.
		alone := make([]time.Duration, 3*calls)
		for i := range alone {
			alone[i] = roundTrip()
		}
		b.ReportMetric(float64(pct(alone, 50).Nanoseconds())/1e3, "worker-alone-p50-µs")
		ep50, wp50 := pct(viaExec, 50), pct(viaWorker, 50)
		b.ReportMetric(float64(ep50.Microseconds()), "exec-p50-µs")
		b.ReportMetric(float64(wp50.Nanoseconds())/1e3, "worker-p50-µs")
		b.ReportMetric(float64(pct(viaWorker, 99).Nanoseconds())/1e3, "worker-p99-µs")
		b.ReportMetric(float64(ep50)/float64(wp50), "exec/worker")
	}
}

// buildHello builds a static hello-world with the go command that runs the
// benchmark; without one (under Bazel) the benchmark is skipped.
func buildHello(b *testing.B) string {
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build the hello-world floor with")
	}
	dir := b.TempDir()
	src := "package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello\\n\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(gobin, "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build hello: %v\n%s", err, msg)
	}
	return out
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
