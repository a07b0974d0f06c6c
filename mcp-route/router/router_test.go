package router

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

const helloDef = `{"description":"Say hello","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"annotations":{"readOnlyHint":true}}`

func helloDir(t *testing.T) string {
	dir := t.TempDir()
	tool(t, dir, "hello", `printf 'hello %s' "$MCP_ARG_NAME"`, helloDef)
	return dir
}

func TestLegacyEachRevision(t *testing.T) {
	for _, rev := range codec.LegacyRevisions {
		t.Run(rev, func(t *testing.T) {
			h := newHarness(t, helloDir(t), nil)
			h.initialize(rev)
			h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if m := h.recvMsg("ping"); string(m.Result) != "{}" {
				t.Errorf("ping result %s", m.Result)
			}
			h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			m := h.recvMsg("tools/list")
			var lr codec.ListToolsResult
			json.Unmarshal(m.Result, &lr)
			if len(lr.Tools) != 1 || lr.Tools[0].Name != "hello" || lr.TTLMs != nil || lr.ResultType != "" {
				t.Errorf("tools/list result %s", m.Result)
			}
			h.send(callLine("3", "hello", `{"name":"bob"}`))
			r := callResult(t, h.recvMsg("tools/call"))
			if r.IsError || r.Text() != "hello bob" {
				t.Errorf("call result %+v", r)
			}
		})
	}
}

func TestInitializeUnknownVersionGetsLatestLegacy(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	h.rev = codec.LatestLegacyRevision
	m := h.recvMsg("initialize")
	var r codec.InitializeResult
	json.Unmarshal(m.Result, &r)
	if r.ProtocolVersion != codec.LatestLegacyRevision || r.Capabilities.Tools == nil || !r.Capabilities.Tools.ListChanged {
		t.Errorf("initialize result %s", m.Result)
	}
	if r.ServerInfo.Name != "test-route" || r.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo %+v", r.ServerInfo)
	}
}

func TestBeforeInitialize(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := h.recvMsg("")
	if m.Error == nil || m.Error.Code != codec.CodeInvalidRequest || string(m.ID) != "1" {
		t.Fatalf("want -32600 for id 1, got %+v", m)
	}
	h.send(callLine("2", "hello", `{"name":"x"}`))
	if m := h.recvMsg(""); m.Error == nil || string(m.ID) != "2" {
		t.Fatalf("tools/call before initialize: %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := h.recvMsg(""); string(m.Result) != "{}" {
		t.Fatalf("ping before initialize: %+v", m)
	}
	h.initialize(codec.Rev20250618)
}

func TestModern(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.rev = codec.Rev20260728
	// Discover first, with no initialize at all.
	h.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + modernMeta() + `}}`)
	m := h.recvMsg("server/discover")
	var d codec.DiscoverResult
	json.Unmarshal(m.Result, &d)
	if d.ResultType != "complete" || !slices.Contains(d.SupportedVersions, codec.Rev20260728) || d.CacheScope == "" {
		t.Errorf("discover %s", m.Result)
	}
	assertServerInfo(t, m.Result)

	h.send(`{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{` + modernMeta() + `}}`)
	m = h.recvMsg("tools/list")
	var lr codec.ListToolsResult
	json.Unmarshal(m.Result, &lr)
	if lr.ResultType != "complete" || lr.TTLMs == nil || lr.CacheScope == "" || len(lr.Tools) != 1 {
		t.Errorf("tools/list %s", m.Result)
	}
	assertServerInfo(t, m.Result)

	h.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"hello","arguments":{"name":"m"},` + modernMeta() + `}}`)
	m = h.recvMsg("tools/call")
	r := callResult(t, m)
	if r.ResultType != "complete" || r.Text() != "hello m" {
		t.Errorf("tools/call %s", m.Result)
	}
	assertServerInfo(t, m.Result)

	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping","params":{` + modernMeta() + `}}`)
	m = h.recvMsg("ping")
	if m.Error != nil {
		t.Errorf("modern ping: %v", m.Error)
	}
}

func assertServerInfo(t *testing.T, result []byte) {
	t.Helper()
	var r struct {
		Meta map[string]codec.Implementation `json:"_meta"`
	}
	json.Unmarshal(result, &r)
	if si := r.Meta[codec.MetaServerInfo]; si.Name != "test-route" {
		t.Errorf("no serverInfo in _meta: %s", result)
	}
}

func TestDiscoverInLegacySession(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.initialize(codec.Rev20250326)
	h.send(`{"jsonrpc":"2.0","id":9,"method":"server/discover"}`)
	h.rev = codec.Rev20260728
	if m := h.recvMsg("server/discover"); m.Error != nil {
		t.Fatalf("discover: %v", m.Error)
	}
}

func TestUnsupportedModernVersion(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-12-31"}}}`)
	m := h.recvMsg("tools/list")
	if m.Error == nil || m.Error.Code != codec.CodeUnsupportedVersion {
		t.Fatalf("want -32022, got %+v", m)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	json.Unmarshal(m.Error.Data, &data)
	if data.Requested != "2099-12-31" || !slices.Contains(data.Supported, codec.Rev20260728) {
		t.Errorf("data %s", m.Error.Data)
	}
}

func TestBadLinesKeepTheStreamGoing(t *testing.T) {
	h := newHarness(t, helloDir(t), func(o *Options) { o.MaxFrame = 200 })
	h.rev = codec.Rev20260728
	h.send(`this is not json`)
	m := h.recvMsg("")
	if m.Error == nil || m.Error.Code != codec.CodeParseError {
		t.Fatalf("want -32700, got %+v", m)
	}
	h.send(`{"jsonrpc":"1.0","id":7,"method":"ping"}`)
	m = h.recvMsg("")
	if m.Error == nil || m.Error.Code != codec.CodeInvalidRequest || string(m.ID) != "7" {
		t.Fatalf("want -32600 id 7, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`)
	m = h.recvMsg("")
	if m.Error == nil {
		t.Fatalf("oversized frame: want an error, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":9,"method":"nosuch/method","params":{` + modernMeta() + `}}`)
	m = h.recvMsg("")
	if m.Error == nil || m.Error.Code != codec.CodeMethodNotFound {
		t.Fatalf("want -32601, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":10,"method":"server/discover","params":{` + modernMeta() + `}}`)
	if m := h.recvMsg("server/discover"); m.Error != nil || string(m.ID) != "10" {
		t.Fatalf("stream did not go on: %+v", m)
	}
}

func TestBatches(t *testing.T) {
	t.Run("2025-03-26", func(t *testing.T) {
		h := newHarness(t, helloDir(t), nil)
		h.initialize(codec.Rev20250326)
		h.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/foo"},` + callLine("2", "hello", `{"name":"b"}`) + `]`)
		l := h.recv()
		var raws []json.RawMessage
		if err := json.Unmarshal(l, &raws); err != nil || len(raws) != 2 {
			t.Fatalf("batch answer %s", l)
		}
		var arr []msg
		for _, r := range raws {
			var m msg
			json.Unmarshal(r, &m)
			method := map[string]string{"1": "ping", "2": "tools/call"}[string(m.ID)]
			checkSchema(t, codec.Rev20250326, method, r)
			arr = append(arr, m)
		}
		ids := []string{string(arr[0].ID), string(arr[1].ID)}
		slices.Sort(ids)
		if !slices.Equal(ids, []string{"1", "2"}) {
			t.Errorf("ids %v", ids)
		}
		// A batch of notifications gets no answer: the next line is the ping's.
		h.send(`[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]`)
		h.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
		if m := h.recvMsg("ping"); string(m.ID) != "3" {
			t.Errorf("want ping answer, got %+v", m)
		}
	})
	t.Run("2025-06-18", func(t *testing.T) {
		h := newHarness(t, helloDir(t), nil)
		h.initialize(codec.Rev20250618)
		h.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]`)
		m := h.recvMsg("")
		if m.Error == nil || m.Error.Code != codec.CodeInvalidRequest || string(m.ID) != "1" {
			t.Fatalf("want -32600 for id 1, got %+v", m)
		}
		h.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if m := h.recvMsg("ping"); string(m.ID) != "2" {
			t.Errorf("stream did not go on: %+v", m)
		}
	})
}

func TestUnknownToolAndBadParams(t *testing.T) {
	h := newHarness(t, helloDir(t), nil)
	h.initialize(codec.Rev20251125)
	h.send(callLine("1", "nope", `{}`))
	if m := h.recvMsg("tools/call"); m.Error == nil || m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("unknown tool: %+v", m)
	}
	h.send(callLine("2", "hello", `[1]`))
	if m := h.recvMsg("tools/call"); m.Error == nil || m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("array arguments: %+v", m)
	}
	h.send(callLine("3", "hello", `{"name":5}`))
	r := callResult(t, h.recvMsg("tools/call"))
	if !r.IsError || !strings.Contains(r.Text(), `"name"`) {
		t.Errorf("schema error should name the field: %+v", r)
	}
}

func TestCallFailures(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "exit3", `echo "something broke" >&2; exit 3`, simpleDef(""))
	tool(t, dir, "segv", `kill -SEGV $$`, simpleDef(""))
	tool(t, dir, "slow", `exec sleep 30`, simpleDef(`{"timeout":"200ms"}`))
	tool(t, dir, "flood", `while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done`, simpleDef(`{"maxOutput":4096}`))
	tool(t, dir, "badutf8", `printf 'ok\377\376'`, simpleDef(""))
	tool(t, dir, "badjson", `echo '{"a":'`, simpleDef(`{"result":"json"}`))
	tool(t, dir, "badmcp", `echo '{"nocontent":true}'`, simpleDef(`{"result":"mcp"}`))
	tool(t, dir, "badoutput", `echo '{"n":"x"}'`, `{"description":"d","outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"run":{"result":"json"}}`)
	tool(t, dir, "closestdin", `exec 0<&-; echo fine`, simpleDef(""))
	tool(t, dir, "background", `sleep 30 & echo started`, simpleDef(""))
	h := newHarness(t, dir, nil)
	h.initialize(codec.Rev20251125)
	cases := []struct {
		tool, args string
		isError    bool
		text       string // a substring of the text
	}{
		{"exit3", `{}`, true, "exit status 3: something broke"},
		{"segv", `{}`, true, "killed by SIGSEGV"},
		{"slow", `{}`, true, "timed out after 200ms"},
		{"flood", `{}`, true, "output exceeded 4096 bytes"},
		{"badutf8", `{}`, true, "not valid UTF-8"},
		{"badjson", `{}`, true, "not one JSON value"},
		{"badmcp", `{}`, true, "not a valid CallToolResult"},
		{"badoutput", `{}`, true, `outputSchema`},
		{"closestdin", `{"big":"` + strings.Repeat("z", 200000) + `"}`, false, "fine"},
		{"background", `{}`, false, "started"},
	}
	for i, c := range cases {
		h.send(callLine(strconv.Itoa(i), c.tool, c.args))
	}
	got := map[string]*codec.CallToolResult{}
	for range cases {
		m := h.recvMsg("tools/call")
		i, _ := strconv.Atoi(string(m.ID))
		got[cases[i].tool] = callResult(t, m)
	}
	for _, c := range cases {
		r := got[c.tool]
		if r.IsError != c.isError || !strings.Contains(r.Text(), c.text) {
			t.Errorf("%s: isError=%v text=%q; want isError=%v containing %q", c.tool, r.IsError, r.Text(), c.isError, c.text)
		}
	}
	h.closeAndDrain()
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left behind (zombies or alive): %v", kids)
	}
	// What a quiet mcp-route shows (Warn): failures worth a look. A
	// non-zero exit (the tool's own error report) and a call that went
	// fine are routine (Debug), and so are initialize and shutdown.
	important := map[string]bool{"segv": true, "slow": true, "flood": true, "badutf8": true,
		"badjson": true, "badmcp": true, "badoutput": true}
	for _, c := range cases {
		var line string
		for _, l := range h.log.Lines() {
			if strings.Contains(l, " tool="+c.tool+" ") {
				line = l
			}
		}
		if routine := strings.HasPrefix(line, "debug: "); line == "" || routine == important[c.tool] {
			t.Errorf("%s: log line %q; want it routine (Debug) = %v", c.tool, line, !important[c.tool])
		}
	}
	for _, l := range h.log.Lines() {
		if (strings.Contains(l, "initialize") || strings.Contains(l, "shutting down")) && !strings.HasPrefix(l, "debug: ") {
			t.Errorf("routine event logged as important: %q", l)
		}
	}
}

func TestNoDescriptorLeak(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "bg", `cat >/dev/null; sleep 30 & echo x; echo err >&2; exit 1`, simpleDef(""))
	tool(t, dir, "ok", `echo ok`, simpleDef(""))
	before := proctest.CountFDs(t)
	h := newHarness(t, dir, nil)
	h.initialize(codec.Rev20250618)
	for i := range 6 {
		h.send(callLine(strconv.Itoa(i), []string{"bg", "ok"}[i%2], `{}`))
	}
	for range 6 {
		h.recvMsg("tools/call")
	}
	h.closeAndDrain()
	h.p.Wait()
	if after := proctest.CountFDs(t); after != before {
		t.Errorf("open fds: %d before, %d after", before, after)
	}
}

// children lists the pids of this process's children, from every thread
// (tests here are not parallel, so any child is a tool we failed to reap).
func children(t *testing.T) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		if err != nil {
			continue
		}
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

func TestResultModes(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "js", `echo '{ "n": 1, "s": "a" }'`, `{"description":"d","outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"run":{"result":"json"}}`)
	tool(t, dir, "arr", `echo '[1,2]'`, simpleDef(`{"result":"json"}`))
	tool(t, dir, "full", `echo '{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"structuredContent":{"k":true},"resultType":"input_required"}'`, simpleDef(`{"result":"mcp"}`))
	tool(t, dir, "txt", `printf 'line1\nline2\n'`, simpleDef(""))
	for _, rev := range []string{codec.Rev20250618, codec.Rev20260728} {
		t.Run(rev, func(t *testing.T) {
			h := newHarness(t, dir, nil)
			meta := ""
			if codec.IsModernRevision(rev) {
				h.rev = rev
				meta = "," + modernMeta()
			} else {
				h.initialize(rev)
			}
			call := func(name string) *codec.CallToolResult {
				h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `"` + meta + `}}`)
				return callResult(t, h.recvMsg("tools/call"))
			}
			r := call("js")
			if r.IsError || r.Text() != `{"n":1,"s":"a"}` || string(r.StructuredContent) != `{"n":1,"s":"a"}` {
				t.Errorf("json: %+v %s", r, r.StructuredContent)
			}
			r = call("arr")
			wantSC := ""
			if codec.IsModernRevision(rev) {
				wantSC = "[1,2]"
			}
			if r.IsError || r.Text() != "[1,2]" || string(r.StructuredContent) != wantSC {
				t.Errorf("json array: %+v %s", r, r.StructuredContent)
			}
			r = call("full")
			if r.IsError || r.Text() != "a\nb" || string(r.StructuredContent) != `{"k":true}` {
				t.Errorf("mcp: %+v", r)
			}
			if codec.IsModernRevision(rev) && r.ResultType != "complete" {
				t.Errorf("mcp resultType %q", r.ResultType)
			}
			r = call("txt")
			if r.IsError || r.Text() != "line1\nline2\n" {
				t.Errorf("text: %+v", r)
			}
		})
	}
}

func TestCallEnvironment(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "env", `env | sort; pwd`, `{"description":"d","run":{"env":{"TOOL_SET":"yes"},"passEnv":["TOOL_PASS","ABSENT"]}}`)
	h := newHarness(t, dir, func(o *Options) {
		o.LookupEnv = func(k string) (string, bool) {
			v, ok := map[string]string{"TOOL_PASS": "passed", "SECRET": "hunter2"}[k]
			return v, ok
		}
	})
	h.initialize(codec.Rev20250618)
	h.send(callLine("1", "env", `{"my-path":"a b","n":3,"ok":true,"obj":{"x":1},"nul":null}`))
	out := callResult(t, h.recvMsg("tools/call")).Text()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	cwd := lines[len(lines)-1]
	got := map[string]string{}
	for _, l := range lines[:len(lines)-1] {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	want := map[string]string{
		"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
		"TOOL_SET": "yes", "TOOL_PASS": "passed",
		"MCP_TOOL": "env", "MCP_ROOT": h.root, "MCP_PROTOCOL_VERSION": codec.Rev20250618,
		"MCP_ARG_MY_PATH": "a b", "MCP_ARG_N": "3", "MCP_ARG_OK": "true",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
			t.Errorf("unexpected variable %s=%s", k, got[k])
		}
	}
	if real, _ := filepath.EvalSymlinks(h.root); cwd != h.root && cwd != real {
		t.Errorf("cwd %q, want %q", cwd, h.root)
	}
}

func TestCancelKillsAndSilences(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool(t, dir, "hang", `echo $$ > `+pidFile+`; echo >&3 '{"progress":1}'; exec sleep 30`, simpleDef(""))
	h := newHarness(t, dir, nil)
	h.initialize(codec.Rev20251125)
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"hang","_meta":{"progressToken":"tok"}}}`)
	// The progress notification proves the tool is running.
	if m := h.recvMsg("tools/call"); m.Method != codec.MethodProgress {
		t.Fatalf("want progress first, got %+v", m)
	}
	pid := readPid(t, pidFile)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"test"}}`)
	proctest.WaitGone(t, pid)
	h.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if m := h.recvMsg("ping"); string(m.ID) != `"after"` {
		t.Fatalf("want the ping answer, got %+v", m)
	}
	for _, l := range h.closeAndDrain() {
		t.Errorf("nothing may follow a cancelled call, got %s", l)
	}
}

func TestProgressNotifications(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "prog", `echo '{"progress":1,"total":2,"message":"half"}' >&3; echo 'garbage' >&3; echo '{"total":3}' >&3; echo '{"progress":2,"total":2}' >&3; echo done`, simpleDef(""))
	h := newHarness(t, dir, nil)
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"prog","_meta":{"progressToken":7}}}`)
	var progress []codec.ProgressParams
	for {
		m := h.recvMsg("tools/call")
		if m.Method == "" {
			if callResult(t, m).Text() != "done\n" {
				t.Errorf("result %s", m.Result)
			}
			break
		}
		var p codec.ProgressParams
		json.Unmarshal(m.Params, &p)
		progress = append(progress, p)
	}
	if len(progress) != 2 || string(progress[0].ProgressToken) != "7" || progress[0].Message != "half" || progress[1].Progress != 2 {
		t.Errorf("progress %+v", progress)
	}
	// Without a token, no notification.
	h.send(callLine("2", "prog", `{}`))
	if m := h.recvMsg("tools/call"); m.Method != "" {
		t.Errorf("progress without a token: %+v", m)
	}
}

func TestConcurrencyBounded(t *testing.T) {
	dir := t.TempDir()
	slots := t.TempDir()
	// Each call holds a slot directory while it runs and reports how many
	// were held at once; with MaxProcs 2 that is never more than 2.
	tool(t, dir, "slot", `mkdir `+slots+`/$$; n=$(ls `+slots+` | wc -l); sleep 0.1; rmdir `+slots+`/$$; echo $n`, simpleDef(""))
	h := newHarness(t, dir, func(o *Options) { o.MaxProcs = 2 })
	h.initialize(codec.Rev20250618)
	const n = 8
	for i := range n {
		h.send(callLine(strconv.Itoa(i), "slot", `{}`))
	}
	seen := map[string]bool{}
	for range n {
		m := h.recvMsg("tools/call")
		seen[string(m.ID)] = true
		r := callResult(t, m)
		if c, err := strconv.Atoi(strings.TrimSpace(r.Text())); err != nil || c < 1 || c > 2 {
			t.Errorf("call %s saw %q slots in use", m.ID, r.Text())
		}
	}
	if len(seen) != n {
		t.Errorf("answered ids %v", seen)
	}
}

func TestHotReload(t *testing.T) {
	dir := helloDir(t)
	h := newHarness(t, dir, func(o *Options) { o.Poll = 20 * time.Millisecond })
	h.initialize(codec.Rev20250618)
	// A first tools/list waits for the initial load and, being answered in
	// order, proves notifications/initialized was processed: the change
	// below is then one the session must hear about.
	h.send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	h.recvMsg("tools/list")
	tool(t, dir, "added", `echo added`, simpleDef(""))
	if m := h.recvMsg(""); m.Method != codec.MethodToolsListChanged {
		t.Fatalf("want list_changed, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	m := h.recvMsg("tools/list")
	var lr codec.ListToolsResult
	json.Unmarshal(m.Result, &lr)
	if len(lr.Tools) != 2 || lr.Tools[0].Name != "added" {
		t.Errorf("tools after reload: %s", m.Result)
	}
}

func TestReloadOnListForModernClients(t *testing.T) {
	dir := helloDir(t)
	h := newHarness(t, dir, nil) // no polling: tools/list itself re-reads
	h.rev = codec.Rev20260728
	tool(t, dir, "added", `echo added`, simpleDef(""))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta() + `}}`)
	m := h.recvMsg("tools/list")
	var lr codec.ListToolsResult
	json.Unmarshal(m.Result, &lr)
	if len(lr.Tools) != 2 {
		t.Errorf("tools: %s", m.Result)
	}
}

func TestPagination(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"e", "d", "c", "b", "a"} {
		tool(t, dir, n, "true", simpleDef(""))
	}
	h := newHarness(t, dir, func(o *Options) { o.PageSize = 2 })
	h.initialize(codec.Rev20251125)
	var names []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":` + params + `}`)
		var lr codec.ListToolsResult
		json.Unmarshal(h.recvMsg("tools/list").Result, &lr)
		for _, tl := range lr.Tools {
			names = append(names, tl.Name)
		}
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(names, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("pages gave %v", names)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"!!bogus"}}`)
	if m := h.recvMsg("tools/list"); m.Error == nil || m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("bad cursor: %+v", m)
	}
}

func TestShutdownAnswersPendingCalls(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "quick", `sleep 0.05; echo ok`, simpleDef(""))
	h := newHarness(t, dir, func(o *Options) { o.Grace = 10 * time.Second; o.MaxProcs = 2 })
	h.initialize(codec.Rev20250618)
	for i := range 6 {
		h.send(callLine(strconv.Itoa(i), "quick", `{}`))
	}
	lines := h.closeAndDrain()
	if len(lines) != 6 {
		t.Fatalf("got %d answers, want 6", len(lines))
	}
	for _, l := range lines {
		checkSchema(t, codec.Rev20250618, "tools/call", l)
		var m msg
		json.Unmarshal(l, &m)
		if r := callResult(t, m); r.IsError {
			t.Errorf("call %s: %s", m.ID, r.Text())
		}
	}
}

func TestShutdownKillsAfterGrace(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	tool(t, dir, "hang", `echo $$ > `+pidFile+`; echo >&3 '{"progress":1}'; trap '' TERM; sleep 30`, simpleDef(""))
	h := newHarness(t, dir, func(o *Options) { o.Grace = 100 * time.Millisecond })
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang","_meta":{"progressToken":1}}}`)
	h.recvMsg("tools/call") // progress: the tool runs
	pid := readPid(t, pidFile)
	lines := h.closeAndDrain()
	if len(lines) != 1 {
		t.Fatalf("got %q", lines)
	}
	var m msg
	json.Unmarshal(lines[0], &m)
	if r := callResult(t, m); !r.IsError || !strings.Contains(r.Text(), "shutting down") {
		t.Errorf("result %+v", r)
	}
	proctest.WaitGone(t, pid)
}

func TestArgEnv(t *testing.T) {
	got := ArgEnv([]byte(`{"a-b":"x","C":1.5,"d":false,"e":null,"f":[1],"g":{},"h":"nul\u0000"}`))
	want := map[string]string{"MCP_ARG_A_B": "x", "MCP_ARG_C": "1.5", "MCP_ARG_D": "false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func TestDiscoverDoesNotWaitForToolLoading(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(t.TempDir(), "go")
	// --mcp-describe blocks until the test creates the flag file.
	tool(t, dir, "slowdesc", `if [ "$1" = --mcp-describe ]; then
while [ ! -e `+flag+` ]; do sleep 0.01; done
echo '{"description":"described late"}'
fi`, "")
	h := newHarness(t, dir, nil)
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta() + `}}`)
	if m := h.recvMsg("server/discover"); m.Error != nil {
		t.Fatalf("discover: %v", m.Error)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta() + `}}`)
	os.WriteFile(flag, nil, 0o644)
	var lr codec.ListToolsResult
	json.Unmarshal(h.recvMsg("tools/list").Result, &lr)
	if len(lr.Tools) != 1 || lr.Tools[0].Description != "described late" {
		t.Errorf("tools %+v", lr.Tools)
	}
}

func TestDuplicateIDInFlight(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "wait", `echo >&3 '{"progress":1}'; read x <&0; sleep 30`, simpleDef(""))
	h := newHarness(t, dir, nil)
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","_meta":{"progressToken":1}}}`)
	h.recvMsg("tools/call") // progress: running
	h.send(callLine("1", "wait", `{}`))
	if m := h.recvMsg("tools/call"); m.Error == nil || m.Error.Code != codec.CodeInvalidRequest {
		t.Errorf("duplicate id: %+v", m)
	}
	// Cancelling an unknown id is ignored; cancelling 1 ends it silently.
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	for _, l := range h.closeAndDrain() {
		t.Errorf("unexpected line %s", l)
	}
}

func TestCancelQueuedCall(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "hold", `echo >&3 '{"progress":1}'; exec sleep 30`, simpleDef(""))
	h := newHarness(t, dir, func(o *Options) { o.MaxProcs = 1 })
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":"run","method":"tools/call","params":{"name":"hold","_meta":{"progressToken":1}}}`)
	h.recvMsg("tools/call") // the first call holds the only slot
	h.send(callLine(`"queued"`, "hold", `{}`))
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"queued"}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"run"}}`)
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := h.recvMsg("ping"); string(m.ID) != `"p"` {
		t.Fatalf("got %+v", m)
	}
	for _, l := range h.closeAndDrain() {
		t.Errorf("unexpected line %s", l)
	}
}

func TestModernProgressValidates(t *testing.T) {
	dir := t.TempDir()
	tool(t, dir, "prog", `echo '{"progress":1,"total":2}' >&3; echo done`, simpleDef(""))
	h := newHarness(t, dir, nil)
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"prog","_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m := h.recvMsg("tools/call"); m.Method != codec.MethodProgress {
		t.Fatalf("want progress, got %+v", m)
	}
	if m := h.recvMsg("tools/call"); callResult(t, m).Text() != "done\n" {
		t.Errorf("result %s", m.Result)
	}
}

// TestShutdownWhileLoadingIsQuiet: a client that asks server/discover and
// leaves while the tools are still being described (mcp-call discover)
// leaves no "tool X left out" line per tool in the log: a describe killed
// by the shutdown is not a bad tool.
func TestShutdownWhileLoadingIsQuiet(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		// --mcp-describe marks that it runs, then takes up to 10s.
		tool(t, dir, n, `if [ "$1" = --mcp-describe ]; then
echo x >> `+started+`
i=0; while [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
echo '{"description":"described late"}'
fi`, "")
	}
	h := newHarness(t, dir, nil)
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta() + `}}`)
	if m := h.recvMsg("server/discover"); m.Error != nil {
		t.Fatalf("discover: %v", m.Error)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("no --mcp-describe started")
		}
	}
	for _, l := range h.closeAndDrain() {
		t.Errorf("unexpected line %s", l)
	}
	cancelled := 0
	for _, l := range h.log.Lines() {
		if strings.Contains(l, "left out") {
			t.Errorf("log line %q", l)
		}
		if strings.Contains(l, "cancelled at shutdown") {
			cancelled++
		}
	}
	if cancelled != 1 {
		t.Errorf("%d lines say loading was cancelled, want 1:\n%s", cancelled, strings.Join(h.log.Lines(), "\n"))
	}
}

// holdTool writes a tool that reports progress when it starts, then waits
// (bounded: 10s) for the file release before answering "done".
func holdTool(t *testing.T, dir, release string) {
	tool(t, dir, "hold", `echo >&3 '{"progress":1}'
i=0; while [ ! -e `+release+` ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
echo done`, simpleDef(""))
}

// TestQueueBounded: with MaxProcs calls running and MaxQueue waiting, the
// next tools/call is refused at once with an isError result; the admitted
// calls still finish, and once the queue drains calls are taken again.
func TestQueueBounded(t *testing.T) {
	dir := t.TempDir()
	release := filepath.Join(t.TempDir(), "release")
	holdTool(t, dir, release)
	h := newHarness(t, dir, func(o *Options) { o.MaxProcs = 1; o.MaxQueue = 2 })
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":"run","method":"tools/call","params":{"name":"hold","_meta":{"progressToken":1}}}`)
	if m := h.recvMsg("tools/call"); m.Method != codec.MethodProgress {
		t.Fatalf("want progress, got %+v", m)
	}
	h.send(callLine(`"q1"`, "hold", `{}`), callLine(`"q2"`, "hold", `{}`))
	// Over the cap: answered before anything admitted finishes, even a call
	// of an unknown tool (the cap is checked first, and cheaply).
	h.send(callLine(`"over"`, "hold", `{}`), callLine(`"over2"`, "nosuchtool", `{}`))
	for _, id := range []string{`"over"`, `"over2"`} {
		m := h.recvMsg("tools/call")
		r := callResult(t, m)
		if string(m.ID) != id || !r.IsError || r.Text() != "server busy: 2 calls queued; try again later" {
			t.Errorf("over the cap: id %s, result %+v", m.ID, r)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 3 {
		m := h.recvMsg("tools/call")
		if r := callResult(t, m); r.IsError || r.Text() != "done\n" {
			t.Errorf("admitted call %s: %+v", m.ID, r)
		}
		got[string(m.ID)] = true
	}
	if !got[`"run"`] || !got[`"q1"`] || !got[`"q2"`] {
		t.Errorf("answered %v", got)
	}
	h.send(callLine(`"after"`, "hold", `{}`))
	if r := callResult(t, h.recvMsg("tools/call")); r.IsError {
		t.Errorf("a call after the queue drained: %+v", r)
	}
	busyLines := 0
	for _, l := range h.log.Lines() {
		if strings.Contains(l, "server busy") {
			busyLines++
		}
	}
	if busyLines != 1 {
		t.Errorf("%d log lines say the server is busy, want 1 per busy spell", busyLines)
	}
}

// TestNoQueue: MaxQueue < 0 lets no call wait: beyond MaxProcs running,
// a call is refused at once, in a modern request too (schema-checked).
func TestNoQueue(t *testing.T) {
	dir := t.TempDir()
	release := filepath.Join(t.TempDir(), "release")
	holdTool(t, dir, release)
	h := newHarness(t, dir, func(o *Options) { o.MaxProcs = 1; o.MaxQueue = -1 })
	h.rev = codec.Rev20260728
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hold","_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m := h.recvMsg("tools/call"); m.Method != codec.MethodProgress {
		t.Fatalf("want progress, got %+v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold",` + modernMeta() + `}}`)
	m := h.recvMsg("tools/call")
	if r := callResult(t, m); string(m.ID) != "2" || !r.IsError || !strings.HasPrefix(r.Text(), "server busy: 0 calls queued") {
		t.Errorf("id %s, result %+v", m.ID, r)
	}
	os.WriteFile(release, nil, 0o644)
	if r := callResult(t, h.recvMsg("tools/call")); r.IsError {
		t.Errorf("running call: %+v", r)
	}
}

// TestCancelledListFinishesItsReload: a client that cancels a tools/list
// whose re-read runs a slow --mcp-describe gets no answer, is served a ping
// meanwhile, and does not cut the re-read short (registry cancels a load
// only at shutdown): the load is not dropped and the next list has the tool.
func TestCancelledListFinishesItsReload(t *testing.T) {
	dir := helloDir(t)
	flag := filepath.Join(t.TempDir(), "go")
	h := newHarness(t, dir, nil) // no polling: tools/list re-reads
	h.initialize(codec.Rev20250618)
	h.send(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
	h.recvMsg("tools/list")
	tool(t, dir, "slowdesc", `if [ "$1" = --mcp-describe ]; then
while [ ! -e `+flag+` ]; do sleep 0.01; done
echo '{"description":"described late"}'
fi`, "")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := h.recvMsg("ping"); string(m.ID) != "2" {
		t.Fatalf("want the ping answer, got %+v", m)
	}
	os.WriteFile(flag, nil, 0o644)
	// This list has the tool; the change is announced by the cancelled
	// list's re-read, before or after this answer (or not at all, when
	// that comes only after shutdown has begun).
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	changed := 0
	for {
		m := h.recvMsg("")
		if m.Method == codec.MethodToolsListChanged {
			changed++
			continue
		}
		var lr codec.ListToolsResult
		json.Unmarshal(m.Result, &lr)
		if string(m.ID) != "3" || len(lr.Tools) != 2 {
			t.Fatalf("want the list with slowdesc, got %+v", m)
		}
		break
	}
	for _, l := range h.closeAndDrain() {
		if !strings.Contains(string(l), codec.MethodToolsListChanged) {
			t.Errorf("unexpected line %s", l)
		}
		changed++
	}
	if changed > 1 {
		t.Errorf("%d list_changed notifications, want at most 1", changed)
	}
	for _, l := range h.log.Lines() {
		if strings.Contains(l, "loading cancelled") {
			t.Errorf("the cancelled list cut the load short: %q", l)
		}
	}
}
