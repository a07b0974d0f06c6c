// Package toolenv builds the environment an mcp-route tool runs with, in two
// layers, so the rule "tools get a minimal environment, never the host's
// secrets" is written once:
//
//   - Base, once per server: PATH, HOME, LANG and TMPDIR from the server's
//     environment (or defaults when unset or empty), then the variables
//     named by --pass-env that are set, then --env NAME=VALUE. Nothing else
//     of the server's environment gets in.
//   - Call.Build, per call, on top of the base: the tool's run.env, its
//     run.passEnv looked up in the server's environment, MCP_ARG_<NAME> for
//     the arguments (ArgEnv), and last MCP_TOOL, MCP_ROOT and
//     MCP_PROTOCOL_VERSION, which the router owns and no other layer can
//     override.
//   - Call.Worker, for a persistent worker (mcp-route/worker): the base,
//     run.env and run.passEnv, MCP_ROOT and MCP_WORKER=1; none of the
//     per-call variables, which a worker gets in each request instead.
//
// A third builder, Command, is for a tool that runs a program itself
// (mcp-stock's sh_exec): from the tool's own environment it keeps less
// still, and nothing the client could have planted under the root.
//
// A later layer wins over an earlier one for the same name. Base refuses a
// --pass-env name or an --env entry that cannot be a variable (empty, holding
// "=" or NUL; an --env entry without "="), with an error naming the flag and
// the entry. Build refuses nothing: a definition's run.env and run.passEnv
// were checked when it was parsed (package mcp-route/tooldef, with ValidName), and ArgEnv leaves out
// what an environment cannot carry.
package toolenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Defaults for the base variables the server's environment lacks. HOME
// defaults to TMPDIR: a tool needs a writable home more than a real one.
const (
	DefaultPath   = "/usr/local/bin:/usr/bin:/bin"
	DefaultLang   = "C.UTF-8"
	DefaultTmpDir = "/tmp"
)

// Base returns the base environment ("NAME=value", in the order above):
// the minimal variables from lookup, then pass looked up (unset ones are
// skipped), then sets ("NAME=VALUE", the value may hold "=").
func Base(sets, pass []string, lookup func(string) (string, bool)) ([]string, error) {
	var v vars
	tmp := DefaultTmpDir
	if t, ok := lookup("TMPDIR"); ok && t != "" {
		tmp = t
	}
	for _, d := range [][2]string{{"PATH", DefaultPath}, {"HOME", tmp}, {"LANG", DefaultLang}, {"TMPDIR", tmp}} {
		if val, ok := lookup(d[0]); ok && val != "" {
			v.set(d[0], val)
		} else {
			v.set(d[0], d[1])
		}
	}
	for _, k := range pass {
		if !ValidName(k) {
			return nil, fmt.Errorf("--pass-env %q: not a variable name", k)
		}
		if val, ok := lookup(k); ok {
			v.set(k, val)
		}
	}
	for _, kv := range sets {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || !ValidName(k) {
			return nil, fmt.Errorf("--env %q: want NAME=VALUE", kv)
		}
		v.set(k, val)
	}
	return v.list(), nil
}

// ValidName reports whether name can be an environment variable name:
// non-empty, no "=" and no NUL.
func ValidName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "=\x00")
}

// Call is the per-call layer of a tool's environment.
type Call struct {
	Tool            string            // MCP_TOOL
	Root            string            // MCP_ROOT
	ProtocolVersion string            // MCP_PROTOCOL_VERSION
	Env             map[string]string // the tool's run.env
	PassEnv         []string          // the tool's run.passEnv, looked up with Lookup
	// Lookup reads the server's environment for PassEnv; nil passes
	// nothing.
	Lookup func(string) (string, bool)
	Args   []byte // the arguments object, for MCP_ARG_*; nil adds none
}

// Build returns the complete environment of the call: base (as from Base)
// with the call's layers on top, sorted by name.
func (c Call) Build(base []string) []string {
	v := c.tool(base)
	for k, val := range ArgEnv(c.Args) {
		v.set(k, val)
	}
	v.set("MCP_TOOL", c.Tool)
	v.set("MCP_ROOT", c.Root)
	v.set("MCP_PROTOCOL_VERSION", c.ProtocolVersion)
	return v.sorted()
}

// WorkerVar is set to "1" in the environment of a persistent worker
// (mcp-route/worker): it tells the tool to serve requests on stdin instead
// of running one call.
const WorkerVar = "MCP_WORKER"

// Worker returns the environment of a persistent worker of the tool: base
// with the tool's run.env and run.passEnv on top, then MCP_ROOT and
// MCP_WORKER=1, sorted by name. Nothing per call: no MCP_ARG_*, MCP_TOOL or
// MCP_PROTOCOL_VERSION, since one worker serves many calls (and, through
// links to one executable, several tools); its requests carry them. Tool,
// ProtocolVersion and Args are ignored.
func (c Call) Worker(base []string) []string {
	v := c.tool(base)
	// An operator's --env MCP_TOOL=... would name one tool to a worker
	// that serves several.
	v.drop(func(k string) bool {
		return k == "MCP_TOOL" || k == "MCP_PROTOCOL_VERSION" || strings.HasPrefix(k, "MCP_ARG_")
	})
	v.set("MCP_ROOT", c.Root)
	v.set(WorkerVar, "1")
	return v.sorted()
}

// tool is base with the tool's own layers (run.env, run.passEnv) on top.
func (c Call) tool(base []string) *vars {
	v := &vars{}
	for _, kv := range base {
		if k, val, ok := strings.Cut(kv, "="); ok {
			v.set(k, val)
		}
	}
	for k, val := range c.Env {
		v.set(k, val)
	}
	if c.Lookup != nil {
		for _, k := range c.PassEnv {
			if val, ok := c.Lookup(k); ok {
				v.set(k, val)
			}
		}
	}
	return v
}

// Limits on MCP_ARG_* variables (see ArgEnv). Linux refuses a single
// variable over 128 KiB and all of argv+env over a quarter of the stack limit.
const (
	MaxArgEnvValue = 32 << 10
	MaxArgEnvTotal = 256 << 10
)

// ArgEnv returns MCP_ARG_<NAME> variables for the top-level scalar members
// of the arguments object: strings as they are, numbers as their JSON text,
// booleans as "true"/"false". NAME is the member name upper-cased with every
// character outside A-Z 0-9 _ turned into "_". Null, objects and arrays are
// left out, and so are strings holding NUL (an environment cannot carry it)
// and values longer than MaxArgEnvValue bytes, and once MaxArgEnvTotal bytes
// are used the remaining members (in name order): the kernel refuses to exec
// with oversized variables, and the tool can always read its stdin. When two
// names map to the same variable, the one sorting last wins. Anything but a
// JSON object gives none.
func ArgEnv(args []byte) map[string]string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]string{}
	total := 0
	for _, k := range keys {
		raw := bytes.TrimSpace(obj[k])
		if len(raw) == 0 {
			continue
		}
		var val string
		switch raw[0] {
		case '"':
			if json.Unmarshal(raw, &val) != nil || strings.ContainsRune(val, 0) {
				continue
			}
		case 't', 'f':
			val = string(raw)
		case 'n', '{', '[':
			continue
		default:
			val = string(raw)
		}
		name := "MCP_ARG_" + envName(k)
		if len(val) > MaxArgEnvValue || total+len(name)+len(val) > MaxArgEnvTotal {
			continue
		}
		total += len(name) + len(val) + 2
		out[name] = val
	}
	return out
}

func envName(k string) string {
	b := []byte(strings.ToUpper(k))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// vars is an environment under construction: names in the order first set,
// a later set of a name replacing its value.
type vars struct {
	order []string
	vals  map[string]string
}

func (v *vars) set(k, val string) {
	if v.vals == nil {
		v.vals = map[string]string{}
	}
	if _, ok := v.vals[k]; !ok {
		v.order = append(v.order, k)
	}
	v.vals[k] = val
}

func (v *vars) drop(match func(string) bool) {
	v.order = slices.DeleteFunc(v.order, func(k string) bool {
		if match(k) {
			delete(v.vals, k)
			return true
		}
		return false
	})
}

func (v *vars) sorted() []string {
	env := v.list()
	sort.Strings(env)
	return env
}

func (v *vars) list() []string {
	env := make([]string, 0, len(v.order))
	for _, k := range v.order {
		env = append(env, k+"="+v.vals[k])
	}
	return env
}

// Command returns the minimal environment for a program a tool runs under
// root, from the tool's environment getenv, in this order: PATH (the
// tool's, or DefaultPath, without relative entries and entries inside root,
// where the program could look further programs up), TERM=dumb, NO_COLOR=1
// and PAGER=cat (no program waits for a terminal or pages), then HOME, LANG,
// LC_ALL, TZ and TMPDIR when the tool has them set and non-empty. A HOME
// inside root (or relative) becomes /nonexistent: programs read their
// configuration from HOME (curl's .curlrc, wget's .wgetrc, .npmrc ...), and
// a client with write tools could write it. An empty root checks nothing
// against a root. Nothing else of the tool's environment gets in.
func Command(getenv func(string) string, root string) []string {
	path := getenv("PATH")
	if path == "" {
		path = DefaultPath
	}
	var dirs []string
	for _, d := range filepath.SplitList(path) {
		if filepath.IsAbs(d) && (root == "" || !inside(d, root)) {
			dirs = append(dirs, d)
		}
	}
	var v vars
	v.set("PATH", strings.Join(dirs, string(filepath.ListSeparator)))
	v.set("TERM", "dumb")
	v.set("NO_COLOR", "1")
	v.set("PAGER", "cat")
	for _, k := range []string{"HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		val := getenv(k)
		if k == "HOME" && val != "" && root != "" && inside(val, root) {
			val = "/nonexistent"
		}
		if val != "" {
			v.set(k, val)
		}
	}
	return v.list()
}

// inside reports whether p (a HOME or a PATH entry) is root or lies below
// it, as written or with symlinks resolved; a relative one counts as
// inside.
func inside(p, root string) bool {
	if !filepath.IsAbs(p) {
		return true
	}
	pc, rc := filepath.Clean(p), filepath.Clean(root)
	if within(pc, rc) {
		return true
	}
	pr, err1 := filepath.EvalSymlinks(pc)
	rr, err2 := filepath.EvalSymlinks(rc)
	return err1 == nil && err2 == nil && within(pr, rr)
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
