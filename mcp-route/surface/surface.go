// Package surface is mcp-route's resources and prompts: the MCP server
// surface beside tools, served from directories of files and executables
// the way tools are (mcp-route --resources DIR, --prompts DIR), and
// completion/complete for their arguments.
//
// # Resources (--resources DIR)
//
// Every regular file (or symlink to one) in DIR whose name does not start
// with "." is a resource, except a NAME.json beside a NAME, which is
// NAME's sidecar. A plain file is a static resource: resources/read sends
// its bytes. An executable is a dynamic one: resources/read runs it and
// sends what it prints. The sidecar is a JSON object with the MCP Resource
// members uri or uriTemplate, name, title, description, mimeType,
// annotations and size, plus "complete" (see Completion). Defaults: uri is
// file:// and the file's absolute path, name the file name, mimeType from
// the extension (else text/plain for UTF-8 text, application/octet-stream
// for the rest). A uriTemplate (RFC 6570 level 1, {var}, and level 2's
// {+var} and {#var}) makes a resource template: only an executable may
// have one (a file has one content whatever the URI), and it is listed by
// resources/templates/list.
//
// Contents: text when the mimeType is text/*, JSON, XML, JavaScript or
// YAML-like and the bytes are UTF-8; a base64 blob otherwise. At most
// Options.MaxOutput bytes are read or printed: more is an error, never a
// cut resource.
//
// An executable gets, like a tool: stdin, the URI's variables as a JSON
// object ({} for a plain uri); MCP_ARG_<VAR> for each; MCP_RESOURCE_URI,
// the URI read; the tools' environment, working directory, confinement,
// limits, timeout and process slots (Options.Run is the router's runner).
// A non-zero exit is a -32603 error with the end of its stderr.
//
// resources/read of a URI that no resource or template names is -32602
// "Resource not found" with data {"uri": ...} (SEP-2164; never an empty
// contents). resources/list and resources/templates/list are paginated
// (Options.PageSize), sorted by uri and uriTemplate, with an opaque cursor.
// In 2026-07-28, lists and reads carry ttlMs (Options.TTL, the poll) and
// cacheScope public; a dynamic resource's read ttlMs 0, cacheScope private.
//
// Refused, each with one log line, the rest served: a symlink whose target
// is outside DIR (a sidecar's too: the file is left out), a name or uri holding "..", a sidecar that is not valid
// JSON or has members of the wrong type, a uriTemplate on a plain file, two
// resources with one uri (both left out). Reads go through the jail
// (mcp-jail/jail), so a file swapped for a symlink out of DIR after the
// scan is refused too.
//
// # Prompts (--prompts DIR)
//
// Every file in DIR, with the same naming and sidecar rules, is a prompt
// named by the file name (the sidecar's name wins). The sidecar gives
// title, description, arguments ([{name, description, required}]) and
// "complete". A plain file is a template: prompts/get sends one user text
// message, the file with each {{NAME}} replaced by the argument NAME ("" when
// absent), read through the jail like a static resource. An executable gets the arguments as JSON on stdin and as
// MCP_ARG_<NAME>, MCP_PROMPT its name, and prints a GetPromptResult object
// ({"description"?, "messages": [...]}: text, image, audio and embedded
// resource content), checked for shape. A missing required argument, an
// unknown prompt or an argument that is not a string is -32602.
//
// # Completion
//
// completion/complete for a prompt's argument (ref/prompt) or a resource
// template's variable (ref/resource): the sidecar's "complete" member maps
// the name to a list of values (those starting with the typed value are
// sent, 100 at most, with total and hasMore) or to the string "exec": the
// executable itself is run as `EXE --mcp-complete` with MCP_COMPLETE_NAME,
// MCP_COMPLETE_VALUE and, on stdin, {"argument": {"name", "value"},
// "arguments": {context}}, and prints one value a line. Anything else
// completes to no values.
//
// # Changes
//
// Watch polls the directories (as the tool directories are polled): a
// change of the lists calls back with notifications/resources/list_changed
// or notifications/prompts/list_changed, and a change of a resource's file
// (its size, mtime, inode or ctime: contents, or the executable of a
// dynamic one) with the resource's uri, for notifications/resources/updated.
//
// A Set is safe for concurrent use.
package surface

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

// The list_changed and updated notifications.
const (
	MethodResourcesListChanged = "notifications/resources/list_changed"
	MethodPromptsListChanged   = "notifications/prompts/list_changed"
	MethodResourcesUpdated     = "notifications/resources/updated"
)

// Defaults for zero Options fields.
const (
	DefaultPageSize  = 100
	DefaultMaxOutput = 1 << 20
	// MaxCompletions is the most values completion/complete sends.
	MaxCompletions = 100
)

// RunFunc runs the executable path with stdin and the variables env on top
// of the tools' environment (the router's runner: slots, confinement,
// limits, timeout, MaxOutput) and returns its stdout, or the failure as a
// short text.
type RunFunc func(ctx context.Context, path string, argv []string, stdin []byte, env map[string]string, rev string) (stdout []byte, failure string)

// Options configure a Set.
type Options struct {
	ResourceDirs []string // optional: --resources
	PromptDirs   []string // optional: --prompts
	Run          RunFunc  // required when a directory holds an executable
	PageSize     int      // optional
	MaxOutput    int64    // optional: the most bytes a resource may have
	// TTL is the ttlMs of 2026-07-28 lists and static reads: how often
	// the directories are polled (0: every answer may be stale at once).
	TTL    time.Duration
	Logger *slog.Logger // optional: Warn for what is left out and why
}

// Set is the resources and prompts of the directories.
type Set struct {
	opts Options

	mu        sync.Mutex
	resources []*Resource // static, sorted by uri
	templates []*Resource // sorted by uriTemplate
	prompts   []*Prompt   // sorted by name
	stamps    map[string]string
	listFP    [2]string // fingerprints of the advertised lists: resources, prompts
	warned    map[string]string
}

// New returns a Set; call Reload to read the directories.
func New(opts Options) *Set {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Set{opts: opts, stamps: map[string]string{}, warned: map[string]string{}}
}

// SetRun sets Options.Run: the router's runner, which exists only once
// the router does. Call it before Reload.
func (s *Set) SetRun(run RunFunc) { s.opts.Run = run }

// HasResources and HasPrompts say which capabilities to declare.
func (s *Set) HasResources() bool { return len(s.opts.ResourceDirs) > 0 }
func (s *Set) HasPrompts() bool   { return len(s.opts.PromptDirs) > 0 }

// entry is one file of a directory with its sidecar.
type entry struct {
	dir, name, path string
	exec            bool
	sidecar         []byte
	stamp           string
}

// scan lists a directory's entries. A symlink out of dir, or one that does
// not resolve, is left out with a log line.
func (s *Set) scan(dir string) []entry {
	ents, err := os.ReadDir(dir)
	if err != nil {
		s.warnOnce(dir, "resource or prompt directory unreadable", slog.String("dir", dir), slog.Any("error", err))
		return nil
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	var out []entry
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		if base, ok := strings.CutSuffix(name, ".json"); ok && names[base] {
			continue // a sidecar
		}
		path := filepath.Join(dir, name)
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			s.warnOnce(path, "file left out", slog.String("path", path), slog.Any("why", err))
			continue
		}
		if rel, err := filepath.Rel(realDir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			s.warnOnce(path, "file left out: its symlink target is outside its directory", slog.String("path", path), slog.String("target", real), slog.String("dir", dir))
			continue
		}
		st, err := os.Stat(real)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		en := entry{dir: dir, name: name, path: path, exec: st.Mode().Perm()&0o111 != 0, stamp: stampOf(st)}
		if sst, err := os.Stat(path + ".json"); err == nil {
			// Through the jail, bounded, a regular file: a sidecar
			// linked out of dir is refused as a resource would be, and
			// a FIFO cannot hold the scan.
			sc, err := s.readSidecarFile(dir, name+".json", sst)
			if err != nil {
				s.warnOnce(path, "file left out: its sidecar", slog.String("path", path), slog.String("sidecar", name+".json"), slog.Any("why", err))
				continue
			}
			en.sidecar = sc
			en.stamp += "/" + stampOf(sst)
		}
		out = append(out, en)
	}
	return out
}

// maxSidecar is the largest NAME.json read.
const maxSidecar = 1 << 20

func (s *Set) readSidecarFile(dir, name string, st os.FileInfo) ([]byte, error) {
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	root, err := jail.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, truncated, err := root.ReadFile(name, maxSidecar)
	switch {
	case err != nil:
		return nil, err
	case truncated:
		return nil, fmt.Errorf("over %d bytes", maxSidecar)
	}
	return b, nil
}

// Reload re-reads the directories. It reports which lists changed (as
// advertised) and the uris of the resources whose files changed.
func (s *Set) Reload() (resources, prompts bool, updated []string) {
	var res, tmpl []*Resource
	byURI := map[string]*Resource{}
	dup := map[string]bool{}
	stamps := map[string]string{}
	for _, dir := range s.opts.ResourceDirs {
		for _, en := range s.scan(dir) {
			r, err := parseResource(en)
			if err != nil {
				s.warnOnce(en.path, "resource left out", slog.String("path", en.path), slog.Any("why", err))
				continue
			}
			key := r.URI + "\x00" + r.URITemplate
			if byURI[key] != nil {
				dup[key] = true
				s.warnOnce(en.path+"dup", "resource left out: another names the same uri", slog.String("path", en.path), slog.String("uri", r.URI+r.URITemplate), slog.String("other", byURI[key].path))
				continue
			}
			byURI[key] = r
			stamps[r.URI+r.URITemplate] = en.stamp
			if r.tmpl != nil {
				tmpl = append(tmpl, r)
			} else {
				res = append(res, r)
			}
		}
	}
	res = slices.DeleteFunc(res, func(r *Resource) bool { return dup[r.URI+"\x00"] })
	tmpl = slices.DeleteFunc(tmpl, func(r *Resource) bool { return dup["\x00"+r.URITemplate] })
	slices.SortFunc(res, func(a, b *Resource) int { return strings.Compare(a.URI, b.URI) })
	slices.SortFunc(tmpl, func(a, b *Resource) int { return strings.Compare(a.URITemplate, b.URITemplate) })

	var prs []*Prompt
	seen := map[string]bool{}
	for _, dir := range s.opts.PromptDirs {
		for _, en := range s.scan(dir) {
			p, err := parsePrompt(en)
			if err != nil {
				s.warnOnce(en.path, "prompt left out", slog.String("path", en.path), slog.Any("why", err))
				continue
			}
			if seen[p.Def.Name] {
				s.warnOnce(en.path+"dup", "prompt left out: another prompt has its name", slog.String("path", en.path), slog.String("prompt", p.Def.Name))
				continue
			}
			seen[p.Def.Name] = true
			prs = append(prs, p)
		}
	}
	slices.SortFunc(prs, func(a, b *Prompt) int { return strings.Compare(a.Def.Name, b.Def.Name) })

	resFP, prFP := fingerprint(res, tmpl), fingerprint(prs)
	s.mu.Lock()
	defer s.mu.Unlock()
	resources, prompts = resFP != s.listFP[0], prFP != s.listFP[1]
	for _, r := range res {
		if old, ok := s.stamps[r.URI]; ok && old != stamps[r.URI] {
			updated = append(updated, r.URI)
		}
	}
	s.resources, s.templates, s.prompts = res, tmpl, prs
	s.stamps = stamps
	s.listFP = [2]string{resFP, prFP}
	return resources, prompts, updated
}

func fingerprint(lists ...any) string {
	b, _ := json.Marshal(lists)
	return string(b)
}

// Watch re-reads the directories every interval until ctx is done, and
// calls listChanged with the list_changed method of each list that
// changed and updated with the uri of each resource whose file changed.
func (s *Set) Watch(ctx context.Context, interval time.Duration, listChanged func(method string), updated func(uri string)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			res, prs, upd := s.Reload()
			if res {
				listChanged(MethodResourcesListChanged)
			}
			if prs {
				listChanged(MethodPromptsListChanged)
			}
			for _, u := range upd {
				updated(u)
			}
		}
	}
}

// warnOnce logs a problem with key once, until it changes.
func (s *Set) warnOnce(key, msg string, attrs ...slog.Attr) {
	said := msg + fmt.Sprint(attrs)
	s.mu.Lock()
	same := s.warned[key] == said
	s.warned[key] = said
	s.mu.Unlock()
	if !same {
		s.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, msg, attrs...)
	}
}

func stampOf(st os.FileInfo) string {
	return fmt.Sprintf("%d:%d:%v", st.Size(), st.ModTime().UnixNano(), sysStamp(st))
}

// page returns the page of n sorted keys after cursor, and the next cursor.
func page(keys []string, cursor string, size int) (start, end int, next string, err *codec.Error) {
	if cursor != "" {
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		after, ok := strings.CutPrefix(string(b), cursorPrefix)
		if derr != nil || !ok {
			return 0, 0, "", codec.Errorf(codec.CodeInvalidParams, "invalid params: unknown cursor %q", cursor)
		}
		start, _ = slices.BinarySearch(keys, after)
		if start < len(keys) && keys[start] == after {
			start++
		}
	}
	end = min(start+size, len(keys))
	if end < len(keys) {
		next = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + keys[end-1]))
	}
	return start, end, next, nil
}

const cursorPrefix = "after:"

// Cache is the ttlMs and cacheScope 2026-07-28 requires on lists and
// reads; empty (left out) in the legacy revisions.
type Cache struct {
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// cache returns the Cache members for rev: ttl for what the poll finds
// changed, 0 for what an executable makes anew each time.
func (s *Set) cache(rev string, dynamic bool) Cache {
	if !codec.IsModernRevision(rev) {
		return Cache{}
	}
	ttl := max(int64(s.opts.TTL/time.Millisecond), 0)
	scope := codec.CacheScopePublic
	if dynamic {
		// Its output may depend on anything, the caller included.
		ttl, scope = 0, codec.CacheScopePrivate
	}
	return Cache{TTLMs: &ttl, CacheScope: scope}
}

// cursorParam reads params.cursor.
func cursorParam(params json.RawMessage) (string, *codec.Error) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(bytes.TrimSpace(params)) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return "", codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	return p.Cursor, nil
}

// Listed returns the resources, resource templates and prompts as listed,
// each sorted (the router merges them with an upstream's).
func (s *Set) Listed() (resources, templates []*Resource, prompts []PromptDef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prompts {
		prompts = append(prompts, p.Def)
	}
	return s.resources, s.templates, prompts
}

// CacheFor is the Cache members of a list for rev.
func (s *Set) CacheFor(rev string) Cache { return s.cache(rev, false) }
