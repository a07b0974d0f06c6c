package stock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// Kind sorts the roster: read and system tools are read-only, mutating
// tools are left out by `install --readonly`.
type Kind int

const (
	KindRead     Kind = iota // reads files under the root; never writes
	KindMutating             // writes, deletes or runs something
	KindSystem               // reports on the process or host; never writes
)

func (k Kind) String() string {
	switch k {
	case KindRead:
		return "read"
	case KindMutating:
		return "mutating"
	case KindSystem:
		return "system"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Tool is one stock tool: its definition, its place in the roster and its
// handler. A tool file registers a function that builds one, in init().
type Tool struct {
	Def     tool.Definition
	Kind    Kind
	Handler func(c *tool.Call) error
}

// ReadOnly reports whether the tool is in the read-only roster.
func (t *Tool) ReadOnly() bool { return t.Kind != KindMutating }

// WorkerConcurrency is the run.concurrency of every stock tool: how many
// calls mcp-route may give one mcp-stock worker at once. The handlers are
// safe to run concurrently (the tests run them so); one call at a time
// would leave a worker idle while mcp-route writes and reads the pipes, and
// halve the calls/s with 16 in flight.
const WorkerConcurrency = 8

// registry holds every tool's builder by name; it is filled by init
// functions only and read-only afterwards, so lookups need no lock. A tool is
// built on first lookup: a process runs one tool, and building all 32
// definitions (their schemas, their annotations) at init cost every call a
// quarter of a millisecond.
var registry = make(map[string]*entry, 32)

// entry is one registered tool, built once by get.
type entry struct {
	name  string
	build func() Tool
	once  sync.Once
	tool  *Tool
}

// get builds the tool on the first call. It panics on a definition named
// otherwise or a missing handler: these are programming errors, caught by
// any test that lists the tools.
func (e *entry) get() *Tool {
	e.once.Do(func() {
		t := e.build()
		switch {
		case t.Def.Name != e.name:
			panic("stock: register " + e.name + ": its definition is named " + t.Def.Name)
		case t.Handler == nil:
			panic("stock: register " + e.name + ": no handler")
		}
		// Every stock tool runs as a worker (see the package doc): its
		// handler keeps no state outside the call, honours the context
		// and may run beside others in one process.
		if t.Def.Run == nil {
			t.Def.Run = &tool.Run{}
		}
		if t.Def.Run.Mode == "" {
			t.Def.Run.Mode = tool.ModeWorker
		}
		if t.Def.Run.Concurrency == 0 {
			t.Def.Run.Concurrency = WorkerConcurrency
		}
		e.tool = &t
	})
	return e.tool
}

// register adds the tool that build makes under name. It panics on a
// nameless or duplicate name.
func register(name string, build func() Tool) {
	switch {
	case name == "":
		panic("stock: register: tool without a name")
	case registry[name] != nil:
		panic("stock: register " + name + ": registered twice")
	}
	registry[name] = &entry{name: name, build: build}
}

// Tools returns every tool sorted by name; with readOnly, only the
// read-only ones.
func Tools(readOnly bool) []*Tool {
	out := make([]*Tool, 0, len(registry))
	for _, e := range registry {
		if t := e.get(); !readOnly || t.ReadOnly() {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Def.Name < out[j].Def.Name })
	return out
}

// Lookup returns the tool called name.
func Lookup(name string) (*Tool, bool) {
	e, ok := registry[name]
	if !ok {
		return nil, false
	}
	return e.get(), true
}

// Annotation helpers. Every tool states all four hints: a missing hint
// means the spec's pessimistic default, which would be dishonest for a
// read-only tool. openWorld is false everywhere: the tools work on the root
// only (sh_exec sets its own).

// readOnlyHints are the annotations of a read or system tool.
func readOnlyHints(title string) *codec.ToolAnnotations {
	return &codec.ToolAnnotations{
		Title:          title,
		ReadOnlyHint:   codec.Bool(true),
		IdempotentHint: codec.Bool(true),
		OpenWorldHint:  codec.Bool(false),
	}
}

// mutatingHints are the annotations of a tool that changes the root:
// destructive when it can delete or overwrite what was there, idempotent
// when a second identical call changes nothing more.
func mutatingHints(title string, destructive, idempotent bool) *codec.ToolAnnotations {
	return &codec.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    codec.Bool(false),
		DestructiveHint: codec.Bool(destructive),
		IdempotentHint:  codec.Bool(idempotent),
		OpenWorldHint:   codec.Bool(false),
	}
}

// jsonResult is the run setting of a tool whose output is data: stdout is
// one JSON value, which mcp-route sends as structuredContent and text.
func jsonResult() *tool.Run { return &tool.Run{Result: tool.ResultJSON} }

// schema compacts a JSON Schema literal written for people (indented, in
// a raw string): the bytes json.Compact would give, in one allocation and
// without a JSON scanner, because every call of a tool builds its
// definition. It does not check the literal; TestRegistry compiles every
// tool's schemas, so a broken one fails the tests.
func schema(s string) json.RawMessage {
	return appendCompact(make([]byte, 0, len(s)), s)
}

// appendCompact appends s without the whitespace outside its strings.
func appendCompact(b []byte, s string) []byte {
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		b = append(b, c)
	}
	return b
}

// Property snippets shared by the input schemas, so that every tool
// describes its common arguments the same way. Use them inside schema(`...`)
// literals with string concatenation.
const (
	// propPath is the "path" argument of every tool that works on one
	// file or directory.
	propPath = `"path": {"type": "string", "minLength": 1, "maxLength": 4095,
		"description": "File path, relative to the root (an absolute path must lie inside the root). Paths that leave the root are refused."}`
	// propDirPath is "path" for tools that walk a directory; it defaults
	// to the root.
	propDirPath = `"path": {"type": "string", "minLength": 1, "maxLength": 4095, "default": ".",
		"description": "Directory, relative to the root (default: the root itself). Paths that leave the root are refused."}`
)

// objectSchema is the JSON Schema of an object with the properties props
// (each a snippet `"name": {...}`, or a few joined by commas) and the
// required ones listed, compacted like schema. It is closed
// (additionalProperties: false): an input schema refuses an argument the
// tool does not know, such as a misspelt one, instead of ignoring it.
func objectSchema(required []string, props ...string) json.RawMessage {
	n := 64
	for _, p := range props {
		n += len(p) + 1
	}
	for _, r := range required {
		n += len(r) + 3
	}
	b := append(make([]byte, 0, n), `{"type":"object","properties":{`...)
	for i, p := range props {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendCompact(b, p)
	}
	b = append(b, '}')
	if len(required) > 0 {
		b = append(b, `,"required":[`...)
		for i, r := range required {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, r...)
			b = append(b, '"')
		}
		b = append(b, ']')
	}
	return append(b, `,"additionalProperties":false}`...)
}

// propMaxBytes is the "maxBytes" argument of a tool whose text output is
// capped by DefaultMaxBytes and MaxBytesLimit; description says what it
// counts.
func propMaxBytes(description string) string {
	return propLimit("maxBytes", MaxBytesLimit, DefaultMaxBytes, description)
}

// propMaxResults is the "maxResults" argument of a tool whose list is
// capped by MaxResultsLimit, by default def; description says what it
// counts.
func propMaxResults(def int, description string) string {
	return propLimit("maxResults", MaxResultsLimit, def, description)
}

// propLines is the "lines" argument of fs_head and fs_tail, as capped by
// endLinesArgs.want.
func propLines(description string) string {
	return propLimit("lines", MaxLinesLimit, defaultEndLines, description)
}

// propLimit is an integer argument name from 1 to max, by default def.
// (Concatenated, not formatted: a call builds its tool's definition, and
// fmt's first use costs the process more than the string.)
func propLimit(name string, max, def int, description string) string {
	return `"` + name + `": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(max) +
		`, "default": ` + strconv.Itoa(def) + `, "description": ` + strconv.Quote(description) + `}`
}

// pathOnlySchema is the input schema of a tool whose one argument is path.
var pathOnlySchema = objectSchema([]string{"path"},
	propPath,
)

// pathArgs are the arguments of a tool whose one argument is path.
type pathArgs struct {
	Path string `json:"path"`
}

// argChecker is an arguments type that checks itself, and fills in its
// defaults and derived fields, before the root is opened (see rooted).
type argChecker interface{ check() error }

// rooted makes the handler of a tool that works under the root, so that a
// tool file holds only what is its own: the handler decodes the call's
// arguments into a new A (strictly, see decodeArgs), lets them check
// themselves when *A is an argChecker, so that a bad call fails before
// anything is opened, opens the call's root (openRoot) and runs h with the
// root and the arguments. The root is closed when h returns.
func rooted[A any](h func(c *tool.Call, r *jail.Root, args *A) error) func(*tool.Call) error {
	return func(c *tool.Call) error {
		var args A
		if err := decodeArgs(c, &args); err != nil {
			return err
		}
		if ck, ok := any(&args).(argChecker); ok {
			if err := ck.check(); err != nil {
				return err
			}
		}
		r, done, err := openRoot(c)
		if err != nil {
			return err
		}
		defer done()
		return h(c, r, &args)
	}
}

// decodeArgs decodes the call's arguments into v, strictly: an unknown
// argument is an error. mcp-route has checked the arguments against the
// inputSchema already (every schema says additionalProperties: false); this
// catches a tool run by hand or a schema that drifted from the struct.
func decodeArgs(c *tool.Call, v any) error {
	dec := json.NewDecoder(bytes.NewReader(c.RawArgs()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
