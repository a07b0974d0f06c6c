package httpserve

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func scrapeText(t *testing.T, m *Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q, want Prometheus text 0.0.4", ct)
	}
	return w.Body.String()
}

// TestMetricsExposition: every sample line belongs to a family announced
// by # HELP and # TYPE, families come sorted, and the histogram counts
// cumulatively into its buckets.
func TestMetricsExposition(t *testing.T) {
	m := NewMetrics(func() (int, int) { return 2, 3 })
	m.ObserveCall("echo", "ok", 3*time.Millisecond, true, false)
	m.ObserveCall("echo", "ok", 2*time.Second, true, true)
	m.ObserveCall("", "busy", 0, false, false)
	m.sessions.Inc()
	m.streams.Inc()
	m.streams.Inc()
	m.streams.Dec()
	out := scrapeText(t, m)
	for _, want := range []string{
		"mcp_route_calls_in_flight 2\n",
		"mcp_route_calls_queued 3\n",
		`mcp_route_calls_total{outcome="busy",tool=""} 1` + "\n",
		`mcp_route_calls_total{outcome="ok",tool="echo"} 2` + "\n",
		`mcp_route_call_duration_seconds_bucket{tool="echo",le="0.001"} 0` + "\n",
		`mcp_route_call_duration_seconds_bucket{tool="echo",le="0.004"} 1` + "\n",
		`mcp_route_call_duration_seconds_bucket{tool="echo",le="1.024"} 1` + "\n",
		`mcp_route_call_duration_seconds_bucket{tool="echo",le="4.096"} 2` + "\n",
		`mcp_route_call_duration_seconds_bucket{tool="echo",le="+Inf"} 2` + "\n",
		`mcp_route_call_duration_seconds_sum{tool="echo"} 2.003` + "\n",
		`mcp_route_call_duration_seconds_count{tool="echo"} 2` + "\n",
		"mcp_route_processes_started_total 2\n",
		"mcp_route_processes_killed_total 1\n",
		"mcp_route_sessions_issued_total 1\n",
		"mcp_route_streams_open 1\n",
		"# TYPE mcp_route_call_duration_seconds histogram\n",
		"# TYPE go_gc_duration_seconds summary\n",
		"go_gc_gogc_percent ",
		"go_gc_heap_live_bytes ",
		"go_goroutines ",
		"go_memstats_heap_alloc_bytes ",
		"process_resident_memory_bytes ",
		"process_open_fds ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	typed := map[string]bool{}
	var order []string
	for line := range strings.Lines(out) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name := strings.Fields(rest)[0]
			typed[name] = true
			order = append(order, name)
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		base := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok && typed[b] {
				base = b
			}
		}
		if !typed[base] {
			t.Errorf("sample %q before or without its # TYPE", line)
		}
	}
	if !slices.IsSorted(order) {
		t.Errorf("families not sorted: %v", order)
	}
}

// TestMetricsLabelInjection: a tool name is the client's to choose (a call
// to a tool that does not exist is counted too); quotes, backslashes and
// newlines in it stay inside the label value and cannot forge a sample.
func TestMetricsLabelInjection(t *testing.T) {
	m := NewMetrics(func() (int, int) { return 0, 0 })
	evil := "x\"} 1\nmcp_route_processes_killed_total 999\n#\\"
	m.ObserveCall(evil, "failed", time.Millisecond, false, false)
	m.ObserveCall("plain", "ok", time.Millisecond, false, false)
	out := scrapeText(t, m)
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "mcp_route_processes_killed_total 999") {
			t.Errorf("a tool name forged a sample:\n%s", out)
		}
	}
	want := `mcp_route_calls_total{outcome="failed",tool="x\"} 1\nmcp_route_processes_killed_total 999\n#\\"} 1` + "\n"
	if !strings.Contains(out, want) {
		t.Errorf("no escaped sample %q in\n%s", want, out)
	}
	if !strings.Contains(out, "\nmcp_route_processes_killed_total 0\n") {
		t.Errorf("killed_total not 0:\n%s", out)
	}
	if !strings.Contains(out, `mcp_route_calls_total{outcome="ok",tool="plain"} 1`+"\n") {
		t.Errorf("the plain tool's sample is missing:\n%s", out)
	}
}
