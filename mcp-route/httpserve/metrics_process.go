package httpserve

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// writeProcess writes the process's metrics (process_*), from /proc/self
// and getrlimit. Where /proc is missing (not Linux) the /proc ones are left
// out rather than written as zero.
func writeProcess(e *expo) {
	if f := procStat(); f != nil {
		// After the command: state(0) ... utime(11) stime(12) ...
		// starttime(19) vsize(20) rss(21); times in clock ticks, which
		// Linux reports at 100 a second to user space (USER_HZ).
		const hz = 100
		utime, _ := strconv.ParseFloat(string(f[11]), 64)
		stime, _ := strconv.ParseFloat(string(f[12]), 64)
		e.counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", (utime+stime)/hz)
		vsize, _ := strconv.ParseFloat(string(f[20]), 64)
		e.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", vsize)
		rss, _ := strconv.ParseFloat(string(f[21]), 64)
		e.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", rss*float64(os.Getpagesize()))
		if boot := bootTime(); boot > 0 {
			start, _ := strconv.ParseFloat(string(f[19]), 64)
			e.gauge("process_start_time_seconds", "Start time of the process, in seconds since the Unix epoch.", boot+start/hz)
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.gauge("process_open_fds", "Open file descriptors.", float64(len(fds)-1)) // less the one ReadDir held
	}
	if in, out, ok := netOctets(); ok {
		e.counter("process_network_receive_bytes_total", "Bytes received over the network (by the process's network namespace).", in)
		e.counter("process_network_transmit_bytes_total", "Bytes sent over the network (by the process's network namespace).", out)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		e.gauge("process_max_fds", "The limit of open file descriptors.", float64(lim.Cur))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
		e.gauge("process_virtual_memory_max_bytes", "The limit of virtual memory, in bytes.", float64(lim.Cur))
	}
}

// procStat is /proc/self/stat split after the command (which may hold
// spaces and parentheses), or nil.
func procStat() [][]byte {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 {
		return nil
	}
	return f
}

// bootTime is the btime line of /proc/stat, or 0.
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			t, _ := strconv.ParseFloat(string(bytes.TrimSpace(rest)), 64)
			return t
		}
	}
	return 0
}

// netOctets are InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat (a header line of names, then one of values).
func netOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names [][]byte
	for line := range bytes.Lines(b) {
		rest, found := bytes.CutPrefix(line, []byte("IpExt:"))
		if !found {
			continue
		}
		if names == nil {
			names = bytes.Fields(rest)
			continue
		}
		for i, v := range bytes.Fields(rest) {
			if i >= len(names) {
				break
			}
			switch string(names[i]) {
			case "InOctets":
				in, _ = strconv.ParseFloat(string(v), 64)
			case "OutOctets":
				out, _ = strconv.ParseFloat(string(v), 64)
			}
		}
		return in, out, true
	}
	return 0, 0, false
}
