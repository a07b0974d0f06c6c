package httpserve

import (
	"net/http"
	"regexp"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are mcp-route's Prometheus metrics, served at /metrics with the
// Go runtime's and the process's (go_goroutines, go_memstats_*,
// go_gc_heap_live_bytes, process_*).
type Metrics struct {
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	started  prometheus.Counter
	killed   prometheus.Counter
	sessions prometheus.Counter
	streams  prometheus.Gauge
	handler  http.Handler
}

// NewMetrics returns the metrics; load reports the tools/call requests
// running and queued at scrape time.
func NewMetrics(load func() (running, queued int)) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcp_route_calls_total", Help: "tools/call requests finished, by tool and outcome (ok, tool_error, timeout, canceled, busy, failed).",
		}, []string{"tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcp_route_call_duration_seconds", Help: "Time a tools/call took, from its admission to its result, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"tool"}),
		started:  prometheus.NewCounter(prometheus.CounterOpts{Name: "mcp_route_processes_started_total", Help: "Tool processes started for calls (exec'd calls; workers count once per call they serve)."}),
		killed:   prometheus.NewCounter(prometheus.CounterOpts{Name: "mcp_route_processes_killed_total", Help: "Tool calls whose process was stopped: cancelled, timed out or over the output cap."}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{Name: "mcp_route_sessions_issued_total", Help: "Mcp-Session-Id tokens issued by initialize."}),
		streams:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcp_route_streams_open", Help: "Long-lived SSE streams open now: GET streams and subscriptions/listen (--http-max-streams caps them)."}),
	}
	reg.MustRegister(m.calls, m.latency, m.started, m.killed, m.sessions, m.streams,
		// go_gc_heap_live_bytes too: the heap kept after the last GC,
		// what a leak grows (heap in use swings with garbage).
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_route_calls_in_flight", Help: "tools/call requests running a tool now."},
			func() float64 { r, _ := load(); return float64(r) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcp_route_calls_queued", Help: "tools/call requests waiting for a process slot (--max-procs)."},
			func() float64 { _, q := load(); return float64(q) }),
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// ObserveCall records one finished tools/call.
func (m *Metrics) ObserveCall(tool, outcome string, elapsed time.Duration, started, killed bool) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.latency.WithLabelValues(tool).Observe(elapsed.Seconds())
	if started {
		m.started.Inc()
	}
	if killed {
		m.killed.Inc()
	}
}
