package router

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

// TestMain lets the test binary be a nested router: run as
// "BINARY router-upstream DIR" it serves DIR's tools on stdin/stdout.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "router-upstream" {
		dir := os.Args[2]
		err := Serve(context.Background(), os.Stdin, os.Stdout, Options{
			Registry:   registry.New(registry.Options{Dirs: []string{dir}, DescribeEnv: []string{"PATH=/usr/bin:/bin"}}),
			ServerInfo: codec.Implementation{Name: "nested", Version: "1"},
			Root:       dir,
			Env:        []string{"PATH=/usr/bin:/bin"},
			Poll:       -1,
		})
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type observed struct {
	tool, outcome string
	started       bool
}

// TestUpstreamMerge: local and upstream tools in one sorted, paginated
// list; a forwarded call is observed for metrics, holds no process slot
// (it is answered while the only slot is taken), and a name that is not
// served gets -32602 as before.
func TestUpstreamMerge(t *testing.T) {
	inner := t.TempDir()
	for _, n := range []string{"a1", "a2", "a3"} {
		tool(t, inner, n, "echo "+n, simpleDef(""))
	}
	set := upstream.NewSet([]upstream.Spec{{Name: "up", Argv: []string{os.Args[0], "router-upstream", inner}}},
		upstream.Options{Env: []string{"PATH=/usr/bin:/bin"}, Dir: t.TempDir()})
	set.Start(context.Background())
	t.Cleanup(set.Close)

	local := t.TempDir()
	tool(t, local, "l1", "echo l1", simpleDef(""))
	tool(t, local, "block", `while [ ! -e "$MCP_ROOT/go" ]; do sleep 0.05; done; echo unblocked`, simpleDef(""))
	var mu sync.Mutex
	var seen []observed
	h := newHarness(t, local, func(o *Options) {
		o.Upstreams = set
		o.PageSize = 2
		o.MaxProcs = 1
		o.Observe = func(tool, outcome string, _ time.Duration, started, _ bool) {
			mu.Lock()
			seen = append(seen, observed{tool, outcome, started})
			mu.Unlock()
		}
	})
	h.initialize(codec.Rev20251125)

	var names []string
	cursor := ""
	for page := 2; ; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		h.send(`{"jsonrpc":"2.0","id":` + itoa(page) + `,"method":"tools/list","params":` + params + `}`)
		var r codec.ListToolsResult
		m := answer(h, "tools/list")
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatalf("%v: %+v", err, m.Error)
		}
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if want := []string{"block", "l1", "up__a1", "up__a2", "up__a3"}; !slices.Equal(names, want) {
		t.Errorf("listed %v, want %v", names, want)
	}

	// The only slot is taken by a local call; a forwarded one is answered.
	h.send(callLine(`"blocked"`, "block", `{}`))
	h.send(callLine(`"fwd"`, "up__a2", `{}`))
	m := answer(h, "tools/call")
	if string(m.ID) != `"fwd"` {
		t.Fatalf("first answer is %s, want the forwarded call's", m.ID)
	}
	if r := callResult(t, m); r.IsError || r.Content[0].Text != "a2\n" {
		t.Errorf("up__a2: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(h.root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := callResult(t, answer(h, "tools/call")); r.Content[0].Text != "unblocked\n" {
		t.Errorf("block: %+v", r)
	}

	h.send(callLine("9", "up__nosuch", `{}`))
	if m := answer(h, "tools/call"); m.Error == nil || m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("unknown upstream tool: %+v, want -32602", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(seen, observed{"up__a2", "ok", false}) {
		t.Errorf("observed %v, want up__a2 ok with no process started", seen)
	}
	for _, o := range seen {
		if strings.HasPrefix(o.tool, "up__") && o.started {
			t.Errorf("a forwarded call counted as a started process: %v", o)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// answer is the next response, past notifications (an upstream's first
// list is a list change).
func answer(h *harness, method string) msg {
	h.t.Helper()
	for {
		l := h.recv()
		var m msg
		if err := json.Unmarshal(l, &m); err != nil {
			h.t.Fatalf("bad line %s: %v", l, err)
		}
		if m.Method == "" {
			checkSchema(h.t, h.rev, method, l)
			return m
		}
	}
}
