package upstream

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// testSpec is an upstream that is this test binary in mode, leaving its
// notes in a new directory, returned too.
func testSpec(t *testing.T, name, mode string) (Spec, string) {
	t.Helper()
	dir := t.TempDir()
	return Spec{Name: name, Argv: []string{os.Args[0], "upstream-test-server", mode, dir}}, dir
}

// startSet starts a Set and closes it when the test ends.
func startSet(t *testing.T, opts Options, specs ...Spec) *Set {
	t.Helper()
	if opts.Env == nil {
		opts.Env = []string{"PATH=/usr/bin:/bin"}
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	s := NewSet(specs, opts)
	s.Start(context.Background())
	t.Cleanup(s.Close)
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// call calls listed tool name through s and returns the result as JSON.
func call(t *testing.T, s *Set, name, args string, rev string, progress func(codec.ProgressParams)) (res map[string]any, outcome string, err error) {
	t.Helper()
	ctx := ctxT(t)
	tool := s.Lookup(ctx, name)
	if tool == nil {
		t.Fatalf("no tool %s; listed: %v", name, names(s.List(ctx)))
	}
	r, outcome, err := s.Call(ctx, tool, json.RawMessage(args), rev, progress)
	if err != nil {
		return nil, outcome, err
	}
	return asMap(t, r), outcome, nil
}

func asMap(t *testing.T, r any) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(m map[string]any) string {
	c, _ := m["content"].([]any)
	var out []string
	for _, b := range c {
		if bm, ok := b.(map[string]any); ok {
			if s, ok := bm["text"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, "\n")
}

func names(ts []*Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Def.Name)
	}
	return out
}

func TestForwardKeepsTheResult(t *testing.T) {
	for _, mode := range []string{"dual", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			sp, _ := testSpec(t, "up", mode)
			s := startSet(t, Options{}, sp)

			res, outcome, err := call(t, s, "up__structured", `{}`, codec.Rev20251125, nil)
			if err != nil || outcome != "ok" {
				t.Fatalf("structured: %v %s", err, outcome)
			}
			if sc, _ := json.Marshal(res["structuredContent"]); string(sc) != `{"n":42}` {
				t.Errorf("structuredContent %s, want {\"n\":42}", sc)
			}
			content, _ := res["content"].([]any)
			if len(content) != 2 || content[1].(map[string]any)["type"] != "image" || content[1].(map[string]any)["data"] != "iVBORw0KGgo=" {
				t.Errorf("content %v, want the text and the image as given", content)
			}
			if _, ok := res["resultType"]; ok {
				t.Errorf("resultType %v passed on; the router puts its own", res["resultType"])
			}

			res, outcome, err = call(t, s, "up__fail", `{}`, codec.Rev20251125, nil)
			if err != nil || outcome != "tool_error" || res["isError"] != true || text(res) != "it failed" {
				t.Errorf("fail: %v %s %v, want isError \"it failed\"", err, outcome, res)
			}

			res, _, err = call(t, s, "up__echo", `{"text":"héllo \"x\""}`, codec.Rev20260728, nil)
			if err != nil || text(res) != `héllo "x"` {
				t.Errorf("echo: %v %v", err, res)
			}
			// The upstream's serverInfo is not passed off as mcp-route's.
			if b, _ := json.Marshal(res); strings.Contains(string(b), "testupstream") {
				t.Errorf("the upstream's serverInfo passed on: %s", b)
			}
		})
	}
}

func TestForwardOldRevisionGetsTextForUnknownContent(t *testing.T) {
	t.Parallel()
	sp, _ := testSpec(t, "up", "dual")
	s := startSet(t, Options{}, sp)
	// 2024-11-05 has images: kept. Audio would become text; the image stays.
	res, _, err := call(t, s, "up__structured", `{}`, codec.Rev20241105, nil)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := res["content"].([]any)
	if len(content) != 2 || content[1].(map[string]any)["type"] != "image" {
		t.Errorf("content %v", content)
	}
}

func TestJSONRPCErrorPassedOn(t *testing.T) {
	t.Parallel()
	sp, _ := testSpec(t, "up", "dual")
	s := startSet(t, Options{}, sp)
	ctx := ctxT(t)
	tool := s.Lookup(ctx, "up__echo")
	if tool == nil {
		t.Fatal("no up__echo")
	}
	// The upstream refuses a tool it does not have: its error goes back
	// as it is, code included.
	gone := &Tool{Upstream: tool.Upstream, Name: "nosuch", Def: tool.Def}
	_, _, err := s.Call(ctx, gone, json.RawMessage(`{}`), codec.Rev20251125, nil)
	var rpc *codec.Error
	if err == nil || !asError(err, &rpc) || rpc.Code != codec.CodeInvalidParams || !strings.Contains(rpc.Message, "nosuch") {
		t.Errorf("got %v, want the upstream's -32602 naming the tool", err)
	}
	// The next call is served.
	if res, _, err := call(t, s, "up__echo", `{"text":"next"}`, codec.Rev20251125, nil); err != nil || text(res) != "next" {
		t.Errorf("next call: %v %v", err, res)
	}
}

func asError(err error, target **codec.Error) bool {
	e, ok := err.(*codec.Error)
	if ok {
		*target = e
	}
	return ok
}

func TestProgressMappedBothWays(t *testing.T) {
	t.Parallel()
	sp, _ := testSpec(t, "up", "dual")
	s := startSet(t, Options{}, sp)
	var mu sync.Mutex
	var got []codec.ProgressParams
	res, _, err := call(t, s, "up__progress", `{}`, codec.Rev20251125, func(p codec.ProgressParams) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Progress != 1 || got[1].Message != "step 2" {
		t.Errorf("progress %+v, want steps 1 and 2", got)
	}
	for _, p := range got {
		if p.ProgressToken != nil {
			t.Errorf("the upstream's token %s reached the downstream side", p.ProgressToken)
		}
	}
	// The upstream saw mcp-route's own token, not the client's.
	if tx := text(res); !strings.Contains(tx, `"mcp-route-`) {
		t.Errorf("upstream saw %q, want a token of mcp-route's", tx)
	}
	// Without a token the upstream gets none and sends nothing.
	res, _, err = call(t, s, "up__progress", `{}`, codec.Rev20251125, nil)
	if err != nil || !strings.HasSuffix(text(res), "my token was ") {
		t.Errorf("no token: %v %q", err, text(res))
	}
}

func TestCancelPassedOn(t *testing.T) {
	t.Parallel()
	sp, dir := testSpec(t, "up", "dual")
	s := startSet(t, Options{}, sp)
	ctx, cancel := context.WithCancel(ctxT(t))
	tool := s.Lookup(ctx, "up__slow")
	done := make(chan string, 1)
	go func() {
		r, outcome, _ := s.Call(ctx, tool, json.RawMessage(`{}`), codec.Rev20251125, nil)
		done <- outcome + ": " + text(asMap(t, r))
	}()
	proctest.WaitPIDFile(t, filepath.Join(dir, "started-slow"))
	cancel()
	if got := <-done; !strings.HasPrefix(got, "canceled: canceled") {
		t.Errorf("cancelled call: %q", got)
	}
	// The upstream's handler saw its request cancelled.
	proctest.Eventually(t, func() string {
		if _, err := os.Stat(filepath.Join(dir, "cancelled")); err != nil {
			return "the upstream did not see notifications/cancelled"
		}
		return ""
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	sp, dir := testSpec(t, "up", "dual")
	s := startSet(t, Options{CallTimeout: 300 * time.Millisecond}, sp)
	res, outcome, err := call(t, s, "up__slow", `{}`, codec.Rev20251125, nil)
	if err != nil || outcome != "timeout" || res["isError"] != true || !strings.Contains(text(res), "upstream up: slow timed out after 300ms") {
		t.Errorf("got %v %s %v", err, outcome, res)
	}
	proctest.Eventually(t, func() string {
		if _, err := os.Stat(filepath.Join(dir, "cancelled")); err != nil {
			return "the upstream was not told of the timeout"
		}
		return ""
	})
}

func TestServerRequestsGetAnError(t *testing.T) {
	t.Parallel()
	sp, _ := testSpec(t, "up", "legacy")
	s := startSet(t, Options{}, sp)
	res, _, err := call(t, s, "up__sample", `{}`, codec.Rev20251125, nil)
	if err != nil || !strings.Contains(text(res), "client answered error -32601") {
		t.Errorf("got %v %q, want the upstream to get -32601 for sampling", err, text(res))
	}
}

func TestKilledMidCallFailsAtOnceAndComesBack(t *testing.T) {
	t.Parallel()
	sp, dir := testSpec(t, "up", "dual")
	s := startSet(t, Options{MinBackoff: 2 * time.Second, MaxBackoff: 4 * time.Second}, sp)
	ctx := ctxT(t)
	tool := s.Lookup(ctx, "up__slow")
	done := make(chan map[string]any, 1)
	go func() {
		r, _, _ := s.Call(ctx, tool, json.RawMessage(`{}`), codec.Rev20251125, nil)
		done <- asMap(t, r)
	}()
	proctest.WaitPIDFile(t, filepath.Join(dir, "started-slow"))
	pid := proctest.WaitPIDFile(t, filepath.Join(dir, "pids"))
	syscall.Kill(pid, syscall.SIGKILL)
	// Promptly, not at the 30 s call timeout: the bound here only catches
	// a hang; e2e measures the latency.
	select {
	case res := <-done:
		if res["isError"] != true || !strings.Contains(text(res), "upstream up died: killed by SIGKILL") {
			t.Errorf("in-flight call got %v, want isError \"upstream up died: killed by SIGKILL\"", res)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the in-flight call did not end when its upstream died")
	}
	// While it waits to restart, calls fail fast and its tools stay listed.
	proctest.Eventually(t, func() string {
		res, outcome, _ := call(t, s, "up__echo", `{"text":"x"}`, codec.Rev20251125, nil)
		if !strings.Contains(text(res), "upstream up is restarting; retry in ") || outcome != "failed" {
			return "not refused as restarting: " + text(res)
		}
		return ""
	})
	if !slices.Contains(names(s.List(ctx)), "up__echo") {
		t.Errorf("tools gone from the list while restarting: %v", names(s.List(ctx)))
	}
	// It comes back: a new process, and calls work.
	proctest.Eventually(t, func() string {
		res, _, _ := call(t, s, "up__echo", `{"text":"back"}`, codec.Rev20251125, nil)
		if text(res) != "back" {
			return "not back: " + text(res)
		}
		return ""
	})
	b, _ := os.ReadFile(filepath.Join(dir, "pids"))
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

func TestFailedStartsMarkDown(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	sp, dir := testSpec(t, "up", "exit")
	s := startSet(t, Options{MinBackoff: 10 * time.Millisecond, MaxBackoff: 300 * time.Millisecond, MaxFailures: 3, Logger: testLogger(&logs)}, sp)
	ctx := ctxT(t)
	if err := s.Upstreams()[0].WaitListed(ctx); err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("WaitListed: %v, want the exit status and stderr", err)
	}
	proctest.Eventually(t, func() string {
		if !strings.Contains(logs.String(), `msg="upstream stderr" upstream=up line=boom`) {
			return "the upstream's stderr is not in the debug log: " + logs.String()
		}
		if !strings.Contains(logs.String(), `msg="upstream is down: failed starts in a row" upstream=up failures=3`) {
			return "not marked down; log: " + logs.String()
		}
		return ""
	})
	tool := &Tool{Upstream: s.Upstreams()[0], Name: "echo"}
	r, outcome, _ := s.Call(ctx, tool, json.RawMessage(`{}`), codec.Rev20251125, nil)
	if tx := text(asMap(t, r)); outcome != "failed" || !strings.Contains(tx, "upstream up is down after") || !strings.Contains(tx, "boom") {
		t.Errorf("call while down: %s %q", outcome, tx)
	}
	// Retried at the capped interval: more starts come.
	proctest.Eventually(t, func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		if strings.Count(string(b), "\n") < 5 {
			return "no retry after down"
		}
		return ""
	})
}

func TestHungUpstreamDoesNotStallList(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	hung, _ := testSpec(t, "hung", "hang")
	good, _ := testSpec(t, "good", "dual")
	s := startSet(t, Options{ListTimeout: 500 * time.Millisecond, Logger: testLogger(&logs)}, hung, good)
	ctx := ctxT(t)
	if err := s.Upstreams()[1].WaitListed(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := names(s.List(ctx))
	// Generous: the bound is 500ms; this only catches a wait for the
	// 30 s handshake timeout.
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("tools/list took %v with a hung upstream", el)
	}
	if !slices.Contains(got, "good__echo") || slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "hung__") }) {
		t.Errorf("listed %v", got)
	}
	// Waited for once: later lists serve at once (the log says so once).
	s.List(ctx)
	s.List(ctx)
	if n := strings.Count(logs.String(), `msg="upstream has not listed its tools within --upstream-timeout: serving without them until it does" upstream=hung timeout=500ms`); n != 1 {
		t.Errorf("waited %d times for the hung upstream, want once:\n%s", n, logs.String())
	}
	// A call to the hung upstream waits for its start at most the bound.
	r, outcome, _ := s.Call(ctx, &Tool{Upstream: s.Upstreams()[0], Name: "x"}, json.RawMessage(`{}`), codec.Rev20251125, nil)
	if tx := text(asMap(t, r)); outcome != "failed" || !strings.Contains(tx, "upstream hung is starting and not ready after 500ms") {
		t.Errorf("call to the hung upstream: %s %q", outcome, tx)
	}
}

func TestNamesLeftOutAndReadOnly(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	sp, _ := testSpec(t, "up", "dual")
	s := startSet(t, Options{Logger: testLogger(&logs)}, sp)
	got := names(s.List(ctxT(t)))
	want := []string{"up__change", "up__child", "up__crash", "up__echo", "up__fail", "up__progress", "up__sample", "up__slow", "up__structured"}
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for _, w := range []string{`tool="bad name" why=`, strings.Repeat("x", 61) + ` why="up__xxx`, "65 characters long, more than the 64"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs.String())
		}
	}
	if n := strings.Count(logs.String(), `tool="bad name" why=`); n != 1 {
		t.Errorf("left-out line logged %d times, want once", n)
	}
	// Definitions are kept, under the prefixed name.
	for _, tool := range s.List(ctxT(t)) {
		if tool.Def.Name == "up__structured" && (tool.Def.Description != "Structured output and an image." || string(tool.Def.OutputSchema) != `{"type":"object"}` || !*tool.Def.Annotations.ReadOnlyHint) {
			t.Errorf("definition changed: %+v", tool.Def)
		}
	}

	ro := startSet(t, Options{ReadOnly: true}, sp)
	if got := names(ro.List(ctxT(t))); !slices.Equal(got, []string{"up__structured"}) {
		t.Errorf("--readonly listed %v, want only the readOnlyHint tool", got)
	}
	if ro.Lookup(ctxT(t), "up__echo") != nil {
		t.Error("--readonly: a hidden tool can still be looked up")
	}
}

func TestAdmitWithholds(t *testing.T) {
	t.Parallel()
	sp, _ := testSpec(t, "up", "dual")
	var asked []string
	var mu sync.Mutex
	s := startSet(t, Options{Admit: func(up string, tool codec.Tool) (bool, string) {
		mu.Lock()
		asked = append(asked, up+"/"+tool.Name)
		mu.Unlock()
		if tool.Name == "echo" {
			return false, "its description changed since it was pinned"
		}
		return true, ""
	}}, sp)
	got := names(s.List(ctxT(t)))
	if slices.Contains(got, "up__echo") || !slices.Contains(got, "up__fail") {
		t.Errorf("listed %v, want up__echo withheld and the rest served", got)
	}
	res, outcome, err := call(t, s, "up__echo", `{"text":"x"}`, codec.Rev20251125, nil)
	if err != nil || outcome != "failed" || res["isError"] != true || !strings.Contains(text(res), "its description changed since it was pinned") {
		t.Errorf("call of a withheld tool: %v %s %v", err, outcome, res)
	}
	mu.Lock()
	if !slices.Contains(asked, "up/echo") {
		t.Errorf("Admit was asked %v: want unprefixed names with the upstream", asked)
	}
	asked = nil
	mu.Unlock()
	// Asked once per list, not per request; again after Readmit.
	s.List(ctxT(t))
	s.Lookup(ctxT(t), "up__fail")
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("Admit asked again without a change: %v", asked)
	}
	mu.Unlock()
	s.Readmit()
	s.List(ctxT(t))
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, "up/echo") {
		t.Errorf("Readmit did not ask Admit again: %v", asked)
	}
}

// TestListChangeRelists: a legacy upstream's notification and a modern
// one's on subscriptions/listen make the Set re-list it.
func TestListChangeRelists(t *testing.T) {
	for _, mode := range []string{"dual", "legacy"} {
		t.Run(mode, func(t *testing.T) { testListChange(t, mode) })
	}
}

func testListChange(t *testing.T, mode string) {
	t.Parallel()
	sp, _ := testSpec(t, "up", mode)
	s := startSet(t, Options{}, sp)
	changes := make(chan struct{}, 10)
	s.OnChange(func() { changes <- struct{}{} })
	ctx := ctxT(t)
	if slices.Contains(names(s.List(ctx)), "up__added") {
		t.Fatal("up__added listed before the change")
	}
	if res, _, err := call(t, s, "up__change", `{}`, codec.Rev20251125, nil); err != nil || text(res) != "changed" {
		t.Fatalf("change: %v %v", err, res)
	}
	proctest.Eventually(t, func() string {
		select {
		case <-changes:
		default:
			return "no OnChange after the upstream's list_changed"
		}
		if !slices.Contains(names(s.List(ctx)), "up__added") {
			return "up__added not listed after the change"
		}
		return ""
	})
}

func TestCloseLeavesNoProcess(t *testing.T) {
	t.Parallel()
	sp, dir := testSpec(t, "up", "dual")
	opts := Options{Env: []string{"PATH=/usr/bin:/bin"}, Dir: t.TempDir(), Grace: 200 * time.Millisecond}
	s := NewSet([]Spec{sp}, opts)
	s.Start(context.Background())
	ctx := ctxT(t)
	tool := s.Lookup(ctx, "up__child")
	if tool == nil {
		s.Close()
		t.Fatal("no up__child")
	}
	s.Call(ctx, tool, json.RawMessage(`{}`), codec.Rev20251125, nil)
	child := proctest.WaitPIDFile(t, filepath.Join(dir, "child"))
	server := proctest.WaitPIDFile(t, filepath.Join(dir, "pids"))
	s.Close()
	// Close returns after the server is reaped and its group killed.
	if proctest.Alive(server) {
		t.Errorf("upstream %d still running after Close", server)
	}
	proctest.WaitGone(t, child)
}

func TestParseSpec(t *testing.T) {
	good := map[string]Spec{
		"gh=github-mcp-server stdio":            {Name: "gh", Argv: []string{"github-mcp-server", "stdio"}},
		`fs-1=npx -y "@scope/server x" /tmp`:    {Name: "fs-1", Argv: []string{"npx", "-y", "@scope/server x", "/tmp"}},
		"remote=https://example.com/mcp":        {Name: "remote", URL: "https://example.com/mcp"},
		"local=http://127.0.0.1:8080/mcp":       {Name: "local", URL: "http://127.0.0.1:8080/mcp"},
		"l6=http://[::1]:8080/mcp":              {Name: "l6", URL: "http://[::1]:8080/mcp"},
		"lh=http://localhost:1/mcp":             {Name: "lh", URL: "http://localhost:1/mcp"},
		strings.Repeat("a", 32) + "=server arg": {Name: strings.Repeat("a", 32), Argv: []string{"server", "arg"}},
	}
	for in, want := range good {
		got, err := ParseSpec(in)
		if err != nil || got.Name != want.Name || got.URL != want.URL || !slices.Equal(got.Argv, want.Argv) {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"noequals":                      "want NAME=COMMAND",
		"a_b=server":                    "1 to 32 letters",
		"=server":                       "1 to 32 letters",
		strings.Repeat("a", 33) + "=x":  "1 to 32 letters",
		"x=":                            "empty",
		"x=server; rm -rf /":            `unquoted ";"`,
		"x=server 'open":                "quote is not closed",
		"x=http://example.com/mcp":      "plain http only to a loopback",
		"x=http://10.0.0.1:80/mcp":      "plain http only to a loopback",
		"x=https:///nohost":             "not a URL with a host",
		"x=server | tee":                `unquoted "|"`,
		"x=HTTP://evil.example.com/mcp": "plain http only",
	}
	for in, want := range bad {
		if _, err := ParseSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpec(%q): %v, want an error with %q", in, err, want)
		}
	}
	if _, err := ParseSpecs([]string{"a=x", "b=y", "a=z"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("duplicate name: %v", err)
	}
}

func TestParseBackoff(t *testing.T) {
	good := map[string][2]time.Duration{
		"0.5s,30s":    {500 * time.Millisecond, 30 * time.Second},
		"10ms, 50ms":  {10 * time.Millisecond, 50 * time.Millisecond},
		"1s,1s":       {time.Second, time.Second},
		"100us,1h30m": {100 * time.Microsecond, 90 * time.Minute},
	}
	for in, want := range good {
		lo, hi, err := ParseBackoff(in)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("ParseBackoff(%q) = %v, %v, %v; want %v", in, lo, hi, err, want)
		}
	}
	bad := map[string]string{
		"":         "no comma",
		"1s":       "no comma",
		"1,2s":     `MIN "1" is not a duration`,
		"1s,soon":  `MAX "soon" is not a duration`,
		"0s,1s":    "both must be positive",
		"1s,-1s":   "both must be positive",
		"30s,0.5s": "MIN is greater than MAX",
		"1s,2s,3s": `MAX "2s,3s" is not a duration`,
	}
	for in, want := range bad {
		_, _, err := ParseBackoff(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--upstream-backoff") || !strings.Contains(err.Error(), "want MIN,MAX") {
			t.Errorf("ParseBackoff(%q): %v; want an error naming the flag, the form and %q", in, err, want)
		}
	}
}

func testLogger(w *proctest.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestRestartsLeaveNoProcess: an upstream that dies 20 times is started 20
// times more, and afterwards the test process has one child: the live
// upstream. Each death is reported with its exit status and stderr.
func TestRestartsLeaveNoProcess(t *testing.T) {
	sp, _ := testSpec(t, "up", "dual")
	s := startSet(t, Options{MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}, sp)
	for i := range 20 {
		res, outcome, _ := call(t, s, "up__crash", `{}`, codec.Rev20251125, nil)
		if outcome != "failed" || !strings.Contains(text(res), "upstream up died: exit status 2; stderr: crashing on purpose") {
			t.Fatalf("crash %d: %s %q", i, outcome, text(res))
		}
		proctest.Eventually(t, func() string {
			if res, _, _ := call(t, s, "up__echo", `{"text":"up"}`, codec.Rev20251125, nil); text(res) != "up" {
				return "not back: " + text(res)
			}
			return ""
		})
	}
	proctest.Eventually(t, func() string {
		if kids := proctest.Children(t, os.Getpid()); len(kids) != 1 {
			return "children: " + proctest.Describe(kids)
		}
		return ""
	})
}

// TestStopsReadingIsRestarted: an upstream that lives on but stops reading
// its stdin (after its handshake and list) while calls fill the pipe is
// taken as hung once a write has made no progress for StallTimeout: its
// calls fail at once (not at the 30s call timeout) saying so, its process
// is stopped, and it is restarted, after which calls work. An upstream
// that reads slowly but keeps reading takes a frame that needs longer
// than StallTimeout in all, and is not taken as hung.
func TestStopsReadingIsRestarted(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	sp, dir := testSpec(t, "up", "deaf")
	s := startSet(t, Options{StallTimeout: 2 * time.Second, MinBackoff: 100 * time.Millisecond, Logger: testLogger(&logs)}, sp)
	big := `{"text":"` + strings.Repeat("a", 200<<10) + `"}`
	ctx := ctxT(t)
	tool := s.Lookup(ctx, "up__echo")
	if tool == nil {
		t.Fatal("no up__echo")
	}
	type result struct {
		text, outcome string
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			r, outcome, err := s.Call(ctx, tool, json.RawMessage(big), codec.Rev20251125, nil)
			if err != nil {
				results <- result{err.Error(), "error"}
				return
			}
			results <- result{text(asMap(t, r)), outcome}
		}()
	}
	hung := 0
	for range 3 {
		r := <-results
		switch {
		case r.outcome != "failed":
		case strings.Contains(r.text, "upstream up is hung: it read nothing of its stdin for 2s; restarting it"):
			hung++
			continue
		case strings.Contains(r.text, "upstream up is restarting; retry in"): // it came after
			continue
		}
		t.Errorf("a call to the deaf upstream: %s %q, want isError \"upstream up is hung\"", r.outcome, r.text)
	}
	if hung == 0 {
		t.Error("no call was told the upstream is hung")
	}
	proctest.Eventually(t, func() string {
		res, _, _ := call(t, s, "up__echo", big, codec.Rev20251125, nil)
		if len(text(res)) != 200<<10 {
			return "not back: " + text(res)
		}
		return ""
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "pids")); strings.Count(string(b), "\n") != 2 {
		t.Errorf("starts: %q, want 2", b)
	}
	if l := logs.String(); !strings.Contains(l, `msg="upstream is hung: stopping it, restarting" upstream=up why="it read nothing of its stdin for 2s"`) {
		t.Errorf("log: %s", l)
	}
	// The hung process is gone (stopped and reaped).
	b, _ := os.ReadFile(filepath.Join(dir, "pids"))
	first, _ := strconv.Atoi(strings.Fields(string(b))[0])
	if err := syscall.Kill(first, 0); err != syscall.ESRCH {
		t.Errorf("the hung upstream (pid %d) is still there: %v", first, err)
	}

	sp, _ = testSpec(t, "slow", "slowread")
	s = startSet(t, Options{StallTimeout: 2 * time.Second, MaxOutput: 2 << 20}, sp)
	huge := `{"text":"` + strings.Repeat("b", 1<<20) + `"}` // 256 reads of 4 KiB, 10ms apart
	res, outcome, err := call(t, s, "slow__echo", huge, codec.Rev20251125, nil)
	if err != nil || outcome != "ok" || len(text(res)) != 1<<20 {
		t.Errorf("a slow reader: %v %s %.200q", err, outcome, text(res))
	}
}

// TestStderrFloodIsLimited: an upstream that writes its stderr in a loop
// (1000 lines of 3 KB) gets at most MaxStderrLines lines of the --verbose
// log, each cut to MaxStderrLine bytes, and one line saying the rest are
// counted; the first lines are logged as they came. The stderr tail of
// the "died" message is whole: its last line is there.
func TestStderrFloodIsLimited(t *testing.T) {
	t.Parallel()
	var logs proctest.Buffer
	sp, _ := testSpec(t, "up", "chatty")
	s := startSet(t, Options{Logger: testLogger(&logs), MinBackoff: time.Minute, MaxBackoff: time.Minute}, sp)
	// The list is served after the chatter was written (and read: the
	// process wrote it before serving).
	res, outcome, _ := call(t, s, "up__crash", `{}`, codec.Rev20251125, nil)
	if outcome != "failed" || !strings.Contains(text(res), "upstream up died: exit status 2; stderr: ") || !strings.HasSuffix(text(res), "crashing on purpose") {
		t.Errorf("the died message: %s %.300q", outcome, text(res))
	}
	proctest.Eventually(t, func() string {
		if l := logs.String(); !strings.Contains(l, `msg="upstream: too many lines: the rest are counted, not logged" upstream=up what="stderr lines" limit=100 window=1m0s`) {
			return "no note that the rest are counted: " + l[max(len(l)-2000, 0):]
		}
		return ""
	})
	var logged int
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, `msg="upstream stderr" upstream=up `) {
			continue
		}
		logged++
		if len(line) > MaxStderrLine+200 {
			t.Errorf("a log line of %d bytes: %.200s", len(line), line)
		}
	}
	// One window: the chatter takes far less than a minute; a second one
	// could begin only on a machine stalled for that long.
	if logged > 2*MaxStderrLines || !strings.Contains(logs.String(), `msg="upstream stderr" upstream=up line="chatter 0 xxx`) {
		t.Errorf("%d stderr lines logged, want the first ones and at most %d", logged, MaxStderrLines)
	}
}

// fit drops the upstream's serverInfo and resultType and keeps every other
// member as it came, _meta's other members included.
func TestFitDropsOnlyServerInfo(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"a"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}},"resultType":"complete"}`,
			`{"content":[{"type":"text","text":"a"}]}`},
		{`{"structuredContent":{"n":1},"content":[],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"trace":"x<y"},"z":null}`,
			`{"_meta":{"trace":"x<y"},"content":[],"isError":true,"structuredContent":{"n":1},"z":null}`},
		{`{"content":[],"_meta":{"trace":1}}`, `{"content":[],"_meta":{"trace":1}}`},
	} {
		got, isError, err := fit(codec.Rev20251125, json.RawMessage(c.in))
		if err != nil {
			t.Errorf("fit(%s): %v", c.in, err)
			continue
		}
		b, _ := json.Marshal(got)
		var gotV, wantV any
		json.Unmarshal(b, &gotV)
		json.Unmarshal([]byte(c.want), &wantV)
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("fit(%s) = %s, want %s", c.in, b, c.want)
		}
		if isError != strings.Contains(c.in, `"isError":true`) {
			t.Errorf("fit(%s): isError %v", c.in, isError)
		}
	}
	for _, bad := range []string{`[]`, `{"content":[],"isError":"yes"}`, `{"content":[],"resultType":3}`, `{"isError":false}`, `{"content":[],"resultType":"input_required"}`} {
		if _, _, err := fit(codec.Rev20251125, json.RawMessage(bad)); err == nil {
			t.Errorf("fit(%s): no error", bad)
		}
	}
}
