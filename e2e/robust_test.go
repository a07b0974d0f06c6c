package e2e

// Attacks on what mcp-route accepts from a client, replayed through the real
// binaries: each is refused with a message naming what was wrong and what
// is expected, no tool runs for it, and the harmless counterpart still
// works on the same connection.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// rawCall sends a tools/call line as written (not as codec would write it)
// and returns its response.
func (s *server) rawCall(params string) *codec.Message {
	s.t.Helper()
	s.nextID++
	id := codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodToolsCall, s.rev}
	s.raw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"tools/call","params":` + params + `}`)
	return s.response(id)
}

// wantRPCError fails unless m is a -32602 error whose message holds each
// of want.
func wantRPCError(t *testing.T, m *codec.Message, want ...string) {
	t.Helper()
	if m.Error == nil {
		t.Errorf("got result %s, want a -32602 error", m.Result)
		return
	}
	if m.Error.Code != codec.CodeInvalidParams {
		t.Errorf("error %d %q, want -32602", m.Error.Code, m.Error.Message)
	}
	for _, w := range want {
		if !strings.Contains(m.Error.Message, w) {
			t.Errorf("error %q does not say %q", m.Error.Message, w)
		}
	}
	if strings.Contains(m.Error.Message, "Go ") || strings.Contains(m.Error.Message, "unmarshal") {
		t.Errorf("error %q speaks of Go's internals", m.Error.Message)
	}
}

// A progress token that is an object or a fractional number would be echoed
// in notifications/progress, whose token is a string or an integer: the
// request is refused before the tool runs, in a legacy and in the modern
// revision; a string or integer token gets its progress.
func TestRouteRefusesBadProgressToken(t *testing.T) {
	for _, rev := range []string{codec.Rev20250618, modern} {
		t.Run(rev, func(t *testing.T) {
			f := newFixture(t)
			f.tool("prog", def("prog", "", ""), `touch "$MCP_ROOT/ran"; printf '{"progress":1,"total":1}\n' >&3; echo done`)
			s := f.start()
			metaOf := func(token string) string {
				m := `"progressToken":` + token
				if codec.IsModernRevision(rev) {
					m += `,"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{}`
				}
				return `{"name":"prog","_meta":{` + m + `}}`
			}
			if codec.IsModernRevision(rev) {
				s.rev = rev
			} else {
				s.initialize(rev)
			}
			for token, got := range map[string]string{`{"a":1}`: "not an object", `1.5`: "not the fractional number 1.5", `[1]`: "not an array"} {
				wantRPCError(t, s.rawCall(metaOf(token)), "params._meta.progressToken", "must be a string or an integer", got)
			}
			if _, err := os.Stat(filepath.Join(f.root, "ran")); err == nil {
				t.Fatal("the tool ran for a request with a bad progress token")
			}
			for _, token := range []string{`"tok"`, `7`} {
				s.notes = nil
				m := s.rawCall(metaOf(token))
				var r codec.CallToolResult
				if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
					t.Fatalf("token %s: %v %s", token, m.Error, m.Result)
				}
				wantOK(t, &r, "done")
				var echoed []string
				for _, n := range s.notes {
					if n.Method == codec.MethodProgress {
						var p codec.ProgressParams
						json.Unmarshal(n.Params, &p)
						echoed = append(echoed, string(p.ProgressToken))
					}
				}
				if !slices.Equal(echoed, []string{token}) {
					t.Errorf("token %s: progress notifications carried %q", token, echoed)
				}
			}
		})
	}
}

// A lone surrogate escape in a tool's arguments decodes to U+FFFD in the
// tool: fs_write would create "x\uFFFDy", a name the client never sent. The
// call is refused (-32602 naming the argument), nothing is created, and
// non-ASCII names (written as themselves or as a valid surrogate pair)
// still work.
func TestRouteRefusesLoneSurrogates(t *testing.T) {
	tools := readPackInstall(t, false)
	root := t.TempDir()
	s := startServer(t, root, nil, "--tools", tools, "--root", root, "--poll", "0", "--timeout", "15s")
	s.initialize(codec.LatestLegacyRevision)
	for _, path := range []string{`x\ud800y`, `x\udc00y`, `\ud83dz`, `caf\u00e9\udfff`} {
		wantRPCError(t, s.rawCall(`{"name":"fs_write","arguments":{"path":"`+path+`","content":"hi"}}`),
			"params.arguments.path", "lone surrogate", "not a Unicode character")
	}
	wantRPCError(t, s.rawCall(`{"name":"fs_write","arguments":{"path":"ok.txt","content":"a\ud800"}}`),
		"params.arguments.content", `lone surrogate \ud800`)
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("refused calls created %v", ents)
	}
	for _, c := range []struct{ sent, name string }{
		{`café.txt`, "café.txt"},
		{`caf\u00e9-2.txt`, "café-2.txt"},
		{`smile-\ud83d\ude00.txt`, "smile-😀.txt"},
	} {
		m := s.rawCall(`{"name":"fs_write","arguments":{"path":"` + c.sent + `","content":"hi"}}`)
		var r codec.CallToolResult
		if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.IsError {
			t.Errorf("fs_write %s: %v %s", c.sent, m.Error, m.Result)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(root, c.name)); err != nil || string(b) != "hi" {
			t.Errorf("fs_write %s: %q %v", c.sent, b, err)
		}
	}
}

// A params member of the wrong type is named in JSON's words, never Go's
// ("json: cannot unmarshal number into Go struct field CallToolParams.name
// of type string"), and the next request is served.
func TestRouteParamsErrorsInJSONWords(t *testing.T) {
	f := newFixture(t)
	f.tool("hello", def("hello", "", ""), `echo hello`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	wantRPCError(t, s.rawCall(`{"name":1}`), "params.name: expected a string, got a number")
	wantRPCError(t, s.rawCall(`{"name":"hello","_meta":[]}`), "params._meta: expected an object, got an array")
	s.nextID++
	id := codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodToolsList, s.rev}
	s.raw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"tools/list","params":{"cursor":5}}`)
	wantRPCError(t, s.response(id), "params.cursor: expected a string, got a number")
	// Duplicate members are refused before anything acts on either value.
	s.nextID++
	id = codec.IntID(s.nextID)
	s.sent[id.Key()] = sentAt{codec.MethodToolsCall, s.rev}
	s.raw(`{"jsonrpc":"2.0","id":` + id.String() + `,"method":"tools/call","params":{"name":"nope","name":"hello"}}`)
	if e := s.rpcError(id); e.Code != codec.CodeInvalidRequest || !strings.Contains(e.Message, `duplicate member "params.name"`) {
		t.Errorf("duplicate name: %d %q", e.Code, e.Message)
	}
	wantOK(t, s.callTool("hello", nil), "hello")
}

// A tool named "café" (by its file name, or in its sidecar) is left out with
// a log line naming the character the user wrote, 'é', not a byte of it
// decoded as 'Ã'; "cafe" is served.
func TestRouteToolNameCharacterNamed(t *testing.T) {
	f := newFixture(t)
	f.tool("café", `{"description":"Accented.","inputSchema":{"type":"object"}}`, `echo accented`)
	f.tool("named", `{"name":"naïve","description":"Accented in its sidecar.","inputSchema":{"type":"object"}}`, `echo naive`)
	f.tool("cafe", def("cafe", "", ""), `echo plain`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	if n := names(s.listTools()); !slices.Equal(n, []string{"cafe"}) {
		t.Errorf("tools %q, want [cafe]", n)
	}
	wantOK(t, s.callTool("cafe", nil), "plain")
	s.closeStdin()
	s.drain()
	s.wait()
	// slog's text records quote the message: read it unquoted.
	log := strings.ReplaceAll(s.stderr.String(), `\"`, `"`)
	for _, want := range []string{
		`name "café" has character 'é' (U+00E9) at position 4; allowed: A-Z a-z 0-9 _ - .`,
		`name "naïve" has character 'ï' (U+00EF) at position 3`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log does not say %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "Ã") {
		t.Errorf("log shows a byte decoded as a character:\n%s", log)
	}
}

// fs_stat (follow false, the default) of a symlink that points outside the
// root describes the link itself, as ls -l does: type symlink, mode
// lrwxrwxrwx, its target as text; never what it points to. follow: true,
// and a path through the link, are still refused.
func TestStockStatLinkOut(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true))
	for name, target := range map[string]string{"link-out": "../outside/secret.txt", "dir-out": "../outside", "link-in": "hello.txt"} {
		r := s.callTool("fs_stat", map[string]any{"path": name})
		var st struct {
			Type, ModeString, Target string
			Size                     int64
		}
		if r.IsError || json.Unmarshal(r.StructuredContent, &st) != nil {
			t.Errorf("fs_stat %s: %s", name, readText(r))
			continue
		}
		if st.Type != "symlink" || st.ModeString != "lrwxrwxrwx" || st.Target != target || st.Size != int64(len(target)) {
			t.Errorf("fs_stat %s: %+v; want a symlink to %q, lrwxrwxrwx", name, st, target)
		}
		if strings.Contains(readText(r), readCanary) {
			t.Errorf("fs_stat %s: LEAK: %s", name, readText(r))
		}
	}
	for _, args := range []map[string]any{
		{"path": "link-out", "follow": true},
		{"path": "dir-out/secret.txt"},
		{"path": "../outside/secret.txt"},
	} {
		r := s.callTool("fs_stat", args)
		if !r.IsError || !strings.Contains(readText(r), "path escapes root") {
			t.Errorf("fs_stat %v: %s; want path escapes root", args, readText(r))
		}
	}
	r := s.callTool("fs_stat", map[string]any{"path": "hello.txt"})
	if !strings.Contains(string(r.StructuredContent), `"modeString":"-rw-r--r--"`) {
		t.Errorf("fs_stat hello.txt: %s", r.StructuredContent)
	}
}

// A hard link inside the root to a file outside is the file itself: the
// tools that change a file in place (fs_append, fs_chmod, fs_touch) refuse
// a file with more than one link, saying why, and the outside file keeps
// its contents, mode and times; fs_write and fs_replace replace the name
// inside the root, so the outside file keeps its contents too. A file with
// one link is changed as usual. Reading through the link is not refused (it
// cannot be told from the file; README, Safety).
func TestStockHardLinkOut(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside.txt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hard.txt", "hard2.txt"} {
		if err := os.Link(outside, filepath.Join(root, name)); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "own.txt"), []byte("own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(outside, past, past); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		fi, err := os.Stat(outside)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(outside)
		return fmt.Sprintf("%s %v %v", b, fi.Mode(), fi.ModTime())
	}
	before := state()
	tools := readPackInstall(t, false)
	s := startServer(t, root, nil, "--tools", tools, "--root", root, "--poll", "0", "--timeout", "15s")
	s.initialize(codec.LatestLegacyRevision)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"fs_append", map[string]any{"path": "hard.txt", "content": "pwned\n"}},
		{"fs_chmod", map[string]any{"path": "hard.txt", "mode": "777"}},
		{"fs_touch", map[string]any{"path": "hard.txt"}},
	} {
		wantErr(t, s.callTool(c.tool, c.args), "hard.txt: has 3 hard links", "outside the root")
	}
	if got := state(); got != before {
		t.Fatalf("the outside file changed through its hard link:\n%s\nwas\n%s", got, before)
	}
	r := s.callTool("fs_read", map[string]any{"path": "hard.txt"})
	wantOK(t, r, "outside")
	wantOK(t, s.callTool("fs_write", map[string]any{"path": "hard.txt", "content": "replaced\n"}), "")
	wantOK(t, s.callTool("fs_replace", map[string]any{"path": "hard2.txt", "old": "outside", "new": "changed"}), "")
	if b, _ := os.ReadFile(outside); string(b) != "outside\n" {
		t.Errorf("fs_write/fs_replace through a hard link changed the outside file: %q", b)
	}
	for name, want := range map[string]string{"hard.txt": "replaced\n", "hard2.txt": "changed\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != want {
			t.Errorf("%s: %q, want %q", name, b, want)
		}
	}
	// One link: changed in place as usual.
	wantOK(t, s.callTool("fs_append", map[string]any{"path": "own.txt", "content": "more\n"}), "")
	wantOK(t, s.callTool("fs_chmod", map[string]any{"path": "own.txt", "mode": "600"}), "")
	wantOK(t, s.callTool("fs_touch", map[string]any{"path": "own.txt"}), "")
	if b, _ := os.ReadFile(filepath.Join(root, "own.txt")); string(b) != "own\nmore\n" {
		t.Errorf("own.txt: %q", b)
	}
}

// A tool's own result (result mode mcp) may carry structuredContent of any
// JSON value: a 2026-07-28 client gets it as written, a 2025-06-18 client
// (whose schema wants an object) gets the result without it, never a
// schema violation; a content block of the wrong shape is still refused.
func TestRouteToolStructuredContentPerRevision(t *testing.T) {
	f := newFixture(t)
	f.tool("arr", def("arr", "", `{"result":"mcp"}`), `echo '{"content":[{"type":"text","text":"1 2"}],"structuredContent":[1,2]}'`)
	f.tool("bad", def("bad", "", `{"result":"mcp"}`), `echo '{"content":[{"type":"text","text":3}]}'`)
	for _, rev := range []string{modern, codec.Rev20250618} {
		t.Run(rev, func(t *testing.T) {
			s := f.start()
			if codec.IsModernRevision(rev) {
				s.rev = rev
			} else {
				s.initialize(rev)
			}
			r := s.callTool("arr", nil)
			wantOK(t, r, "1 2")
			want := ""
			if codec.IsModernRevision(rev) {
				want = "[1,2]"
			}
			if string(r.StructuredContent) != want {
				t.Errorf("structuredContent %s, want %q", r.StructuredContent, want)
			}
			wantErr(t, s.callTool("bad", nil), "content[0].text must be a string, not a number")
		})
	}
}
