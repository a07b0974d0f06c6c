package filter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

// FuzzFilter feeds arbitrary bytes to the filter, one side at a time. It
// must not fail or panic; every frame it writes is one line that decodes and
// passes the checks on its own; Stats add up; and the output is a fixed
// point: filtering it again reports nothing and changes nothing.
func FuzzFilter(f *testing.F) {
	for _, rev := range codec.Revisions {
		f.Add([]byte(lines(clientStream(rev))), uint8(1), uint8(0))
		f.Add([]byte(lines(serverStream(rev))), uint8(2), uint8(0))
	}
	f.Add([]byte("junk\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\n[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"x\"}"), uint8(0), uint8(3))
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"+
		`[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, from, pin uint8) {
		opts := Options{From: codec.Direction(from % 3), MaxFrame: 4096}
		if p := int(pin) % (len(codec.Revisions) + 1); p > 0 {
			opts.Revision = codec.Revisions[p-1]
		}
		if opts.From == codec.FromAny {
			// Pairing makes a second pass differ when a bad answer was
			// dropped; the fixed point holds for one side at a time.
			opts.From = codec.FromServer
		}
		var reports int
		opts.Report = func(int, string) { reports++ }
		var out bytes.Buffer
		st, err := Run(bytes.NewReader(in), &out, opts)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if st.Bad > reports || st.Bad > st.Frames {
			t.Fatalf("stats %+v with %d reports", st, reports)
		}
		for _, l := range strings.SplitAfter(out.String(), "\n") {
			if l == "" {
				continue
			}
			if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
				t.Fatalf("output frame %q is not one line", l)
			}
			if _, _, err := codec.DecodeFrame([]byte(l), true); err != nil {
				t.Fatalf("output frame %q does not decode: %v", l, err)
			}
		}
		again := out.String()
		reports = 0
		var out2 bytes.Buffer
		if _, err := Run(strings.NewReader(again), &out2, opts); err != nil {
			t.Fatal(err)
		}
		if reports != 0 || out2.String() != again {
			t.Fatalf("not a fixed point: %d reports\nfirst:  %q\nsecond: %q", reports, again, out2.String())
		}
	})
}
