package main

import (
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
