package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// Defaults for zero Options fields.
const (
	DefaultListTimeout    = 3 * time.Second
	DefaultCallTimeout    = 30 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultGrace          = 2 * time.Second
	DefaultMinBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	DefaultMaxFailures    = 5
	DefaultMaxOutput      = 1 << 20
)

// Options configure a Set. Fields marked optional have a default.
type Options struct {
	Env   []string              // the upstreams' complete environment (toolenv.Base: the tools' base); nil: an empty one
	Dir   string                // their working directory (--root)
	Spawn func(*exec.Cmd) error // optional: starts each process (the tools' confined spawner); nil: cmd.Start
	Grace time.Duration         // optional: stdin close → SIGTERM → SIGKILL steps at shutdown

	CallTimeout    time.Duration // optional: per-call timeout (--timeout)
	StallTimeout   time.Duration // optional: how long a write to a stdio upstream may make no progress before it is taken as hung; 0: CallTimeout
	ListTimeout    time.Duration // optional: how long List waits for an upstream's first list (--upstream-timeout)
	ConnectTimeout time.Duration // optional: start, handshake and first tools/list of one start
	MinBackoff     time.Duration // optional: the first restart delay, doubled per restart
	MaxBackoff     time.Duration // optional: the cap of the delay, and the retry interval of a down upstream
	MaxFailures    int           // optional: failed starts in a row that mark an upstream down
	MaxOutput      int64         // optional: cap on a call's result (its JSON) and on an error's message and data, in bytes (--max-output)
	MaxListBytes   int           // optional: cap on the upstream tool definitions served, all upstreams together, in bytes

	ReadOnly   bool                 // --readonly: list only tools annotated readOnlyHint: true
	ClientInfo codec.Implementation // how mcp-route introduces itself upstream
	// Admit, optional, decides whether an upstream tool is served (the
	// definition pinning of package mcp-route/pin): t is the definition as
	// the upstream gave it, unprefixed. A tool not admitted is left out of
	// List, and a call to it gets an isError result with the reason. It is
	// asked again whenever the upstream's list changes.
	Admit func(upstream string, t codec.Tool) (ok bool, reason string)
	// AdmitSurface, optional, is Admit for an upstream's resources,
	// resource templates and prompts: kind is KindResource, KindTemplate
	// or KindPrompt, key its uri, uriTemplate or name, def its definition
	// as the upstream gave it. Not admitted, it is left out of the lists,
	// and a read or get of it is refused with the reason.
	AdmitSurface func(upstream, kind, key string, def json.RawMessage) (ok bool, reason string)
	Logger       *slog.Logger // optional: Warn for what an operator must see, Debug for routine events; records carry upstream (and tool, why, error, retry_in where they apply)
}

func (o *Options) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = o.CallTimeout
	}
	if o.ListTimeout <= 0 {
		o.ListTimeout = DefaultListTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxListBytes <= 0 {
		o.MaxListBytes = DefaultMaxListBytes
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = DefaultMaxFailures
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientInfo.Name == "" {
		o.ClientInfo = codec.Implementation{Name: "mcp-route"}
	}
}

// level is Warn for what an operator must see, else Debug.
func level(warn bool) slog.Level {
	if warn {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// Tool is one upstream tool as served: Def is the upstream's definition
// under its listed name NAME__TOOL.
type Tool struct {
	Upstream *Upstream
	Name     string // the upstream's own name for it
	Def      codec.Tool
	withheld string // Admit's reason; "" when served
}

// Set is the upstreams of one mcp-route. See the package doc.
type Set struct {
	opts Options
	ups  []*Upstream

	mu       sync.Mutex
	index    map[string]*Tool // listed name → tool, withheld ones included
	list     []*Tool          // served tools, sorted by Def.Name
	stale    bool             // an upstream's list changed since index was built
	reported map[string]bool  // leave-out lines already logged
	onChange []func()
	surf     [3][]*Item // resources, templates, prompts served (withheld ones included)
	// onSurface are told of a changed list (a list_changed method), and
	// onUpdated of an upstream's resources/updated (the served uri).
	onSurface []func(method string)
	onUpdated []func(uri string)
	// updQueue are the updates waiting for relayUpdates, running while
	// updRelaying (see resourceUpdated).
	updMu       sync.Mutex
	updQueue    []string
	updRelaying bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewSet returns the Set of specs; Start starts them.
func NewSet(specs []Spec, opts Options) *Set {
	opts.defaults()
	s := &Set{opts: opts, index: map[string]*Tool{}, reported: map[string]bool{}}
	for _, spec := range specs {
		u := newUpstream(spec, &s.opts, s.changed)
		u.notifySurface = s.surfaceChanged
		u.updated = s.resourceUpdated
		s.ups = append(s.ups, u)
	}
	return s
}

// Upstreams returns the upstreams in the order given.
func (s *Set) Upstreams() []*Upstream { return s.ups }

// OnChange adds f to the functions called (on a supervisor goroutine) when
// the served list may have changed.
func (s *Set) OnChange(f func()) {
	s.mu.Lock()
	s.onChange = append(s.onChange, f)
	s.mu.Unlock()
}

// OnSurfaceChange adds f to the functions called (on a supervisor
// goroutine) with notifications/resources/list_changed or
// notifications/prompts/list_changed when an upstream's list of that kind
// changed.
func (s *Set) OnSurfaceChange(f func(method string)) {
	s.mu.Lock()
	s.onSurface = append(s.onSurface, f)
	s.mu.Unlock()
}

// OnResourceUpdated adds f to the functions called with the served uri of
// an upstream resource the upstream said was updated.
func (s *Set) OnResourceUpdated(f func(uri string)) {
	s.mu.Lock()
	s.onUpdated = append(s.onUpdated, f)
	s.mu.Unlock()
}

func (s *Set) surfaceChanged(res, prs bool) {
	s.mu.Lock()
	s.stale = true
	fs := slices.Clone(s.onSurface)
	s.mu.Unlock()
	for _, f := range fs {
		if res {
			f(methodResourcesListChanged)
		}
		if prs {
			f(methodPromptsListChanged)
		}
	}
}

// resourceUpdated runs on the upstream's read goroutine, through which
// every call of it is answered: the update is queued (at most
// maxQueuedUpdates; more are dropped) and relayed from a goroutine of its
// own, so that a client slow to take it (a GET stream not read, waited for
// up to --http-write-timeout) holds up the updates, never the calls.
func (s *Set) resourceUpdated(u *Upstream, own string) {
	s.updMu.Lock()
	defer s.updMu.Unlock()
	if len(s.updQueue) >= maxQueuedUpdates {
		return
	}
	s.updQueue = append(s.updQueue, ServedURI(u.spec.Name, own))
	if !s.updRelaying {
		s.updRelaying = true
		go s.relayUpdates()
	}
}

// maxQueuedUpdates bounds the updates waiting to be relayed.
const maxQueuedUpdates = 1024

func (s *Set) relayUpdates() {
	for {
		s.updMu.Lock()
		if len(s.updQueue) == 0 {
			s.updRelaying = false
			s.updQueue = nil
			s.updMu.Unlock()
			return
		}
		uri := s.updQueue[0]
		s.updQueue = s.updQueue[1:]
		s.updMu.Unlock()
		s.mu.Lock()
		fs := slices.Clone(s.onUpdated)
		s.mu.Unlock()
		for _, f := range fs {
			f(uri)
		}
	}
}

// Readmit asks Admit again about every tool, at the next List or Lookup,
// and runs the OnChange functions: what Admit decides on (the pin file)
// has changed.
func (s *Set) Readmit() {
	s.changed()
	s.surfaceChanged(true, true)
}

// Start starts supervising every upstream, until Close or ctx is done.
func (s *Set) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	for _, u := range s.ups {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			u.run(ctx)
		}()
	}
}

// Close stops every upstream (stdin closed, then SIGTERM, then SIGKILL of
// its process group, Grace apart) and returns when all are reaped.
func (s *Set) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}

// changed is an upstream's news: its list differs from the last one.
func (s *Set) changed() {
	s.mu.Lock()
	s.stale = true
	fs := slices.Clone(s.onChange)
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// List returns the served upstream tools, sorted by listed name. It waits
// for an upstream's first list at most ListTimeout (or until ctx ends) and
// serves what it has: an upstream that is slow, hung or restarting adds
// its last good list, or nothing yet.
func (s *Set) List(ctx context.Context) []*Tool {
	start := time.Now()
	for _, u := range s.ups {
		if !u.pending() {
			continue
		}
		// Each upstream's wait counts from the start of this List: the
		// waits overlap, they do not add up.
		t := time.NewTimer(time.Until(start.Add(u.listTimeout())))
		select {
		case <-u.listed:
		case <-t.C:
			s.giveUp(start)
		case <-ctx.Done():
			t.Stop()
			return s.snapshot()
		}
		t.Stop()
	}
	return s.snapshot()
}

func (s *Set) snapshot() []*Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	return s.list
}

// giveUp stops waiting for the first list of the upstreams that have not
// given theirs within ListTimeout: later requests do not wait for them
// again (their tools appear with the list_changed their first list sends).
func (s *Set) giveUp(since time.Time) {
	for _, u := range s.ups {
		if u.pending() && time.Since(since) >= u.listTimeout() {
			u.waitedOut.Store(true)
			s.opts.Logger.Warn("upstream has not listed its tools within --upstream-timeout: serving without them until it does", slog.String("upstream", u.spec.Name), slog.Duration("timeout", u.listTimeout()))
		}
	}
}

// Lookup returns the tool listed as name, withheld or not, or nil. A call
// may come before any tools/list: when name's NAME is an upstream that has
// not listed its tools yet, Lookup waits for that, at most ListTimeout.
func (s *Set) Lookup(ctx context.Context, name string) *Tool {
	prefix, _, ok := strings.Cut(name, Separator)
	if !ok {
		return nil
	}
	for _, u := range s.ups {
		if u.spec.Name != prefix {
			continue
		}
		if u.pending() {
			start := time.Now()
			t := time.NewTimer(u.listTimeout())
			select {
			case <-u.listed:
			case <-t.C:
				s.giveUp(start)
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	return s.index[name]
}

// Has reports whether name is an upstream tool (served or withheld) now,
// without waiting.
func (s *Set) Has(name string) bool {
	if !strings.Contains(name, Separator) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	return s.index[name] != nil
}

// Call forwards a call of the tool listed as t; see Upstream.Call. A tool
// Admit withheld gets an isError result with the reason.
func (s *Set) Call(ctx context.Context, t *Tool, args json.RawMessage, rev string, progress func(codec.ProgressParams)) (any, string, error) {
	if t.withheld != "" {
		return codec.ErrorResult(fmt.Sprintf("tool %s is withheld: %s", t.Def.Name, t.withheld)), "failed", nil
	}
	return t.Upstream.Call(ctx, t.Name, args, rev, progress)
}

// rebuild makes index and list from the upstreams' last good lists, when
// one changed. Under s.mu.
func (s *Set) rebuild() {
	if !s.stale && s.list != nil {
		return
	}
	s.stale = false
	index := map[string]*Tool{}
	list := []*Tool{}
	budget := s.opts.MaxListBytes // what the served definitions may add up to
	for _, u := range s.ups {
		tools, left := u.listing()
		for _, l := range left {
			s.report(u, l.name, l.why, true)
		}
		over := 0
		count := map[string]int{}
		for _, t := range tools {
			count[t.Name]++
		}
		for _, def := range tools {
			name := u.spec.Name + Separator + def.Name
			why := ""
			switch {
			case count[def.Name] > 1:
				why = fmt.Sprintf("the upstream lists %d tools of that name; none of them is served", count[def.Name])
			case codec.ValidateToolName(def.Name) != nil:
				why = fmt.Sprintf("its name breaks the tool-name rules: %s", codec.Clip(codec.ValidateToolName(def.Name).Error(), 300))
			case len(name) > MaxListedName:
				why = fmt.Sprintf("%s is %d characters long, more than the %d many LLM APIs allow", name, len(name), MaxListedName)
			case s.opts.ReadOnly && (def.Annotations == nil || def.Annotations.ReadOnlyHint == nil || !*def.Annotations.ReadOnlyHint):
				s.report(u, def.Name, "", false) // --readonly: routine
				continue
			}
			if why != "" {
				s.report(u, def.Name, why, true)
				continue
			}
			t := &Tool{Upstream: u, Name: def.Name, Def: def}
			t.Def.Name = name
			if b, err := codec.Marshal(t.Def); err != nil || len(b) > budget {
				// The upstreams before it took the rest.
				over++
				continue
			} else {
				budget -= len(b)
			}
			if s.opts.Admit != nil {
				if ok, reason := s.opts.Admit(u.spec.Name, def); !ok {
					if reason == "" {
						reason = "not admitted"
					}
					t.withheld = reason
					s.report(u, def.Name, "withheld: "+reason, true)
				}
			}
			index[name] = t
			if t.withheld == "" {
				list = append(list, t)
			}
		}
		if over > 0 {
			s.report(u, "", fmt.Sprintf("%d tools left out: the upstream tools served would pass %d bytes (they must fit a client's frame)", over, s.opts.MaxListBytes), true)
		}
	}
	slices.SortFunc(list, func(a, b *Tool) int { return strings.Compare(a.Def.Name, b.Def.Name) })
	s.index, s.list = index, list
	s.rebuildSurface()
}

// maxReported bounds the leave-out lines remembered as logged: an
// upstream that keeps changing its tools' names cannot grow the map without
// bound (past it, the lines may be logged again).
const maxReported = 4096

// report logs a tool left out (tool "": tools), once per reason.
func (s *Set) report(u *Upstream, tool, why string, warn bool) {
	key := u.spec.Name + "\x00" + tool + "\x00" + why
	if s.reported[key] {
		return
	}
	if len(s.reported) >= maxReported {
		clear(s.reported)
	}
	s.reported[key] = true
	// The handler escapes what the upstream named (slog's text and JSON
	// handlers both do); only its length is bounded here.
	if why == "" {
		s.opts.Logger.Debug("tool left out: --readonly and it is not annotated readOnlyHint: true", slog.String("upstream", u.spec.Name), slog.String("tool", codec.Clip(tool, 100)))
		return
	}
	if tool == "" {
		s.opts.Logger.Log(context.Background(), level(warn), "upstream tools left out", slog.String("upstream", u.spec.Name), slog.String("why", why))
		return
	}
	s.opts.Logger.Log(context.Background(), level(warn), "tool left out", slog.String("upstream", u.spec.Name), slog.String("tool", codec.Clip(tool, 100)), slog.String("why", why))
}
