package httpserve

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"net/http"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics are mcp-route's metrics, served at /metrics in the Prometheus
// text exposition format (version 0.0.4), with the Go runtime's and the
// process's (go_goroutines, go_memstats_*, go_gc_heap_live_bytes,
// process_*): what a Prometheus server scrapes.
//
// They are written here on the standard library alone, not with
// prometheus/client_golang: that library registers its collectors at init
// in every process that links it, a stdio server included (about 1 ms and
// 3.7 MB of heap), and with protobuf it was a fifth of mcp-route's binary.
// Nothing here runs before NewMetrics, which only --http calls: a stdio
// server pays nothing. A scrape reads the runtime and /proc/self when it
// comes; no goroutine runs between scrapes.
//
// Safe for concurrent use; a nil *Metrics records nothing.
type Metrics struct {
	load     func() (running, queued int)
	started  counter
	killed   counter
	sessions counter
	streams  counter // a gauge: Inc and Dec

	mu      sync.Mutex
	calls   map[[2]string]uint64 // by {tool, outcome}
	latency map[string]*histogram
}

// callBuckets are the upper bounds of mcp_route_call_duration_seconds: 1 ms
// times powers of 4, up to 262 s.
var callBuckets = func() []float64 {
	b := make([]float64, 10)
	for i, v := 0, 0.001; i < len(b); i, v = i+1, v*4 {
		b[i] = v
	}
	return b
}()

// NewMetrics returns the metrics; load reports the tools/call requests
// running and queued at scrape time.
func NewMetrics(load func() (running, queued int)) *Metrics {
	return &Metrics{load: load, calls: map[[2]string]uint64{}, latency: map[string]*histogram{}}
}

// ObserveCall records one finished tools/call.
func (m *Metrics) ObserveCall(tool, outcome string, elapsed time.Duration, started, killed bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.calls[[2]string{tool, outcome}]++
	h := m.latency[tool]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(callBuckets)+1)}
		m.latency[tool] = h
	}
	h.observe(elapsed.Seconds())
	m.mu.Unlock()
	if started {
		m.started.Inc()
	}
	if killed {
		m.killed.Inc()
	}
}

type counter struct{ n atomic.Int64 }

func (c *counter) Inc()           { c.n.Add(1) }
func (c *counter) Dec()           { c.n.Add(-1) }
func (c *counter) value() float64 { return float64(c.n.Load()) }

// histogram counts observations per bucket (not cumulative: the last
// count is above every bound) and their sum.
type histogram struct {
	counts []uint64
	sum    float64
}

func (h *histogram) observe(v float64) {
	i, _ := slices.BinarySearch(callBuckets, v) // the first bound >= v
	h.counts[i]++
	h.sum += v
}

// ServeHTTP writes every metric, families sorted by name as Prometheus's
// own client does.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e expo
	m.writeRoute(&e)
	writeGo(&e)
	writeProcess(&e)
	e.sort()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(e.len()))
	if r.Method != http.MethodHead {
		e.writeTo(w)
	}
}

func (m *Metrics) writeRoute(e *expo) {
	running, queued := m.load()
	e.gauge("mcp_route_calls_in_flight", "tools/call requests running a tool now.", float64(running))
	e.gauge("mcp_route_calls_queued", "tools/call requests waiting for a process slot (--max-procs).", float64(queued))
	e.counter("mcp_route_processes_started_total", "Tool processes started for calls (exec'd calls; workers count once per call they serve).", m.started.value())
	e.counter("mcp_route_processes_killed_total", "Tool calls whose process was stopped: cancelled, timed out or over the output cap.", m.killed.value())
	e.counter("mcp_route_sessions_issued_total", "Mcp-Session-Id tokens issued by initialize.", m.sessions.value())
	e.gauge("mcp_route_streams_open", "Long-lived SSE streams open now: GET streams and subscriptions/listen (--http-max-streams caps them).", m.streams.value())

	m.mu.Lock()
	defer m.mu.Unlock()
	f := e.family("mcp_route_calls_total", "counter", "tools/call requests finished, by tool and outcome (ok, tool_error, timeout, canceled, busy, failed).")
	keys := slices.SortedFunc(maps.Keys(m.calls), func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[1], b[1]), strings.Compare(a[0], b[0]))
	})
	for _, k := range keys {
		f.sample("", float64(m.calls[k]), "outcome", k[1], "tool", k[0])
	}
	f = e.family("mcp_route_call_duration_seconds", "histogram", "Time a tools/call took, from its admission to its result, by tool.")
	for _, t := range slices.Sorted(maps.Keys(m.latency)) {
		h := m.latency[t]
		var n uint64
		for i, le := range callBuckets {
			n += h.counts[i]
			f.sample("_bucket", float64(n), "tool", t, "le", formatFloat(le))
		}
		n += h.counts[len(callBuckets)]
		f.sample("_bucket", float64(n), "tool", t, "le", "+Inf")
		f.sample("_sum", h.sum, "tool", t)
		f.sample("_count", float64(n), "tool", t)
	}
}

// runtimeSamples are read from runtime/metrics at each scrape, with the
// name each is exposed as.
var runtimeSamples = []struct{ key, name, help string }{
	{"/gc/gogc:percent", "go_gc_gogc_percent", "The GC's heap target percentage (GOGC, debug.SetGCPercent; mcp-route's default is 400)."},
	{"/gc/gomemlimit:bytes", "go_gc_gomemlimit_bytes", "The Go runtime's memory limit (GOMEMLIMIT, debug.SetMemoryLimit)."},
	{"/gc/heap/live:bytes", "go_gc_heap_live_bytes", "Heap bytes held by live objects at the last GC: what a leak grows."},
	{"/sched/gomaxprocs:threads", "go_sched_gomaxprocs_threads", "GOMAXPROCS: the threads that may run Go code at once."},
}

// writeGo writes the Go runtime's metrics, under the names Prometheus's Go
// client gives them, so existing dashboards keep working.
func writeGo(e *expo) {
	samples := make([]metrics.Sample, len(runtimeSamples))
	for i, s := range runtimeSamples {
		samples[i].Name = s.key
	}
	metrics.Read(samples)
	for i, s := range runtimeSamples {
		if v := samples[i].Value; v.Kind() == metrics.KindUint64 {
			e.gauge(s.name, s.help, float64(v.Uint64()))
		}
	}
	e.gauge("go_goroutines", "Goroutines that exist now.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	e.gauge("go_threads", "OS threads created.", float64(threads))
	e.family("go_info", "gauge", "The Go version mcp-route was built with.").sample("", 1, "version", runtime.Version())

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	f := e.family("go_gc_duration_seconds", "summary", "Stop-the-world pause durations of the garbage collector.")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		f.sample("", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	f.sample("_sum", gc.PauseTotal.Seconds())
	f.sample("_count", float64(gc.NumGC))

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	lastGC := float64(ms.LastGC) / 1e9
	for _, s := range []struct {
		name, typ, help string
		v               float64
	}{
		{"alloc_bytes", "gauge", "Heap bytes allocated and in use.", float64(ms.Alloc)},
		{"alloc_bytes_total", "counter", "Heap bytes allocated, freed or not.", float64(ms.TotalAlloc)},
		{"buck_hash_sys_bytes", "gauge", "Bytes of the profiling bucket hash table.", float64(ms.BuckHashSys)},
		{"frees_total", "counter", "Heap objects freed.", float64(ms.Frees)},
		{"gc_sys_bytes", "gauge", "Bytes of garbage collection metadata.", float64(ms.GCSys)},
		{"heap_alloc_bytes", "gauge", "Heap bytes allocated and in use (as go_memstats_alloc_bytes).", float64(ms.HeapAlloc)},
		{"heap_idle_bytes", "gauge", "Heap bytes in idle spans.", float64(ms.HeapIdle)},
		{"heap_inuse_bytes", "gauge", "Heap bytes in in-use spans.", float64(ms.HeapInuse)},
		{"heap_objects", "gauge", "Heap objects allocated and in use.", float64(ms.HeapObjects)},
		{"heap_released_bytes", "gauge", "Heap bytes returned to the OS.", float64(ms.HeapReleased)},
		{"heap_sys_bytes", "gauge", "Heap bytes obtained from the OS.", float64(ms.HeapSys)},
		{"last_gc_time_seconds", "gauge", "Unix time of the last garbage collection (0: none yet).", lastGC},
		{"mallocs_total", "counter", "Heap objects allocated.", float64(ms.Mallocs)},
		{"mcache_inuse_bytes", "gauge", "Bytes of mcache structures in use.", float64(ms.MCacheInuse)},
		{"mcache_sys_bytes", "gauge", "Bytes of mcache structures obtained from the OS.", float64(ms.MCacheSys)},
		{"mspan_inuse_bytes", "gauge", "Bytes of mspan structures in use.", float64(ms.MSpanInuse)},
		{"mspan_sys_bytes", "gauge", "Bytes of mspan structures obtained from the OS.", float64(ms.MSpanSys)},
		{"next_gc_bytes", "gauge", "Heap size at which the next garbage collection starts.", float64(ms.NextGC)},
		{"other_sys_bytes", "gauge", "Bytes of other runtime allocations.", float64(ms.OtherSys)},
		{"stack_inuse_bytes", "gauge", "Bytes of goroutine stacks in use.", float64(ms.StackInuse)},
		{"stack_sys_bytes", "gauge", "Bytes of stacks obtained from the OS.", float64(ms.StackSys)},
		{"sys_bytes", "gauge", "Bytes obtained from the OS in all.", float64(ms.Sys)},
	} {
		e.family("go_memstats_"+s.name, s.typ, s.help).sample("", s.v)
	}
}

// expo is one exposition being written: families, then sorted.
type expo struct{ fams []*family }

type family struct {
	name string
	head []byte // # HELP and # TYPE lines
	body []byte // sample lines
}

func (e *expo) family(name, typ, help string) *family {
	f := &family{name: name}
	help = strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help)
	f.head = append(f.head, "# HELP "+name+" "+help+"\n# TYPE "+name+" "+typ+"\n"...)
	e.fams = append(e.fams, f)
	return f
}

func (e *expo) gauge(name, help string, v float64)   { e.family(name, "gauge", help).sample("", v) }
func (e *expo) counter(name, help string, v float64) { e.family(name, "counter", help).sample("", v) }

// sample appends one line: the family's name with suffix, the labels
// (name, value pairs, in order) and the value.
func (f *family) sample(suffix string, v float64, labels ...string) {
	f.body = append(f.body, f.name...)
	f.body = append(f.body, suffix...)
	for i := 0; i+1 < len(labels); i += 2 {
		if i == 0 {
			f.body = append(f.body, '{')
		} else {
			f.body = append(f.body, ',')
		}
		f.body = append(f.body, labels[i]...)
		f.body = append(f.body, `="`...)
		f.body = appendLabelValue(f.body, labels[i+1])
		f.body = append(f.body, '"')
	}
	if len(labels) > 0 {
		f.body = append(f.body, '}')
	}
	f.body = append(f.body, ' ')
	f.body = append(f.body, formatFloat(v)...)
	f.body = append(f.body, '\n')
}

// appendLabelValue escapes what the format requires: a label value (a
// tool name a client sent) cannot end the line or the value early.
func appendLabelValue(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (e *expo) sort() {
	slices.SortStableFunc(e.fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })
}

func (e *expo) len() int {
	n := 0
	for _, f := range e.fams {
		n += len(f.head) + len(f.body)
	}
	return n
}

func (e *expo) writeTo(w http.ResponseWriter) {
	var b bytes.Buffer
	b.Grow(e.len())
	for _, f := range e.fams {
		b.Write(f.head)
		b.Write(f.body)
	}
	w.Write(b.Bytes())
}
