package filter

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-frame/internal/capture"
)

// TestCaptureRoundTrip: the benchmark's capture is valid and already
// canonical, so the filter writes it back byte for byte.
func TestCaptureRoundTrip(t *testing.T) {
	in := capture.Session(1 << 20)
	var out bytes.Buffer
	var reps []string
	st, err := Run(bytes.NewReader(in), &out, Options{Report: func(line int, r string) { reps = append(reps, r) }})
	if err != nil || len(reps) > 0 || st.Bad != 0 {
		t.Fatalf("err %v, reports %v", err, reps)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Error("output differs from the canonical input")
	}
}

// BenchmarkFilter measures the library on a realistic capture of both sides
// of a session (8 MiB, in memory): read, decode, check, re-encode, write.
func BenchmarkFilter(b *testing.B) {
	in := capture.Session(8 << 20)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(bytes.NewReader(in), io.Discard, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilterCheck is BenchmarkFilter in lint mode (no encoding).
func BenchmarkFilterCheck(b *testing.B) {
	in := capture.Session(8 << 20)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Run(bytes.NewReader(in), io.Discard, Options{Check: true}); err != nil {
			b.Fatal(err)
		}
	}
}
