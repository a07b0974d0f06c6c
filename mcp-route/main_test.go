package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "--hostile-upstream" {
		hostileUpstream(os.Args[2]) // this binary as a misbehaving upstream (hostile_upstream_test.go)
		os.Exit(0)
	}
	if os.Getenv("MCP_TOOL") == connectTool {
		connectMain() // this binary, linked into a tool directory (confine_test.go)
	}
	// The default describe cache is under $XDG_CACHE_HOME: keep the tests'
	// own entries out of the user's.
	xdg, err := os.MkdirTemp("", "mcp-route-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", xdg)
	code := m.Run()
	testbin.Cleanup()
	os.RemoveAll(xdg)
	os.Exit(code)
}

func runWith(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	// Only catches a hang: a loaded machine may be slow, never this slow.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpVersionUsage(t *testing.T) {
	code, out, _ := runWith(t, "", "--help")
	if code != 0 || !strings.Contains(out, "Usage:") || !strings.Contains(out, "Exit status:") || !strings.Contains(out, "--tools") || !strings.Contains(out, "-verbose") {
		t.Errorf("--help: code %d, stdout %q", code, out)
	}
	code, out, _ = runWith(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "mcp-route ") {
		t.Errorf("--version: code %d, stdout %q", code, out)
	}
	code, out, errs := runWith(t, "", "--no-such-flag")
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "mcp-route: ") {
		t.Errorf("bad flag: code %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runWith(t, "", "--root", filepath.Join(t.TempDir(), "missing"))
	if code != 1 || !strings.HasPrefix(errs, "mcp-route: ") {
		t.Errorf("bad root: code %d, stderr %q", code, errs)
	}
	code, _, errs = runWith(t, "", "--env", "NOEQUALS")
	if code != 2 || !strings.Contains(errs, "NAME=VALUE") {
		t.Errorf("bad --env: code %d, stderr %q", code, errs)
	}
	code, _, errs = runWith(t, "", "--max-queue", "-1")
	if code != 2 || !strings.Contains(errs, "--max-queue") {
		t.Errorf("--max-queue -1: code %d, stderr %q", code, errs)
	}
	code, _, _ = runWith(t, "", "stray")
	if code != 2 {
		t.Errorf("stray argument: code %d", code)
	}
}

// envTool writes a tool that prints its environment.
func envTool(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte("#!/bin/sh\nenv\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "env.json"), []byte(`{"description":"print the environment","annotations":{"readOnlyHint":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const (
	initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	callEnv  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"env","arguments":{}}}`
)

func TestSecretsDoNotReachTools(t *testing.T) {
	t.Setenv("MCP_ROUTE_TEST_SECRET", "hunter2")
	t.Setenv("MCP_ROUTE_TEST_PASSED", "visible")
	dir := envTool(t)
	code, out, errs := runWith(t, initLine+"\n"+callEnv+"\n",
		"--tools", dir, "--pass-env", "MCP_ROUTE_TEST_PASSED", "--env", "SET_BY_FLAG=1", "--log", filepath.Join(t.TempDir(), "log"))
	if code != 0 || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "MCP_ROUTE_TEST_SECRET") {
		t.Errorf("the secret reached the tool: %s", out)
	}
	for _, want := range []string{"MCP_ROUTE_TEST_PASSED=visible", "SET_BY_FLAG=1", "MCP_TOOL=env", "MCP_PROTOCOL_VERSION=2025-06-18"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
}

func TestReadonlyFlag(t *testing.T) {
	dir := envTool(t)
	if err := os.WriteFile(filepath.Join(dir, "rw"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "rw.json"), []byte(`{"description":"writes"}`), 0o644)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	_, out, _ := runWith(t, initLine+"\n"+list+"\n", "--tools", dir, "--readonly", "--log", filepath.Join(t.TempDir(), "log"))
	if !strings.Contains(out, `"name":"env"`) || strings.Contains(out, `"name":"rw"`) {
		t.Errorf("--readonly list: %s", out)
	}
}

func TestNewSubcommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runWith(t, "", "new", "greet", "--dir", dir)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, filepath.Join(dir, "greet")) {
		t.Errorf("stdout %q", out)
	}
	if fi, err := os.Stat(filepath.Join(dir, "greet")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("skeleton not executable: %v", err)
	}
	if code, _, errs = runWith(t, "", "new", "greet", "--dir", dir); code != 1 || !strings.HasPrefix(errs, "mcp-route: new: ") {
		t.Errorf("overwrite: code %d, stderr %q", code, errs)
	}
	if code, _, _ = runWith(t, "", "new"); code != 2 {
		t.Errorf("no name: code %d", code)
	}
	if code, out, _ = runWith(t, "", "new", "--help"); code != 0 || !strings.Contains(out, "Usage: mcp-route new") {
		t.Errorf("new --help: code %d, %q", code, out)
	}
}

// TestBinary drives the built binary: a handshake, a call, and SIGTERM with
// a call in flight, which must still be answered before a clean exit.
func TestBinary(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	dir := envTool(t)
	if err := os.WriteFile(filepath.Join(dir, "slow"), []byte("#!/bin/sh\necho '{\"progress\":1}' >&3\nsleep 0.3\necho slept\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "slow.json"), []byte(`{"description":"sleeps a little"}`), 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--tools", dir, "--grace", "5s")
	cmd.Env = append(os.Environ(), "MCP_ROUTE_TEST_SECRET=hunter2") // XDG_CACHE_HOME from TestMain
	stdin, _ := cmd.StdinPipe()
	stdoutR, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte, 10)
	go func() {
		r := codec.NewReader(stdoutR, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	next := func(method string) map[string]json.RawMessage {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stdout ended; stderr:\n%s", stderr.String())
			}
			t.Run("schema", func(t *testing.T) { // skipped alone when the schemas are absent
				spectest.CheckServerMessage(t, codec.Rev20250618, method, l)
			})
			var m map[string]json.RawMessage
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatalf("not JSON on stdout: %q", l)
			}
			return m
		case <-ctx.Done():
			t.Fatal("no answer")
			return nil
		}
	}
	io.WriteString(stdin, initLine+"\n")
	next("initialize")
	io.WriteString(stdin, callEnv+"\n")
	if m := next("tools/call"); strings.Contains(string(m["result"]), "hunter2") {
		t.Errorf("secret leaked: %s", m["result"])
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`+"\n")
	if m := next("tools/call"); string(m["method"]) != `"notifications/progress"` {
		t.Fatalf("want progress, got %v", m)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	m := next("tools/call")
	if string(m["id"]) != "3" || !strings.Contains(string(m["result"]), "slept") {
		t.Errorf("in-flight call after SIGTERM: %v", m)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v; stderr:\n%s", err, stderr.String())
	}
	if _, ok := <-lines; ok {
		t.Error("stdout had more lines")
	}
}

// TestDescribeTimeoutFlag: --describe-timeout bounds a hanging
// --mcp-describe; the tool is left out with a log line, the rest served.
func TestDescribeTimeoutFlag(t *testing.T) {
	dir := envTool(t)
	if err := os.WriteFile(filepath.Join(dir, "hangs"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "log")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	code, out, errs := runWith(t, initLine+"\n"+list+"\n", "--tools", dir, "--describe-timeout", "300ms", "--log", logFile)
	if code != 0 || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, `"name":"env"`) || strings.Contains(out, `"name":"hangs"`) {
		t.Errorf("list: %s", out)
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), `msg="tool left out" tool=hangs`) || !strings.Contains(string(log), "timed out after 300ms") {
		t.Errorf("log does not say why hangs was left out:\n%s", log)
	}
	if code, _, errs := runWith(t, "", "--describe-timeout", "0s"); code != 2 || !strings.Contains(errs, "--describe-timeout") {
		t.Errorf("--describe-timeout 0: code %d, stderr %q", code, errs)
	}
}

// TestDescribeCacheFlag: --mcp-describe outputs are kept across runs (by
// default under $XDG_CACHE_HOME, which TestMain points at a temporary
// directory), --describe-cache DIR moves them, ” turns the cache off.
func TestDescribeCacheFlag(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "count")
	tool := filepath.Join(dir, "d")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho x >> "+count+"\necho '{\"description\":\"described\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed a while ago: a tool changed just now is not cached.
	ts := time.Now().Add(-time.Hour)
	os.Chtimes(tool, ts, ts)
	runs := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "x")
	}
	list := initLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	serve := func(args ...string) {
		t.Helper()
		// The tool counts its runs outside the root: a confined tool may
		// write there only by --allow-write.
		code, out, errs := runWith(t, list, append([]string{"--tools", dir, "--log", filepath.Join(t.TempDir(), "log"), "--allow-write", filepath.Dir(count)}, args...)...)
		if code != 0 || errs != "" || !strings.Contains(out, `"described"`) {
			t.Fatalf("code %d, stdout %q, stderr %q", code, out, errs)
		}
	}
	cache := filepath.Join(t.TempDir(), "cache")
	serve("--describe-cache", cache)
	serve("--describe-cache", cache)
	if n := runs(); n != 1 {
		t.Errorf("--describe-cache DIR: %d describe runs, want 1", n)
	}
	serve("--describe-cache", "")
	serve("--describe-cache", "")
	if n := runs(); n != 3 {
		t.Errorf("--describe-cache '': %d describe runs, want 3", n)
	}
	serve()
	serve()
	if n := runs(); n != 4 {
		t.Errorf("default cache: %d describe runs, want 4", n)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mcpipe", "describe")); err != nil {
		t.Errorf("default cache dir: %v", err)
	}
}

// TestToolsDirMustExist: a --tools directory missing at startup (a typo) is
// "cannot run", not a server with no tools.
func TestToolsDirMustExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	code, out, errs := runWith(t, "", "--tools", missing)
	if want := "mcp-route: --tools " + missing + ": no such directory\n"; code != 1 || out != "" || errs != want {
		t.Errorf("missing dir: code %d, stdout %q, stderr %q; want 1, %q", code, out, errs, want)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runWith(t, "", "--tools", t.TempDir()+":"+file)
	if want := "mcp-route: --tools " + file + ": not a directory\n"; code != 1 || errs != want {
		t.Errorf("a file: code %d, stderr %q; want 1, %q", code, errs, want)
	}
}

// TestLogLevels: by default stderr shows only what needs a look (a tool
// left out, a bad result); --verbose and --log show every event.
func TestLogLevels(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"fine": "echo hi", "garbled": `printf 'ok\377'`, "broken": "true"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "fine.json"), []byte(`{"description":"d"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "garbled.json"), []byte(`{"description":"d"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"description":`), 0o644)
	stdin := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fine"}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"garbled"}}
`
	needsLook := []string{`msg="tool left out" tool=broken`, `msg="call: bad result" tool=garbled id=3`}
	routine := []string{"msg=serving", "initialize: protocol version", `msg="call ended" tool=fine id=2 outcome=ok`, "shutting down", "msg=exit"}
	base := []string{"--tools", dir, "--describe-cache", ""}
	check := func(what, log string, wantRoutine bool) {
		t.Helper()
		for _, s := range needsLook {
			if !strings.Contains(log, s) {
				t.Errorf("%s: no %q in the log:\n%s", what, s, log)
			}
		}
		for _, s := range routine {
			if strings.Contains(log, s) != wantRoutine {
				t.Errorf("%s: %q in the log is %v, want %v:\n%s", what, s, !wantRoutine, wantRoutine, log)
			}
		}
	}
	answers := func(out string) {
		t.Helper()
		if n := strings.Count(out, "\n"); n != 3 {
			t.Errorf("%d answers, want 3:\n%s", n, out)
		}
	}

	code, out, errs := runWith(t, stdin, base...)
	answers(out)
	if code != 0 {
		t.Errorf("default: exit %d", code)
	}
	check("default", errs, false)

	code, out, errs = runWith(t, stdin, append(base, "--verbose")...)
	answers(out)
	if code != 0 {
		t.Errorf("--verbose: exit %d", code)
	}
	check("--verbose", errs, true)

	logFile := filepath.Join(t.TempDir(), "route.log")
	code, out, errs = runWith(t, stdin, append(base, "--log", logFile)...)
	answers(out)
	b, err := os.ReadFile(logFile)
	if code != 0 || errs != "" || err != nil {
		t.Errorf("--log: exit %d, stderr %q, %v", code, errs, err)
	}
	check("--log", string(b), true)
}

// routeProc is the built mcp-route running with pipes on stdin and stdout.
type routeProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.ReadCloser
	stderr  *bytes.Buffer
	lines   chan []byte
	timeout <-chan time.Time
}

func startRoute(t *testing.T, args ...string) *routeProc {
	t.Helper()
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ() // XDG_CACHE_HOME from TestMain
	p := &routeProc{t: t, cmd: cmd, stderr: &bytes.Buffer{}, lines: make(chan []byte, 10), timeout: time.After(30 * time.Second)}
	p.stdin, _ = cmd.StdinPipe()
	p.stdout, _ = cmd.StdoutPipe()
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	go func() {
		r := codec.NewReader(p.stdout, 0)
		for {
			l, err := r.ReadFrame()
			if err != nil {
				close(p.lines)
				return
			}
			p.lines <- l
		}
	}()
	return p
}

func (p *routeProc) send(line string) time.Time {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
	return time.Now()
}

// next returns the next message mcp-route writes, and when it arrived.
func (p *routeProc) next() (map[string]json.RawMessage, time.Time) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("stdout ended; stderr:\n%s", p.stderr.String())
		}
		at := time.Now()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			p.t.Fatalf("not JSON on stdout: %q", l)
		}
		return m, at
	case <-p.timeout:
		p.t.Fatalf("no answer; stderr:\n%s", p.stderr.String())
		return nil, time.Time{}
	}
}

// TestPingWhileListDescribes: with --poll 0 every tools/list re-reads the
// tool directories, and a new tool's --mcp-describe here takes 3 s. A ping
// sent right after that tools/list is answered at once, before the list:
// the re-read runs on the list's own goroutine, not on the read loop.
func TestPingWhileListDescribes(t *testing.T) {
	dir := envTool(t)
	p := startRoute(t, "--tools", dir, "--poll", "0", "--describe-cache", "")
	p.send(initLine)
	p.next()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m, _ := p.next(); string(m["id"]) != "2" {
		t.Fatalf("want the first tools/list answer, got %v", m)
	}
	slow := filepath.Join(dir, "slowdesc")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nif [ \"$1\" = --mcp-describe ]; then sleep 3; echo '{\"description\":\"described slowly\"}'; fi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	listSent := p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	pingSent := p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	var pingAt, listAt time.Time
	var order []string
	for pingAt.IsZero() || listAt.IsZero() {
		m, at := p.next()
		switch string(m["id"]) {
		case "4":
			pingAt = at
			order = append(order, "ping")
		case "3":
			listAt = at
			order = append(order, "tools/list")
			if !strings.Contains(string(m["result"]), "described slowly") {
				t.Errorf("the list lacks the new tool: %s", m["result"])
			}
		default:
			if string(m["method"]) != `"notifications/tools/list_changed"` {
				t.Fatalf("unexpected message %v", m)
			}
		}
	}
	latency := pingAt.Sub(pingSent)
	t.Logf("ping answered in %v; tools/list in %v", latency, listAt.Sub(listSent))
	if order[0] != "ping" {
		t.Errorf("answers in order %v: the ping waited for the tools/list", order)
	}
	if latency >= time.Second {
		t.Errorf("ping answered after %v, want well under the 3 s describe", latency)
	}
}

// TestStdoutClosedShutsDown: a client that closes its end of mcp-route's
// stdout while a call runs cannot receive its answer: mcp-route shuts down
// as on EOF, at once, killing the tool's process group (the tool and its
// child), and exits 0.
func TestStdoutClosedShutsDown(t *testing.T) {
	dir := envTool(t)
	pids := t.TempDir()
	body := "#!/bin/sh\nsleep 30 &\necho $! > " + pids + "/child\necho $$ > " + pids + "/tool\necho '{\"progress\":1}' >&3\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "slow"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "slow.json"), []byte(`{"description":"runs for 30 s"}`), 0o644)
	p := startRoute(t, "--tools", dir, "--describe-cache", "", "--grace", "5s", "--allow-write", pids)
	p.send(initLine)
	p.next()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`)
	if m, _ := p.next(); string(m["method"]) != `"notifications/progress"` {
		t.Fatalf("want progress, got %v", m)
	}
	readPid := func(name string) int {
		b, err := os.ReadFile(filepath.Join(pids, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	tool, child := readPid("tool"), readPid("child")
	closed := time.Now()
	p.stdout.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		t.Logf("mcp-route exited %v after stdout was closed", time.Since(closed).Round(time.Millisecond))
		if err != nil {
			t.Errorf("exit: %v; stderr:\n%s", err, p.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("mcp-route still runs 20 s after its stdout was closed; stderr:\n%s", p.stderr.String())
	}
	proctest.WaitGone(t, tool)
	proctest.WaitGone(t, child)
	if log := p.stderr.String(); !strings.Contains(log, "output closed") || strings.Count(log, "\n") > 3 {
		t.Errorf("stderr should say once that the output was closed:\n%s", log)
	}
}

// TestLogFormat: --log-format text writes "mcp-route: " key=value lines,
// json one object per line; a tool's stderr with a newline stays on one
// line either way; any other value is a usage error naming it.
func TestLogFormat(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "garbled"), []byte("#!/bin/sh\necho 'two\nlines' >&2; printf 'ok\\377'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "garbled.json"), []byte(`{"description":"d"}`), 0o644)
	stdin := initLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"garbled"}}` + "\n"
	base := []string{"--tools", dir, "--describe-cache", "", "--verbose"}

	code, _, errs := runWith(t, stdin, append(base, "--log-format", "json")...)
	if code != 0 {
		t.Fatalf("json: exit %d, stderr %q", code, errs)
	}
	levels := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		var rec struct {
			Time  string `json:"time"`
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Time == "" || rec.Msg == "" {
			t.Errorf("json: not a log record: %q (%v)", l, err)
		}
		levels[rec.Level] = true
		if rec.Msg == "call: bad result" && rec.Level != "WARN" {
			t.Errorf("json: a bad result logged at %s", rec.Level)
		}
	}
	if !levels["WARN"] || !levels["DEBUG"] {
		t.Errorf("json: levels %v, want WARN and DEBUG (--verbose)", levels)
	}

	code, _, errs = runWith(t, stdin, base...)
	if code != 0 {
		t.Fatalf("text: exit %d, stderr %q", code, errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		if !strings.HasPrefix(l, "mcp-route: time=") || !strings.Contains(l, " level=") || !strings.Contains(l, " msg=") {
			t.Errorf("text: line %q", l)
		}
	}
	if !strings.Contains(errs, `level=DEBUG msg="call: tool stderr" tool=garbled id=2 stderr="two\nlines`) {
		t.Errorf("text: the tool's stderr is not on one escaped line:\n%s", errs)
	}

	code, out, errs := runWith(t, "", "--log-format", "xml")
	if want := "mcp-route: --log-format \"xml\": want text or json\n"; code != 2 || out != "" || errs != want {
		t.Errorf("bad --log-format: exit %d, stdout %q, stderr %q; want 2, %q", code, out, errs, want)
	}
	if _, out, _ := runWith(t, "", "--help"); !strings.Contains(out, "-log-format") {
		t.Errorf("--help does not document --log-format")
	}
}

// TestFlagOutOfRangeNamed: the real binary names the flag out of range, the
// value written and what it wants, one line, exit 2; the harmless value
// runs.
func TestFlagOutOfRangeNamed(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	for _, c := range []struct{ args, want []string }{
		{[]string{"--poll", "-1s"}, []string{"mcp-route: --poll -1s: want a positive duration, or 0 to turn polling off (see --help)\n"}},
		{[]string{"--timeout", "0s"}, []string{"mcp-route: --timeout 0s: want a positive duration (see --help)\n"}},
		{[]string{"--max-procs", "0"}, []string{"mcp-route: --max-procs 0: want a positive number (see --help)\n"}},
		{[]string{"--max-queue", "-1"}, []string{"mcp-route: --max-queue -1: want 0 or more (see --help)\n"}},
		{[]string{"--limit-pids", "-1"}, []string{"mcp-route: --limit-pids -1: want a number of processes, or 0 for none (see --help)\n"}},
		{[]string{"--limit-cpu", "-1s"}, []string{"mcp-route: --limit-cpu -1s: want a positive duration, or 0 for none (see --help)\n"}},
		{[]string{"--limit-mem", "512"}, []string{"mcp-route: --limit-mem \"512\": want a size such as \"512MiB\" or \"2G\" (at least 1MiB; 0: no limit) (see --help)\n"}},
	} {
		cmd := exec.Command(bin, append([]string{"--tools", t.TempDir()}, c.args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || stdout.Len() != 0 || stderr.String() != c.want[0] {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, stdout.String(), stderr.String(), c.want[0])
		}
	}
	for _, ok := range [][]string{{"--poll", "0"}, {"--poll", "2s"}, {"--max-queue", "0"}, {"--limit-mem", "0", "--limit-pids", "0"}, {"--limit-mem", "2G", "--limit-cpu", "10s"}} {
		cmd := exec.Command(bin, append([]string{"--tools", t.TempDir()}, ok...)...)
		cmd.Stdin = strings.NewReader("") // EOF at once: a clean shutdown
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("%v: %v, stderr %q", ok, err, stderr.String())
		}
	}
}

// TestUnknownToolNameClipped: a call of an unknown tool with a 1 MB name
// gets an error that quotes at most 200 bytes of it (cut on a UTF-8
// boundary, its whole length said), and no log line carries the name
// whole. A short unknown name comes back whole.
func TestUnknownToolNameClipped(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	// 999,999 bytes, whose byte 200 is inside an é: a cut there would
	// leave half a rune.
	long := "x" + strings.Repeat("é", 499_999)
	in := initLine + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + long + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no_such_tool"}}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--tools", t.TempDir(), "--root", t.TempDir(), "--confine", "off", "--verbose")
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%.2000s", err, stderr.String())
	}
	answers := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout: %v: %.300s", err, l)
		}
		if m.Error.Code != 0 {
			answers[string(m.ID)] = m.Error.Message
		}
	}
	msg := answers["2"]
	want := fmt.Sprintf("... (%d bytes)", len(long))
	if len(msg) > 1000 || !strings.HasPrefix(msg, `unknown tool: "xéé`) || !strings.HasSuffix(msg, want) || !utf8.ValidString(msg) || strings.Contains(msg, `\x`) {
		t.Errorf("error of the 1 MB name (%d bytes): %.400q, want at most 200 bytes of the name and %q", len(msg), msg, want)
	}
	if got := answers["3"]; got != `unknown tool: "no_such_tool"` {
		t.Errorf("error of a short name: %q", got)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if len(l) > 2000 {
			t.Errorf("a log line of %d bytes: %.300s", len(l), l)
		}
	}
	if !strings.Contains(stderr.String(), "no_such_tool") {
		t.Errorf("the short name is not in the log:\n%s", stderr.String())
	}
}

// TestDeepFrameKeepsID: a request nested deeper than the limit (10,000)
// is refused, and when its id came first the error carries it, so the
// client is answered instead of waiting for its timeout; one whose id
// comes after the deep member gets the error without one. The same
// request nested less deeply is answered as usual (an unknown tool).
func TestDeepFrameKeepsID(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	in := initLine + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"name":"t","arguments":{"a":` + deep(20000) + `}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{"a":` + deep(20000) + `}},"id":"after"}` + "\n" +
		`{"jsonrpc":"2.0","id":"shallow","method":"tools/call","params":{"name":"t","arguments":{"a":` + deep(100) + `}}}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--tools", t.TempDir(), "--root", t.TempDir(), "--confine", "off")
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v; stderr:\n%.2000s", err, stderr.String())
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n")[1:] {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout: %v: %.300s", err, l)
		}
		got = append(got, fmt.Sprintf("%s %d %s", m.ID, m.Error.Code, m.Error.Message))
	}
	want := []string{
		`"first" -32600 invalid request: nested deeper than 10000 levels`,
		` -32600 invalid request: nested deeper than 10000 levels`, // no id, as for a parse error
		`"shallow" -32602 unknown tool: "t"`,
	}
	if len(got) != len(want) {
		t.Fatalf("answers:\n%s\nwant %d", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d: %q, want %q...", i, got[i], want[i])
		}
	}
}
