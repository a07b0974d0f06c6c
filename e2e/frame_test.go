package e2e

// mcp-frame end to end: policing a server's stdout (`SERVER < requests |
// mcp-frame --check --from server`) and guarding its stdin (`requests |
// mcp-frame --from client | SERVER`), through real pipes between real
// processes. Binaries: MCP_FRAME_BIN and MCP_ROUTE_BIN under Bazel.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

func frameBin(t *testing.T) string { return testbin.Path(t, "MCP_FRAME_BIN", "mcp-frame") }

type pipeResult struct {
	out, frameErr, serverErr string
	frameCode, serverCode    int
}

// serverThenFrame runs `server < requests | mcp-frame frameArgs...`.
func serverThenFrame(t *testing.T, server []string, dir, requests string, frameArgs ...string) pipeResult {
	t.Helper()
	ctx := ctxTimeout(t)
	srv := exec.CommandContext(ctx, server[0], server[1:]...)
	srv.Dir, srv.Env = dir, baseEnv()
	srv.Stdin = strings.NewReader(requests)
	fr := exec.CommandContext(ctx, frameBin(t), frameArgs...)
	fr.Env = baseEnv()
	return runPipe(t, srv, fr, func(r pipeResult) pipeResult { return r })
}

// frameThenServer runs `requests | mcp-frame frameArgs... | server`; out is
// the server's stdout.
func frameThenServer(t *testing.T, server []string, dir, requests string, frameArgs ...string) pipeResult {
	t.Helper()
	ctx := ctxTimeout(t)
	fr := exec.CommandContext(ctx, frameBin(t), frameArgs...)
	fr.Env = baseEnv()
	fr.Stdin = strings.NewReader(requests)
	srv := exec.CommandContext(ctx, server[0], server[1:]...)
	srv.Dir, srv.Env = dir, baseEnv()
	// runPipe names the first process the "server"; swap the fields back.
	return runPipe(t, fr, srv, func(r pipeResult) pipeResult {
		r.frameErr, r.serverErr = r.serverErr, r.frameErr
		r.frameCode, r.serverCode = r.serverCode, r.frameCode
		return r
	})
}

// runPipe connects first's stdout to second's stdin with a pipe, runs both
// to the end and returns second's stdout.
func runPipe(t *testing.T, first, second *exec.Cmd, fix func(pipeResult) pipeResult) pipeResult {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errFirst, errSecond bytes.Buffer
	first.Stdout, first.Stderr = w, &errFirst
	second.Stdin, second.Stdout, second.Stderr = r, &out, &errSecond
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	if err := second.Start(); err != nil {
		first.Process.Kill()
		first.Wait()
		t.Fatal(err)
	}
	// Only the children hold the pipe now, so each sees EOF when the other ends.
	w.Close()
	r.Close()
	err1 := first.Wait()
	err2 := second.Wait()
	res := pipeResult{
		out:        out.String(),
		serverErr:  errFirst.String(),
		frameErr:   errSecond.String(),
		serverCode: exitStatus(first.ProcessState, err1),
		frameCode:  exitStatus(second.ProcessState, err2),
	}
	if res.serverCode < 0 || res.frameCode < 0 {
		t.Fatalf("a process did not run to its end (timeout?): %+v", res)
	}
	return fix(res)
}

func jsonLines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

const (
	frameInit       = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	frameInited     = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	frameListTools  = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	frameCallEcho   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	frameModernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
)

// A server that writes a log line on stdout is caught: exit 1, the line
// number on stderr, nothing on stdout.
func TestFramePolicesLoggingServer(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server")
	body := `#!/bin/sh
read -r line
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"chatty","version":"1"}}}'
echo 'INFO chatty server ready (1 tool)'
read -r line
read -r line
echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
cat >/dev/null
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := serverThenFrame(t, []string{script}, dir, jsonLines(frameInit, frameInited, frameListTools), "--check", "--from", "server")
	if r.frameCode != 1 {
		t.Errorf("mcp-frame exit %d, want 1; stderr:\n%s", r.frameCode, r.frameErr)
	}
	if !strings.HasPrefix(r.frameErr, "mcp-frame: line 2: ") {
		t.Errorf("stderr %q, want the report for line 2 first", r.frameErr)
	}
	if strings.Count(r.frameErr, "mcp-frame: line ") != 1 {
		t.Errorf("stderr %q, want exactly one bad line", r.frameErr)
	}
	if r.out != "" {
		t.Errorf("--check wrote on stdout: %q", r.out)
	}
}

// mcp-route writes nothing but protocol, in both eras: mcp-frame --check
// --from server passes it, followed or pinned to the revision.
func TestFramePolicesRoute(t *testing.T) {
	f := newFixture(t)
	f.tool("echo", def("echo", "", ""), `cat`)
	route := []string{routeBin(t), "--tools", f.tools, "--root", f.root}
	for _, c := range []struct {
		name     string
		rev      string
		requests string
		answers  int
	}{
		{"legacy", codec.Rev20250618, jsonLines(frameInit, frameInited, frameListTools, frameCallEcho,
			`{"jsonrpc":"2.0","id":"p","method":"ping"}`), 4},
		{"modern", codec.Rev20260728, jsonLines(
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+frameModernMeta+`}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+frameModernMeta+`}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+frameModernMeta+`,"name":"echo","arguments":{"text":"hi"}}}`), 3},
	} {
		for _, pin := range []bool{false, true} {
			args := []string{"--check", "--from", "server"}
			if pin {
				args = append(args, "--revision", c.rev)
			}
			t.Run(strings.Join(append([]string{c.name}, args...), " "), func(t *testing.T) {
				r := serverThenFrame(t, route, f.root, c.requests, args...)
				if r.frameCode != 0 || r.frameErr != "" || r.out != "" {
					t.Errorf("mcp-frame: exit %d, stdout %q, stderr:\n%s\nserver stderr:\n%s", r.frameCode, r.out, r.frameErr, r.serverErr)
				}
				if r.serverCode != 0 {
					t.Errorf("mcp-route exit %d; stderr:\n%s", r.serverCode, r.serverErr)
				}
			})
		}
		t.Run(c.name+" filter", func(t *testing.T) {
			r := serverThenFrame(t, route, f.root, c.requests, "--from", "server")
			if r.frameCode != 0 {
				t.Fatalf("mcp-frame exit %d; stderr:\n%s", r.frameCode, r.frameErr)
			}
			ids := map[string]bool{}
			for _, l := range strings.Split(strings.TrimSuffix(r.out, "\n"), "\n") {
				m, err := codec.DecodeMessage([]byte(l))
				if err != nil {
					t.Fatalf("output line %q: %v", l, err)
				}
				if m.IsResponse() {
					ids[m.ID.Key()] = true
				}
			}
			if len(ids) != c.answers {
				t.Errorf("%d answers through mcp-frame, want %d:\n%s", len(ids), c.answers, r.out)
			}
		})
	}
}

// Every kind of answer mcp-route gives (a crash, a timeout, JSON and MCP
// result modes, refused arguments, progress notifications, unknown
// methods, bad frames) is still protocol: mcp-frame --check --from server
// passes its whole stdout, in both eras.
func TestFramePolicesRouteFailures(t *testing.T) {
	f := newFixture(t)
	f.tool("crash", def("crash", "", ""), `echo "about to fail" >&2; exit 3`)
	f.tool("slow", def("slow", "", `{"timeout":"200ms"}`), `exec sleep 5`)
	f.tool("j", def("j", "", `{"result":"json"}`), `echo '{"n": 7}'`)
	f.tool("m", def("m", "", `{"result":"mcp"}`), `echo '{"content":[{"type":"text","text":"from mcp"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}'`)
	f.tool("m_bad", def("m_bad", "", `{"result":"mcp"}`), `echo '{"content":"nope"}'`)
	f.tool("typed", def("typed", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, ""), `echo ok`)
	f.tool("prog", def("prog", "", ""), `for i in 1 2 3; do printf '{"progress":%d,"total":3}\n' $i >&3; done; echo done`)
	route := []string{routeBin(t), "--tools", f.tools, "--root", f.root}
	call := func(id int, meta, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, id, meta, name, args)
	}
	for _, era := range []struct {
		name, meta, first string
	}{
		{"legacy", `"_meta":{"progressToken":"tok"},`, jsonLines(frameInit, frameInited)},
		{"modern", `"_meta":{"progressToken":"tok","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},`, ""},
	} {
		t.Run(era.name, func(t *testing.T) {
			requests := era.first + jsonLines(
				call(10, era.meta, "crash", `{}`),
				call(11, era.meta, "slow", `{}`),
				call(12, era.meta, "j", `{}`),
				call(13, era.meta, "m", `{}`),
				call(14, era.meta, "m_bad", `{}`),
				call(15, era.meta, "typed", `{"n":"seven"}`),
				call(16, era.meta, "prog", `{}`),
				call(17, era.meta, "no_such_tool", `{}`),
				`{"jsonrpc":"2.0","id":18,"method":"no/such/method","params":{`+strings.TrimSuffix(era.meta, ",")+`}}`,
				`this line is not JSON`,
				`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":5}}`,
			)
			r := serverThenFrame(t, route, f.root, requests, "--check", "--from", "server")
			if r.frameCode != 0 || r.frameErr != "" {
				t.Errorf("mcp-frame: exit %d, stderr:\n%s\nserver stderr:\n%s", r.frameCode, r.frameErr, r.serverErr)
			}
			if r.serverCode != 0 {
				t.Errorf("mcp-route exit %d; stderr:\n%s", r.serverCode, r.serverErr)
			}
		})
	}
}

// Guarding a server's stdin: the bad lines a client writes are dropped and
// reported by mcp-frame; the server answers every good request and never
// sees the junk (so it sends no parse-error response).
func TestFrameGuardsServerStdin(t *testing.T) {
	f := newFixture(t)
	f.tool("echo", def("echo", "", ""), `cat`)
	route := []string{routeBin(t), "--tools", f.tools, "--root", f.root}
	requests := jsonLines(frameInit, frameInited,
		`this is not JSON`,
		frameListTools,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}`,
		frameCallEcho)
	r := frameThenServer(t, route, f.root, requests, "--from", "client")
	if r.frameCode != 1 || !strings.Contains(r.frameErr, "mcp-frame: line 3: ") || !strings.Contains(r.frameErr, "mcp-frame: line 5: ") {
		t.Errorf("mcp-frame exit %d, stderr:\n%s", r.frameCode, r.frameErr)
	}
	if r.serverCode != 0 {
		t.Errorf("mcp-route exit %d; stderr:\n%s", r.serverCode, r.serverErr)
	}
	answered := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(r.out, "\n"), "\n") {
		m, err := codec.DecodeMessage([]byte(l))
		if err != nil {
			t.Fatalf("server line %q: %v", l, err)
		}
		if m.Error != nil {
			t.Errorf("the server saw a bad frame: %s", l)
		}
		if m.IsResponse() && m.ID != nil {
			answered[m.ID.Key()] = true
		}
	}
	for _, id := range []int64{0, 1, 2} {
		if !answered[idKey(id)] {
			t.Errorf("request %d not answered; server output:\n%s", id, r.out)
		}
	}
	if answered[idKey(3)] {
		t.Error("the bad tools/call reached the server")
	}
}

// liveThroughFrame runs `server | mcp-frame --from server` with the
// requests written to the server's stdin, which stays open until every
// request is answered on mcp-frame's stdout: so the server cannot drop
// answers at EOF, and mcp-frame must pass each frame on as it comes (a
// filter that held output back would stall this test until its timeout).
func liveThroughFrame(t *testing.T, server []string, requests []string, answers int) (out []string, frameErr string, frameCode int) {
	t.Helper()
	ctx := ctxTimeout(t)
	srv := exec.CommandContext(ctx, server[0], server[1:]...)
	srv.Env = baseEnv()
	fr := exec.CommandContext(ctx, frameBin(t), "--from", "server")
	fr.Env = baseEnv()
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var srvErr, frErr bytes.Buffer
	srv.Stdout, srv.Stderr = w, &srvErr
	fr.Stdin, fr.Stderr = r, &frErr
	frOut, err := fr.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := fr.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r.Close()
	for _, l := range requests {
		if _, err := io.WriteString(stdin, l+"\n"); err != nil {
			t.Fatalf("write to the server: %v", err)
		}
	}
	sc := bufio.NewScanner(frOut)
	sc.Buffer(nil, 1<<20)
	seen := 0
	for seen < answers && sc.Scan() {
		out = append(out, sc.Text())
		if m, err := codec.DecodeMessage(sc.Bytes()); err == nil && m.IsResponse() {
			seen++
		}
	}
	stdin.Close()
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	srv.Wait()
	frWaitErr := fr.Wait()
	if ctx.Err() != nil {
		t.Fatalf("timed out with %d of %d answers through mcp-frame; server stderr:\n%s", seen, answers, srvErr.String())
	}
	if seen < answers {
		t.Errorf("%d of %d answers came through mcp-frame; its stderr:\n%s\nserver stderr:\n%s", seen, answers, frErr.String(), srvErr.String())
	}
	return out, frErr.String(), exitStatus(fr.ProcessState, frWaitErr)
}

// A server we did not write (the official Go SDK, interop/gosdk-server)
// writes nothing but protocol, in both eras, by mcp-frame's rules.
func TestFramePolicesGoSDKServer(t *testing.T) {
	bin := goSDKServer(t)
	call := func(id int, meta, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, id, meta, name, args)
	}
	for _, c := range []struct {
		name     string
		args     []string
		requests []string
		answers  int
	}{
		{"legacy", []string{"-legacy"}, []string{frameInit, frameInited, frameListTools,
			call(2, "", "greet", `{"name":"frame"}`),
			call(3, "", "add", `{"a":2,"b":3}`),
			call(4, "", "fail", `{}`),
			call(5, "", "no_such_tool", `{}`),
			`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
		}, 7},
		{"modern", nil, []string{
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + frameModernMeta + `}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + frameModernMeta + `}}`,
			call(3, frameModernMeta+",", "greet", `{"name":"frame"}`),
			call(4, frameModernMeta+",", "add", `{"a":2,"b":3}`),
			call(5, frameModernMeta+",", "fail", `{}`),
		}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := liveThroughFrame(t, append([]string{bin}, c.args...), c.requests, c.answers)
			if code != 0 || stderr != "" {
				t.Errorf("mcp-frame exit %d on the Go SDK server's output; stderr:\n%s\noutput:\n%s", code, stderr, strings.Join(out, "\n"))
			}
		})
	}
}

// The Node servers (the reference filesystem server and a server on the
// official TypeScript SDK, see interop_call_test.go) pass mcp-frame too.
func TestFramePolicesNodeServers(t *testing.T) {
	dir := nodeDir(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("interop/ts-server/server.cjs")
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int, name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
	}
	for _, c := range []struct {
		name     string
		server   []string
		requests []string
		answers  int
	}{
		{"server-filesystem", []string{filepath.Join(dir, "node_modules", ".bin", "mcp-server-filesystem"), root},
			[]string{frameInit, frameInited, frameListTools,
				call(2, "read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "a.txt"))),
				call(3, "read_text_file", `{"path":"/etc/passwd"}`),
				call(4, "list_directory", fmt.Sprintf(`{"path":%q}`, root)),
				`{"jsonrpc":"2.0","id":5,"method":"ping"}`,
			}, 6},
		{"ts-sdk", []string{"env", "NODE_PATH=" + filepath.Join(dir, "node_modules"), "node", script},
			[]string{frameInit, frameInited, frameListTools,
				call(2, "shout", `{"text":"hey"}`),
				call(3, "divide", `{"a":1,"b":0}`),
				call(4, "divide", `{"a":1,"b":"zero"}`),
			}, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := liveThroughFrame(t, c.server, c.requests, c.answers)
			if code != 0 || stderr != "" {
				t.Errorf("mcp-frame exit %d; stderr:\n%s\noutput:\n%s", code, stderr, strings.Join(out, "\n"))
			}
		})
	}
}

// mcp-call's requests are valid client traffic by mcp-frame's rules in every
// era: mcp-frame --from client sits between mcp-call and mcp-route and
// reports nothing, and every command still works through it.
func TestFrameGuardsRouteForMcpCall(t *testing.T) {
	f := newFixture(t)
	f.tool("echo", def("echo", `{"type":"object","properties":{"text":{"type":"string"}}}`, ""), `cat`)
	reports := filepath.Join(t.TempDir(), "reports")
	pipeline := fmt.Sprintf("%q --from client 2>>%q | %q --tools %q --root %q",
		frameBin(t), reports, routeBin(t), f.tools, f.root)
	for _, era := range []string{"auto", "legacy", "modern"} {
		for _, cmd := range [][]string{{"tools"}, {"call", "echo", "text=hi"}, {"discover"}, {"ping"}} {
			argv := append(append([]string{"--era", era}, cmd...), "--", "sh", "-c", pipeline)
			if r := mcpCall(t, "", argv...); r.code != 0 {
				t.Errorf("mcp-call --era %s %v through mcp-frame: %+v", era, cmd, r)
			}
		}
	}
	b, err := os.ReadFile(reports)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(b) > 0 {
		t.Errorf("mcp-frame reported mcp-call's requests:\n%s", b)
	}
}
