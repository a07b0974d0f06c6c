package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/termsafe"
	"github.com/mcpipe/mcpipe/mcp-route/pin"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

// pinWait bounds how long `mcp-route pin` waits for the upstreams' lists:
// each first start is bounded by the connect timeout already.
const pinWait = upstream.DefaultConnectTimeout + 10*time.Second

// checkPinPlace refuses a --pin file that a tool or an upstream could
// write: under the root (unless --readonly) or an --allow-write path. It
// could pin its own definitions there.
func checkPinPlace(path, root string, readonly bool, writable []string) error {
	var places []place
	if !readonly {
		places = append(places, place{"--root", root})
	}
	for _, w := range writable {
		places = append(places, place{"--allow-write", w})
	}
	p, _, ok, err := placeOf(path, places)
	if err != nil {
		return fmt.Errorf("--pin %s: %v", path, err)
	}
	if ok {
		remedy := "move it out of the root, or add --readonly"
		if p.flag == "--allow-write" {
			remedy = "move it out, or narrow --allow-write"
		}
		return fmt.Errorf("--pin %s is inside %s %s, where tools and upstreams can write: an upstream could pin its own definitions; %s", path, p.flag, p.path, remedy)
	}
	return nil
}

// pinGate is the upstream Set's Admit hook under --pin: an upstream the
// pin file does not know yet has its tools pinned when they are first
// listed (trust on first use); after that only a tool whose definition
// matches its pin is served. A withheld tool's reason goes to the client
// (and the Set's log line); the diff of a changed definition only to the
// log, once per change.
type pinGate struct {
	file   *pin.File
	logger *slog.Logger
	set    *upstream.Set // set once NewSet returns, before the Set starts

	mu     sync.Mutex
	logged map[string]string // upstream\x00tool → the diff last logged; upstream\x00 → the pinning error
}

// maxLogged bounds pinGate.logged: past it, lines may be logged again.
const maxLogged = 4096

func (g *pinGate) admit(up string, t codec.Tool) (bool, string) {
	// A file that cannot be read withholds everything (Check says why):
	// no upstream is new then.
	if g.file.Err() == nil && !g.file.Known(up) {
		g.trustFirstUse(up)
	}
	ok, reason, diff := g.file.Check(up, t)
	if diff != "" {
		key := up + "\x00" + t.Name
		g.mu.Lock()
		if len(g.logged) >= maxLogged {
			clear(g.logged) // an upstream renaming its tools again and again
		}
		fresh := g.logged[key] != diff
		g.logged[key] = diff
		g.mu.Unlock()
		if fresh {
			g.logger.Warn("upstream tool differs from its pin: withheld until approved (mcp-route pin --dry-run, then --accept)", slog.String("upstream", up), slog.String("tool", t.Name), slog.String("pin_file", g.file.Path()), slog.String("diff", diff))
		}
	}
	return ok, reason
}

// admitSurface is admit for an upstream's resources, templates and
// prompts: their pins are kept apart from the tools' (pin.CheckSurface),
// and trusted on first use apart too, so that a pin file written before
// they were pinned keeps serving the tools it pinned.
func (g *pinGate) admitSurface(up, kind, key string, def json.RawMessage) (bool, string) {
	if g.file.Err() == nil && !g.file.KnownSurface(up) {
		g.trustFirstUseSurface(up)
	}
	ok, reason, diff := g.file.CheckSurface(up, pin.Item{Kind: kind, Key: key, Def: def})
	if diff != "" {
		k := up + "\x00" + kind + "\x00" + key
		g.mu.Lock()
		if len(g.logged) >= maxLogged {
			clear(g.logged)
		}
		fresh := g.logged[k] != diff
		g.logged[k] = diff
		g.mu.Unlock()
		if fresh {
			g.logger.Warn(fmt.Sprintf("upstream %s: %s %q differs from its pin in %s: %s", up, kind, key, g.file.Path(), diff))
		}
	}
	return ok, reason
}

// surfaceItems is an upstream's resources, templates and prompts as
// listed, for the pin file.
func surfaceItems(u *upstream.Upstream) []pin.Item {
	var items []pin.Item
	for _, kind := range []string{upstream.KindResource, upstream.KindTemplate, upstream.KindPrompt} {
		member := map[string]string{upstream.KindResource: "uri", upstream.KindTemplate: "uriTemplate", upstream.KindPrompt: "name"}[kind]
		for _, raw := range u.Surface(kind) {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(raw, &m)
			var key string
			_ = json.Unmarshal(m[member], &key)
			items = append(items, pin.Item{Kind: kind, Key: key, Def: raw})
		}
	}
	return items
}

func (g *pinGate) trustFirstUseSurface(up string) {
	var items []pin.Item
	for _, u := range g.set.Upstreams() {
		if u.Name() == up {
			items = surfaceItems(u)
		}
	}
	changes, err := g.file.TrustFirstUseSurface(up, items)
	if err != nil {
		msg := fmt.Sprintf("upstream %s: first seen, but its resources and prompts cannot be pinned: %v; they are withheld", up, err)
		key := up + "\x00surface"
		g.mu.Lock()
		fresh := g.logged[key] != msg
		g.logged[key] = msg
		g.mu.Unlock()
		if fresh {
			g.logger.Warn(msg)
		}
		return
	}
	if len(changes) > 0 {
		g.logger.Warn(fmt.Sprintf("upstream %s: first seen: its %d resources, templates and prompts pinned in %s (trust on first use)", up, len(changes), g.file.Path()))
	}
}

// trustFirstUse pins up's whole current list, not only the tool asked
// about: the Set asks about one tool at a time.
func (g *pinGate) trustFirstUse(up string) {
	var tools []codec.Tool
	for _, u := range g.set.Upstreams() {
		if u.Name() == up {
			tools = u.Tools()
		}
	}
	changes, err := g.file.TrustFirstUse(up, tools)
	if err != nil {
		// Asked again for each of its tools: said once per error.
		key := up + "\x00"
		g.mu.Lock()
		fresh := g.logged[key] != err.Error()
		g.logged[key] = err.Error()
		g.mu.Unlock()
		if fresh {
			g.logger.Warn("upstream first seen, but its tools cannot be pinned: they are withheld", slog.String("upstream", up), slog.Any("error", err))
		}
		return
	}
	if len(changes) == 0 {
		return
	}
	// Its resources and prompts with them, none if it lists none: what
	// it adds later is then new, withheld, not first seen and trusted.
	g.trustFirstUseSurface(up)
	pinned := 0
	for _, c := range changes {
		if c.Action == pin.Added {
			pinned++
		}
		g.logger.Debug("pin", slog.String("change", c.String()))
	}
	g.logger.Warn("upstream first seen: its tools pinned (trust on first use)", slog.String("upstream", up), slog.Int("pinned", pinned), slog.Int("tools", len(tools)), slog.String("pin_file", g.file.Path()))
}

// watch checks the pin file every interval until ctx ends, and has the
// Set ask again about every tool when it changed on disk.
func (g *pinGate) watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if g.file.Refresh() {
			g.logger.Debug("pin file changed: checking the upstream tools again", slog.String("pin_file", g.file.Path()))
			g.set.Readmit()
		}
	}
}

// pinOpts are the flags only `mcp-route pin` takes: how the changes it
// finds are decided.
type pinOpts struct {
	dryRun bool
	all    bool
	accept *listFlag
}

// pinFlags defines the flags of `mcp-route pin` beside the server's.
func pinFlags(fs *flag.FlagSet) *pinOpts {
	o := &pinOpts{accept: &listFlag{}}
	fs.BoolVar(&o.dryRun, "dry-run", false, "pin: print each added, changed or removed tool with a field-level diff of its definition and write nothing")
	fs.Var(o.accept, "accept", "pin: accept the tool `NAME__TOOL` as the upstream lists it now (repeatable); NAME__TOOL=sha256:HEX accepts it only while its definition is the one --dry-run showed")
	fs.BoolVar(&o.all, "all", false, "pin: accept every change of every upstream at once")
	return o
}

// check refuses flags that contradict each other, and parses --accept.
func (o *pinOpts) check() (map[string]string, error) {
	if o.dryRun && (o.all || len(o.accept.vals) > 0) {
		return nil, errors.New("pin: --dry-run writes nothing: give it alone, then --accept NAME__TOOL or --all")
	}
	if o.all && len(o.accept.vals) > 0 {
		return nil, errors.New("pin: --all accepts every change: give it or --accept NAME__TOOL, not both")
	}
	accept := map[string]string{}
	for _, v := range o.accept.vals {
		name, digest, _ := strings.Cut(v, "=")
		up, tool, ok := strings.Cut(name, "__")
		if !ok || pin.ValidateUpstream(up) != nil || tool == "" {
			return nil, fmt.Errorf("pin: --accept %q: want NAME__TOOL (the name a client calls it by, e.g. fs__read_file), optionally =sha256:HEX", v)
		}
		if digest != "" && !strings.HasPrefix(digest, "sha256:") {
			return nil, fmt.Errorf("pin: --accept %q: want NAME__TOOL=sha256:HEX, the digest --dry-run shows", v)
		}
		if was, dup := accept[name]; dup && was != digest {
			return nil, fmt.Errorf("pin: --accept %s given twice with different digests", name)
		}
		accept[name] = digest
	}
	return accept, nil
}

// pinMain is `mcp-route pin`: start the upstreams as a server would, wait
// for each one's tool list, stop them, then: with --dry-run print each
// pending change as a field-level diff (Change.Review) and write nothing;
// with --accept pin only the tools named; with --all pin everything in
// one write. Without any of them, pending changes are refused (exit 2)
// with the command to run; with none pending, the file is brought up to
// date (an upstream with no tools, a refused tool) as --all would. stdout
// gets one "ACTION UPSTREAM TOOL sha256:..." line per tool pinned (or, with
// --dry-run, the review). Nothing is pinned when an upstream cannot be
// listed.
func pinMain(ctx context.Context, file *pin.File, specs []upstream.Spec, opts upstream.Options, po *pinOpts, stdout, stderr io.Writer) int {
	accept, err := po.check()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return 2
	}
	lists, surf, ok := listUpstreams(ctx, specs, opts, stderr)
	if !ok {
		fmt.Fprintf(stderr, "%s: pin: nothing pinned in %s\n", prog, file.Path())
		return 1
	}
	if len(accept) > 0 {
		changes, err := file.Accept(lists, accept)
		if err != nil {
			fmt.Fprintf(stderr, "%s: pin: %v; nothing pinned in %s\n", prog, err, file.Path())
			return 1
		}
		for _, c := range changes {
			fmt.Fprintln(stdout, c)
		}
		return 0
	}
	if !po.all {
		plan, err := file.Plan(lists)
		if err != nil {
			fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
			return 1
		}
		splan, err := file.PlanSurface(surf)
		if err != nil {
			fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
			return 1
		}
		plan = append(plan, splan...)
		var pending []pin.Change
		for _, c := range plan {
			if c.Pending() {
				pending = append(pending, c)
			}
		}
		if po.dryRun {
			for _, c := range plan {
				if c.Pending() || c.Action == pin.Refused {
					fmt.Fprint(stdout, c.Review())
				}
			}
			fmt.Fprintf(stdout, "%d to review in %s; nothing written\n", len(pending), file.Path())
			if len(pending) > 0 {
				if args := acceptArgs(pending); args != "" {
					fmt.Fprintf(stdout, "accept with: mcp-route pin%s (and the same flags), or all of them with --all\n", args)
				} else {
					fmt.Fprintf(stdout, "accept them with: mcp-route pin --all (and the same flags)\n")
				}
			}
			return 0
		}
		if len(pending) > 0 {
			fmt.Fprintf(stderr, "%s: pin: %d tool definitions added, changed or removed; nothing pinned in %s: review them with mcp-route pin --dry-run, then accept each with --accept NAME__TOOL or all with --all\n", prog, len(pending), file.Path())
			return 2
		}
	}
	changes, err := file.PinAll(lists)
	if err != nil {
		fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
		return 1
	}
	schanges, err := file.PinAllSurface(surf)
	if err != nil {
		fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
		return 1
	}
	changes = append(changes, schanges...)
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	return 0
}

// acceptArgs is the --accept flags that accept the pending changes as
// reviewed: with the digest of each new definition.
func acceptArgs(pending []pin.Change) string {
	var b strings.Builder
	for _, c := range pending {
		if strings.Contains(c.Tool, " ") {
			continue // a resource, template or prompt: accepted with --all
		}
		b.WriteString(" --accept ")
		b.WriteString(pin.Served(c.Upstream, c.Tool))
		if c.Action != pin.Removed {
			b.WriteString("=" + c.Digest)
		}
	}
	return b.String()
}

// listUpstreams starts the upstreams as a server would, waits for each
// one's tool list and stops them. false: one could not be listed (said on
// stderr).
func listUpstreams(ctx context.Context, specs []upstream.Spec, opts upstream.Options, stderr io.Writer) (map[string][]codec.Tool, map[string][]pin.Item, bool) {
	set := upstream.NewSet(specs, opts)
	set.Start(ctx)
	defer set.Close()
	wctx, cancel := context.WithTimeout(ctx, pinWait)
	defer cancel()
	lists := map[string][]codec.Tool{}
	surf := map[string][]pin.Item{}
	ok := true
	for _, u := range set.Upstreams() {
		if err := u.WaitListed(wctx); err != nil {
			// The error carries the upstream's stderr: shown escaped, it
			// cannot drive the operator's terminal.
			fmt.Fprintf(stderr, "%s: pin: %s\n", prog, termsafe.Escape([]byte(err.Error())))
			ok = false
			continue
		}
		lists[u.Name()] = u.Tools()
		surf[u.Name()] = surfaceItems(u)
	}
	return lists, surf, ok
}
