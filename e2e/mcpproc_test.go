package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/spectest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// waitLong bounds every wait for the server: far above what any step needs,
// so that a hung server fails the test instead of hanging it.
const waitLong = time.Minute

// modern is the revision of stateless requests.
const modern = codec.LatestRevision

// server is a running mcp-route and a test client talking to it over its
// stdin and stdout, with codec doing the framing. Every line the server
// writes is checked, as it is received, for being a valid JSON-RPC message
// and (when the schemas are available) against the schema of the revision
// the message belongs to. It is used by one test goroutine.
type server struct {
	t      *testing.T
	cmd    *exec.Cmd
	w      *codec.Writer
	stdin  io.WriteCloser
	stderr *proctest.Buffer
	frames chan frame
	exited chan struct{}
	status int // exit status, valid after exited is closed

	rev     string            // the session's revision: negotiated, or modern
	sent    map[string]sentAt // request id → what it was, for the checks
	nextID  int64
	stash   []*codec.Message // responses read while waiting for another
	notes   []*codec.Message // notifications read so far
	checked int              // lines checked so far
}

type sentAt struct{ method, rev string }

type frame struct {
	line []byte
	err  error
}

// routeBin is the mcp-route binary under test.
func routeBin(t *testing.T) string { return testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route") }

// baseEnv is the environment the server runs with: no HOME dependence, and
// a PATH for the tools' #! interpreters.
func baseEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}, extra...)
}

// startServer starts mcp-route with args in dir (the tools' default root)
// and env (baseEnv when nil). Cleanup kills whatever is left of it.
func startServer(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(routeBin(t), args...)
	cmd.Dir = dir
	if env == nil {
		env = baseEnv()
	}
	cmd.Env = env
	// Its own process group, so cleanup can kill it with anything it left.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Not StdoutPipe: Wait would close it under the reader goroutine while
	// the last lines are still being read.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = stdoutW
	s := &server{
		t: t, cmd: cmd, stdin: stdin, w: codec.NewWriter(stdin),
		stderr: &proctest.Buffer{}, frames: make(chan frame, 4096), exited: make(chan struct{}),
		sent: map[string]sentAt{},
	}
	cmd.Stderr = s.stderr
	err = cmd.Start()
	stdoutW.Close()
	if err != nil {
		stdout.Close()
		t.Fatalf("starting mcp-route: %v", err)
	}
	go func() {
		defer stdout.Close()
		r := codec.NewReader(stdout, 0)
		for {
			line, err := r.ReadFrame()
			if err == io.EOF {
				close(s.frames)
				return
			}
			s.frames <- frame{bytes.Clone(line), err}
			if err != nil && !errors.Is(err, codec.ErrFrameTooLarge) {
				close(s.frames)
				return
			}
		}
	}()
	go func() {
		// Wait closes stdout after the process exits; the reader sees EOF.
		err := cmd.Wait()
		s.status = exitStatus(cmd.ProcessState, err)
		close(s.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-s.exited:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}
		if t.Failed() || os.Getenv("E2E_LOG") != "" {
			t.Logf("mcp-route stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// raw sends one line exactly as given. codec.Writer refuses to write a frame
// that is not JSON, which is what the malformed-input tests need, so these
// bytes go straight to the pipe: one Write, from the one test goroutine
// that also owns s.w, so lines cannot interleave.
func (s *server) raw(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("writing to mcp-route: %v", err)
	}
}

// meta returns the _meta of a modern request.
func meta(rev string) map[string]any {
	return map[string]any{
		codec.MetaProtocolVersion:    rev,
		codec.MetaClientInfo:         map[string]any{"name": "e2e", "version": "1.0.0"},
		codec.MetaClientCapabilities: map[string]any{},
	}
}

// request sends a request with a fresh integer id, in revision rev (modern:
// _meta added; legacy: as is), and returns the id.
func (s *server) request(rev, method string, params map[string]any) codec.ID {
	s.t.Helper()
	s.nextID++
	id := codec.IntID(s.nextID)
	s.requestID(id, rev, method, params)
	return id
}

func (s *server) requestID(id codec.ID, rev, method string, params map[string]any) {
	s.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if codec.IsModernRevision(rev) {
		m, _ := params["_meta"].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range meta(rev) {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		params["_meta"] = m
		if s.rev == "" {
			s.rev = rev
		}
	}
	msg, err := codec.NewRequest(id, method, params)
	if err != nil {
		s.t.Fatal(err)
	}
	s.sent[id.Key()] = sentAt{method, rev}
	s.send(msg, rev)
}

func (s *server) notify(method string, params any) {
	s.t.Helper()
	msg, err := codec.NewNotification(method, params)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(msg, s.rev)
}

func (s *server) send(msg *codec.Message, rev string) {
	s.t.Helper()
	if codec.IsSupportedRevision(rev) {
		// The test client must speak the protocol correctly itself.
		b, _ := json.Marshal(msg)
		spectest.CheckClientMessage(s.t, rev, b)
	}
	if err := s.w.Write(msg); err != nil {
		s.t.Fatalf("writing to mcp-route: %v", err)
	}
}

// next returns the next message the server writes, after checking it, or
// nil when stdout reached EOF. It fails the test after waitLong, and on a
// batch (see nextLine).
func (s *server) next() *codec.Message {
	s.t.Helper()
	line := s.nextLine()
	if line == nil {
		return nil
	}
	if line[0] == '[' {
		s.t.Fatalf("unexpected batch from mcp-route: %s", line)
	}
	var m codec.Message
	if err := json.Unmarshal(line, &m); err != nil {
		s.t.Fatalf("mcp-route wrote a line that is not a JSON-RPC message (%v): %s", err, line)
	}
	return &m
}

// nextLine returns the next line the server writes, after checking it, or
// nil at EOF; it fails the test after waitLong.
func (s *server) nextLine() []byte {
	s.t.Helper()
	line, ok := s.nextLineWithin(waitLong)
	if !ok {
		s.t.Fatalf("no message from mcp-route within %v; stderr:\n%s", waitLong, s.stderr.String())
	}
	return line
}

// nextLineWithin is nextLine with a timeout; ok is false when it passed.
func (s *server) nextLineWithin(d time.Duration) (line []byte, ok bool) {
	s.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case f, open := <-s.frames:
		if !open {
			return nil, true
		}
		if f.err != nil {
			s.t.Fatalf("mcp-route wrote a bad frame: %v", f.err)
		}
		s.check(f.line)
		return f.line, true
	case <-timer.C:
		return nil, false
	}
}

// check validates one line the server wrote: UTF-8, a JSON-RPC message (or
// a batch of them), and valid in the schema of its revision.
func (s *server) check(line []byte) {
	s.t.Helper()
	s.checked++
	if !utf8.Valid(line) {
		s.t.Errorf("mcp-route wrote a line that is not UTF-8: %q", line)
	}
	var one struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      *codec.ID `json:"id"`
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
			s.t.Errorf("mcp-route wrote a bad batch (%v): %s", err, line)
		}
		for _, e := range batch {
			s.check(e)
		}
		return
	}
	if err := json.Unmarshal(line, &one); err != nil || one.JSONRPC != "2.0" {
		s.t.Errorf("mcp-route wrote a line that is not a JSON-RPC message (%v): %s", err, line)
		return
	}
	rev, method := s.rev, ""
	if one.ID != nil {
		if at, ok := s.sent[one.ID.Key()]; ok {
			rev, method = at.rev, at.method
		}
	}
	if !codec.IsSupportedRevision(rev) {
		if codec.IsModernRevision(rev) {
			rev = modern
		} else {
			rev = codec.LatestLegacyRevision
		}
	}
	if one.ID == nil && bytes.Contains(line, []byte(`"error"`)) && rev < codec.Rev20251125 {
		// An error answer to a frame whose id could not be read (a parse
		// error, a refused batch) cannot be valid before 2025-11-25: those
		// schemas require an id of type string or integer, while JSON-RPC
		// 2.0 wants null. Check it against the first schema that allows it.
		rev = codec.Rev20251125
	}
	spectest.CheckServerMessage(s.t, rev, method, line)
}

// response reads until the response to id, keeping notifications in
// s.notes and other responses for later.
func (s *server) response(id codec.ID) *codec.Message {
	s.t.Helper()
	for i, m := range s.stash {
		if m.ID.Key() == id.Key() {
			s.stash = append(s.stash[:i], s.stash[i+1:]...)
			return m
		}
	}
	for {
		m := s.next()
		if m == nil {
			s.t.Fatalf("mcp-route closed stdout before answering %s; stderr:\n%s", id, s.stderr.String())
		}
		if m.IsNotification() {
			s.notes = append(s.notes, m)
			continue
		}
		if m.ID != nil && m.ID.Key() == id.Key() {
			return m
		}
		s.stash = append(s.stash, m)
	}
}

// result is the response to id, which must be a success, decoded into v.
func (s *server) result(id codec.ID, v any) {
	s.t.Helper()
	m := s.response(id)
	if m.Error != nil {
		s.t.Fatalf("request %s: error %d %s", id, m.Error.Code, m.Error.Message)
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		s.t.Fatalf("request %s: result %s: %v", id, m.Result, err)
	}
}

// rpcError is the response to id, which must be an error.
func (s *server) rpcError(id codec.ID) *codec.Error {
	s.t.Helper()
	m := s.response(id)
	if m.Error == nil {
		s.t.Fatalf("request %s: got result %s, want an error", id, m.Result)
	}
	return m.Error
}

// initialize performs the legacy handshake asking for rev and returns the
// result; the session's revision becomes the negotiated one.
func (s *server) initialize(rev string) codec.InitializeResult {
	s.t.Helper()
	s.rev = codec.NegotiateLegacy(rev)
	s.nextID++
	id := codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodInitialize, s.rev}
	msg, err := codec.NewRequest(id, codec.MethodInitialize, map[string]any{
		"protocolVersion": rev,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1.0.0"},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(msg, s.rev)
	var res codec.InitializeResult
	s.result(id, &res)
	s.notify(codec.MethodInitialized, nil)
	return res
}

// callTool calls a tool in the session's revision and returns its result;
// a JSON-RPC error fails the test.
func (s *server) callTool(name string, args any) *codec.CallToolResult {
	s.t.Helper()
	id := s.startCall(name, args, nil)
	var res codec.CallToolResult
	s.result(id, &res)
	return &res
}

// startCall sends tools/call (with a progress token when token is not nil)
// and returns its id without waiting.
func (s *server) startCall(name string, args any, token any) codec.ID {
	s.t.Helper()
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	if token != nil {
		params["_meta"] = map[string]any{codec.MetaProgressToken: token}
	}
	return s.request(s.rev, codec.MethodToolsCall, params)
}

// listTools returns the tool names of tools/list in the session's revision,
// following cursors.
func (s *server) listTools() []codec.Tool {
	s.t.Helper()
	var tools []codec.Tool
	cursor := ""
	for range 100 {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var res codec.ListToolsResult
		s.result(s.request(s.rev, codec.MethodToolsList, params), &res)
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools
		}
		cursor = res.NextCursor
	}
	s.t.Fatal("tools/list: more than 100 pages")
	return nil
}

func names(tools []codec.Tool) []string {
	var n []string
	for _, t := range tools {
		n = append(n, t.Name)
	}
	return n
}

// closeStdin signals EOF to the server.
func (s *server) closeStdin() {
	s.t.Helper()
	if err := s.stdin.Close(); err != nil {
		s.t.Fatal(err)
	}
}

// drain reads and checks every remaining line until stdout closes.
func (s *server) drain() []*codec.Message {
	s.t.Helper()
	var out []*codec.Message
	for {
		m := s.next()
		if m == nil {
			return out
		}
		out = append(out, m)
	}
}

// wait returns the exit status, failing the test after waitLong.
func (s *server) wait() int {
	s.t.Helper()
	select {
	case <-s.exited:
		return s.status
	case <-time.After(waitLong):
		s.t.Fatalf("mcp-route did not exit within %v", waitLong)
		return -1
	}
}

// idKey renders an integer id as codec's Key does, for maps keyed by id.
func idKey(n int64) string { return codec.IntID(n).Key() }

// ctxTimeout is a context bounded by waitLong, for helper commands.
func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	return ctx
}

// mustJSON marshals v or fails.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noChildren waits until the server has no child process (running or
// zombie) left.
func noChildren(t *testing.T, s *server) {
	t.Helper()
	proctest.Eventually(t, func() string {
		if ps := proctest.Children(t, s.cmd.Process.Pid); len(ps) > 0 {
			return "mcp-route still has children: " + proctest.Describe(ps)
		}
		return ""
	})
}
