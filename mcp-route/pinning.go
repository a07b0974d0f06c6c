package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
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
			g.logger.Warn(fmt.Sprintf("upstream %s: tool %q differs from its pin in %s: %s", up, t.Name, g.file.Path(), diff))
		}
	}
	return ok, reason
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
		msg := fmt.Sprintf("upstream %s: first seen, but its tools cannot be pinned: %v; they are withheld", up, err)
		key := up + "\x00"
		g.mu.Lock()
		fresh := g.logged[key] != msg
		g.logged[key] = msg
		g.mu.Unlock()
		if fresh {
			g.logger.Warn(msg)
		}
		return
	}
	if len(changes) == 0 {
		return
	}
	pinned := 0
	for _, c := range changes {
		if c.Action == pin.Added {
			pinned++
		}
		g.logger.Debug("pin: " + c.String())
	}
	g.logger.Warn(fmt.Sprintf("upstream %s: first seen: %d of its %d tools pinned in %s (trust on first use)", up, pinned, len(tools), g.file.Path()))
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
			g.logger.Debug(fmt.Sprintf("pin file %s changed: checking the upstream tools again", g.file.Path()))
			g.set.Readmit()
		}
	}
}

// pinMain is `mcp-route pin`: start the upstreams as a server would, wait
// for each one's tool list, pin them all in one write, print one line per
// tool on stdout, stop them. Nothing is pinned when an upstream cannot be
// listed.
func pinMain(ctx context.Context, file *pin.File, specs []upstream.Spec, opts upstream.Options, stdout, stderr io.Writer) int {
	set := upstream.NewSet(specs, opts)
	set.Start(ctx)
	defer set.Close()
	wctx, cancel := context.WithTimeout(ctx, pinWait)
	defer cancel()
	lists := map[string][]codec.Tool{}
	failed := false
	for _, u := range set.Upstreams() {
		if err := u.WaitListed(wctx); err != nil {
			fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
			failed = true
			continue
		}
		lists[u.Name()] = u.Tools()
	}
	if failed {
		fmt.Fprintf(stderr, "%s: pin: nothing pinned in %s\n", prog, file.Path())
		return 1
	}
	changes, err := file.PinAll(lists)
	if err != nil {
		fmt.Fprintf(stderr, "%s: pin: %v\n", prog, err)
		return 1
	}
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	return 0
}
