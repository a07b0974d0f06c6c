package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// gateway is an mcp-route serving on pipes with a nested mcp-route as an
// --upstream: the composition by pipes the gateway promises.
type gateway struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proctest.Buffer
	lines  chan []byte
	inner  string // the nested mcp-route's tool directory
	local  string // the outer one's
	root   string // the outer one's --root, the inner one's working directory and root
}

// upTool writes an executable sh tool with a sidecar definition.
func upTool(t *testing.T, dir, name, body, def string) {
	t.Helper()
	proctest.WriteExecutable(t, filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"))
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startGateway runs mcp-route --tools LOCAL --upstream "inner=mcp-route
// --tools INNER" with extra flags, both unconfined (the confinement of
// upstreams has its own test) and polling fast.
func startGateway(t *testing.T, edit func(local, inner string), extra ...string) *gateway {
	t.Helper()
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	g := &gateway{t: t, stderr: &proctest.Buffer{}, lines: make(chan []byte, 100), inner: t.TempDir(), local: t.TempDir(), root: t.TempDir()}
	upTool(t, g.inner, "hello", `echo "hello $MCP_ARG_NAME"`,
		`{"description":"Say hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`)
	upTool(t, g.inner, "ppid", `echo $PPID`, `{"description":"The inner server's pid."}`)
	upTool(t, g.inner, "slow", `echo $$ > "$MCP_ROOT/slow.pid"; exec sleep 300`, `{"description":"Sleeps."}`)
	upTool(t, g.local, "mine", `echo local`, `{"description":"A local tool."}`)
	if edit != nil {
		edit(g.local, g.inner)
	}
	inner := fmt.Sprintf("inner=%s --tools %s --confine off --poll 100ms --describe-cache ''", bin, g.inner)
	if len(extra) > 1 && extra[0] == "--upstream" {
		inner, extra = extra[1], extra[2:] // another upstream instead
	}
	inner = strings.ReplaceAll(inner, "{local}", g.local)
	args := append([]string{"--tools", g.local, "--root", g.root, "--confine", "off", "--poll", "100ms", "--describe-cache", "", "--upstream", inner}, extra...)
	g.cmd = exec.Command(bin, args...)
	g.cmd.Env = os.Environ()
	g.stdin, _ = g.cmd.StdinPipe()
	stdout, _ := g.cmd.StdoutPipe()
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		g.cmd.Wait()
	})
	go func() {
		r := codec.NewReader(stdout, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(g.lines)
				return
			}
			g.lines <- l
		}
	}()
	return g
}

func (g *gateway) send(line string) {
	g.t.Helper()
	if _, err := io.WriteString(g.stdin, line+"\n"); err != nil {
		g.t.Fatalf("send: %v", err)
	}
}

// next returns the next message, skipping none.
func (g *gateway) next() map[string]json.RawMessage {
	g.t.Helper()
	select {
	case l, ok := <-g.lines:
		if !ok {
			g.t.Fatalf("stdout ended; stderr:\n%s", g.stderr.String())
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			g.t.Fatalf("not JSON on stdout: %q", l)
		}
		return m
	case <-time.After(time.Minute):
		g.t.Fatalf("no message; stderr:\n%s", g.stderr.String())
		return nil
	}
}

// answer returns the response to id, skipping notifications.
func (g *gateway) answer(id string) map[string]json.RawMessage {
	g.t.Helper()
	for {
		m := g.next()
		if string(m["id"]) == id {
			return m
		}
		if _, ok := m["method"]; !ok {
			g.t.Fatalf("answer to %s instead of %s: %v", m["id"], id, m)
		}
	}
}

func (g *gateway) initialize() {
	g.t.Helper()
	g.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	g.answer(`"init"`)
	g.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (g *gateway) list(id int) []string {
	g.t.Helper()
	g.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
	var r codec.ListToolsResult
	if err := json.Unmarshal(g.answer(strconv.Itoa(id))["result"], &r); err != nil {
		g.t.Fatal(err)
	}
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

func (g *gateway) call(id int, name, args string) *codec.CallToolResult {
	g.t.Helper()
	g.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
	m := g.answer(strconv.Itoa(id))
	var r codec.CallToolResult
	if err := json.Unmarshal(m["result"], &r); err != nil || m["error"] != nil {
		g.t.Fatalf("tools/call %s: %s %s", name, m["result"], m["error"])
	}
	return &r
}

func resultText(r *codec.CallToolResult) string {
	var out []string
	for _, c := range r.Content {
		out = append(out, c.Text)
	}
	return strings.Join(out, "\n")
}

func TestUpstreamNestedRoute(t *testing.T) {
	g := startGateway(t, nil)
	g.initialize()
	if got := g.list(2); !slices.Equal(got, []string{"inner__hello", "inner__ppid", "inner__slow", "mine"}) {
		t.Errorf("tools/list %v", got)
	}
	if r := g.call(3, "inner__hello", `{"name":"bob"}`); r.IsError || resultText(r) != "hello bob\n" {
		t.Errorf("inner__hello: %+v", r)
	}
	if r := g.call(4, "mine", `{}`); r.IsError || resultText(r) != "local\n" {
		t.Errorf("mine: %+v", r)
	}

	// A list change in the nested mcp-route reaches the outer client.
	upTool(t, g.inner, "added", `echo added`, `{"description":"Added later."}`)
	for {
		m := g.next()
		if string(m["method"]) == `"notifications/tools/list_changed"` {
			break
		}
		t.Logf("skipping %v", m)
	}
	if got := g.list(5); !slices.Contains(got, "inner__added") {
		t.Errorf("after the change: %v", got)
	}

	// Cancel through the hop: the inner tool's process is killed.
	g.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"inner__slow","arguments":{}}}`)
	slow := proctest.WaitPIDFile(t, filepath.Join(g.root, "slow.pid"))
	g.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)
	proctest.WaitGone(t, slow) // long before its 300 s
	if r := g.call(7, "inner__hello", `{"name":"after"}`); resultText(r) != "hello after\n" {
		t.Errorf("after a cancel: %+v", r)
	}

	// Shutdown: EOF on stdin stops the nested server too.
	inner, _ := strconv.Atoi(strings.TrimSpace(resultText(g.call(8, "inner__ppid", `{}`))))
	if !proctest.Alive(inner) {
		t.Fatalf("inner__ppid gave %d, not a live process", inner)
	}
	g.stdin.Close()
	for range g.lines {
	}
	if err := g.cmd.Wait(); err != nil {
		t.Errorf("exit: %v; stderr:\n%s", err, g.stderr.String())
	}
	proctest.WaitGone(t, inner)
}

func TestUpstreamModernListChanged(t *testing.T) {
	g := startGateway(t, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	g.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	if m := g.next(); string(m["method"]) != `"notifications/subscriptions/acknowledged"` {
		t.Fatalf("want the acknowledgement, got %v", m)
	}
	g.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`)
	g.answer("2")
	upTool(t, g.inner, "added", `echo added`, `{"description":"Added later."}`)
	for {
		m := g.next()
		if string(m["method"]) == `"notifications/tools/list_changed"` {
			if !strings.Contains(string(m["params"]), `"sub"`) {
				t.Errorf("list_changed without the subscription id: %s", m["params"])
			}
			break
		}
	}
}

func TestUpstreamClashWithLocalTool(t *testing.T) {
	g := startGateway(t, func(local, inner string) {
		upTool(t, local, "inner__hello", `echo shadow`, `{"description":"A local tool claiming an upstream name."}`)
	})
	g.initialize()
	got := g.list(2)
	if slices.Contains(got, "inner__hello") || !slices.Contains(got, "inner__ppid") || !slices.Contains(got, "mine") {
		t.Errorf("tools/list %v: want inner__hello left out, the rest served", got)
	}
	r := g.call(3, "inner__hello", `{}`)
	if !r.IsError || !strings.Contains(resultText(r), "both a local tool and upstream inner's tool") {
		t.Errorf("call of the clashing name: %+v", r)
	}
	proctest.Eventually(t, func() string {
		if !strings.Contains(g.stderr.String(), `msg="tool left out" tool=inner__hello upstream=inner why="both a local tool`) {
			return "no log line for the clash: " + g.stderr.String()
		}
		return ""
	})
}

func TestUpstreamReadOnly(t *testing.T) {
	g := startGateway(t, nil, "--readonly")
	g.initialize()
	if got := g.list(2); !slices.Equal(got, []string{"inner__hello"}) {
		t.Errorf("--readonly listed %v, want only the tool annotated readOnlyHint", got)
	}
}

func TestUpstreamFlagsRefused(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"bad_name=server", "1 to 32 letters"},
		{"x=server 'open", "quote is not closed"},
		{"x=http://example.com/mcp", "plain http only to a loopback"},
		{"noequals", "want NAME=COMMAND"},
	} {
		code, _, stderr := runWith(t, "", "--upstream", c.arg)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("--upstream %q: exit %d, stderr %q; want 2 and %q", c.arg, code, stderr, c.want)
		}
	}
	code, _, stderr := runWith(t, "", "--upstream", "a=x", "--upstream", "a=y")
	if code != 2 || !strings.Contains(stderr, "given twice") {
		t.Errorf("duplicate: exit %d, %q", code, stderr)
	}
	code, _, stderr = runWith(t, "", "--upstream-timeout", "0s")
	if code != 2 || !strings.Contains(stderr, "upstream-timeout") {
		t.Errorf("--upstream-timeout 0: exit %d, %q", code, stderr)
	}
	for _, bad := range []string{"1s", "0s,1s", "2s,1s", "fast,slow"} {
		code, _, stderr = runWith(t, "", "--upstream-backoff", bad)
		if code != 2 || !strings.Contains(stderr, "--upstream-backoff") || !strings.Contains(stderr, "want MIN,MAX") {
			t.Errorf("--upstream-backoff %q: exit %d, %q; want 2, naming the flag and the form", bad, code, stderr)
		}
	}
}

func TestUpstreamOverHTTP(t *testing.T) {
	tools := t.TempDir()
	upTool(t, tools, "hello", `echo "hello $MCP_ARG_NAME"`,
		`{"description":"Say hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	inner := startHTTP(t, "--tools", tools, "--describe-cache", "")
	g := startGateway(t, nil, "--upstream", "web="+inner.url+"/mcp")
	g.initialize()
	if got := g.list(2); !slices.Equal(got, []string{"mine", "web__hello"}) {
		t.Errorf("tools/list %v", got)
	}
	if r := g.call(3, "web__hello", `{"name":"http"}`); r.IsError || resultText(r) != "hello http\n" {
		t.Errorf("web__hello: %+v", r)
	}
}

// TestUpstreamEnvironment: an upstream starts like a tool, in --root with
// the tools' minimal environment: a variable of mcp-route's reaches it only
// through --pass-env. The nested mcp-route passes it on to its tool with
// its own --pass-env, so the tool shows what the upstream got.
func TestUpstreamEnvironment(t *testing.T) {
	t.Setenv("UPSTREAM_SECRET", "s3cret")
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	for _, pass := range []bool{false, true} {
		var extra []string
		tools := t.TempDir()
		upTool(t, tools, "env", `echo "[$UPSTREAM_SECRET] $MCP_ROOT $(pwd)"`, `{"description":"What the upstream got."}`)
		extra = append(extra, "--upstream", fmt.Sprintf("inner=%s --tools %s --confine off --pass-env UPSTREAM_SECRET --describe-cache ''", bin, tools))
		if pass {
			extra = append(extra, "--pass-env", "UPSTREAM_SECRET")
		}
		g := startGateway(t, nil, extra...)
		g.initialize()
		got := resultText(g.call(2, "inner__env", `{}`))
		want := fmt.Sprintf("[] %s %s\n", g.root, g.root)
		if pass {
			want = fmt.Sprintf("[s3cret] %s %s\n", g.root, g.root)
		}
		if got != want {
			t.Errorf("--pass-env given: %v: the upstream's tool saw %q, want %q", pass, got, want)
		}
	}
}

// TestUpstreamConfined: under confinement an upstream is confined like a
// tool, and so is everything it starts: the nested server's own tool
// (unconfined by the nested mcp-route) cannot read a file outside the
// root, while one inside the root is read. The upstream's program is
// executable under the policy (mcp-route adds it).
func TestUpstreamConfined(t *testing.T) {
	confinetest.Need(t, 1)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("outside-content"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The nested server's tools must be executable under the policy: a
	// directory beneath a --tools directory is.
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	g := startGateway(t, func(local, _ string) {
		sub := filepath.Join(local, "nested")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		upTool(t, sub, "peek", `cat "$MCP_ARG_PATH" 2>/dev/null || echo refused`,
			`{"description":"Reads a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}`)
	}, "--upstream", "inner="+bin+" --tools {local}/nested --confine off --describe-cache ''", "--confine", "require")
	if err := os.WriteFile(filepath.Join(g.root, "inside.txt"), []byte("inside-content"), 0o644); err != nil {
		t.Fatal(err)
	}
	g.initialize()
	if got := resultText(g.call(2, "inner__peek", `{"path":"inside.txt"}`)); got != "inside-content" {
		t.Errorf("inside the root: %q", got)
	}
	if got := resultText(g.call(3, "inner__peek", fmt.Sprintf(`{"path":%q}`, outside))); got != "refused\n" {
		t.Errorf("outside the root: %q, want refused", got)
	}
}

// TestUpstreamListChangedOverHTTP: mcp-route --http with a nested
// mcp-route upstream: a tool added to the nested one reaches a legacy
// session's GET stream and a 2026-07-28 subscriptions/listen stream.
func TestUpstreamListChangedOverHTTP(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	inner := t.TempDir()
	upTool(t, inner, "hello", `echo hello`, `{"description":"Say hello."}`)
	r := startHTTP(t, "--tools", t.TempDir(), "--poll", "100ms",
		"--upstream", fmt.Sprintf("inner=%s --tools %s --confine off --poll 100ms --describe-cache ''", bin, inner))
	hdr := []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list"}
	// The upstream's first list is itself a change: wait until it is in.
	proctest.Eventually(t, func() string {
		if _, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+metaRev+`}}`, hdr...); !strings.Contains(body, "inner__hello") {
			return "inner__hello not listed: " + body
		}
		return ""
	})
	sid := initialize(t, r.url, "2025-06-18")
	get, _ := http.NewRequest("GET", r.url+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	gresp, err := http.DefaultClient.Do(get)
	if err != nil || gresp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", gresp, err)
	}
	defer gresp.Body.Close()
	legacy := events(gresp.Body)
	listen, _ := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+metaRev+`}}`))
	for k, v := range map[string]string{"Mcp-Protocol-Version": modernRev, "Mcp-Method": "subscriptions/listen", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"} {
		listen.Header.Set(k, v)
	}
	lresp, err := http.DefaultClient.Do(listen)
	if err != nil || lresp.StatusCode != 200 {
		t.Fatalf("listen: %v %v", lresp, err)
	}
	defer lresp.Body.Close()
	modern := events(lresp.Body)
	waitEvent(t, modern, "notifications/subscriptions/acknowledged")

	upTool(t, inner, "added", `echo added`, `{"description":"Added later."}`)
	waitEvent(t, legacy, "notifications/tools/list_changed")
	waitEvent(t, modern, "notifications/tools/list_changed")
	_, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+metaRev+`}}`, hdr...)
	if !strings.Contains(body, "inner__added") {
		t.Errorf("after the change: %s", body)
	}
}

// TestUpstreamOverHTTPWithToken: an HTTP upstream that demands a bearer
// token (mcp-route --http --http-token-file) cannot be mounted without it
// (its start fails with 401, and its tools are not served); with
// --upstream-token-file, or --upstream-header 'NAME=Authorization: ...',
// its tools are listed and called. The token never reaches the log.
func TestUpstreamOverHTTPWithToken(t *testing.T) {
	const token = "tok-5f0e1c9a-right"
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte(token+"\n"), 0o600)
	wrong := filepath.Join(dir, "wrong")
	os.WriteFile(wrong, []byte("\n  tok-wrong  \n"), 0o600)
	tools := t.TempDir()
	upTool(t, tools, "hello", `echo "hello $MCP_ARG_NAME"`,
		`{"description":"Say hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	inner := startHTTP(t, "--tools", tools, "--describe-cache", "", "--http-token-file", tokens)
	web := "web=" + inner.url + "/mcp"

	for _, extra := range [][]string{nil, {"--upstream-token-file", "web=" + wrong}} {
		g := startGateway(t, nil, append([]string{"--upstream", web, "--verbose"}, extra...)...)
		g.initialize()
		proctest.Eventually(t, func() string {
			if s := g.stderr.String(); !strings.Contains(s, `msg="upstream failed to start" upstream=web`) || !strings.Contains(s, "401") {
				return "no failed start naming 401: " + s
			}
			return ""
		})
		if got := g.list(2); slices.Contains(got, "web__hello") {
			t.Errorf("%v: tools/list %v, want no web__hello", extra, got)
		}
	}

	for _, extra := range [][]string{
		{"--upstream-token-file", "web=" + tokens},
		{"--upstream-header", "web=Authorization: Bearer " + token, "--upstream-header", "web=X-Trace: 1"},
	} {
		g := startGateway(t, nil, append([]string{"--upstream", web, "--verbose"}, extra...)...)
		g.initialize()
		if got := g.list(2); !slices.Equal(got, []string{"mine", "web__hello"}) {
			t.Errorf("%v: tools/list %v", extra[0], got)
		}
		if r := g.call(3, "web__hello", `{"name":"token"}`); r.IsError || resultText(r) != "hello token\n" {
			t.Errorf("%v: web__hello: %+v", extra[0], r)
		}
		if strings.Contains(g.stderr.String(), token) {
			t.Errorf("%v: the token is in the log:\n%s", extra[0], g.stderr.String())
		}
	}
}

func TestUpstreamHeaderFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o600)
		return p
	}
	good, empty, spaced := file("good", "tok\n"), file("empty", "\n \n"), file("spaced", "my secret\n")
	web := []string{"--upstream", "web=http://127.0.0.1:1/mcp", "--upstream", "local=server"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--upstream-header", "web=Content-Type: text/plain"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=mcp-session-id: x"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=MCP-Protocol-Version: 2025-06-18"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=Accept: */*"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=Host: evil"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=Content-Length: 0"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=Mcp-Param-Region: x"}, 2, "set by the MCP transport"},
		{[]string{"--upstream-header", "web=X-A: b\r\nX-B: c"}, 2, "line break"},
		{[]string{"--upstream-header", "web=X-A: b\n"}, 2, "line break"},
		{[]string{"--upstream-header", "web=Bad Name: b"}, 2, "HTTP header name"},
		{[]string{"--upstream-header", "web=no colon"}, 2, "HTTP header name"},
		{[]string{"--upstream-header", "X-A: b"}, 2, "want NAME='Key: value'"},
		{[]string{"--upstream-header", "local=X-A: b"}, 2, "not an HTTP upstream"},
		{[]string{"--upstream-header", "other=X-A: b"}, 2, "no --upstream other"},
		{[]string{"--upstream-token-file", "local=" + good}, 2, "not an HTTP upstream"},
		{[]string{"--upstream-token-file", "web=" + good, "--upstream-token-file", "web=" + good}, 2, "given twice"},
		{[]string{"--upstream-header", "web=Authorization: Bearer x", "--upstream-token-file", "web=" + good}, 2, "exclude each other"},
		{[]string{"--upstream-token-file", "web=" + filepath.Join(dir, "missing")}, 1, "no such file"},
		{[]string{"--upstream-token-file", "web=" + empty}, 1, "no token in it"},
		{[]string{"--upstream-token-file", "web=" + spaced}, 1, "not visible ASCII"},
	} {
		code, _, stderr := runWith(t, "", append(web, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%q: the token file's content is in the error: %q", c.args, stderr)
		}
	}
}

// TestUpstreamRedirectNotFollowed: an HTTP upstream whose URL answers with
// a redirect to another origin fails to start, and the log names where it
// pointed; the target never sees the --upstream-header secret nor the body.
// The target mounted by its own URL serves, and gets the header.
func TestUpstreamRedirectNotFollowed(t *testing.T) {
	const secret = "k-7d1e-upstream-secret"
	tools := t.TempDir()
	upTool(t, tools, "hello", `echo "hello $MCP_ARG_NAME"`,
		`{"description":"Say hello.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)
	inner := startHTTP(t, "--tools", tools, "--describe-cache", "")
	innerURL, err := url.Parse(inner.url)
	if err != nil {
		t.Fatal(err)
	}
	// target records what reaches it, then passes it to the inner server.
	var mu sync.Mutex
	var seen []string
	proxy := httputil.NewSingleHostReverseProxy(innerURL)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" key="+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	// Closed after the gateways are gone (Cleanup runs last in, first
	// out): their GET streams through it would hold Close for ever.
	t.Cleanup(target.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	header := []string{"--upstream-header", "web=X-Api-Key: " + secret}

	g := startGateway(t, nil, append([]string{"--upstream", "web=" + redirector.URL + "/mcp"}, header...)...)
	g.initialize()
	want := fmt.Sprintf(`redirect to \"%s/mcp\" not followed`, target.URL)
	proctest.Eventually(t, func() string {
		if s := g.stderr.String(); !strings.Contains(s, `msg="upstream failed to start" upstream=web`) || !strings.Contains(s, want) {
			return "no failed start naming the redirect: " + s
		}
		return ""
	})
	if got := g.list(2); slices.Contains(got, "web__hello") {
		t.Errorf("tools/list %v, want no web__hello", got)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the redirect target got %q", seen)
	}
	mu.Unlock()

	g = startGateway(t, nil, append([]string{"--upstream", "web=" + target.URL + "/mcp"}, header...)...)
	g.initialize()
	if r := g.call(3, "web__hello", `{"name":"direct"}`); r.IsError || resultText(r) != "hello direct\n" {
		t.Errorf("web__hello: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[len(seen)-1] != "POST key="+secret {
		t.Errorf("the target got %q, want POSTs with the header", seen)
	}
}
