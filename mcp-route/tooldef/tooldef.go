// Package tooldef parses and checks an mcp-route tool definition: the MCP
// Tool object plus the optional "run" object of router-only settings, as
// written in a sidecar NAME.json or printed by `NAME --mcp-describe`
// (DESIGN.md, "Tools as executables"). It is the one place those rules live:
// mcp-route's registry serves exactly the definitions Parse accepts, and
// package tool's Definition.Validate is Parse of the document --mcp-describe
// prints, so a Go tool that validates is a tool the router serves.
//
// Parse refuses, with an error naming the member and what is expected:
//
//   - a document that is not a JSON object, or a "run" that is not an
//     object of the members below with their JSON types;
//   - a Tool object codec.ValidateTool refuses (the 2025-11-25 name rules, a
//     blank description, an inputSchema or outputSchema that is not a JSON
//     Schema object with "type": "object" or does not compile as 2020-12);
//   - run.timeout that is not a positive Go duration ("30s");
//   - run.result other than "text", "json" or "mcp" ("" means "text");
//   - a negative run.maxOutput (0 means the router's default);
//   - run.mode other than "exec" or "worker" ("" means "exec"); a negative
//     run.workers, run.concurrency, run.maxCalls or run.maxRSS (0 means
//     the default); run.idle that is not a positive Go duration;
//   - a run.env or run.passEnv variable name that is empty or holds "=" or
//     NUL;
//   - run.limitMem that is not a size ("256MiB", "1G", "1000000"; at
//     least 1MiB), a negative run.limitPids, run.limitCpu that is not a
//     positive Go duration (each absent or 0: mcp-route's --limit-*).
//
// Unknown members of "run" are ignored, as unknown members of the Tool
// object are, so a newer tool still loads under an older router.
package tooldef

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/toolenv"
)

// Result modes for Run.Result: how mcp-route reads the tool's stdout.
const (
	ResultText = "text" // stdout is one text block (the default)
	ResultJSON = "json" // stdout is one JSON value: structuredContent, and the same as text
	ResultMCP  = "mcp"  // stdout is a whole CallToolResult
)

// Modes for Run.Mode: how mcp-route runs the tool.
const (
	ModeExec   = "exec"   // one process per call (the default)
	ModeWorker = "worker" // persistent workers serve calls over stdin/stdout (mcp-route/worker)
)

// Run is the "run" object as written: router-only settings, never sent to a
// client. Zero fields leave mcp-route's defaults.
type Run struct {
	Timeout     string            `json:"timeout,omitempty"`     // a Go duration, e.g. "30s"
	Result      string            `json:"result,omitempty"`      // ResultText, ResultJSON or ResultMCP
	MaxOutput   int64             `json:"maxOutput,omitempty"`   // stdout cap in bytes
	Env         map[string]string `json:"env,omitempty"`         // set for this tool
	PassEnv     []string          `json:"passEnv,omitempty"`     // passed on from mcp-route's environment
	Mode        string            `json:"mode,omitempty"`        // ModeExec (default) or ModeWorker
	Workers     int               `json:"workers,omitempty"`     // worker mode: at most this many workers of the tool (default 2)
	Concurrency int               `json:"concurrency,omitempty"` // worker mode: calls one worker takes at once (default 1)
	Idle        string            `json:"idle,omitempty"`        // worker mode: an idle worker exits after this long (default "60s")
	MaxCalls    int               `json:"maxCalls,omitempty"`    // worker mode: a worker is replaced after this many calls (default 10000)
	MaxRSS      int64             `json:"maxRSS,omitempty"`      // worker mode: a worker whose RSS passes this many bytes is replaced after its call (default 512 MiB)
	// Limits of the tool's process tree (each call's, each worker's),
	// instead of mcp-route's --limit-mem, --limit-pids, --limit-cpu.
	LimitMem  string `json:"limitMem,omitempty"`  // a size, e.g. "256MiB"
	LimitPids int    `json:"limitPids,omitempty"` // processes and threads at once
	LimitCPU  string `json:"limitCpu,omitempty"`  // a Go duration of CPU time per process, e.g. "10s"
}

// Check applies the rules of the package doc to the run settings. A nil Run
// is valid.
func (r *Run) Check() error {
	if r == nil {
		return nil
	}
	if r.Timeout != "" {
		if d, err := time.ParseDuration(r.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("run.timeout %q: want a positive duration such as \"30s\"", r.Timeout)
		}
	}
	switch r.Result {
	case "", ResultText, ResultJSON, ResultMCP:
	default:
		return fmt.Errorf("run.result %q: want %q, %q or %q", r.Result, ResultText, ResultJSON, ResultMCP)
	}
	if r.MaxOutput < 0 {
		return fmt.Errorf("run.maxOutput %d: want a positive byte count (0 or absent: the router's default)", r.MaxOutput)
	}
	switch r.Mode {
	case "", ModeExec, ModeWorker:
	default:
		return fmt.Errorf("run.mode %q: want %q or %q (\"\" or absent: %q)", r.Mode, ModeExec, ModeWorker, ModeExec)
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"workers", int64(r.Workers)}, {"concurrency", int64(r.Concurrency)}, {"maxCalls", int64(r.MaxCalls)}, {"maxRSS", r.MaxRSS}} {
		if n.v < 0 {
			return fmt.Errorf("run.%s %d: want a positive number (0 or absent: the default)", n.name, n.v)
		}
	}
	if r.Idle != "" {
		if d, err := time.ParseDuration(r.Idle); err != nil || d <= 0 {
			return fmt.Errorf("run.idle %q: want a positive duration such as \"60s\"", r.Idle)
		}
	}
	if r.LimitMem != "" {
		if _, err := ParseSize(r.LimitMem); err != nil {
			return fmt.Errorf("run.limitMem: %v", err)
		}
	}
	if r.LimitPids < 0 {
		return fmt.Errorf("run.limitPids %d: want a positive number of processes (0 or absent: --limit-pids)", r.LimitPids)
	}
	if r.LimitCPU != "" {
		if d, err := time.ParseDuration(r.LimitCPU); err != nil || d <= 0 {
			return fmt.Errorf("run.limitCpu %q: want a positive duration such as \"10s\"", r.LimitCPU)
		}
	}
	for k := range r.Env {
		if !toolenv.ValidName(k) {
			return fmt.Errorf("run.env: bad variable name %q (want non-empty, without '=' or NUL)", k)
		}
	}
	for _, k := range r.PassEnv {
		if !toolenv.ValidName(k) {
			return fmt.Errorf("run.passEnv: bad variable name %q (want non-empty, without '=' or NUL)", k)
		}
	}
	return nil
}

// TimeoutDuration returns run.timeout parsed, 0 when unset. Call it on a
// checked Run.
func (r *Run) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(r.Timeout)
	return d
}

// LimitMemBytes returns run.limitMem parsed, 0 when unset. Call it on a
// checked Run.
func (r *Run) LimitMemBytes() int64 {
	n, _ := ParseSize(r.LimitMem)
	return n
}

// LimitCPUDuration returns run.limitCpu parsed, 0 when unset. Call it on
// a checked Run.
func (r *Run) LimitCPUDuration() time.Duration {
	d, _ := time.ParseDuration(r.LimitCPU)
	return d
}

// MinLimitMem is the smallest memory limit taken: below it no runtime
// starts, and a typo ("512" for 512 MiB) would make every call fail.
const MinLimitMem = 1 << 20

// ParseSize parses a byte size as --limit-mem and run.limitMem take it:
// a whole number with an optional unit, K/M/G/T (powers of 1024, also
// written KiB, MiB, ... or KB, MB, ...) or B; "" is an error. "0" is 0
// (no limit); anything else must be at least MinLimitMem.
func ParseSize(s string) (int64, error) {
	bad := fmt.Errorf("%q: want a size such as \"512MiB\" or \"2G\" (at least 1MiB; 0: no limit)", s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 15 {
		return 0, bad
	}
	var n int64
	for _, c := range s[:i] {
		n = n*10 + int64(c-'0')
	}
	unit := map[string]int64{"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
	u := s[i:]
	if len(u) == 3 && (u[1:] == "iB") || len(u) == 2 && u[1] == 'B' {
		u = u[:1]
	}
	m, ok := unit[u]
	if !ok || (n != 0 && n > (1<<62)/m) {
		return 0, bad
	}
	n *= m
	if n != 0 && n < MinLimitMem {
		return 0, bad
	}
	return n, nil
}

// IdleDuration returns run.idle parsed, 0 when unset. Call it on a
// checked Run.
func (r *Run) IdleDuration() time.Duration {
	d, _ := time.ParseDuration(r.Idle)
	return d
}

// ResultMode returns run.result with the default filled in.
func (r *Run) ResultMode() string {
	if r.Result == "" {
		return ResultText
	}
	return r.Result
}

// Definition is a parsed, checked definition.
type Definition struct {
	Tool   codec.Tool    // as advertised to clients, defaults filled in (no "run")
	Run    Run           // the "run" object, zero when absent
	Input  *codec.Schema // Tool.InputSchema compiled
	Output *codec.Schema // Tool.OutputSchema compiled, nil when none
}

// AnyObject is the inputSchema of a definition that gives none: any
// arguments object.
var AnyObject = json.RawMessage(`{"type":"object"}`)

// Parse parses one definition document for the executable called fileName:
// "name" defaults to fileName and "inputSchema" to AnyObject. The error
// says what is wrong (see the package doc); it does not name the file.
func Parse(data []byte, fileName string) (*Definition, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return nil, fmt.Errorf("definition is not a JSON object: %v", err)
	}
	d := &Definition{}
	if raw, ok := obj["run"]; ok {
		if err := json.Unmarshal(raw, &d.Run); err != nil {
			return nil, fmt.Errorf("run: %v", err)
		}
		delete(obj, "run")
	}
	rest, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(rest, &d.Tool); err != nil {
		return nil, fmt.Errorf("definition: %v", err)
	}
	if d.Tool.Name == "" {
		d.Tool.Name = fileName
	}
	if len(d.Tool.InputSchema) == 0 || string(d.Tool.InputSchema) == "null" {
		d.Tool.InputSchema = AnyObject
	}
	if err := codec.ValidateTool(&d.Tool); err != nil {
		return nil, err
	}
	if d.Input, err = codec.CompileSchema(d.Tool.InputSchema); err != nil {
		return nil, fmt.Errorf("inputSchema: %v", err)
	}
	if string(d.Tool.OutputSchema) == "null" {
		d.Tool.OutputSchema = nil // absent, not advertised as null
	}
	if len(d.Tool.OutputSchema) > 0 {
		if d.Output, err = codec.CompileSchema(d.Tool.OutputSchema); err != nil {
			return nil, fmt.Errorf("outputSchema: %v", err)
		}
	}
	if err := d.Run.Check(); err != nil {
		return nil, err
	}
	return d, nil
}
