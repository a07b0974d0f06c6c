package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// A fixture is a tools directory and a root directory in t.TempDir().
type fixture struct {
	t     *testing.T
	tools string
	root  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := t.TempDir()
	f := &fixture{t: t, tools: filepath.Join(d, "tools"), root: filepath.Join(d, "root")}
	for _, p := range []string{f.tools, f.root} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// tool writes an executable sh script (body after the #! line) and, unless
// def is "", its sidecar NAME.json. The sidecar goes first, so a server
// that rescans between the two writes never sees the script without it.
func (f *fixture) tool(name, def, body string) {
	f.t.Helper()
	if def != "" {
		if err := os.WriteFile(filepath.Join(f.tools, name+".json"), []byte(def), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	// Written under a hidden name and renamed: a scan never sees half a script.
	tmp := filepath.Join(f.tools, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.tools, name)); err != nil {
		f.t.Fatal(err)
	}
}

// def returns a sidecar definition; schema "" means any object, run "" no
// run object, extra more members (",\"k\":v" form, without the comma).
func def(name, schema, run string, extra ...string) string {
	if schema == "" {
		schema = `{"type":"object"}`
	}
	d := fmt.Sprintf(`{"name":%q,"description":"The %s test tool.","inputSchema":%s`, name, name, schema)
	if run != "" {
		d += `,"run":` + run
	}
	for _, e := range extra {
		d += "," + e
	}
	return d + "}"
}

// start starts mcp-route on the fixture with short timeouts and more args.
func (f *fixture) start(args ...string) *server {
	f.t.Helper()
	// A short poll so reload tests are quick; short grace so kills are.
	base := []string{"--tools", f.tools, "--root", f.root, "--grace", "300ms", "--poll", "100ms"}
	return startServer(f.t, f.root, nil, append(base, args...)...)
}

func text(r *codec.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == codec.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// wantOK fails unless r is a success whose text contains want.
func wantOK(t *testing.T, r *codec.CallToolResult, want string) {
	t.Helper()
	if r.IsError || !strings.Contains(text(r), want) {
		t.Errorf("result isError=%v text %q; want success containing %q", r.IsError, text(r), want)
	}
}

// wantErr fails unless r is an isError result whose text contains each of
// want (case-insensitive).
func wantErr(t *testing.T, r *codec.CallToolResult, want ...string) {
	t.Helper()
	if !r.IsError {
		t.Errorf("result text %q: isError is false", text(r))
		return
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(text(r)), strings.ToLower(w)) {
			t.Errorf("isError text %q does not mention %q", text(r), w)
		}
	}
}

// ---- eras and versions ----------------------------------------------------

func TestLegacyHandshakeEveryRevision(t *testing.T) {
	f := newFixture(t)
	f.tool("hello", def("hello", "", ""), `echo hello`)
	for _, rev := range codec.LegacyRevisions {
		t.Run(rev, func(t *testing.T) {
			f.t = t
			s := f.start("--name", "e2e-route")
			res := s.initialize(rev)
			if res.ProtocolVersion != rev {
				t.Errorf("initialize %s: protocolVersion %q", rev, res.ProtocolVersion)
			}
			if res.Capabilities.Tools == nil {
				t.Errorf("initialize %s: no tools capability", rev)
			} else if !res.Capabilities.Tools.ListChanged {
				t.Errorf("initialize %s: tools.listChanged is false, but the server reloads", rev)
			}
			if res.ServerInfo.Name != "e2e-route" {
				t.Errorf("serverInfo.name %q, want --name", res.ServerInfo.Name)
			}
			var empty map[string]any
			s.result(s.request(rev, codec.MethodPing, nil), &empty)
			if len(empty) != 0 {
				t.Errorf("ping result %v, want {}", empty)
			}
			if n := names(s.listTools()); !slices.Equal(n, []string{"hello"}) {
				t.Errorf("tools %q", n)
			}
			wantOK(t, s.callTool("hello", nil), "hello")
			s.closeStdin()
			s.drain()
			if code := s.wait(); code != 0 {
				t.Errorf("exit %d after EOF, want 0", code)
			}
		})
	}
}

func TestLegacyNegotiatesUnknownVersion(t *testing.T) {
	f := newFixture(t)
	s := f.start()
	s.rev = codec.LatestLegacyRevision
	s.nextID++
	id := codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodInitialize, codec.LatestLegacyRevision}
	s.raw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"initialize","params":{"protocolVersion":"2023-01-01","capabilities":{},"clientInfo":{"name":"old","version":"0"}}}`)
	var res codec.InitializeResult
	s.result(id, &res)
	if res.ProtocolVersion != codec.LatestLegacyRevision {
		t.Errorf("initialize 2023-01-01: server offered %q, want %q", res.ProtocolVersion, codec.LatestLegacyRevision)
	}
}

func TestModernDiscoverAndList(t *testing.T) {
	f := newFixture(t)
	f.tool("b_tool", def("b_tool", "", ""), `echo b`)
	f.tool("a_tool", def("a_tool", "", ""), `echo a`)
	s := f.start()
	// A dual-era client probes with server/discover before anything else.
	var disc codec.DiscoverResult
	s.result(s.request(modern, codec.MethodDiscover, nil), &disc)
	if disc.ResultType != "complete" {
		t.Errorf("discover resultType %q", disc.ResultType)
	}
	for _, rev := range codec.Revisions {
		if !slices.Contains(disc.SupportedVersions, rev) {
			t.Errorf("discover supportedVersions %q lacks %s", disc.SupportedVersions, rev)
		}
	}
	if disc.Capabilities.Tools == nil {
		t.Errorf("discover: no tools capability")
	}
	if disc.Meta[codec.MetaServerInfo] == nil {
		t.Errorf("discover: no _meta serverInfo")
	}
	var list codec.ListToolsResult
	s.result(s.request(modern, codec.MethodToolsList, nil), &list)
	if list.TTLMs == nil || list.CacheScope == "" || list.ResultType != "complete" || list.Meta[codec.MetaServerInfo] == nil {
		t.Errorf("modern tools/list lacks ttlMs, cacheScope, resultType or _meta serverInfo: %+v", list)
	}
	if n := names(list.Tools); !slices.Equal(n, []string{"a_tool", "b_tool"}) {
		t.Errorf("tools %q, want sorted [a_tool b_tool]", n)
	}
	var call codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "a_tool"}), &call)
	wantOK(t, &call, "a")
	if call.ResultType != "complete" {
		t.Errorf("modern tools/call resultType %q", call.ResultType)
	}
}

func TestModernUnsupportedVersion(t *testing.T) {
	f := newFixture(t)
	s := f.start()
	for _, v := range []string{"2027-01-01", "2099-12-31"} {
		e := s.rpcError(s.request(v, codec.MethodToolsList, nil))
		if e.Code != codec.CodeUnsupportedVersion {
			t.Errorf("tools/list at %s: error %d %s, want %d", v, e.Code, e.Message, codec.CodeUnsupportedVersion)
			continue
		}
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || data.Requested != v || !slices.Contains(data.Supported, modern) {
			t.Errorf("-32022 data %s: want requested %s and supported listing %s", e.Data, v, modern)
		}
	}
	// The stream goes on.
	var disc codec.DiscoverResult
	s.result(s.request(modern, codec.MethodDiscover, nil), &disc)
}

func TestRequestBeforeInitialize(t *testing.T) {
	f := newFixture(t)
	f.tool("hello", def("hello", "", ""), `echo hello`)
	s := f.start()
	s.rev = codec.LatestLegacyRevision // for the checks of the error answers
	for _, method := range []string{codec.MethodToolsList, codec.MethodToolsCall} {
		params := map[string]any{}
		if method == codec.MethodToolsCall {
			params["name"] = "hello"
		}
		e := s.rpcError(s.request(codec.LatestLegacyRevision, method, params))
		if e.Code == 0 || e.Message == "" {
			t.Errorf("%s before initialize: error %+v", method, e)
		}
	}
	// ping is allowed before initialize; then the handshake still works.
	var empty map[string]any
	s.result(s.request(codec.LatestLegacyRevision, codec.MethodPing, nil), &empty)
	s.initialize(codec.Rev20250618)
	wantOK(t, s.callTool("hello", nil), "hello")
}

func TestDiscoverInLegacySession(t *testing.T) {
	f := newFixture(t)
	s := f.start()
	s.initialize(codec.Rev20250618)
	var disc codec.DiscoverResult
	s.result(s.request(modern, codec.MethodDiscover, nil), &disc)
	if len(disc.SupportedVersions) == 0 {
		t.Errorf("server/discover in a legacy session: %+v", disc)
	}
}

func TestBatches(t *testing.T) {
	f := newFixture(t)
	s := f.start()
	s.initialize(codec.Rev20250326)
	s.sent[idKey(101)] = sentAt{codec.MethodPing, codec.Rev20250326}
	s.sent[idKey(102)] = sentAt{codec.MethodToolsList, codec.Rev20250326}
	s.raw(`[{"jsonrpc":"2.0","id":101,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/whatever"},{"jsonrpc":"2.0","id":102,"method":"tools/list"}]`)
	line := s.nextLine()
	var batch []codec.Message
	if err := json.Unmarshal(line, &batch); err != nil {
		t.Fatalf("2025-03-26 batch answer is not an array: %s", line)
	}
	var ids []string
	for _, m := range batch {
		ids = append(ids, m.ID.String())
	}
	sort.Strings(ids)
	if !slices.Equal(ids, []string{"101", "102"}) {
		t.Errorf("batch answer ids %q, want [101 102]: %s", ids, line)
	}
	// A batch of notifications only gets no answer: the next line is the
	// answer to the ping after it.
	s.raw(`[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]`)
	id := s.request(codec.Rev20250326, codec.MethodPing, nil)
	if m := s.next(); m == nil || m.ID == nil || m.ID.Key() != id.Key() {
		t.Errorf("after a batch of notifications: got %+v, want the ping answer", m)
	}

	// Elsewhere a batch is an invalid request, and the stream goes on.
	s2 := f.start()
	s2.initialize(codec.Rev20250618)
	s2.raw(`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`)
	m := s2.next()
	if m == nil || m.Error == nil || m.Error.Code != codec.CodeInvalidRequest {
		t.Errorf("batch in 2025-06-18: got %+v, want -32600", m)
	}
	var empty map[string]any
	s2.result(s2.request(codec.Rev20250618, codec.MethodPing, nil), &empty)
}

func TestBadFrames(t *testing.T) {
	f := newFixture(t)
	s := f.start("--max-frame", "4096")
	s.initialize(codec.LatestLegacyRevision)
	cases := []struct {
		line string
		code int
	}{
		{`this is not json`, codec.CodeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":`, codec.CodeParseError},
		{`{"jsonrpc":"1.0","id":2,"method":"ping"}`, codec.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, codec.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`, codec.CodeMethodNotFound},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}`, codec.CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"` + strings.Repeat("x", 8192) + `"}}`, 0},
	}
	for _, c := range cases {
		s.raw(c.line)
		m := s.next()
		if m == nil || m.Error == nil {
			t.Errorf("%.60s: got %+v, want an error", c.line, m)
			continue
		}
		if c.code != 0 && m.Error.Code != c.code {
			t.Errorf("%.60s: error %d %s, want %d", c.line, m.Error.Code, m.Error.Message, c.code)
		}
		var empty map[string]any
		s.result(s.request(s.rev, codec.MethodPing, nil), &empty)
	}
}

// ---- tools and results ----------------------------------------------------

func TestExampleTools(t *testing.T) {
	examples, err := filepath.Abs("../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(examples, "echo.json")); err != nil {
		t.Skipf("examples not available: %v", err)
	}
	root := t.TempDir()
	s := startServer(t, root, nil, "--tools", examples, "--root", root, "--grace", "300ms")
	s.initialize(codec.LatestLegacyRevision)
	got := names(s.listTools())
	for _, want := range []string{"crash", "echo", "sleep", "steps", "wordcount"} {
		if !slices.Contains(got, want) {
			t.Errorf("example tools %q lack %s", got, want)
		}
	}
	wantOK(t, s.callTool("echo", map[string]any{"text": "hi there"}), "hi there")

	wc := s.callTool("wordcount", map[string]any{"text": "one two\nthree"})
	var counts map[string]int
	if err := json.Unmarshal(wc.StructuredContent, &counts); err != nil || counts["words"] != 3 || counts["lines"] != 1 {
		t.Errorf("wordcount structuredContent %s (%v)", wc.StructuredContent, err)
	}

	id := s.startCall("steps", map[string]any{"steps": 4}, "tok-1")
	var steps codec.CallToolResult
	s.result(id, &steps)
	wantOK(t, &steps, "done: 4 steps")
	if n := countProgress(t, s.notes, `"tok-1"`); n != 4 {
		t.Errorf("steps: %d progress notifications, want 4", n)
	}

	wantErr(t, s.callTool("crash", map[string]any{"how": "signal"}), "SIGSEGV")
	wantErr(t, s.callTool("crash", map[string]any{"how": "exit"}), "flux capacitor")
	wantOK(t, s.callTool("sleep", map[string]any{"seconds": 0}), "slept 0 seconds")
	noChildren(t, s)
}

func countProgress(t *testing.T, notes []*codec.Message, token string) int {
	t.Helper()
	n := 0
	last := -1.0
	for _, m := range notes {
		if m.Method != codec.MethodProgress {
			continue
		}
		var p codec.ProgressParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Errorf("progress params %s: %v", m.Params, err)
			continue
		}
		if string(p.ProgressToken) != token {
			continue
		}
		if p.Progress <= last {
			t.Errorf("progress went from %v to %v", last, p.Progress)
		}
		last = p.Progress
		n++
	}
	return n
}

func TestDescribeAndGoTool(t *testing.T) {
	f := newFixture(t)
	// A tool without a sidecar answers --mcp-describe itself.
	f.tool("selfdesc", "", `if [ "$1" = --mcp-describe ]; then
  echo '{"name":"selfdesc","description":"Describes itself.","inputSchema":{"type":"object"},"run":{"result":"json"}}'
  exit 0
fi
echo '{"ok":true}'`)
	// The example Go tool, built from examples/tools/src/primes.
	primes := exampleBin(t, "EXAMPLE_PRIMES_BIN", "examples/tools/src/primes")
	if err := os.Symlink(primes, filepath.Join(f.tools, "primes")); err != nil {
		t.Fatal(err)
	}
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	tools := s.listTools()
	if n := names(tools); !slices.Equal(n, []string{"primes", "selfdesc"}) {
		t.Fatalf("tools %q", n)
	}
	for _, tl := range tools {
		b, _ := json.Marshal(tl)
		if strings.Contains(string(b), `"run"`) {
			t.Errorf("the run object leaked to the client: %s", b)
		}
	}
	r := s.callTool("selfdesc", nil)
	if r.IsError || string(r.StructuredContent) != `{"ok":true}` {
		t.Errorf("selfdesc: %+v", r)
	}
	p := s.callTool("primes", map[string]any{"below": 100})
	if p.IsError || !strings.Contains(string(p.StructuredContent), `"count":25`) {
		t.Errorf("primes below 100: %s %q", p.StructuredContent, text(p))
	}
	wantErr(t, s.callTool("primes", map[string]any{"below": "many"}), "below")
}

func TestResultModes(t *testing.T) {
	f := newFixture(t)
	out := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`
	f.tool("j", def("j", "", `{"result":"json"}`, `"outputSchema":`+out), `echo '{"n": 7}'`)
	f.tool("j_bad_schema", def("j_bad_schema", "", `{"result":"json"}`, `"outputSchema":`+out), `echo '{"n": "seven"}'`)
	f.tool("j_not_json", def("j_not_json", "", `{"result":"json"}`), `echo 'not json'`)
	f.tool("j_two", def("j_two", "", `{"result":"json"}`), `echo '1 2'`)
	f.tool("m", def("m", "", `{"result":"mcp"}`), `echo '{"content":[{"type":"text","text":"from mcp"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}'`)
	f.tool("m_bad", def("m_bad", "", `{"result":"mcp"}`), `echo '{"content":"nope"}'`)
	f.tool("bad_utf8", def("bad_utf8", "", ""), `printf 'caf\351 \377\376 end\n'`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)

	j := s.callTool("j", nil)
	if j.IsError || string(j.StructuredContent) != `{"n":7}` && string(j.StructuredContent) != `{"n": 7}` {
		t.Errorf("json result: structuredContent %s, isError %v", j.StructuredContent, j.IsError)
	}
	if !strings.Contains(text(j), "7") {
		t.Errorf("json result: text %q does not repeat the JSON", text(j))
	}
	wantErr(t, s.callTool("j_bad_schema", nil), "n")
	wantErr(t, s.callTool("j_not_json", nil))
	wantErr(t, s.callTool("j_two", nil))
	m := s.callTool("m", nil)
	if m.IsError || len(m.Content) != 2 || m.Content[1].Type != codec.ContentImage {
		t.Errorf("mcp result: %+v", m)
	}
	wantErr(t, s.callTool("m_bad", nil))
	// Invalid UTF-8 in text mode: either replaced or refused, but every line
	// on the wire is UTF-8 (checked by the client).
	u := s.callTool("bad_utf8", nil)
	if !u.IsError && !strings.Contains(text(u), "end") {
		t.Errorf("invalid UTF-8 text result: %q", text(u))
	}
}

func TestArgumentsValidatedBeforeRun(t *testing.T) {
	f := newFixture(t)
	schema := `{"type":"object","properties":{"count":{"type":"integer"},"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`
	f.tool("strict", def("strict", schema, ""), `touch "$MCP_ROOT/ran"; echo ran`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	wantErr(t, s.callTool("strict", map[string]any{"path": "p", "count": "three"}), "count")
	wantErr(t, s.callTool("strict", map[string]any{"count": 3}), "path")
	wantErr(t, s.callTool("strict", map[string]any{"path": "p", "extra": 1}), "extra")
	if _, err := os.Stat(filepath.Join(f.root, "ran")); err == nil {
		t.Errorf("the tool ran although its arguments were invalid")
	}
	wantOK(t, s.callTool("strict", map[string]any{"path": "p", "count": 3}), "ran")
	// Unknown tool: an error (result or JSON-RPC), and the stream goes on.
	id := s.startCall("no_such_tool", nil, nil)
	if m := s.response(id); m.Error == nil {
		var r codec.CallToolResult
		json.Unmarshal(m.Result, &r)
		if !r.IsError {
			t.Errorf("calling an unknown tool succeeded: %s", m.Result)
		}
	}
	wantOK(t, s.callTool("strict", map[string]any{"path": "q"}), "ran")
}

func TestToolEnvironment(t *testing.T) {
	f := newFixture(t)
	f.tool("env", def("env", "", `{"env":{"PER_TOOL":"pt"},"passEnv":["PASS_TOOL"]}`), `pwd; env | sort`)
	env := baseEnv("HOME=/nonexistent-home", "AWS_SECRET_ACCESS_KEY=hunter2", "GITHUB_TOKEN=ghp_secret",
		"PASS_ME=passed", "PASS_TOOL=tool-passed", "NOT_PASSED=nope")
	s := startServer(t, f.root, env, "--tools", f.tools, "--root", f.root, "--grace", "300ms",
		"--pass-env", "PASS_ME", "--env", "SET_ME=set")
	s.initialize(codec.Rev20250618)
	r := s.callTool("env", map[string]any{"count": 3, "my-key": "v w", "flag": true, "obj": map[string]any{"a": 1}})
	out := text(r)
	for _, secret := range []string{"hunter2", "ghp_secret", "NOT_PASSED"} {
		if strings.Contains(out, secret) {
			t.Errorf("the tool saw %s from the router's environment:\n%s", secret, out)
		}
	}
	root, _ := filepath.EvalSymlinks(f.root)
	lines := strings.Split(out, "\n")
	if lines[0] != f.root && lines[0] != root {
		t.Errorf("working directory %q, want the root %q", lines[0], f.root)
	}
	for _, want := range []string{
		"MCP_TOOL=env", "MCP_ROOT=" + f.root, "MCP_PROTOCOL_VERSION=2025-06-18",
		"MCP_ARG_COUNT=3", "MCP_ARG_MY_KEY=v w", "MCP_ARG_FLAG=true",
		"PASS_ME=passed", "SET_ME=set", "PER_TOOL=pt", "PASS_TOOL=tool-passed", "PATH=",
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("tool environment lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MCP_ARG_OBJ") {
		t.Errorf("an object argument became MCP_ARG_OBJ:\n%s", out)
	}
}

func TestProgressNotifications(t *testing.T) {
	f := newFixture(t)
	f.tool("prog", def("prog", "", ""), `for i in 1 2 3; do printf '{"progress":%d,"total":3,"message":"step %d"}\n' $i $i >&3; done
echo 'not json' >&3
echo done`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	var r codec.CallToolResult
	s.result(s.startCall("prog", nil, 42), &r)
	wantOK(t, &r, "done")
	if n := countProgress(t, s.notes, "42"); n != 3 {
		t.Errorf("%d progress notifications for token 42, want 3 (notes %d)", n, len(s.notes))
	}
	// Without a progressToken nothing is sent.
	s.notes = nil
	wantOK(t, s.callTool("prog", nil), "done")
	for _, m := range s.notes {
		if m.Method == codec.MethodProgress {
			t.Errorf("progress without a progressToken: %s", m.Params)
		}
	}
	// Modern era too.
	var mr codec.CallToolResult
	s.result(s.request(modern, codec.MethodToolsCall, map[string]any{"name": "prog",
		"_meta": map[string]any{codec.MetaProgressToken: "m"}}), &mr)
	if n := countProgress(t, s.notes, `"m"`); n != 3 {
		t.Errorf("modern: %d progress notifications, want 3", n)
	}
}

// ---- failure modes -------------------------------------------------------

func TestFailureModes(t *testing.T) {
	f := newFixture(t)
	// --timeout 1s is for hang; every tool meant to finish gets all the
	// time a loaded machine may need (flood_err's 20000 lines take a
	// while), so that none times out for being slow.
	const slow = `{"timeout":"5m"}`
	f.tool("fail", def("fail", "", slow), `echo "partial output"; echo "first line" >&2; echo "disk on fire" >&2; exit 3`)
	f.tool("segv", def("segv", "", slow), `ulimit -c 0; kill -SEGV $$`)
	f.tool("hang", def("hang", "", ""), `echo $$ > "$MCP_ROOT/hang.pid"; sleep 60; echo never`)
	f.tool("hang_fast", def("hang_fast", "", `{"timeout":"300ms"}`), `echo $$ > "$MCP_ROOT/hang_fast.pid"; sleep 60`)
	f.tool("flood", def("flood", "", slow), `echo $$ > "$MCP_ROOT/flood.pid"; while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`)
	f.tool("flood_err", def("flood_err", "", slow), `i=0; while [ $i -lt 20000 ]; do echo "stderr noise line $i" >&2; i=$((i+1)); done; echo quiet`)
	f.tool("no_stdin", def("no_stdin", "", slow), `exec 0<&-; echo closed`)
	f.tool("bg", def("bg", "", slow), `sleep 60 & echo $! > "$MCP_ROOT/bg.pid"; echo started`)
	f.tool("bg_quiet", def("bg_quiet", "", slow), `(sleep 60 >/dev/null 2>&1 </dev/null 3>&- &); echo detached`)
	f.tool("fds", def("fds", "", slow), `exec ls -l /proc/self/fd/`)
	s := f.start("--timeout", "1s", "--max-output", "4096")
	s.initialize(codec.LatestLegacyRevision)
	// The baseline is taken once the tools are read (tools/list waits for
	// the first read, which runs in the background): that read and the Go
	// runtime open descriptors of their own, which are no leak.
	s.listTools()
	fdsBefore := proctest.CountFDsOf(t, s.cmd.Process.Pid)

	// The tool gets stdin, stdout, stderr and the progress pipe, nothing
	// else of the router's (ls's own descriptor on the directory aside).
	for _, l := range strings.Split(strings.TrimSpace(text(s.callTool("fds", nil))), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[len(f)-2] != "->" {
			continue
		}
		fd, target := f[len(f)-3], f[len(f)-1]
		if n, err := strconv.Atoi(fd); err == nil && n > 3 && !strings.HasPrefix(target, "/proc/") {
			t.Errorf("the tool inherited descriptor %s -> %s", fd, target)
		}
	}

	wantErr(t, s.callTool("fail", nil), "disk on fire")
	wantErr(t, s.callTool("segv", nil), "SIGSEGV")

	wantErr(t, s.callTool("hang", nil), "timed out")
	proctest.WaitGroupGone(t, proctest.WaitPIDFile(t, filepath.Join(f.root, "hang.pid")))
	wantErr(t, s.callTool("hang_fast", nil), "timed out")
	proctest.WaitGroupGone(t, proctest.WaitPIDFile(t, filepath.Join(f.root, "hang_fast.pid")))

	wantErr(t, s.callTool("flood", nil), "4096")
	proctest.WaitGroupGone(t, proctest.WaitPIDFile(t, filepath.Join(f.root, "flood.pid")))

	wantOK(t, s.callTool("flood_err", nil), "quiet")

	// Arguments far bigger than a pipe buffer, to a tool that closes stdin.
	big := strings.Repeat("a", 1<<20)
	r := s.callTool("no_stdin", map[string]any{"big": big})
	if !r.IsError {
		wantOK(t, r, "closed")
	}

	wantOK(t, s.callTool("bg", nil), "started")
	bg := proctest.WaitPIDFile(t, filepath.Join(f.root, "bg.pid"))
	proctest.Eventually(t, func() string {
		if proctest.Alive(bg) {
			return fmt.Sprintf("background child %d of a finished call is alive", bg)
		}
		return ""
	})
	wantOK(t, s.callTool("bg_quiet", nil), "detached")

	// The server still serves, and has no zombie or leftover child.
	wantOK(t, s.callTool("flood_err", nil), "quiet")
	noChildren(t, s)
	proctest.Eventually(t, func() string {
		if n := proctest.CountFDsOf(t, s.cmd.Process.Pid); n > fdsBefore {
			return fmt.Sprintf("mcp-route has %d descriptors open, %d before the calls", n, fdsBefore)
		}
		return ""
	})
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

func TestInvalidToolsLeftOut(t *testing.T) {
	f := newFixture(t)
	f.tool("good", def("good", "", ""), `echo good`)
	f.tool("bad_name", `{"name":"bad name","description":"x","inputSchema":{"type":"object"}}`, `echo x`)
	f.tool("no_desc", `{"name":"no_desc","inputSchema":{"type":"object"}}`, `echo x`)
	f.tool("bad_schema", `{"name":"bad_schema","description":"x","inputSchema":{"type":"string"}}`, `echo x`)
	f.tool("not_json", `{"name":`, `echo x`)
	f.tool("describe_fails", "", `exit 1`)
	f.tool("describe_hangs", "", `sleep 60`)
	// Not tools at all: a hidden file, a non-executable file, a directory.
	os.WriteFile(filepath.Join(f.tools, ".hidden"), []byte("#!/bin/sh\necho hidden\n"), 0o755)
	os.WriteFile(filepath.Join(f.tools, "README"), []byte("not a tool"), 0o644)
	os.Mkdir(filepath.Join(f.tools, "subdir"), 0o755)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	if n := names(s.listTools()); !slices.Equal(n, []string{"good"}) {
		t.Errorf("tools %q, want [good]", n)
	}
	wantOK(t, s.callTool("good", nil), "good")
	log := s.stderr.String()
	for _, name := range []string{"bad_name", "no_desc", "bad_schema", "not_json", "describe_fails", "describe_hangs"} {
		if !strings.Contains(log, name) {
			t.Errorf("the log does not say why %s was left out:\n%s", name, log)
		}
	}
}

func TestReadonly(t *testing.T) {
	f := newFixture(t)
	f.tool("reader", def("reader", "", "", `"annotations":{"readOnlyHint":true}`), `echo r`)
	f.tool("writer", def("writer", "", "", `"annotations":{"readOnlyHint":false}`), `echo w`)
	f.tool("unsure", def("unsure", "", ""), `echo u`)
	s := f.start("--readonly")
	s.initialize(codec.LatestLegacyRevision)
	if n := names(s.listTools()); !slices.Equal(n, []string{"reader"}) {
		t.Errorf("--readonly tools %q, want [reader]", n)
	}
	id := s.startCall("writer", nil, nil)
	if m := s.response(id); m.Error == nil {
		var r codec.CallToolResult
		json.Unmarshal(m.Result, &r)
		if !r.IsError {
			t.Errorf("--readonly served a call to a tool not annotated read-only")
		}
	}
}

func TestScaffoldedTools(t *testing.T) {
	f := newFixture(t)
	writeScaffold(t, f.tools, "hello_sh", "sh")
	langs := []string{"hello_sh"}
	if havePython() {
		writeScaffold(t, f.tools, "hello_py", "python")
		langs = append(langs, "hello_py")
	}
	if haveNode() {
		writeScaffold(t, f.tools, "hello_js", "node")
		langs = append(langs, "hello_js")
	}
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	if n := names(s.listTools()); len(n) != len(langs) {
		t.Fatalf("tools %q, want %q", n, langs)
	}
	for _, name := range langs {
		wantOK(t, s.callTool(name, map[string]any{"name": "e2e"}), "Hello, e2e!")
		wantOK(t, s.callTool(name, nil), "Hello, world!")
	}
}

func TestPagination(t *testing.T) {
	f := newFixture(t)
	var want []string
	for _, n := range []string{"e", "d", "c", "b", "a"} {
		f.tool(n, def(n, "", ""), "echo "+n)
		want = append([]string{n}, want...)
	}
	s := f.start("--page-size", "2")
	s.initialize(codec.LatestLegacyRevision)
	if got := names(s.listTools()); !slices.Equal(got, want) {
		t.Errorf("paged tools %q, want %q", got, want)
	}
	e := s.rpcError(s.request(s.rev, codec.MethodToolsList, map[string]any{"cursor": "not-a-cursor"}))
	if e.Code != codec.CodeInvalidParams {
		t.Errorf("invalid cursor: error %d %s, want %d", e.Code, e.Message, codec.CodeInvalidParams)
	}
	s.rev = modern
	if got := names(s.listTools()); !slices.Equal(got, want) {
		t.Errorf("modern paged tools %q, want %q", got, want)
	}
}

func TestMultipleToolDirs(t *testing.T) {
	f := newFixture(t)
	other, third := filepath.Join(t.TempDir(), "other"), filepath.Join(t.TempDir(), "third")
	f.tool("one", def("one", "", ""), "echo one")
	f.tool("same", def("same", "", ""), "echo first-dir")
	g := &fixture{t: t, tools: other, root: f.root}
	h := &fixture{t: t, tools: third, root: f.root}
	for _, d := range []string{other, third} {
		os.Mkdir(d, 0o755)
	}
	g.tool("two", def("two", "", ""), "echo two")
	g.tool("same", def("same", "", ""), "echo second-dir")
	h.tool("three", def("three", "", ""), "echo three")
	// ':'-separated and repeated.
	s := startServer(t, f.root, nil, "--tools", f.tools+":"+other, "--tools", third, "--root", f.root)
	s.initialize(codec.LatestLegacyRevision)
	got := names(s.listTools())
	if !slices.Equal(got, []string{"one", "same", "three", "two"}) {
		t.Errorf("tools from three dirs: %q, want [one same three two] (sorted, each name once)", got)
	}
	wantOK(t, s.callTool("three", nil), "three")
	r := s.callTool("same", nil)
	t.Logf("a name in two directories is served from: %q", text(r))
}

func TestLogFile(t *testing.T) {
	f := newFixture(t)
	logFile := filepath.Join(t.TempDir(), "route.log")
	s := f.start("--log", logFile)
	s.initialize(codec.LatestLegacyRevision)
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "initialize") {
		t.Errorf("--log file: %v %q", err, b)
	}
	if e := s.stderr.String(); e != "" {
		t.Errorf("with --log, stderr still got %q", e)
	}
}

// TestCallRouteQuiet: an mcp-call command against mcp-route shows no server
// lines when all goes well (the server's stderr is inherited); with
// --verbose every event is there.
func TestCallRouteQuiet(t *testing.T) {
	server := exampleRoute(t)
	r := mcpCall(t, "", append([]string{"call", "echo", "text=hi"}, server...)...)
	if r.code != 0 || r.stdout != "hi\n" || strings.Contains(r.stderr, "mcp-route:") {
		t.Errorf("quiet by default: %+v", r)
	}
	r = mcpCall(t, "", append([]string{"call", "echo", "text=hi"}, append(server, "--verbose")...)...)
	if r.code != 0 || r.stdout != "hi\n" || !strings.Contains(r.stderr, "mcp-route: ") || !strings.Contains(r.stderr, `msg="call ended" tool=echo id=`) || !strings.Contains(r.stderr, "outcome=ok elapsed=") {
		t.Errorf("--verbose: %+v", r)
	}
}

// Request ids come back byte for byte, in both eras.
func TestIDsEchoed(t *testing.T) {
	f := newFixture(t)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	for _, id := range []string{`9007199254740993`, `-7`, `0`, `"a\u0062c"`, `"é ☃"`, `""`} {
		key := codec.ID{}
		if err := json.Unmarshal([]byte(id), &key); err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		s.sent[key.Key()] = sentAt{codec.MethodPing, s.rev}
		s.raw(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		line := s.nextLine()
		if !strings.Contains(string(line), `"id":`+id) {
			t.Errorf("id %s came back as %s", id, line)
		}
	}
}
