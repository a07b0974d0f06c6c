// Package registry finds mcp-route's tools: it scans tool directories for
// executables, reads each one's definition, and re-reads them when the
// directories change.
//
// A candidate is an executable regular file (or a symlink to one) directly
// in a tool directory whose name does not start with ".". Its definition is
// the MCP Tool object plus an optional "run" object of router-only settings
// (see Run), taken from, in order:
//
//  1. a sidecar file NAME.json next to the executable;
//  2. otherwise the stdout of `NAME --mcp-describe`, run with the describe
//     environment, Options.DescribeTimeout (5s by default) and a 1 MiB
//     output cap.
//
// "name" defaults to the file name and "inputSchema" to {"type":"object"} (a
// tool without arguments need not spell it out). The definition is parsed and
// checked by package tooldef (codec.ValidateTool, compiled schemas, the "run"
// rules); a candidate whose definition is missing or invalid is left out with one log line saying why, and the rest
// are served. With ReadOnly, only tools annotated readOnlyHint: true are kept.
// When two directories hold the same tool name, the first directory wins
// (like PATH) and the other is logged as shadowed. Tools are listed sorted by
// name, so the order is deterministic.
//
// Change detection is by polling: Reload compares a fingerprint of every
// directory (entry names; size, mode and modification time, following
// symlinks, of executables and *.json files) with the previous one and
// re-reads only when it differs, so a log file growing in a tool directory
// costs nothing. Definitions are cached per executable (its and its
// sidecar's size and mtime): a reload does not re-run unchanged tools, and
// an unchanged bad definition is logged once, not at every reload.
//
// Nothing a tool can write is trusted: with Options.Root set and not
// ReadOnly, a tool whose executable or sidecar path leads under the root
// (where tools can write) is left out at every reload with one log line
// (trust.go; mcp-route also refuses to start so, CheckToolsOutsideRoot).
//
// With Options.CacheDir, valid --mcp-describe outputs are also kept on disk
// across runs, keyed by the executable's path and stamp (size, mode, mtime,
// inode, device, ctime) and the describe environment: a new Registry (a new
// mcp-route process, one per host connection) runs only the tools that
// changed since. Entries are authenticated (HMAC-SHA256), and a cache under
// Options.Root is not used. See diskcache.go for what the stamp cannot see
// and what the authentication cannot stop.
//
// A Registry is safe for concurrent use: Tools and Lookup return immutable
// snapshots, and Reload may run alongside them.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/toolenv"
	"github.com/mcpipe/mcpipe/mcp-route/runner"
	"github.com/mcpipe/mcpipe/mcp-route/tooldef"
)

// Result modes: how a tool's stdout becomes a CallToolResult.
const (
	ResultText = tooldef.ResultText // stdout is one text block (default)
	ResultJSON = tooldef.ResultJSON // stdout is one JSON value: structuredContent + text
	ResultMCP  = tooldef.ResultMCP  // stdout is a whole CallToolResult
)

// Modes: how a tool runs.
const (
	ModeExec   = tooldef.ModeExec   // one process per call (default)
	ModeWorker = tooldef.ModeWorker // persistent workers (mcp-route/worker)
)

// Limits on reading definitions.
const (
	DescribeTimeout = 5 * time.Second
	MaxDefinition   = 1 << 20 // bytes of sidecar or --mcp-describe output
	describeWorkers = 4
)

// Run holds a tool's router-only settings, the "run" object of its
// definition. Zero values mean "use the router's default".
type Run struct {
	Timeout   time.Duration     // "timeout": a Go duration string, e.g. "30s"
	Result    string            // "result": ResultText, ResultJSON or ResultMCP; "" = text
	MaxOutput int64             // "maxOutput": stdout cap in bytes
	Env       map[string]string // "env": variables set for this tool
	PassEnv   []string          // "passEnv": variables passed from the router's environment

	// Worker mode (tooldef.ModeWorker; mcp-route/worker). Zero values mean
	// the worker package's defaults.
	Mode        string        // "mode": tooldef.ModeExec or tooldef.ModeWorker; "" = exec
	Workers     int           // "workers": workers of the tool at most
	Concurrency int           // "concurrency": calls one worker takes at once
	Idle        time.Duration // "idle": an idle worker exits after this long
	MaxCalls    int           // "maxCalls": a worker is replaced after this many calls
	MaxRSS      int64         // "maxRSS": a worker over this RSS is replaced after its call

	// Limits of the tool's process tree; zero: mcp-route's --limit-*.
	LimitMem  int64         // "limitMem", bytes
	LimitPids int           // "limitPids"
	LimitCPU  time.Duration // "limitCpu", CPU time per process
}

// Tool is one servable tool. It is immutable once published.
type Tool struct {
	Def    codec.Tool    // as advertised to clients (no "run")
	Path   string        // the executable, as found in its directory
	Run    Run           // router-only settings
	Input  *codec.Schema // compiled inputSchema
	Output *codec.Schema // compiled outputSchema, nil when none
	Source string        // the sidecar path, or "PATH --mcp-describe"
	// Exec is Path with every symlink resolved, and Stamp that file's
	// identity when the registry read it (size, mode, mtime, inode,
	// device, ctime): tools that link to one executable share workers,
	// and a changed Stamp means a rebuilt or replaced executable.
	Exec  string
	Stamp string
}

// Options configure a Registry.
type Options struct {
	Dirs     []string // tool directories, searched in order; required
	ReadOnly bool     // keep only tools with annotations.readOnlyHint true
	// DescribeEnv is the complete environment of `NAME --mcp-describe`;
	// DescribeDir its working directory.
	DescribeEnv []string
	DescribeDir string
	// DescribeTimeout bounds one `NAME --mcp-describe`; 0 means
	// DescribeTimeout (the constant).
	DescribeTimeout time.Duration
	// Spawn starts each `NAME --mcp-describe` process (runner.Spec.Spawn):
	// a describe run is the tool's code, confined like a call. nil:
	// unconfined.
	Spawn func(*exec.Cmd) error
	// CacheDir keeps --mcp-describe outputs across runs (see
	// diskcache.go; DefaultCacheDir is mcp-route's default). "" turns the
	// cache off; a directory that cannot be used is logged and ignored.
	CacheDir string
	// CacheKeyEnv is the environment the describe cache is keyed by in
	// place of DescribeEnv: DescribeEnv with what changes at every start
	// and says nothing about a definition (mcp-route's private TMPDIR
	// under confinement) written as a fixed placeholder. nil: DescribeEnv.
	CacheKeyEnv []string
	// Root is the directory the tools work in. Unless ReadOnly, they can
	// write there, so a tool whose path leads under it is left out at
	// every reload (see trust.go); a describe cache under it is never
	// used, ReadOnly or not (see diskcache.go). "" turns both checks off.
	Root string
	// Writable are further places the tools can write (--allow-write),
	// ReadOnly or not: guarded like a writable Root, at every reload and
	// for the describe cache.
	Writable []string
	// Logger receives one record per event: Warn for what an operator
	// must see (a tool left out and why, with the attributes tool, path
	// and why; an unreadable tool directory; the describe cache off),
	// Debug for routine events (a reload, a load cut short at shutdown),
	// which mcp-route shows only with --verbose or --log. nil discards
	// them.
	Logger *slog.Logger
	// Explain, optional, reads a failed --mcp-describe (its outcome and
	// stderr) for a path the confinement refused
	// (confinement.Confinement.ExplainFailure); the sentence joins the
	// line that leaves the tool out.
	Explain func(failure string) (note string, attrs []slog.Attr, ok bool)
}

// Registry holds the current tool set.
type Registry struct {
	opts  Options
	disk  *diskCache // nil: no persistent describe cache
	guard *rootGuard // leaves out tools a tool could have written
	// revoke is a describe cache under the root, whose key Close removes.
	revoke string

	reloadMu    sync.Mutex // one Reload at a time
	fingerprint string
	cache       map[string]cachedDef // by executable path

	mu     sync.RWMutex
	tools  []*Tool // sorted by name
	byName map[string]*Tool
}

type cachedDef struct {
	stamp  string
	def    []byte
	source string
	err    error
	// canceled: ctx ended before the definition was read; not a verdict
	// on the tool, so it is neither logged nor cached.
	canceled bool
	// described: def is a fresh --mcp-describe output, for the disk cache.
	described bool
}

// New returns an empty Registry; call Reload to fill it.
func New(opts Options) *Registry {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DescribeTimeout <= 0 {
		opts.DescribeTimeout = DescribeTimeout
	}
	r := &Registry{opts: opts, cache: map[string]cachedDef{}, byName: map[string]*Tool{}}
	r.guard = newRootGuard(opts.Root, opts.ReadOnly, opts.Writable, opts.Logger)
	if opts.CacheDir != "" {
		keyEnv := opts.CacheKeyEnv
		if keyEnv == nil {
			keyEnv = opts.DescribeEnv
		}
		d, err := openDiskCache(opts.CacheDir, keyEnv, opts.DescribeDir, append([]string{opts.Root}, opts.Writable...), opts.Logger)
		if err != nil {
			opts.Logger.Warn("describe cache off", slog.String("dir", opts.CacheDir), slog.Any("error", err))
		}
		if errors.Is(err, errUnderRoot) {
			r.revoke = opts.CacheDir
		}
		r.disk = d
	}
	return r
}

// CacheDir returns the describe cache directory in use: Options.CacheDir,
// or "" when it is off or could not be used.
func (r *Registry) CacheDir() string {
	if r.disk == nil {
		return ""
	}
	return r.disk.dir
}

// Tools returns the current tools sorted by name. The slice and the tools
// must not be modified.
func (r *Registry) Tools() []*Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools
}

// Lookup returns the tool called name, or nil.
func (r *Registry) Lookup(name string) *Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// Reload re-reads the tool directories if they changed since the last call
// (the first call always reads them) and reports whether the advertised tool
// list changed. A directory that cannot be read is logged and counts as
// empty.
//
// ctx bounds the --mcp-describe runs; mcp-route cancels it only when it
// shuts down. When ctx ends before every definition is read, the load is
// dropped: the tool set stays as it was, nothing is logged per tool (a
// describe killed by the shutdown is not a bad tool), one line says the
// loading was cancelled, the next Reload reads everything again, and
// Reload reports false.
func (r *Registry) Reload(ctx context.Context) (changed bool) {
	r.reloadMu.Lock()
	defer r.reloadMu.Unlock()
	fp, cands := r.scan()
	if fp == r.fingerprint && r.fingerprint != "" {
		return false
	}
	first := r.fingerprint == ""
	cands = r.guard.filter(cands, r.opts.Logger)
	tools, ok := r.load(ctx, cands)
	if !ok {
		return false // cancelled: the next Reload reads them again
	}
	r.fingerprint = fp

	r.mu.Lock()
	defer r.mu.Unlock()
	changed = !sameDefs(r.tools, tools)
	r.tools = tools
	r.byName = make(map[string]*Tool, len(tools))
	for _, t := range tools {
		r.byName[t.Def.Name] = t
	}
	if !first && changed {
		r.opts.Logger.Debug("tools reloaded", slog.Int("tools", len(tools)))
	}
	return changed
}

// Watch calls Reload every interval until ctx is done, and onChange after
// each Reload that changed the list.
func (r *Registry) Watch(ctx context.Context, interval time.Duration, onChange func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if r.Reload(ctx) && onChange != nil {
				onChange()
			}
		}
	}
}

type candidate struct {
	dir, name, path string
	stamp           string // stampOf the executable
	mtime           time.Time
}

// scan lists the candidates of every directory and computes the
// fingerprint of everything a definition may depend on.
func (r *Registry) scan() (string, []candidate) {
	var fp strings.Builder
	var cands []candidate
	for _, dir := range r.opts.Dirs {
		fmt.Fprintf(&fp, "dir %q\n", dir)
		ents, err := os.ReadDir(dir)
		if err != nil {
			fmt.Fprintf(&fp, "error %v\n", err)
			if r.fingerprint == "" || !strings.Contains(r.fingerprint, fmt.Sprintf("dir %q\nerror", dir)) {
				r.opts.Logger.Warn("tool dir unreadable", slog.String("dir", dir), slog.Any("error", err))
			}
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			path := filepath.Join(dir, name)
			fi, err := os.Stat(path) // follows symlinks
			if err != nil {
				fmt.Fprintf(&fp, "%q broken\n", name)
				continue
			}
			stamp := stampOf(fi)
			exe := fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
			// Contents matter only for executables and sidecars: a log
			// file growing in the directory must not trigger reloads.
			if exe || strings.HasSuffix(name, ".json") {
				fmt.Fprintf(&fp, "%q %s\n", name, stamp)
			} else {
				fmt.Fprintf(&fp, "%q\n", name)
			}
			if exe {
				cands = append(cands, candidate{dir: dir, name: name, path: path, stamp: stamp, mtime: fi.ModTime()})
			}
		}
	}
	return fp.String(), cands
}

// load reads and checks every candidate's definition. It reports false,
// and changes nothing, when ctx ended before every definition was read.
func (r *Registry) load(ctx context.Context, cands []candidate) ([]*Tool, bool) {
	defs := make([]cachedDef, len(cands))
	cached := make([]bool, len(cands))
	sem := make(chan struct{}, describeWorkers)
	var wg sync.WaitGroup
	for i, c := range cands {
		if cd, ok := r.cache[c.path]; ok && cd.stamp == c.stamp+sidecarStamp(c.path) {
			defs[i], cached[i] = cd, true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil { // do not start what would be killed at once
				defs[i] = cachedDef{canceled: true}
				return
			}
			defs[i] = r.readDef(ctx, c)
		}()
	}
	wg.Wait()
	// A load cut short by shutdown says nothing about the tools it did not
	// read: one line, not one per tool, and nothing is kept.
	canceled := 0
	for _, cd := range defs {
		if cd.canceled {
			canceled++
		}
	}
	if canceled > 0 {
		r.opts.Logger.Debug("tool loading cancelled at shutdown", slog.Int("unread", canceled), slog.Int("tools", len(cands)))
		return nil, false
	}

	newCache := make(map[string]cachedDef, len(cands))
	seen := map[string]string{} // name → path
	var tools []*Tool
	// An unchanged bad definition was logged when it was read: say it once.
	leftOut := func(i int, c candidate, why string) {
		if !cached[i] {
			r.opts.Logger.Warn("tool left out", slog.String("tool", c.name), slog.String("path", c.path), slog.String("why", why))
		}
	}
	for i, c := range cands {
		cd := defs[i]
		newCache[c.path] = cd
		if cd.err != nil {
			leftOut(i, c, cd.err.Error())
			continue
		}
		t, err := parseTool(cd.def, c.name)
		if err != nil {
			leftOut(i, c, cd.source+": "+err.Error())
			continue
		}
		if cd.described && r.disk != nil {
			r.disk.put(c.path, c.stamp, c.mtime, cd.def, r.opts.Logger)
		}
		t.Path, t.Source, t.Stamp = c.path, cd.source, c.stamp
		t.Exec = c.path
		if real, err := filepath.EvalSymlinks(c.path); err == nil {
			t.Exec = real
		}
		if r.opts.ReadOnly && !readOnly(&t.Def) {
			continue
		}
		if prev, dup := seen[t.Def.Name]; dup {
			leftOut(i, c, fmt.Sprintf("name %q already taken by %s", t.Def.Name, prev))
			continue
		}
		seen[t.Def.Name] = c.path
		tools = append(tools, t)
	}
	r.cache = newCache
	sort.Slice(tools, func(i, j int) bool { return tools[i].Def.Name < tools[j].Def.Name })
	return tools, true
}

func sidecarStamp(exe string) string {
	fi, err := os.Stat(exe + ".json")
	if err != nil {
		return " nosidecar"
	}
	return fmt.Sprintf(" sidecar %d %d", fi.Size(), fi.ModTime().UnixNano())
}

// readDef returns the raw definition of c from its sidecar or describe.
func (r *Registry) readDef(ctx context.Context, c candidate) cachedDef {
	cd := cachedDef{stamp: c.stamp + sidecarStamp(c.path)}
	sidecar := c.path + ".json"
	if f, err := os.Open(sidecar); err == nil {
		defer f.Close()
		cd.source = sidecar
		data, err := io.ReadAll(io.LimitReader(f, MaxDefinition+1))
		switch {
		case err != nil:
			cd.err = fmt.Errorf("%s: %w", sidecar, err)
		case len(data) > MaxDefinition:
			cd.err = fmt.Errorf("%s: larger than %d bytes", sidecar, MaxDefinition)
		default:
			cd.def = data
		}
		return cd
	} else if !errors.Is(err, os.ErrNotExist) {
		cd.err = fmt.Errorf("%s: %w", sidecar, err)
		return cd
	}
	cd.source = c.path + " --mcp-describe"
	if r.disk != nil {
		// An entry that no longer passes (the checks grew stricter since)
		// is described again, so its log line tells the present story.
		if def, ok := r.disk.get(c.path, c.stamp); ok {
			if _, err := parseTool(def, c.name); err == nil {
				cd.def = def
				return cd
			}
		}
	}
	res := runner.Run(ctx, runner.Spec{
		Path:      c.path,
		Args:      []string{"--mcp-describe"},
		Dir:       r.opts.DescribeDir,
		Env:       r.opts.DescribeEnv,
		Timeout:   r.opts.DescribeTimeout,
		Grace:     time.Second,
		MaxOutput: MaxDefinition,
		MaxStderr: 4096,
		Spawn:     r.opts.Spawn,
	})
	if res.Canceled || (!res.OK() && ctx.Err() != nil) {
		cd.canceled = true
		return cd
	}
	if !res.OK() {
		// One short line: the cause, not the tool's whole stderr.
		why := res.Cause()
		if r.opts.Explain != nil {
			if note, _, ok := r.opts.Explain(res.Failure()); ok {
				why += "; " + note
			}
		}
		cd.err = fmt.Errorf("no sidecar %s, and --mcp-describe failed: %s", filepath.Base(sidecar), why)
		return cd
	}
	cd.def, cd.described = res.Stdout, true
	return cd
}

// ParseDefinition parses one definition document (sidecar or
// --mcp-describe output) for the executable called fileName and checks it
// with package tooldef, which holds the rules. It is what Reload uses.
func ParseDefinition(data []byte, fileName string) (*Tool, error) {
	return parseTool(data, fileName)
}

func parseTool(data []byte, fileName string) (*Tool, error) {
	d, err := tooldef.Parse(data, fileName)
	if err != nil {
		return nil, err
	}
	return &Tool{
		Def:    d.Tool,
		Input:  d.Input,
		Output: d.Output,
		Run: Run{
			Timeout:   d.Run.TimeoutDuration(),
			Result:    d.Run.ResultMode(),
			MaxOutput: d.Run.MaxOutput,
			Env:       d.Run.Env,
			PassEnv:   d.Run.PassEnv,

			Mode:        d.Run.Mode,
			Workers:     d.Run.Workers,
			Concurrency: d.Run.Concurrency,
			Idle:        d.Run.IdleDuration(),
			MaxCalls:    d.Run.MaxCalls,
			MaxRSS:      d.Run.MaxRSS,

			LimitMem:  d.Run.LimitMemBytes(),
			LimitPids: d.Run.LimitPids,
			LimitCPU:  d.Run.LimitCPUDuration(),
		},
	}, nil
}

// ValidEnvName reports whether name can be an environment variable name:
// non-empty, no "=" and no NUL (toolenv.ValidName).
func ValidEnvName(name string) bool { return toolenv.ValidName(name) }

func readOnly(t *codec.Tool) bool {
	return t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
}

// sameDefs reports whether two tool lists advertise the same definitions
// (settings in "run" and the path do not count: clients do not see them).
func sameDefs(a, b []*Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, _ := json.Marshal(a[i].Def)
		y, _ := json.Marshal(b[i].Def)
		if string(x) != string(y) {
			return false
		}
	}
	return true
}
