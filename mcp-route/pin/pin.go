// Package pin keeps the definitions of upstream MCP tools that were
// approved, and withholds the ones that have changed since: the defence of
// `mcp-route --pin FILE` against a server that rewrites a tool's
// description or schema after it was trusted (tool poisoning, a "rug
// pull").
//
// # What is pinned
//
// A tool's definition is its name, title, description, inputSchema,
// outputSchema, annotations and _meta: what the model reads to decide on a
// call (name, title, description), what the call sends and gets back (the
// schemas), what a host reads to decide whether to ask the user first
// (annotations: readOnlyHint, destructiveHint, ...) and what extensions
// and hosts read besides (_meta: a UI resource to render, a host's own
// hints), which a rug pull could change as well as a description. The digest is the
// SHA-256 of the definition's canonical JSON, so key order, whitespace,
// string escapes and number spelling (1, 1.0, 1e0) do not matter, and a
// definition with a duplicate key, a lone surrogate or a byte that is not
// UTF-8 is refused, never pinned: parsers disagree on what it means (see
// canon.go). A schema that is absent or null is absent, and so are empty
// annotations and an empty _meta.
//
// Left out: icons, a picture for the host's UI (often a data: URI of many
// kilobytes) that the model does not read and that does not change what a
// call does. Annotations are pinned as codec.ToolAnnotations holds them:
// the keys it does not know are not served either. An upstream that puts
// per-listing data in a tool's _meta (a timestamp) has that tool withheld
// at each change: pin it again, or mount it without --pin.
//
// Pins written before _meta was covered (entries without "coversMeta")
// still serve their tool while the definition without _meta matches: an
// upgrade does not withhold every tool that has a _meta. Such a pin does
// not guard _meta until the upstream is pinned again (mcp-route pin),
// which records it.
//
// An upstream's resources, resource templates and prompts are pinned
// beside its tools (surface.go): CheckSurface, TrustFirstUseSurface,
// PinAllSurface and PlanSurface are Check, TrustFirstUse, PinAll and Plan
// for them, kept in the file's "surface" member.
//
// # The file
//
// The pin file is JSON, written with its keys sorted and indented, so that
// it diffs well under version control:
//
//	{
//	  "format": "mcpipe-pin/1",
//	  "upstreams": {
//	    "fs": {
//	      "read_file": {
//	        "definition": { "description": "...", "inputSchema": {...}, "name": "read_file" },
//	        "sha256": "3f1c..."
//	      }
//	    }
//	  }
//	}
//
// Each tool keeps its definition, so that a mismatch can show what
// changed; a definition whose canonical JSON is larger than MaxKept bytes
// keeps instead one SHA-256 per field ("fields"), which still names the
// fields that changed. An upstream keeps at most MaxTools tools; the
// others are refused, so a hostile upstream cannot grow the file without
// bound. Characters a terminal would hide (U+202E, U+200B, line
// separators) are written as \u escapes.
//
// Load refuses, naming the file and what is wrong: a file that is not
// this JSON (a syntax error with its line and column, a duplicate key, an
// unknown key or format), a name that is not an upstream or tool name,
// and a definition that does not match its sha256 (edited by hand: pin
// again). A corrupt file is never taken as empty. A missing file is an
// empty set, but its directory must exist. A symbolic link where the file
// goes is refused, when reading and when writing: the file is replaced by
// rename, which would replace the link, not its target; give the target's
// path.
//
// Every write is atomic: a temporary file in the same directory, synced,
// then renamed over the file, so a reader sees the old set or the new one.
// A new file is created 0600 (definitions can name private tools and
// paths; nobody else needs to read them); an existing file keeps its
// permission bits. Writers hold an flock(2) on the directory and read the
// file again before they change it, so two mcp-route processes sharing a
// pin file do not undo each other's pins (without that, an upstream pinned
// by one and lost by the other's write would be trusted on first use
// again).
//
// # Semantics
//
// TrustFirstUse records the tools of an upstream the file has no entry for
// (trust on first use), and does nothing for a known one or an empty list.
// Pin records an upstream's tools on purpose, replacing its entry: a tool
// no longer listed loses its pin; PinAll does it for several upstreams in
// one write (`mcp-route pin`). A tool whose name breaks the tool-name
// rules, one listed twice (which definition is served would be the
// upstream's choice), one beyond MaxTools and one whose definition cannot
// be pinned are refused, and so withheld.
//
// Check tells whether a tool may be served: only when its upstream is
// pinned and its definition is the recorded one; a new tool of a pinned
// upstream is withheld until pinned. Its reason, for the client, names the
// fields that changed but never shows the new text (the client is a model
// the new description may be written to mislead); its diff, for the log,
// shows old against new, clipped around the first difference.
//
// Check reads the file again when it has changed on disk (another process
// pinned), and Refresh does so on demand, reporting whether it did, so a
// running server follows `mcp-route pin`. When that read fails (the file
// was corrupted), Check withholds every tool, its reason naming the error,
// until the file is good again. A file removed under a running server is
// an empty set, as at Load: nothing is pinned any more, and the next list
// of each upstream is trusted on first use.
//
// A File is safe for concurrent use.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
)

// Limits on what one upstream can put in the pin file.
const (
	// MaxTools is the most tools pinned per upstream; the others are
	// refused, and so withheld.
	MaxTools = 1000
	// MaxKept is the largest definition, as canonical JSON, kept whole
	// for a diff; a larger one keeps a digest per field.
	MaxKept = 8 << 10
)

// Fields are the definition's fields a pin covers, in the order a diff
// shows them.
var Fields = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta"}

// ValidateUpstream checks an upstream name: 1 to 32 of A-Z a-z 0-9 -.
// It is mcp-route's one rule for --upstream NAME. (A loop, not a regexp:
// a counted repetition compiles into 32 copies at every start, even a
// stdio server's with no upstream.)
func ValidateUpstream(name string) error {
	ok := len(name) >= 1 && len(name) <= 32
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
	}
	if !ok {
		return fmt.Errorf("upstream name %q: want 1 to 32 of A-Z a-z 0-9 -", name)
	}
	return nil
}

// An Action is what recording did to one tool's pin.
type Action string

const (
	Added     Action = "added"     // pinned, it had no pin
	Changed   Action = "changed"   // pinned again, its definition differs
	Unchanged Action = "unchanged" // its pin was already this definition
	Removed   Action = "removed"   // its pin is gone: the upstream no longer lists it
	Refused   Action = "refused"   // not pinned (Reason says why), so withheld
)

// A Change is what TrustFirstUse or Pin did to one tool's pin.
type Change struct {
	Action   Action
	Upstream string
	Tool     string
	Digest   string   // "sha256:HEX" now pinned (Removed: the one dropped; Refused: "")
	Was      string   // Changed: the digest it replaces
	Fields   []string // Changed: the fields that differ
	Diff     string   // Changed: old against new, one line, clipped
	Reason   string   // Refused: why

	// For Review and Accept: the pins before and after (nil when there is
	// none) and the new definition whole, even when over MaxKept.
	was, now *entry
	def      map[string]any
}

// String is the change as one line of data:
//
//	ACTION UPSTREAM TOOL DIGEST [was DIGEST fields F1,F2 | reason: WHY]
//
// A tool name that breaks the name rules is quoted, so every line has its
// fields split by single spaces.
func (c Change) String() string {
	name := c.Tool
	if codec.ValidateToolName(name) != nil {
		name = strconv.QuoteToASCII(name)
	}
	digest := c.Digest
	if digest == "" {
		digest = "-"
	}
	line := fmt.Sprintf("%s %s %s %s", c.Action, c.Upstream, name, digest)
	switch c.Action {
	case Changed:
		line += fmt.Sprintf(" was %s fields %s", c.Was, strings.Join(c.Fields, ","))
	case Refused:
		line += " reason: " + c.Reason
	}
	return line
}

// entry is one tool's pin.
type entry struct {
	digest string            // hex SHA-256 of the canonical definition
	def    map[string]any    // the definition; nil when over MaxKept
	fields map[string]string // field → hex SHA-256 of its canonical value
	// noMeta: pinned before _meta was covered; the digest is of the
	// definition without it (see the package doc).
	noMeta bool
}

// pinSet is the file's content: upstream → tool → pin.
type pinSet map[string]map[string]*entry

// File is a pin file and the pins last read from it or written to it.
type File struct {
	path string

	mu    sync.Mutex
	set   pinSet
	stamp os.FileInfo // of the file when set was read; nil: there was none
	seen  os.FileInfo // of the file at the last read, good or not
	err   error       // the last read failed: every Check withholds
}

// Load reads the pin file at path. A missing file is an empty set, when
// its directory exists; anything else that is not a good pin file is an
// error naming path and what is wrong.
func Load(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %w", path, err)
	}
	set, stamp, err := readFile(abs)
	if err != nil {
		return nil, err
	}
	if stamp == nil {
		dir := filepath.Dir(abs)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("pin file %s: directory %s does not exist", abs, dir)
		}
	}
	return &File{path: abs, set: set, stamp: stamp, seen: stamp}, nil
}

// Path is the file's absolute path.
func (f *File) Path() string { return f.path }

// Known reports whether the file has an entry for upstream, even one with
// no tools.
func (f *File) Known(upstream string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	_, ok := f.set[upstream]
	return ok && f.err == nil
}

// Err is why the file could not be read the last time it changed on
// disk, or nil: while it is set, Check withholds every tool.
func (f *File) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	return f.err
}

// Check reports whether upstream's tool t may be served. When not, reason
// says why in one line for the client (the fields that changed, never
// their new text), and diff, for a changed definition, shows the old and
// new values of those fields for the log.
func (f *File) Check(upstream string, t codec.Tool) (ok bool, reason, diff string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	if f.err != nil {
		return false, "the pin file cannot be read: " + f.err.Error(), ""
	}
	pins, known := f.set[upstream]
	if !known {
		return false, fmt.Sprintf("upstream %s has no pins yet; review its tools with mcp-route pin --dry-run, accept them with mcp-route pin --all", upstream), ""
	}
	now, err := pinOf(t)
	if err != nil {
		return false, "its definition cannot be pinned: " + err.Error(), ""
	}
	was, ok := pins[t.Name]
	if !ok {
		return false, fmt.Sprintf("it is new since the upstream was pinned; review it with mcp-route pin --dry-run, accept it with mcp-route pin --accept %s", Served(upstream, t.Name)), ""
	}
	if was.digest == now.digest {
		return true, "", ""
	}
	if was.noMeta {
		if def, err := definition(t); err == nil {
			delete(def, "_meta")
			if newEntry(def).digest == was.digest {
				return true, "", ""
			}
		}
	}
	fields, diff := compare(was, now)
	return false, fmt.Sprintf("its definition changed since it was pinned (%s); review it with mcp-route pin --dry-run, accept it with mcp-route pin --accept %s", strings.Join(fields, ", "), Served(upstream, t.Name)), diff
}

// TrustFirstUse pins tools when the file has no entry for upstream, and
// returns what it recorded; for a known upstream, or no tools, it does
// nothing. The file is read again under its lock first, so an upstream
// another process pinned meanwhile is not trusted anew.
func (f *File) TrustFirstUse(upstream string, tools []codec.Tool) ([]Change, error) {
	if err := ValidateUpstream(upstream); err != nil {
		return nil, err
	}
	return f.update(func(set pinSet) []Change {
		if _, known := set[upstream]; known || len(tools) == 0 {
			return nil
		}
		return record(set, upstream, tools)
	})
}

// Pin records tools as upstream's pins, replacing what it had: a tool no
// longer listed loses its pin. It returns one Change per tool, unchanged
// ones included: the listed tools by name, then the removed ones by name.
func (f *File) Pin(upstream string, tools []codec.Tool) ([]Change, error) {
	if err := ValidateUpstream(upstream); err != nil {
		return nil, err
	}
	return f.update(func(set pinSet) []Change {
		return record(set, upstream, tools)
	})
}

// PinAll is Pin for several upstreams at once, in one write: the file
// gets all of them or, on an error, none. Changes come upstream by
// upstream, sorted by name, each as Pin orders them.
func (f *File) PinAll(lists map[string][]codec.Tool) ([]Change, error) {
	return recordAll(f, lists, record, true)
}

// recordAll records each upstream's items of lists with rec, upstreams
// sorted by name: in one write of the file (write), or on the file as it
// is on disk without writing anything (a plan). An invalid upstream name
// changes nothing.
func recordAll[T any](f *File, lists map[string][]T, rec func(pinSet, string, []T) []Change, write bool) ([]Change, error) {
	ups := slices.Sorted(maps.Keys(lists))
	for _, up := range ups {
		if err := ValidateUpstream(up); err != nil {
			return nil, err
		}
	}
	all := func(set pinSet) []Change {
		var changes []Change
		for _, up := range ups {
			changes = append(changes, rec(set, up, lists[up])...)
		}
		return changes
	}
	if write {
		return f.update(all)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	set, _, err := readFile(f.path)
	if err != nil {
		return nil, err
	}
	return all(set), nil
}

// update applies change to the file's current content under the
// directory lock, writes the result when it differs, and keeps it.
func (f *File) update(change func(pinSet) []Change) ([]Change, error) {
	return f.updateOrFail(func(set pinSet) ([]Change, error) { return change(set), nil })
}

// updateOrFail is update with a change that can fail: then nothing is
// written.
func (f *File) updateOrFail(change func(pinSet) ([]Change, error)) ([]Change, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := lockDir(filepath.Dir(f.path))
	if err != nil {
		return nil, fmt.Errorf("pin file %s: %w", f.path, err)
	}
	defer unlock()
	set, stamp, err := readFile(f.path)
	if err != nil {
		return nil, err
	}
	before := encodeFile(set)
	changes, err := change(set)
	if err != nil {
		return nil, err
	}
	if after := encodeFile(set); !bytes.Equal(before, after) {
		if stamp, err = writeFile(f.path, after); err != nil {
			return nil, fmt.Errorf("pin file %s: %w", f.path, err)
		}
	}
	f.set, f.stamp, f.seen, f.err = set, stamp, stamp, nil
	return changes, nil
}

// Refresh reads the file again when it has changed on disk since it was
// last read or written (another process pinned, or it was edited), and
// reports whether it did: a server then asks Check again about its tools.
// Check does the same by itself.
func (f *File) Refresh() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refresh()
}

func (f *File) refresh() bool {
	fi, _ := os.Lstat(f.path) // nil when missing or unreadable: readFile says which
	if sameStamp(fi, f.seen) {
		return false
	}
	f.seen = fi
	set, stamp, err := readFile(f.path)
	if err != nil {
		f.err = err
		return true
	}
	f.set, f.stamp, f.err = set, stamp, nil
	return true
}

// sameStamp reports whether a and b (nil: no file) are the same file with
// the same size and modification time.
func sameStamp(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// record replaces upstream's pins in set by tools, and says what changed.
func record(set pinSet, upstream string, tools []codec.Tool) []Change {
	old := set[upstream]
	pins := map[string]*entry{}
	listed := map[string]int{}
	for _, t := range tools {
		listed[t.Name]++
	}
	sorted := slices.Clone(tools)
	slices.SortStableFunc(sorted, func(a, b codec.Tool) int { return strings.Compare(a.Name, b.Name) })
	var changes []Change
	refuse := func(name, why string) {
		changes = append(changes, Change{Action: Refused, Upstream: upstream, Tool: name, Reason: why})
	}
	for i, t := range sorted {
		if i > 0 && sorted[i-1].Name == t.Name {
			continue // refused once below
		}
		if listed[t.Name] > 1 {
			refuse(t.Name, fmt.Sprintf("listed %d times: which definition is served is the upstream's choice", listed[t.Name]))
			continue
		}
		if len(pins) >= MaxTools {
			refuse(t.Name, fmt.Sprintf("the upstream lists more than %d tools, the most a pin file keeps for one", MaxTools))
			continue
		}
		def, err := definition(t)
		if err != nil {
			refuse(t.Name, err.Error())
			continue
		}
		now := newEntry(def)
		pins[t.Name] = now
		c := Change{Action: Added, Upstream: upstream, Tool: t.Name, Digest: "sha256:" + now.digest, now: now, def: def}
		if was, ok := old[t.Name]; ok {
			c.Action, c.was = Unchanged, was
			if was.digest != now.digest {
				c.Action, c.Was = Changed, "sha256:"+was.digest
				c.Fields, c.Diff = compare(was, now)
			}
		}
		changes = append(changes, c)
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range old {
			if listed[name] == 0 && !yield(name) {
				return
			}
		}
	}) {
		changes = append(changes, Change{Action: Removed, Upstream: upstream, Tool: name, Digest: "sha256:" + old[name].digest, was: old[name]})
	}
	set[upstream] = pins
	return changes
}

// pinOf is the pin of t's definition.
func pinOf(t codec.Tool) (*entry, error) {
	def, err := definition(t)
	if err != nil {
		return nil, err
	}
	return newEntry(def), nil
}

func newEntry(def map[string]any) *entry {
	c := canonical(nil, def)
	e := &entry{digest: digest(c), fields: map[string]string{}}
	for k, v := range def {
		e.fields[k] = digest(canonical(nil, v))
	}
	if len(c) <= MaxKept {
		e.def = def
	}
	return e
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// definition is the part of t a pin covers, as parsed JSON values.
func definition(t codec.Tool) (map[string]any, error) {
	if err := codec.ValidateToolName(t.Name); err != nil {
		return nil, err
	}
	def := map[string]any{"name": t.Name}
	for _, s := range []struct{ field, value string }{{"title", t.Title}, {"description", t.Description}} {
		if s.value == "" {
			continue
		}
		if !utf8.ValidString(s.value) {
			return nil, fmt.Errorf("%s is not UTF-8", s.field)
		}
		def[s.field] = s.value
	}
	for _, s := range []struct {
		field string
		raw   json.RawMessage
	}{{"inputSchema", t.InputSchema}, {"outputSchema", t.OutputSchema}} {
		raw := bytes.TrimSpace(s.raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		v, err := parseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.field, err)
		}
		def[s.field] = v
	}
	if t.Annotations != nil {
		raw, err := json.Marshal(t.Annotations)
		if err != nil {
			return nil, fmt.Errorf("annotations: %w", err)
		}
		v, err := parseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("annotations: %w", err)
		}
		if m, ok := v.(map[string]any); !ok || len(m) > 0 {
			def["annotations"] = v
		}
	}
	if len(t.Meta) > 0 {
		raw, err := json.Marshal(t.Meta)
		if err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		v, err := parseJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		def["_meta"] = v
	}
	return def, nil
}
