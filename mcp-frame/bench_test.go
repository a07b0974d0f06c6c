package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/mcp-frame/internal/capture"
)

// BenchmarkFilterVsCat runs the built mcp-frame and cat(1) on the same 64 MiB
// capture file (both sides of a session, one frame per line) with stdout on
// /dev/null, in the same run, and reports the throughput of each and the
// ratio: what putting mcp-frame in a pipe costs next to the cheapest filter.
//
//	go test -run '^$' -bench FilterVsCat ./mcp-frame
func BenchmarkFilterVsCat(b *testing.B) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat on PATH")
	}
	bin := testbin.Path(b, "MCP_FRAME_BIN", "mcp-frame")
	in := filepath.Join(b.TempDir(), "session.jsonl")
	data := capture.Session(64 << 20)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		b.Fatal(err)
	}
	size := float64(len(data)) / (1 << 20)
	data = nil

	// timeRun returns the wall time and the CPU time (user + system) of one
	// run: on a shared machine the CPU time is the steadier figure.
	timeRun := func(name string, args ...string) (wall, cpu time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		f, err := os.Open(in)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer null.Close()
		cmd := exec.CommandContext(ctx, name, args...)
		var stderr bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = f, null, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, stderr.String())
		}
		wall = time.Since(start)
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}

	var frameWall, frameCPU, catWall, catCPU time.Duration
	for b.Loop() {
		w, c := timeRun(bin)
		frameWall, frameCPU = frameWall+w, frameCPU+c
		w, c = timeRun(cat)
		catWall, catCPU = catWall+w, catCPU+c
	}
	mbs := func(d time.Duration) float64 { return size * float64(b.N) / max(d.Seconds(), 1e-9) }
	b.ReportMetric(mbs(frameWall), "mcp-frame-MB/s")
	b.ReportMetric(mbs(catWall), "cat-MB/s")
	b.ReportMetric(mbs(catWall)/mbs(frameWall), "cat/mcp-frame")
	b.ReportMetric(mbs(frameCPU), "mcp-frame-cpu-MB/s")
	b.ReportMetric(mbs(catCPU), "cat-cpu-MB/s")
}
