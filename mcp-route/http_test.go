package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpRoute is mcp-route --http running as a process.
type httpRoute struct {
	t      testing.TB
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT
	stderr *syncBuffer
	exited chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var servingRE = regexp.MustCompile(`serving MCP at (https?://[^ "]+)/mcp`)

// startHTTP starts mcp-route --http 127.0.0.1:0 with args and waits for
// its address.
func startHTTP(t testing.TB, args ...string) *httpRoute {
	t.Helper()
	return startHTTPBin(t, testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route"), args...)
}

// startHTTPBin is startHTTP with the mcp-route binary at bin.
func startHTTPBin(t testing.TB, bin string, args ...string) *httpRoute {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--http", "127.0.0.1:0", "--confine", "off"}, args...)...)
	cmd.Env = os.Environ()
	r := &httpRoute{t: t, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(r.stderr, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		pw.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.exited
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case r.url = <-found:
	case <-r.exited:
		t.Fatalf("mcp-route exited: %s", r.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("mcp-route did not start listening: %s", r.stderr.String())
	}
	return r
}

// httpTools writes the test tools: echo (its arguments back as JSON),
// slow (writes its pid to $MCP_ARG_PIDFILE, then sleeps $MCP_ARG_SECS)
// and progress (two progress lines on fd 3).
func httpTools(t testing.TB) string {
	dir := t.TempDir()
	write := func(name, script, def string) {
		proctest.WriteExecutable(t, filepath.Join(dir, name), []byte(script))
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("echo", "#!/bin/sh\ncat\n", `{"description":"echo the arguments","run":{"result":"json"}}`)
	write("slow", "#!/bin/sh\necho $$ > \"$MCP_ARG_PIDFILE\"\nsleep \"$MCP_ARG_SECS\"\necho slept\n",
		`{"description":"sleep","inputSchema":{"type":"object","properties":{"pidfile":{"type":"string"},"secs":{"type":"number"}}}}`)
	write("progress", "#!/bin/sh\necho '{\"progress\":1,\"total\":2}' >&3\necho '{\"progress\":2,\"total\":2}' >&3\necho done\n",
		`{"description":"report progress"}`)
	write("where", "#!/bin/sh\necho \"in $MCP_ARG_REGION\"\n",
		`{"description":"an argument mirrored in a header","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}}`)
	return dir
}

// post sends body to /mcp with headers, and returns the status, the
// response headers and the body.
func post(t *testing.T, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

const (
	modernRev = "2026-07-28"
	metaRev   = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
)

// initialize opens a legacy session and returns its id.
func initialize(t *testing.T, url, rev string) string {
	t.Helper()
	code, h, body := post(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != 200 || h.Get("Mcp-Session-Id") == "" || !strings.Contains(body, `"protocolVersion":"`+rev+`"`) {
		t.Fatalf("initialize %s: %d %v %s", rev, code, h, body)
	}
	return h.Get("Mcp-Session-Id")
}

func TestHTTPLegacySession(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t))
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		sid := initialize(t, r.url, rev)
		sess := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", rev}
		if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess...); code != 202 || body != "" {
			t.Errorf("%s: notifications/initialized: %d %q, want 202 and no body", rev, code, body)
		}
		code, h, body := post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"hi"}}}`, sess...)
		if code != 200 || h.Get("Content-Type") != "application/json" || !strings.Contains(body, `"structuredContent":{"x":"hi"}`) && !strings.Contains(body, `{\"x\":\"hi\"}`) {
			t.Errorf("%s: tools/call: %d %s %s", rev, code, h.Get("Content-Type"), body)
		}
		if strings.Contains(body, "resultType") {
			t.Errorf("%s: a legacy answer carries 2026-07-28's resultType: %s", rev, body)
		}
		// The version header must name a supported revision that has
		// sessions (400 only for an invalid or unsupported one, as the
		// spec says); any of them is served, in the negotiated revision.
		code, _, body = post(t, r.url, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-01-01")
		if code != 400 || !strings.Contains(body, "negotiated "+rev) || !strings.Contains(body, "unsupported protocol version") {
			t.Errorf("%s: wrong Mcp-Protocol-Version: %d %s", rev, code, body)
		}
		for _, bad := range []string{"2024-11-05", modernRev, "latest"} {
			if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", bad); code != 400 || !strings.Contains(body, "2025-03-26, 2025-06-18, 2025-11-25") {
				t.Errorf("%s: Mcp-Protocol-Version %s: %d %s, want 400 naming the accepted ones", rev, bad, code, body)
			}
		}
		for _, other := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
			code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":"v"}}}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", other)
			if code != 200 || !strings.Contains(body, `\"x\":\"v\"`) && !strings.Contains(body, `"x":"v"`) {
				t.Errorf("%s session, Mcp-Protocol-Version %s: %d %s, want the call served", rev, other, code, body)
			}
			if strings.Contains(body, "resultType") {
				t.Errorf("%s session, header %s: the answer is not in the negotiated revision: %s", rev, other, body)
			}
		}
		// A forged id (the payload's last byte changed) is no session.
		forged := []byte(sid)
		forged[len("m1.")+3] ^= 1
		code, _, body = post(t, r.url, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, "Mcp-Session-Id", string(forged), "Mcp-Protocol-Version", rev)
		if code != 404 || !strings.Contains(body, "session not found") {
			t.Errorf("%s: forged session: %d %s", rev, code, body)
		}
		// DELETE: 204; the stateless id stays valid until it expires.
		req, _ := http.NewRequest("DELETE", r.url+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", rev)
		if code, _, _ := do(t, req); code != 204 {
			t.Errorf("%s: DELETE: %d, want 204", rev, code)
		}
	}
	// 2024-11-05 has no Streamable HTTP: initialize gets the newest legacy.
	sid := initialize(t, r.url, "2025-11-25")
	code, h, body := post(t, r.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code != 200 || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) || h.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize 2024-11-05: %d %s", code, body)
	}
	// Without a session id, a legacy request is refused; 2025-06-18 and
	// later need the version header.
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); code != 400 || !strings.Contains(body, "Mcp-Session-Id") {
		t.Errorf("no session: %d %s", code, body)
	}
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, "Mcp-Session-Id", sid); code != 400 || !strings.Contains(body, "Mcp-Protocol-Version") {
		t.Errorf("no version header: %d %s", code, body)
	}
}

func TestHTTPModernHeaders(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t))
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},` + metaRev + `}}`
	good := []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "echo"}
	code, h, body := post(t, r.url, call, good...)
	if code != 200 || !strings.Contains(body, `"resultType":"complete"`) || h.Get("Mcp-Session-Id") != "" {
		t.Fatalf("modern call: %d %v %s", code, h, body)
	}
	// The same name written as =?base64?…?= (what a client sends for a
	// name that is not plain ASCII) stands for the same name; a broken
	// encoding is a mismatch below.
	if code, _, body := post(t, r.url, call, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?="); code != 200 {
		t.Errorf("modern call with an encoded Mcp-Name: %d %s", code, body)
	}
	for _, c := range []struct {
		name    string
		headers []string
		want    string
	}{
		{"wrong name", []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "other"}, "Mcp-Name header value 'other' does not match body value 'echo'"},
		{"missing name", []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call"}, "missing required Mcp-Name"},
		{"broken encoding", []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?!!?="}, "Mcp-Name header value '=?base64?!!?='"},
		{"wrong method", []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list", "Mcp-Name", "echo"}, "Mcp-Method header value 'tools/list'"},
		{"missing version", []string{"Mcp-Method", "tools/call", "Mcp-Name", "echo"}, "missing required Mcp-Protocol-Version"},
	} {
		code, _, body := post(t, r.url, call, c.headers...)
		var resp struct {
			ID    int `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(body), &resp)
		if code != 400 || resp.Error.Code != -32020 || resp.ID != 7 || !strings.Contains(resp.Error.Message, c.want) {
			t.Errorf("%s: %d %s, want 400 with -32020 %q", c.name, code, body, c.want)
		}
	}
	// Arguments mirrored in Mcp-Param-* (x-mcp-header in the schema).
	where := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"where","arguments":{"region":"eu-wëst","n":3},` + metaRev + `}}`
	whereHdr := []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "where"}
	for _, c := range []struct {
		region, n string
		ok        bool
	}{
		{"=?base64?ZXUtd8Orc3Q=?=", "3", true},
		{"=?base64?ZXUtd8Orc3Q=?=", "3.0", true},
		{"=?base64?ZXUtd8Orc3Q=?=", "4", false},
		{"eu-west", "3", false},
		{"", "3", false},
		{"=?base64?not base64?=", "3", false},
	} {
		hdr := append([]string(nil), whereHdr...)
		if c.region != "" {
			hdr = append(hdr, "Mcp-Param-Region", c.region)
		}
		hdr = append(hdr, "Mcp-Param-N", c.n)
		code, _, body := post(t, r.url, where, hdr...)
		if ok := code == 200 && strings.Contains(body, "in eu-wëst"); ok != c.ok || !c.ok && (code != 400 || !strings.Contains(body, "-32020")) {
			t.Errorf("Mcp-Param-Region %q, Mcp-Param-N %q: %d %s, want ok=%v", c.region, c.n, code, body, c.ok)
		}
	}
	// An absent argument must have no header.
	code, _, body = post(t, r.url, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"where","arguments":{},`+metaRev+`}}`, append(whereHdr, "Mcp-Param-N", "1")...)
	if code != 400 || !strings.Contains(body, "argument 'n' is absent") {
		t.Errorf("header for an absent argument: %d %s", code, body)
	}
	// The next request is served as usual.
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{`+metaRev+`}}`, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list"); code != 200 || !strings.Contains(body, `"name":"echo"`) {
		t.Errorf("tools/list after the refusals: %d %s", code, body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, r.url+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", modernRev)
		if code, _, _ := do(t, req); code != 405 {
			t.Errorf("%s without a session: %d, want 405", m, code)
		}
	}
}

func TestHTTPMalformedAndBodyCap(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--max-frame", "4096")
	code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":1,"method":`)
	if code != 400 || !strings.Contains(body, "-32700") {
		t.Errorf("malformed JSON: %d %s, want 400 with -32700", code, body)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 5000) + `",` + metaRev + `}}`
	code, _, body = post(t, r.url, big, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list")
	if code != 413 || !strings.Contains(body, "4096") {
		t.Errorf("body over --max-frame: %d %s, want 413 naming the limit", code, body)
	}
	small := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 3000) + `",` + metaRev + `}}`
	if code, _, body := post(t, r.url, small, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list"); code != 200 {
		t.Errorf("body under --max-frame: %d %s", code, body)
	}
}

// The headers are checked against the members the core reads, matched
// exactly: encoding/json folds case into struct fields, so a body with
// "name" and "Name" (or "arguments" and "Arguments") could show the check
// one tool or value and run another.
func TestHTTPHeadersMatchExactMembers(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t))
	// The Mcp-Param-* check needs the tools' schemas: wait for the load.
	waitReady(t, r)
	hdr := func(name, region string) []string {
		return []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", name, "Mcp-Param-Region", region}
	}
	for _, c := range []struct {
		what, params string
		headers      []string
	}{
		{"Mcp-Name of a Name member", `"name":"where","Name":"echo","arguments":{"region":"eu"}`, hdr("echo", "eu")},
		{"Mcp-Param of an Arguments member", `"name":"where","arguments":{"region":"eu"},"Arguments":{"region":"us"}`, hdr("where", "us")},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + c.params + `,` + metaRev + `}}`
		code, _, out := post(t, r.url, body, c.headers...)
		if code != 400 || !strings.Contains(out, "-32020") || strings.Contains(out, "in eu") {
			t.Errorf("%s: %d %s, want 400 with -32020 and no call", c.what, code, out)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where","arguments":{"region":"eu"},` + metaRev + `}}`
	if code, _, out := post(t, r.url, body, hdr("where", "eu")...); code != 200 || !strings.Contains(out, "in eu") {
		t.Errorf("matching headers: %d %s, want 200 with the tool's output", code, out)
	}
	// An empty string argument is mirrored by an empty header, which is
	// there all the same; an absent argument by no header at all.
	body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where","arguments":{"region":""},` + metaRev + `}}`
	if code, _, out := post(t, r.url, body, hdr("where", "")...); code != 200 || !strings.Contains(out, `"in \n"`) {
		t.Errorf("empty argument, empty header: %d %s, want 200 with the tool's output", code, out)
	}
	body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where","arguments":{},` + metaRev + `}}`
	if code, _, out := post(t, r.url, body, hdr("where", "")...); code != 400 || !strings.Contains(out, "-32020") {
		t.Errorf("absent argument, empty header: %d %s, want 400 with -32020", code, out)
	}
}

// A sender that trickles its body (slowloris) is cut off after
// --http-body-timeout with 408; a call that runs longer than that, its body
// in at once, is not: the deadline covers the body only.
func TestHTTPBodyTimeout(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--http-body-timeout", "1s")
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	// Generous: the server answers after 1 s; a server without the
	// deadline never does.
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a trickled body got no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 408 || !strings.Contains(string(b), "--http-body-timeout") {
		t.Errorf("trickled body: %d %s, want 408 naming --http-body-timeout", resp.StatusCode, b)
	}

	pidfile := filepath.Join(t.TempDir(), "pid")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"` + pidfile + `","secs":3},` + metaRev + `}}`
	code, _, out := post(t, r.url, body, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "slow")
	if code != 200 || !strings.Contains(out, "slept") {
		t.Errorf("a 3 s call after a 1 s body timeout: %d %s, want 200 with the tool's output", code, out)
	}
}

func TestHTTPOriginAndTokens(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("# ops\nsecret-one\nsecret-two\n"), 0o600)
	r := startHTTP(t, "--tools", httpTools(t), "--http-token-file", tokens, "--allow-origin", "https://app.example")
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + metaRev + `}}`
	hdr := []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/list"}
	code, h, _ := post(t, r.url, list, hdr...)
	if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: %d %v, want 401 with WWW-Authenticate", code, h)
	}
	if code, _, _ := post(t, r.url, list, append(hdr, "Authorization", "Bearer secret-three")...); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	auth := append(hdr, "Authorization", "Bearer secret-two")
	if code, _, body := post(t, r.url, list, auth...); code != 200 {
		t.Errorf("good token: %d %s", code, body)
	}
	// The scheme name is case-insensitive; the token is not.
	if code, _, body := post(t, r.url, list, append(hdr, "Authorization", "bearer secret-two")...); code != 200 {
		t.Errorf("good token, lower-case scheme: %d %s", code, body)
	}
	if code, _, _ := post(t, r.url, list, append(hdr, "Authorization", "Bearer SECRET-TWO")...); code != 401 {
		t.Errorf("token in another case: %d, want 401", code)
	}
	if code, _, _ := post(t, r.url, list, append(hdr, "Authorization", "Basic secret-two")...); code != 401 {
		t.Errorf("another scheme: %d, want 401", code)
	}
	// DNS rebinding: a page of another site that resolves to us.
	if code, _, body := post(t, r.url, list, append(auth, "Origin", "http://evil.example:8080")...); code != 403 || !strings.Contains(body, "--allow-origin") {
		t.Errorf("foreign Origin: %d %s, want 403", code, body)
	}
	for _, o := range []string{"http://localhost:3000", "http://127.0.0.1:9", "https://app.example"} {
		if code, _, body := post(t, r.url, list, append(auth, "Origin", o)...); code != 200 {
			t.Errorf("Origin %s: %d %s, want 200", o, code, body)
		}
	}
	// Health needs no token; metrics does.
	if resp, err := http.Get(r.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/healthz: %v %v", resp, err)
	}
	if resp, err := http.Get(r.url + "/metrics"); err != nil || resp.StatusCode != 401 {
		t.Errorf("/metrics without a token: %v %v", resp, err)
	}
}

func TestHTTPBindNeedsTokens(t *testing.T) {
	code, _, errs := runWith(t, "", "--http", ":0", "--confine", "off")
	if code != 2 || !strings.Contains(errs, "--http-token-file") {
		t.Errorf("--http :0 without tokens: exit %d, %q", code, errs)
	}
	for _, bad := range []string{"a b", "evil.example/mcp", "a,b", ""} {
		code, _, errs = runWith(t, "", "--http", "127.0.0.1:0", "--confine", "off", "--allow-host", bad)
		if code != 2 || !strings.Contains(errs, "--allow-host") {
			t.Errorf("--allow-host %q: exit %d, %q", bad, code, errs)
		}
	}
	code, _, errs = runWith(t, "", "--http", "127.0.0.1:0", "--tls-cert", "x")
	if code != 2 || !strings.Contains(errs, "--tls-key") {
		t.Errorf("--tls-cert alone: exit %d, %q", code, errs)
	}
}

func TestHTTPSessionAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte(testKey), 0o600)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("another-test-key-ABCDEFGHIJKLMNOPQRSTU"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("tooshort"), 0o600)
	if code, _, errs := runWith(t, "", "--http", "127.0.0.1:0", "--session-key-file", short); code != 1 || !strings.Contains(errs, "session key file "+short+": 8 bytes, want at least 32") {
		t.Errorf("short key: exit %d %q", code, errs)
	}
	tools := httpTools(t)
	a := startHTTP(t, "--tools", tools, "--session-key-file", key)
	b := startHTTP(t, "--tools", tools, "--session-key-file", key)
	c := startHTTP(t, "--tools", tools, "--session-key-file", other)
	sid := initialize(t, a.url, "2025-06-18")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	sess := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
	if code, _, body := post(t, b.url, list, sess...); code != 200 || !strings.Contains(body, `"name":"echo"`) {
		t.Errorf("replica B with A's session: %d %s", code, body)
	}
	if code, _, body := post(t, c.url, list, sess...); code != 404 {
		t.Errorf("a replica with another key: %d %s, want 404", code, body)
	}
}

func TestHTTPSessionExpires(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--session-ttl", "1s")
	sid := initialize(t, r.url, "2025-11-25")
	time.Sleep(2100 * time.Millisecond) // past the TTL whatever the load
	code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25")
	if code != 404 || !strings.Contains(body, "expired") {
		t.Errorf("expired session: %d %s, want 404", code, body)
	}
}

// metric reads one unlabelled metric from /metrics.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	f, ok := scrape(t, url, func(l string) bool { return strings.HasPrefix(l, name+" ") })
	if !ok {
		t.Fatalf("no %s in /metrics", name)
	}
	return f
}

// scrape reads /metrics and returns the value of the first sample line
// match accepts; false when there is none.
func scrape(t *testing.T, url string, match func(line string) bool) (float64, bool) {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); match(l) {
			f, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return f, true
		}
	}
	return 0, false
}

// TestHTTPTenThousandSessions: sessions cost the server nothing once
// initialize has answered: goroutines and heap stay where they were.
func TestHTTPTenThousandSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 requests")
	}
	r := startHTTP(t, "--tools", httpTools(t))
	open := func(n int) {
		for i := 0; i < n; i++ {
			code, h, _ := post(t, r.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
			if code != 200 || h.Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize %d: %d", i, code)
			}
		}
	}
	open(500) // warm up: connection pools, buffers
	// The live heap as of the last GC: what a leak grows (the heap in use
	// swings with garbage). Thousands of GCs run during the 10,000.
	g0 := metric(t, r.url, "go_goroutines")
	h0 := metric(t, r.url, "go_gc_heap_live_bytes")
	open(10000)
	g1 := metric(t, r.url, "go_goroutines")
	h1 := metric(t, r.url, "go_gc_heap_live_bytes")
	if n := metric(t, r.url, "mcp_route_sessions_issued_total"); n != 10500 {
		t.Errorf("sessions issued: %v, want 10500", n)
	}
	t.Logf("goroutines %v → %v, live heap %.2f → %.2f MiB", g0, g1, h0/(1<<20), h1/(1<<20))
	if g1 > g0+2 {
		t.Errorf("goroutines grew with sessions: %v → %v", g0, g1)
	}
	// 10,000 sessions kept at even 256 bytes each would be 2.5 MiB.
	if h1 > h0+2<<20 {
		t.Errorf("heap grew with sessions: %.1f → %.1f MiB", h0/(1<<20), h1/(1<<20))
	}
}

// TestHTTPDisconnectKillsTool: a client that goes away cancels its call;
// the tool's process is stopped.
func TestHTTPDisconnectKillsTool(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--grace", "500ms")
	pidfile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"` + pidfile + `","secs":300},` + metaRev + `}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Mcp-Protocol-Version": modernRev, "Mcp-Method": "tools/call", "Mcp-Name": "slow", "Accept": "application/json, text/event-stream"} {
		req.Header.Set(k, v)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	var pid int
	proctest.Eventually(t, func() string {
		b, _ := os.ReadFile(pidfile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if pid == 0 {
			return "the tool has not started"
		}
		return ""
	})
	if !proctest.Alive(pid) {
		t.Fatalf("tool %d not running", pid)
	}
	cancel()
	<-done
	proctest.WaitGone(t, pid)
	// The server goes on.
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != 200 {
		t.Errorf("ping after the disconnect: %d %s", code, body)
	}
	// The call is counted once the runner has reaped it.
	proctest.Eventually(t, func() string {
		if n := metric(t, r.url, "mcp_route_processes_killed_total"); n != 1 {
			return fmt.Sprintf("processes killed: %v, want 1", n)
		}
		return ""
	})
}

// TestHTTPDrain: SIGTERM while calls run: /readyz turns 503, a new
// connection is refused (a proxy then tries another replica: nothing was
// sent), a call that arrives on a connection taken before the drain is
// served and its connection closed after, every call in flight still gets
// its result, the exit is 0.
func TestHTTPDrain(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--grace", "30s")
	// Ready once the tools are loaded.
	proctest.Eventually(t, func() string {
		if resp, err := http.Get(r.url + "/readyz"); err != nil || resp.StatusCode != 200 {
			return fmt.Sprintf("/readyz before: %v %v", resp, err)
		}
		return ""
	})
	dir := t.TempDir()
	const calls = 4
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, calls)
	for i := range calls {
		pidfile := filepath.Join(dir, strconv.Itoa(i))
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"` + pidfile + `","secs":3},` + metaRev + `}}`
		go func() {
			code, _, b := post(t, r.url, body, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "slow")
			got <- answer{code, b}
		}()
	}
	proctest.Eventually(t, func() string {
		for i := range calls {
			if b, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(i))); len(b) == 0 {
				return fmt.Sprintf("slow tool %d has not started", i)
			}
		}
		return ""
	})
	// Connections taken before the drain, whose requests come during it
	// (the server leaves a new connection 5 s to send its request).
	host := strings.TrimPrefix(r.url, "http://")
	early := make([]net.Conn, 2)
	for i := range early {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		early[i] = c
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	proctest.Eventually(t, func() string {
		if !strings.Contains(r.stderr.String(), "draining") {
			return "no \"draining\" in the log after SIGTERM"
		}
		return ""
	})
	roundTrip := func(c net.Conn, req string) (*http.Response, string) {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatalf("write on a connection taken before the drain: %v", err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("read on a connection taken before the drain: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := roundTrip(early[0], "GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n"); resp.StatusCode != 503 {
		t.Errorf("/readyz while draining: %d %s, want 503", resp.StatusCode, body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},` + metaRev + `}}`
	resp, body := roundTrip(early[1], fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", modernRev, len(call), call))
	if resp.StatusCode != 200 || !strings.Contains(body, `\"x\":1`) || !resp.Close {
		t.Errorf("call arriving while draining on a connection taken before: %d %v %s, want its result and Connection: close", resp.StatusCode, resp.Header, body)
	}
	// A new connection is refused while the calls in flight finish.
	proctest.Eventually(t, func() string {
		c, err := net.DialTimeout("tcp", host, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return "a new connection was taken while draining"
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Sprintf("new connection while draining: %v, want it refused", err)
		}
		return ""
	})
	for range calls {
		if a := <-got; a.code != 200 || !strings.Contains(a.body, "slept") {
			t.Errorf("call in flight at SIGTERM: %d %s, want its result", a.code, a.body)
		}
	}
	<-r.exited
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after the drain, want 0; stderr:\n%s", code, r.stderr.String())
	}
}

// sse splits an SSE body into its data payloads and comment lines.
func sse(body string) (data []string, comments int) {
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "data: "):
			data = append(data, strings.TrimPrefix(l, "data: "))
		case strings.HasPrefix(l, ":"):
			comments++
		}
	}
	return data, comments
}

func TestHTTPProgressAndKeepaliveAreSSE(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--sse-keepalive", "100ms")
	code, h, body := post(t, r.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "progress")
	data, _ := sse(body)
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || h.Get("X-Accel-Buffering") != "no" || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("progress call: %d %v %s", code, h, body)
	}
	if len(data) != 3 || !strings.Contains(data[0], `"progressToken":"p1"`) || !strings.Contains(data[2], `"id":1`) {
		t.Errorf("progress call: events %q, want two progress notifications then the result", data)
	}
	// A call longer than --sse-keepalive turns SSE with comment lines.
	pidfile := filepath.Join(t.TempDir(), "pid")
	code, h, body = post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"`+pidfile+`","secs":1},`+metaRev+`}}`,
		"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "slow")
	data, comments := sse(body)
	if code != 200 || h.Get("Content-Type") != "text/event-stream" || comments < 1 || len(data) != 1 || !strings.Contains(data[0], "slept") {
		t.Errorf("long call: %d %v, %d comments, events %q", code, h.Get("Content-Type"), comments, data)
	}
	// Without SSE in Accept, the same call stays JSON.
	req, _ := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"`+pidfile+`","secs":0.3},`+metaRev+`}}`))
	for k, v := range map[string]string{"Mcp-Protocol-Version": modernRev, "Mcp-Method": "tools/call", "Mcp-Name": "slow", "Accept": "application/json"} {
		req.Header.Set(k, v)
	}
	if code, h, body := do(t, req); code != 200 || h.Get("Content-Type") != "application/json" || !strings.Contains(body, "slept") {
		t.Errorf("JSON-only client: %d %v %s", code, h.Get("Content-Type"), body)
	}
}

// TestHTTPGoSDKClient: the official Go SDK's Streamable HTTP client, in
// every revision it speaks over HTTP: list, call, progress, cancel (the
// tool's process stopped), and a call after the cancel.
func TestHTTPGoSDKClient(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--grace", "500ms")
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25", modernRev} {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			steps := make(chan float64, 16)
			client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					steps <- req.Params.Progress
				},
			})
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.url + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != rev {
				t.Errorf("negotiated %s, want %s", got, rev)
			}
			lt, err := cs.ListTools(ctx, nil)
			if err != nil || len(lt.Tools) != 4 {
				t.Fatalf("list: %v %v", lt, err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": "hi"}})
			if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "hi") {
				t.Errorf("echo: %+v %v", res, err)
			}
			// In 2026-07-28 the SDK mirrors region and n in Mcp-Param-*.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "where", Arguments: map[string]any{"region": "eu-wëst", "n": 3}})
			if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), "in eu-wëst") {
				t.Errorf("where: %+v %v", res, err)
			}
			p := &mcp.CallToolParams{Name: "progress"}
			p.SetProgressToken("steps")
			if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
				t.Errorf("progress: %+v %v", res, err)
			}
			for _, want := range []float64{1, 2} {
				select {
				case got := <-steps:
					if got != want {
						t.Errorf("progress %v, want %v", got, want)
					}
				case <-ctx.Done():
					t.Fatalf("no progress %v", want)
				}
			}
			pidfile := filepath.Join(t.TempDir(), "pid")
			callCtx, cancelCall := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"pidfile": pidfile, "secs": 300}})
				done <- err
			}()
			var pid int
			proctest.Eventually(t, func() string {
				b, _ := os.ReadFile(pidfile)
				if pid, _ = strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 {
					return "the slow tool has not started"
				}
				return ""
			})
			cancelCall()
			if err := <-done; err == nil {
				t.Errorf("cancelled call: no error")
			}
			proctest.WaitGone(t, pid)
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": "after"}})
			if err != nil || res.IsError {
				t.Errorf("echo after cancel: %+v %v", res, err)
			}
		})
	}
}

// events returns the data lines of an SSE response as they come.
func events(body io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

// waitEvent returns the first event containing want, failing after a
// minute (a hang, not a slow machine).
func waitEvent(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %q", want)
			}
			if strings.Contains(e, want) {
				return e
			}
		case <-timeout:
			t.Fatalf("no event with %q", want)
		}
	}
}

// TestHTTPListChanged: a new tool reaches a legacy session's GET stream
// and a 2026-07-28 subscriptions/listen stream; SIGTERM ends both cleanly
// (the subscription gets its final result) and the exit is 0.
func TestHTTPListChanged(t *testing.T) {
	tools := httpTools(t)
	r := startHTTP(t, "--tools", tools, "--poll", "100ms")
	sid := initialize(t, r.url, "2025-06-18")
	get, _ := http.NewRequest("GET", r.url+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	gresp, err := http.DefaultClient.Do(get)
	if err != nil || gresp.StatusCode != 200 || gresp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET stream: %v %v", gresp, err)
	}
	defer gresp.Body.Close()
	legacy := events(gresp.Body)

	listen, _ := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+metaRev+`}}`))
	for k, v := range map[string]string{"Mcp-Protocol-Version": modernRev, "Mcp-Method": "subscriptions/listen", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"} {
		listen.Header.Set(k, v)
	}
	lresp, err := http.DefaultClient.Do(listen)
	if err != nil || lresp.StatusCode != 200 || lresp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: %v %v", lresp, err)
	}
	defer lresp.Body.Close()
	modern := events(lresp.Body)
	waitEvent(t, modern, "notifications/subscriptions/acknowledged")

	proctest.WriteExecutable(t, filepath.Join(tools, "added"), []byte("#!/bin/sh\necho added\n"))
	os.WriteFile(filepath.Join(tools, "added.json"), []byte(`{"description":"new"}`), 0o644)
	waitEvent(t, legacy, "notifications/tools/list_changed")
	waitEvent(t, modern, "notifications/tools/list_changed")

	r.cmd.Process.Signal(syscall.SIGTERM)
	waitEvent(t, modern, `"id":9`) // the subscription's result ends it
	for range legacy {             // the GET stream ends
	}
	<-r.exited
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after the drain; stderr:\n%s", code, r.stderr.String())
	}
}

// openGET opens session sid's GET stream; the caller closes the body.
func openGET(t *testing.T, url, sid, rev string) *http.Response {
	t.Helper()
	get, _ := http.NewRequest("GET", url+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", rev)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	return resp
}

// openListen opens a 2026-07-28 subscriptions/listen stream; the caller
// closes the body.
func openListen(t *testing.T, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+metaRev+`}}`))
	for k, v := range map[string]string{"Mcp-Protocol-Version": modernRev, "Mcp-Method": "subscriptions/listen", "Accept": "application/json, text/event-stream", "Content-Type": "application/json"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("subscriptions/listen: %v", err)
	}
	return resp
}

// refusal reads a refused stream's answer: its status and JSON-RPC error.
func refusal(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPStreamCaps: a client cannot hold streams without bound. A
// session's second GET stream gets 409 (the spec forbids sending a message
// on two streams, and one is all a client needs); past --http-max-streams
// (GET streams and subscriptions together) a new one gets 503 with
// Retry-After. The streams allowed keep working, calls are not limited by
// it, and a closed stream frees its slot.
func TestHTTPStreamCaps(t *testing.T) {
	tools := httpTools(t)
	r := startHTTP(t, "--tools", tools, "--poll", "100ms", "--http-max-streams", "3")
	const rev = "2025-06-18"
	a := initialize(t, r.url, rev)
	first := openGET(t, r.url, a, rev)
	defer first.Body.Close()
	if first.StatusCode != 200 {
		t.Fatalf("first GET stream: %d", first.StatusCode)
	}
	stream := events(first.Body)
	for i := 0; i < 3; i++ { // the attack: more streams on one session
		if code, body := refusal(t, openGET(t, r.url, a, rev)); code != 409 || !strings.Contains(body, "already has a GET stream") {
			t.Errorf("second GET stream of a session: %d %s, want 409 saying why", code, body)
		}
	}
	b := openGET(t, r.url, initialize(t, r.url, rev), rev)
	if b.StatusCode != 200 {
		t.Fatalf("another session's GET stream: %d", b.StatusCode)
	}
	listen := openListen(t, r.url)
	defer listen.Body.Close()
	if listen.StatusCode != 200 {
		t.Fatalf("subscriptions/listen: %d", listen.StatusCode)
	}
	// The attack: more sessions, each with its stream, past the cap.
	c := initialize(t, r.url, rev)
	code, body := refusal(t, openGET(t, r.url, c, rev))
	if code != 503 || !strings.Contains(body, "--http-max-streams") {
		t.Errorf("GET stream past the cap: %d %s, want 503 naming --http-max-streams", code, body)
	}
	resp := openListen(t, r.url)
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("stream past the cap: no Retry-After")
	}
	if code, body := refusal(t, resp); code != 503 || !strings.Contains(body, `"id":9`) {
		t.Errorf("subscriptions/listen past the cap: %d %s, want 503 with the request's id", code, body)
	}
	if n := metric(t, r.url, "mcp_route_streams_open"); n != 3 {
		t.Errorf("mcp_route_streams_open %v, want 3", n)
	}
	// Calls are not streams: served at the cap.
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},`+metaRev+`}}`,
		"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "echo"); code != 200 || !strings.Contains(body, `\"x\":1`) {
		t.Errorf("call at the stream cap: %d %s", code, body)
	}
	// The streams allowed still carry list changes.
	proctest.WriteExecutable(t, filepath.Join(tools, "added"), []byte("#!/bin/sh\necho added\n"))
	os.WriteFile(filepath.Join(tools, "added.json"), []byte(`{"description":"new"}`), 0o644)
	waitEvent(t, stream, "notifications/tools/list_changed")
	// A closed stream frees its slot (once the server has seen it go).
	b.Body.Close()
	proctest.Eventually(t, func() string {
		resp := openGET(t, r.url, c, rev)
		if resp.StatusCode != 200 {
			code, body := refusal(t, resp)
			return fmt.Sprintf("GET stream after one closed: %d %s", code, body)
		}
		resp.Body.Close()
		return ""
	})
}

// TestHTTPQueueAcrossRequests: --max-procs and --max-queue count the calls
// of every HTTP request together, not per request.
func TestHTTPQueueAcrossRequests(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--max-procs", "1", "--max-queue", "0")
	pidfile := filepath.Join(t.TempDir(), "pid")
	slow := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"pidfile":"` + pidfile + `","secs":30},` + metaRev + `}}`
	hdr := []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "slow"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", r.url+"/mcp", strings.NewReader(slow))
	for i := 0; i < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	proctest.Eventually(t, func() string {
		if b, _ := os.ReadFile(pidfile); len(b) == 0 {
			return "the slow tool has not started"
		}
		return ""
	})
	echo := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},` + metaRev + `}}`
	code, _, body := post(t, r.url, echo, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "echo")
	if code != 200 || !strings.Contains(body, "server busy") || !strings.Contains(body, `"isError":true`) {
		t.Errorf("second call while the one slot is taken: %d %s, want an isError result \"server busy\"", code, body)
	}
	cancel()
	proctest.Eventually(t, func() string {
		code, _, body := post(t, r.url, echo, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "echo")
		if code != 200 || strings.Contains(body, "isError") {
			return fmt.Sprintf("call after the slot was freed: %d %s", code, body)
		}
		return ""
	})
	if n := metric(t, r.url, `mcp_route_calls_total{outcome="busy",tool=""}`); n < 1 {
		t.Errorf("busy calls counted: %v, want at least 1", n)
	}
	if n := metric(t, r.url, `mcp_route_calls_total{outcome="ok",tool="echo"}`); n != 1 {
		t.Errorf("echo calls ok: %v, want 1", n)
	}
	if n := metric(t, r.url, `mcp_route_call_duration_seconds_count{tool="echo"}`); n != 1 {
		t.Errorf("echo latency samples: %v, want 1", n)
	}
}

// TestHTTPBatch: a 2025-03-26 session's batch gets one JSON array.
func TestHTTPBatch(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t))
	sid := initialize(t, r.url, "2025-03-26")
	code, _, body := post(t, r.url, `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"k":1}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		"Mcp-Session-Id", sid)
	var out []map[string]any
	if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil || len(out) != 2 {
		t.Errorf("batch: %d %s, want an array of 2 answers", code, body)
	}
	// A 2025-06-18 session has no batches: each request gets its error.
	sid = initialize(t, r.url, "2025-06-18")
	code, _, body = post(t, r.url, `[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`,
		"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18")
	out = nil
	if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil || len(out) != 2 || !strings.Contains(body, "-32600") {
		t.Errorf("batch in 2025-06-18: %d %s, want two -32600 errors", code, body)
	}
}

// TestHTTPReadyAfterLoad: /readyz is 503 while the tools load (here a
// tool's --mcp-describe waits for the test's go-ahead), /healthz 200, and
// 200 once loaded.
func TestHTTPReadyAfterLoad(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(t.TempDir(), "go")
	proctest.WriteExecutable(t, filepath.Join(dir, "late"), []byte("#!/bin/sh\nif [ \"$1\" = --mcp-describe ]; then\n  while [ ! -e '"+flag+"' ]; do sleep 0.05; done\n  echo '{\"description\":\"late\"}'\n  exit 0\nfi\necho ok\n"))
	r := startHTTP(t, "--tools", dir, "--describe-timeout", "2m", "--describe-cache", "")
	if resp, err := http.Get(r.url + "/readyz"); err != nil || resp.StatusCode != 503 {
		t.Errorf("/readyz while loading: %v %v, want 503", resp, err)
	}
	if resp, err := http.Get(r.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("/healthz while loading: %v %v, want 200", resp, err)
	}
	os.WriteFile(flag, nil, 0o644)
	proctest.Eventually(t, func() string {
		if resp, err := http.Get(r.url + "/readyz"); err != nil || resp.StatusCode != 200 {
			return fmt.Sprintf("/readyz after the load: %v %v, want 200", resp, err)
		}
		return ""
	})
}

// TestHTTPParamCheckWaitsForLoad: a tools/call that arrives while the tools
// are still being described is checked against the schema once it is
// known, not let through unchecked: the mismatched Mcp-Param-Region is
// refused and the matching one runs.
func TestHTTPParamCheckWaitsForLoad(t *testing.T) {
	dir := t.TempDir()
	def := `{"description":"an argument mirrored in a header","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`
	proctest.WriteExecutable(t, filepath.Join(dir, "where"), []byte("#!/bin/sh\n"+
		"if [ \"$1\" = --mcp-describe ]; then sleep 1; echo '"+def+"'; exit 0; fi\necho \"in $MCP_ARG_REGION\"\n"))
	r := startHTTP(t, "--tools", dir, "--describe-cache", "")
	hdr := func(region string) []string {
		return []string{"Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "where", "Mcp-Param-Region", region}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"where","arguments":{"region":"eu"},` + metaRev + `}}`
	if code, _, out := post(t, r.url, body, hdr("us")...); code != 400 || !strings.Contains(out, "-32020") || strings.Contains(out, "in eu") {
		t.Errorf("mismatched header during the load: %d %s, want 400 with -32020 and no call", code, out)
	}
	if code, _, out := post(t, r.url, body, hdr("eu")...); code != 200 || !strings.Contains(out, "in eu") {
		t.Errorf("matching header: %d %s, want 200 with the tool's output", code, out)
	}
}

// mcp-route --http collects garbage less often than Go's default (GOGC=400
// within a 256 MiB soft limit) and keeps half the processors (at least
// one); GOGC, GOMEMLIMIT and GOMAXPROCS in its environment win.
func TestRuntimeSettings(t *testing.T) {
	for _, k := range []string{"GOGC", "GOMEMLIMIT", "GOMAXPROCS"} {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, v) })
		}
	}
	r := startHTTP(t)
	waitReady(t, r)
	if got := metric(t, r.url, "go_gc_gogc_percent"); got != 400 {
		t.Errorf("GOGC unset: go_gc_gogc_percent %v, want 400", got)
	}
	if got := metric(t, r.url, "go_gc_gomemlimit_bytes"); got != 256<<20 {
		t.Errorf("GOMEMLIMIT unset: go_gc_gomemlimit_bytes %v, want %d", got, 256<<20)
	}
	if got, want := metric(t, r.url, "go_sched_gomaxprocs_threads"), max(1, runtime.NumCPU()/2); got != float64(want) {
		t.Errorf("GOMAXPROCS unset, %d CPUs: go_sched_gomaxprocs_threads %v, want %d", runtime.NumCPU(), got, want)
	}
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	t.Setenv("GOMAXPROCS", "3")
	r = startHTTP(t)
	waitReady(t, r)
	if got := metric(t, r.url, "go_gc_gogc_percent"); got != 150 {
		t.Errorf("GOGC=150: go_gc_gogc_percent %v, want 150", got)
	}
	if got := metric(t, r.url, "go_gc_gomemlimit_bytes"); got != 1<<30 {
		t.Errorf("GOMEMLIMIT=1GiB: go_gc_gomemlimit_bytes %v, want %d", got, 1<<30)
	}
	if got := metric(t, r.url, "go_sched_gomaxprocs_threads"); got != 3 {
		t.Errorf("GOMAXPROCS=3: go_sched_gomaxprocs_threads %v, want 3", got)
	}
}

// waitReady waits for /readyz: the tools have loaded (and the settings
// made then are in place).
func waitReady(t *testing.T, r *httpRoute) {
	t.Helper()
	proctest.Eventually(t, func() string {
		resp, err := http.Get(r.url + "/readyz")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return "tools not loaded"
		}
		return ""
	})
}

// TestHTTPRepeatedHeaders: a request carrying an MCP header twice is
// refused with 400 naming it, and nothing runs. The attack: a call of
// fs_write with a second Mcp-Name saying fs_read (a proxy routing or
// allowing on the last header sees a read). The same call with one
// header runs.
func TestHTTPRepeatedHeaders(t *testing.T) {
	dir := t.TempDir()
	root := t.TempDir()
	proctest.WriteExecutable(t, filepath.Join(dir, "fs_write"), []byte("#!/bin/sh\necho written > \"$MCP_ROOT/written\"\necho ok\n"))
	os.WriteFile(filepath.Join(dir, "fs_write.json"), []byte(`{"description":"writes a file","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`), 0o644)
	proctest.WriteExecutable(t, filepath.Join(dir, "fs_read"), []byte("#!/bin/sh\necho read\n"))
	os.WriteFile(filepath.Join(dir, "fs_read.json"), []byte(`{"description":"reads"}`), 0o644)
	r := startHTTP(t, "--tools", dir, "--root", root)
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fs_write","arguments":{"region":"eu"},` + metaRev + `}}`
	send := func(extra ...string) (int, string) {
		req, err := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(call))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for _, kv := range [][2]string{{"Mcp-Protocol-Version", modernRev}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "fs_write"}, {"Mcp-Param-Region", "eu"}} {
			req.Header.Add(kv[0], kv[1])
		}
		for i := 0; i+1 < len(extra); i += 2 {
			req.Header.Add(extra[i], extra[i+1])
		}
		code, _, body := do(t, req)
		return code, body
	}
	written := filepath.Join(root, "written")
	for _, c := range [][]string{
		{"Mcp-Name", "fs_read"},
		{"mcp-name", "fs_write"},
		{"Mcp-Method", "tools/list"},
		{"MCP-Protocol-Version", "2025-11-25"},
		{"Mcp-Param-Region", "us"},
		{"Mcp-Session-Id", "x", "Mcp-Session-Id", "y"},
	} {
		code, body := send(c...)
		want := "header " + http.CanonicalHeaderKey(c[0]) + " appears 2 times"
		if code != 400 || !strings.Contains(body, want) || !strings.Contains(body, `"id":5`) {
			t.Errorf("second %s: %d %s, want 400 saying %q", c[0], code, body, want)
		}
		if _, err := os.Stat(written); err == nil {
			t.Fatalf("second %s: fs_write ran", c[0])
		}
	}
	if code, body := send(); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("one header each: %d %s", code, body)
	}
	if _, err := os.Stat(written); err != nil {
		t.Errorf("one header each: fs_write did not run: %v", err)
	}
}

// TestHTTPHostChecked: DNS rebinding. A page of evil.example whose name
// now resolves to 127.0.0.1 sends Host: evil.example; a loopback --http
// answers it 421 on /mcp (nothing runs) and /metrics, and still answers
// /healthz (probes use any name). Loopback names with any port are
// served; --allow-host adds a name (any port) or NAME:PORT. Bound beyond
// loopback without --allow-host, any Host is served (tokens guard it);
// with --allow-host, the check is back.
func TestHTTPHostChecked(t *testing.T) {
	dir := t.TempDir()
	root := t.TempDir()
	proctest.WriteExecutable(t, filepath.Join(dir, "touch"), []byte("#!/bin/sh\necho ran >> \"$MCP_ROOT/ran\"\necho ok\n"))
	os.WriteFile(filepath.Join(dir, "touch.json"), []byte(`{"description":"leaves a mark"}`), 0o644)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"touch",` + metaRev + `}}`
	send := func(url, path, host string) (int, string) {
		t.Helper()
		method, body := "GET", ""
		if path == "/mcp" {
			method, body = "POST", call
		}
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": modernRev, "Mcp-Method": "tools/call", "Mcp-Name": "touch"} {
			req.Header.Set(k, v)
		}
		code, _, b := do(t, req)
		return code, b
	}
	ran := func() int {
		b, _ := os.ReadFile(filepath.Join(root, "ran"))
		return strings.Count(string(b), "ran")
	}

	r := startHTTP(t, "--tools", dir, "--root", root, "--allow-host", "mcp.example.com", "--allow-host", "other.example:8443")
	for _, host := range []string{"evil.example", "evil.example:80", "mcp.example.com.evil.example", "other.example:9999", "127.0.0.1.evil.example", "[::2]:80", "localhost.evil.example"} {
		for _, path := range []string{"/mcp", "/metrics"} {
			if code, body := send(r.url, path, host); code != 421 || !strings.Contains(body, "not a loopback name") || !strings.Contains(body, "--allow-host") {
				t.Errorf("Host %s %s: %d %s, want 421 naming --allow-host", host, path, code, body)
			}
		}
		if code, _ := send(r.url, "/healthz", host); code != 200 {
			t.Errorf("Host %s /healthz: %d, want 200", host, code)
		}
	}
	if n := ran(); n != 0 {
		t.Fatalf("the tool ran %d times for a foreign Host", n)
	}
	served := 0
	for _, host := range []string{"localhost", "LOCALHOST:3000", "127.0.0.1", "127.0.0.1:1", "[::1]:8080", "mcp.example.com", "MCP.example.com:443", "other.example:8443"} {
		code, body := send(r.url, "/mcp", host)
		if code != 200 || !strings.Contains(body, `"ok\n"`) {
			t.Errorf("Host %s: %d %s, want the call served", host, code, body)
			continue
		}
		served++
		if code, _ := send(r.url, "/metrics", host); code != 200 {
			t.Errorf("Host %s /metrics: %d", host, code)
		}
	}
	if n := ran(); n != served {
		t.Errorf("the tool ran %d times for %d served calls", n, served)
	}

	// Beyond loopback (bound to every interface, asked on loopback).
	wide := startHTTP(t, "--tools", dir, "--root", root, "--http", "0.0.0.0:0", "--http-insecure")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(wide.url, "http://"))
	wideURL := "http://127.0.0.1:" + port
	if code, body := send(wideURL, "/mcp", "mcp-route.svc.cluster.local"); code != 200 {
		t.Errorf("beyond loopback, no --allow-host: %d %s, want any Host served", code, body)
	}
	if !strings.Contains(wide.stderr.String(), "the Host header is not checked") {
		t.Errorf("no warning that the Host is not checked:\n%s", wide.stderr.String())
	}
	checked := startHTTP(t, "--tools", dir, "--root", root, "--http", "0.0.0.0:0", "--http-insecure", "--allow-host", "mcp.example.com")
	_, port, _ = net.SplitHostPort(strings.TrimPrefix(checked.url, "http://"))
	checkedURL := "http://127.0.0.1:" + port
	if code, _ := send(checkedURL, "/mcp", "evil.example"); code != 421 {
		t.Errorf("beyond loopback with --allow-host, a foreign Host: %d, want 421", code)
	}
	if code, body := send(checkedURL, "/mcp", "mcp.example.com"); code != 200 {
		t.Errorf("beyond loopback with --allow-host, its Host: %d %s", code, body)
	}
}
