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

	timeRun := func(name string, args ...string) time.Duration {
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
		return time.Since(start)
	}

	var frame, catT time.Duration
	for b.Loop() {
		frame += timeRun(bin)
		catT += timeRun(cat)
	}
	n := float64(b.N)
	frameMBs := size * n / frame.Seconds()
	catMBs := size * n / catT.Seconds()
	b.ReportMetric(frameMBs, "mcp-frame-MB/s")
	b.ReportMetric(catMBs, "cat-MB/s")
	b.ReportMetric(catMBs/frameMBs, "cat/mcp-frame")
}
