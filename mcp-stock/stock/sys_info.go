package stock

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("sys_info", sysInfoTool) }

func sysInfoTool() Tool {
	return Tool{
		Kind: KindSystem,
		Def: tool.Definition{
			Name:  "sys_info",
			Title: "System information",
			Description: "Return non-secret facts about the machine the tools run on: operating system, CPU architecture, number of CPUs, the Go version mcp-stock was built with, and on Linux the uptime, load averages and total and available memory. " +
				"Deliberately leaves out anything that identifies or exposes the host: no host name, user names, environment, network addresses, kernel version or process list.",
			InputSchema: objectSchema(nil),
			OutputSchema: objectSchema([]string{"os", "arch", "cpus", "goVersion"},
				`"os": {"type": "string", "description": "GOOS, e.g. linux, darwin."}`,
				`"arch": {"type": "string", "description": "GOARCH, e.g. amd64, arm64."}`,
				`"cpus": {"type": "integer", "description": "Logical CPUs usable by the process."}`,
				`"goVersion": {"type": "string"}`,
				`"uptimeSeconds": {"type": "number", "description": "Seconds since boot (Linux)."}`,
				`"loadAverage": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3,
					"description": "1, 5 and 15 minute load averages (Linux)."}`,
				`"memTotalBytes": {"type": "integer", "description": "Physical memory (Linux)."}`,
				`"memAvailableBytes": {"type": "integer", "description": "Memory available for new work (Linux)."}`,
			),
			Annotations: readOnlyHints("System information"),
			Run:         jsonResult(),
		},
		Handler: sysInfo,
	}
}

type sysResult struct {
	OS                string    `json:"os"`
	Arch              string    `json:"arch"`
	CPUs              int       `json:"cpus"`
	GoVersion         string    `json:"goVersion"`
	UptimeSeconds     *float64  `json:"uptimeSeconds,omitempty"`
	LoadAverage       []float64 `json:"loadAverage,omitempty"`
	MemTotalBytes     *int64    `json:"memTotalBytes,omitempty"`
	MemAvailableBytes *int64    `json:"memAvailableBytes,omitempty"`
}

func sysInfo(c *tool.Call) error {
	if err := decodeArgs(c, &struct{}{}); err != nil {
		return err
	}
	res := sysResult{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.GoVersion != "" {
		res.GoVersion = bi.GoVersion
	}
	// These are fixed system files, not paths from the caller: they are
	// read directly, not through the jail.
	if f := procFields("/proc/uptime"); len(f) >= 1 {
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			res.UptimeSeconds = &v
		}
	}
	if f := procFields("/proc/loadavg"); len(f) >= 3 {
		var la []float64
		for _, s := range f[:3] {
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				la = append(la, v)
			}
		}
		if len(la) == 3 {
			res.LoadAverage = la
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				continue
			}
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				continue
			}
			n *= 1024
			switch k {
			case "MemTotal":
				res.MemTotalBytes = &n
			case "MemAvailable":
				res.MemAvailableBytes = &n
			}
		}
	}
	return c.JSON(res)
}

// procFields returns the whitespace-separated fields of a small /proc
// file, or nil.
func procFields(name string) []string {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	return strings.Fields(string(bytes.TrimSpace(b)))
}
