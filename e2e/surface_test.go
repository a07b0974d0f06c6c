package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcp-route --resources DIR and --prompts DIR (package mcp-route/surface),
// and mcp-call's commands for them, through the real binaries: every line
// mcp-route writes is checked against the revision's schema.

// surfaceFixture is a temp dir with resources/, prompts/, root/ and a
// secret outside all of them.
type surfaceFixture struct {
	dir, resources, prompts, root, secret string
}

func newSurfaceFixture(t *testing.T) *surfaceFixture {
	t.Helper()
	d := t.TempDir()
	f := &surfaceFixture{dir: d, resources: filepath.Join(d, "resources"), prompts: filepath.Join(d, "prompts"), root: filepath.Join(d, "root"), secret: filepath.Join(d, "secret.txt")}
	for _, p := range []string{f.resources, f.prompts, f.root} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, f.secret, "the secret\n", 0o644)
	// Resources: a plain file (file:// uri), one with a sidecar uri, a
	// binary one, a template served by an executable, a symlink inside
	// (served) and one out of the directory (refused), a sidecar uri with
	// "..", a uriTemplate on a plain file (refused).
	write(t, filepath.Join(f.resources, "notes.txt"), "some notes\n", 0o644)
	write(t, filepath.Join(f.resources, "readme.md"), "# readme\n", 0o644)
	write(t, filepath.Join(f.resources, "readme.md.json"), `{"uri": "docs://readme", "title": "Read me", "description": "The read-me."}`, 0o644)
	write(t, filepath.Join(f.resources, "pixel.png"), string([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}), 0o644)
	write(t, filepath.Join(f.resources, "greet"), "#!/bin/sh\nprintf 'hello %s at %s' \"$MCP_ARG_WHO\" \"$MCP_RESOURCE_URI\"\n", 0o755)
	write(t, filepath.Join(f.resources, "greet.json"), `{"uriTemplate": "greet://{who}", "mimeType": "text/plain", "complete": {"who": "exec"}}`, 0o644)
	if err := os.Symlink("notes.txt", filepath.Join(f.resources, "inside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.secret, filepath.Join(f.resources, "escape")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(f.resources, "dots.txt"), "x", 0o644)
	write(t, filepath.Join(f.resources, "dots.txt.json"), `{"uri": "file:///srv/../etc/passwd"}`, 0o644)
	write(t, filepath.Join(f.resources, "tmpl.txt"), "x", 0o644)
	write(t, filepath.Join(f.resources, "tmpl.txt.json"), `{"uriTemplate": "x://{a}"}`, 0o644)
	// greet --mcp-complete: its completion values.
	write(t, filepath.Join(f.resources, "greet"), `#!/bin/sh
if [ "$1" = --mcp-complete ]; then
	for w in alice albert bob; do case $w in "$MCP_COMPLETE_VALUE"*) echo $w;; esac; done
	exit 0
fi
printf 'hello %s at %s' "$MCP_ARG_WHO" "$MCP_RESOURCE_URI"
`, 0o755)

	// Prompts: a template with arguments, an executable printing
	// messages, one printing garbage.
	write(t, filepath.Join(f.prompts, "review"), "Review {{file}} for {{ focus }}.", 0o644)
	write(t, filepath.Join(f.prompts, "review.json"), `{"description": "Review a file.", "arguments": [{"name": "file", "required": true}, {"name": "focus"}], "complete": {"focus": ["security", "speed", "style"]}}`, 0o644)
	write(t, filepath.Join(f.prompts, "show"), `#!/bin/sh
printf '{"messages":[{"role":"user","content":{"type":"text","text":"topic: %s"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"docs://readme","mimeType":"text/markdown","text":"# readme"}}}]}' "$MCP_ARG_TOPIC"
`, 0o755)
	write(t, filepath.Join(f.prompts, "broken"), "#!/bin/sh\necho not json\n", 0o755)
	return f
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func (f *surfaceFixture) args(extra ...string) []string {
	return append([]string{"--resources", f.resources, "--prompts", f.prompts, "--root", f.root, "--poll", "100ms"}, extra...)
}

type listedResource struct {
	URI, URITemplate, Name, Title, MimeType string
}

func TestResourcesServe(t *testing.T) {
	f := newSurfaceFixture(t)
	s := startServer(t, f.dir, nil, f.args()...)
	init := s.initialize(codec.Rev20251125)
	var caps struct {
		Resources struct{ Subscribe, ListChanged bool }
		Prompts   struct{ ListChanged bool }
	}
	b, _ := json.Marshal(init.Capabilities)
	json.Unmarshal(b, &caps)
	if !caps.Resources.Subscribe || !caps.Resources.ListChanged || !caps.Prompts.ListChanged || init.Capabilities.Completions == nil {
		t.Errorf("capabilities %s: want resources (subscribe, listChanged), prompts (listChanged), completions", b)
	}

	var list struct{ Resources []listedResource }
	s.result(s.request(s.rev, "resources/list", nil), &list)
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	notes := "file://" + filepath.Join(f.resources, "notes.txt")
	want := []string{"docs://readme", "file://" + filepath.Join(f.resources, "inside-link"), notes, "file://" + filepath.Join(f.resources, "pixel.png")}
	if !slices.Equal(uris, want) {
		t.Errorf("resources/list uris %q, want %q (escape, dots.txt and tmpl.txt refused)", uris, want)
	}
	if !strings.Contains(s.stderr.String(), "outside") || !strings.Contains(s.stderr.String(), `dots.txt why="a uri with`) || !strings.Contains(s.stderr.String(), "uriTemplate needs an executable") {
		t.Errorf("stderr does not say why escape, dots.txt and tmpl.txt are left out:\n%s", s.stderr.String())
	}
	var tl struct{ ResourceTemplates []listedResource }
	s.result(s.request(s.rev, "resources/templates/list", nil), &tl)
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "greet://{who}" {
		t.Errorf("templates %+v", tl.ResourceTemplates)
	}

	type contents struct {
		Contents []struct {
			URI, MimeType string
			Text          *string
			Blob          string
		}
	}
	read := func(uri string) contents {
		t.Helper()
		var c contents
		s.result(s.request(s.rev, "resources/read", map[string]any{"uri": uri}), &c)
		if len(c.Contents) != 1 || c.Contents[0].URI != uri {
			t.Fatalf("read %s: %+v", uri, c)
		}
		return c
	}
	if c := read(notes); c.Contents[0].Text == nil || *c.Contents[0].Text != "some notes\n" || !strings.HasPrefix(c.Contents[0].MimeType, "text/plain") {
		t.Errorf("notes: %+v", c.Contents[0])
	}
	if c := read("file://" + filepath.Join(f.resources, "pixel.png")); c.Contents[0].Blob != base64.StdEncoding.EncodeToString([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}) || c.Contents[0].MimeType != "image/png" {
		t.Errorf("pixel.png: %+v", c.Contents[0])
	}
	if c := read("greet://world"); c.Contents[0].Text == nil || *c.Contents[0].Text != "hello world at greet://world" {
		t.Errorf("greet://world: %+v", c.Contents[0])
	}
	// Not found: -32602 with the uri in data, never empty contents; a
	// template variable with ".." matches nothing.
	for _, uri := range []string{"docs://nothing", "greet://..", "greet://%2e%2e", "file://" + f.secret, "file://" + filepath.Join(f.resources, "escape")} {
		e := s.rpcError(s.request(s.rev, "resources/read", map[string]any{"uri": uri}))
		var data struct{ URI string }
		json.Unmarshal(e.Data, &data)
		if e.Code != codec.CodeInvalidParams || data.URI != uri {
			t.Errorf("read %s: %d %s %s, want -32602 with data.uri", uri, e.Code, e.Message, e.Data)
		}
	}

	// Subscribe, change the file: notifications/resources/updated.
	s.result(s.request(s.rev, "resources/subscribe", map[string]any{"uri": notes}), &struct{}{})
	if e := s.rpcError(s.request(s.rev, "resources/subscribe", map[string]any{"uri": "docs://nothing"})); e.Code != codec.CodeInvalidParams {
		t.Errorf("subscribe to nothing: %d %s", e.Code, e.Message)
	}
	time.Sleep(50 * time.Millisecond)
	write(t, filepath.Join(f.resources, "notes.txt"), "changed notes, longer\n", 0o644)
	waitNote(t, s, "notifications/resources/updated", notes)
	if c := read(notes); *c.Contents[0].Text != "changed notes, longer\n" {
		t.Errorf("after the change: %q", *c.Contents[0].Text)
	}
	// Swapped for a symlink out of the directory after the scan: the read
	// goes through the jail and is refused; the file put back is served.
	os.Remove(filepath.Join(f.resources, "notes.txt"))
	os.Symlink(f.secret, filepath.Join(f.resources, "notes.txt"))
	e := s.rpcError(s.request(s.rev, "resources/read", map[string]any{"uri": notes}))
	if e.Code != codec.CodeInvalidParams || strings.Contains(e.Message, "the secret") {
		t.Errorf("read through a swapped symlink: %d %s", e.Code, e.Message)
	}
	os.Remove(filepath.Join(f.resources, "notes.txt"))
	write(t, filepath.Join(f.resources, "notes.txt"), "back\n", 0o644)
	proctest.Eventually(t, func() string {
		var c contents
		m := s.response(s.request(s.rev, "resources/read", map[string]any{"uri": notes}))
		if m.Error != nil || json.Unmarshal(m.Result, &c) != nil || len(c.Contents) != 1 || c.Contents[0].Text == nil || *c.Contents[0].Text != "back\n" {
			return "notes.txt put back is not served"
		}
		return ""
	})
	// Unsubscribed: no update for the next change. A new file: list_changed.
	s.result(s.request(s.rev, "resources/unsubscribe", map[string]any{"uri": notes}), &struct{}{})
	// What the put-back's poll sent is read before the slate is wiped.
	time.Sleep(300 * time.Millisecond)
	s.result(s.request(s.rev, "ping", nil), &struct{}{})
	s.notes = nil
	write(t, filepath.Join(f.resources, "notes.txt"), "changed again, and longer still\n", 0o644)
	write(t, filepath.Join(f.resources, "new.txt"), "new\n", 0o644)
	waitNote(t, s, "notifications/resources/list_changed", "")
	for _, m := range s.notes {
		if m.Method == "notifications/resources/updated" {
			t.Errorf("an update after unsubscribe: %s", m.Params)
		}
	}
}

// waitNote reads until the notification method (with params.uri = uri
// when uri is set).
func waitNote(t *testing.T, s *server, method, uri string) {
	t.Helper()
	match := func(m *codec.Message) bool {
		if m.Method != method {
			return false
		}
		var p struct{ URI string }
		json.Unmarshal(m.Params, &p)
		return uri == "" || p.URI == uri
	}
	for i, m := range s.notes {
		if match(m) {
			s.notes = append(s.notes[:i], s.notes[i+1:]...)
			return
		}
	}
	for {
		m := s.next()
		if m == nil {
			t.Fatalf("stdout closed before %s", method)
		}
		if match(m) {
			return
		}
		if m.IsNotification() {
			s.notes = append(s.notes, m)
		} else {
			s.stash = append(s.stash, m)
		}
	}
}

func TestPromptsServe(t *testing.T) {
	f := newSurfaceFixture(t)
	s := startServer(t, f.dir, nil, f.args()...)
	s.initialize(codec.Rev20250618)
	var list struct {
		Prompts []struct {
			Name, Description string
			Arguments         []struct {
				Name     string
				Required bool
			}
		}
	}
	s.result(s.request(s.rev, "prompts/list", nil), &list)
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"broken", "review", "show"}) || list.Prompts[1].Description != "Review a file." || len(list.Prompts[1].Arguments) != 2 || !list.Prompts[1].Arguments[0].Required {
		t.Errorf("prompts/list %+v", list.Prompts)
	}
	type got struct {
		Messages []struct {
			Role    string
			Content codec.Content
		}
	}
	var g got
	s.result(s.request(s.rev, "prompts/get", map[string]any{"name": "review", "arguments": map[string]string{"file": "main.go", "focus": "security"}}), &g)
	if len(g.Messages) != 1 || g.Messages[0].Role != "user" || g.Messages[0].Content.Text != "Review main.go for security." {
		t.Errorf("review: %+v", g.Messages)
	}
	g = got{}
	s.result(s.request(s.rev, "prompts/get", map[string]any{"name": "show", "arguments": map[string]string{"topic": "caching"}}), &g)
	if len(g.Messages) != 2 || g.Messages[0].Content.Text != "topic: caching" || g.Messages[1].Content.Resource == nil || g.Messages[1].Content.Resource.URI != "docs://readme" {
		t.Errorf("show: %+v", g.Messages)
	}
	for _, c := range []struct {
		params map[string]any
		code   int
		want   string
	}{
		{map[string]any{"name": "review"}, codec.CodeInvalidParams, `needs the argument "file"`},
		{map[string]any{"name": "review", "arguments": map[string]any{"file": 3}}, codec.CodeInvalidParams, "must be a string"},
		{map[string]any{"name": "nope"}, codec.CodeInvalidParams, "unknown prompt"},
		{map[string]any{"name": "broken"}, codec.CodeInternalError, "bad output"},
	} {
		if e := s.rpcError(s.request(s.rev, "prompts/get", c.params)); e.Code != c.code || !strings.Contains(e.Message, c.want) {
			t.Errorf("prompts/get %v: %d %s, want %d %q", c.params, e.Code, e.Message, c.code, c.want)
		}
	}
	// Completion: a sidecar list, and an executable's --mcp-complete.
	complete := func(ref map[string]string, arg, value string) []string {
		t.Helper()
		var r struct{ Completion struct{ Values []string } }
		s.result(s.request(s.rev, "completion/complete", map[string]any{"ref": ref, "argument": map[string]string{"name": arg, "value": value}}), &r)
		return r.Completion.Values
	}
	if v := complete(map[string]string{"type": "ref/prompt", "name": "review"}, "focus", "s"); !slices.Equal(v, []string{"security", "speed", "style"}) {
		t.Errorf("complete focus s: %q", v)
	}
	if v := complete(map[string]string{"type": "ref/prompt", "name": "review"}, "focus", "sp"); !slices.Equal(v, []string{"speed"}) {
		t.Errorf("complete focus sp: %q", v)
	}
	if v := complete(map[string]string{"type": "ref/prompt", "name": "review"}, "file", "x"); len(v) != 0 {
		t.Errorf("complete file (nothing declared): %q", v)
	}
	if v := complete(map[string]string{"type": "ref/resource", "uri": "greet://{who}"}, "who", "al"); !slices.Equal(v, []string{"alice", "albert"}) {
		t.Errorf("complete who al: %q", v)
	}
	// A new prompt: list_changed.
	write(t, filepath.Join(f.prompts, "later"), "later", 0o644)
	waitNote(t, s, "notifications/prompts/list_changed", "")
	// A template swapped for a symlink to a file out of the directory:
	// refused (by the jail, or left out by the next poll), its content
	// never sent.
	os.Remove(filepath.Join(f.prompts, "later"))
	if err := os.Symlink(f.secret, filepath.Join(f.prompts, "later")); err != nil {
		t.Fatal(err)
	}
	m := s.response(s.request(s.rev, "prompts/get", map[string]any{"name": "later"}))
	if m.Error == nil || strings.Contains(m.Error.Message, "the secret") {
		t.Errorf("a template swapped for a symlink out: %s %+v", m.Result, m.Error)
	}
}

// mcp-call's commands for resources, prompts and completion, in both eras.
func TestCallSurfaceCommands(t *testing.T) {
	f := newSurfaceFixture(t)
	server := append([]string{"--", routeBin(t)}, f.args()...)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(callBin(t), append(args, server...)...)
		cmd.Env = baseEnv()
		cmd.Dir = f.dir
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	for _, era := range []string{"legacy", "modern"} {
		notes := "file://" + filepath.Join(f.resources, "notes.txt")
		if out, errs, code := run("--era", era, "resources"); code != 0 || !strings.Contains(out, "docs://readme\tThe read-me.\n") || !strings.Contains(out, notes+"\n") {
			t.Errorf("%s resources: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "templates"); code != 0 || out != "greet://{who}\n" {
			t.Errorf("%s templates: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "read", notes); code != 0 || out != "some notes\n" {
			t.Errorf("%s read: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "read", "file://"+filepath.Join(f.resources, "pixel.png")); code != 0 || out != string([]byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}) {
			t.Errorf("%s read blob: %d %q %s", era, code, out, errs)
		}
		if _, errs, code := run("--era", era, "read", "docs://nothing"); code != 2 || !strings.Contains(errs, "Resource not found") {
			t.Errorf("%s read missing: %d %s", era, code, errs)
		}
		if out, errs, code := run("--era", era, "prompts"); code != 0 || out != "broken\nreview\tReview a file.\nshow\n" {
			t.Errorf("%s prompts: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "prompt", "review", "file=a.go"); code != 0 || out != "user: Review a.go for .\n" {
			t.Errorf("%s prompt: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "--json", "prompt", "show", "topic=x"); code != 0 || !strings.Contains(out, `"text": "topic: x"`) {
			t.Errorf("%s prompt --json: %d %q %s", era, code, out, errs)
		}
		if _, errs, code := run("--era", era, "prompt", "review", "nokey"); code != 2 || !strings.Contains(errs, "want key=value") {
			t.Errorf("%s prompt bad arg: %d %s", era, code, errs)
		}
		if out, errs, code := run("--era", era, "complete", "prompt", "review", "focus", "st"); code != 0 || out != "style\n" {
			t.Errorf("%s complete prompt: %d %q %s", era, code, out, errs)
		}
		if out, errs, code := run("--era", era, "complete", "resource", "greet://{who}", "who", "b"); code != 0 || out != "bob\n" {
			t.Errorf("%s complete resource: %d %q %s", era, code, out, errs)
		}
	}
}

// A resource or prompt directory inside the --root tools can write is
// refused at start, as a tool directory is: a client could write an
// executable there with a writing tool, then have it run by a read. With
// the directory outside the root, the same server starts.
func TestSurfaceDirsOutsideWritableRoot(t *testing.T) {
	f := newSurfaceFixture(t)
	inside := filepath.Join(f.root, "res")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--resources", "--prompts"} {
		cmd := exec.Command(routeBin(t), flag, inside, "--root", f.root)
		cmd.Env = baseEnv()
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), inside) {
			t.Errorf("%s inside the writable root: %v %s, want exit 1 naming it", flag, err, out)
		}
		cmd = exec.Command(routeBin(t), flag, filepath.Join(f.dir, "nope"), "--root", f.root)
		cmd.Env = baseEnv()
		out, err = cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), flag+" "+filepath.Join(f.dir, "nope")+": no such directory") {
			t.Errorf("%s missing: %v %s", flag, err, out)
		}
	}
	cmd := exec.Command(routeBin(t), f.args()...)
	cmd.Env = baseEnv()
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("outside the root: %v %s", err, out)
	}
}

// 2026-07-28: the same methods, stateless, each answer with the members
// that revision requires (ttlMs and cacheScope on lists and reads: the
// schema check of every line proves them); resources/subscribe does not
// exist there.
func TestSurfaceModern(t *testing.T) {
	f := newSurfaceFixture(t)
	s := startServer(t, f.dir, nil, f.args()...)
	s.rev = modern
	var list struct {
		Resources  []listedResource
		TTLMs      *int64
		CacheScope string
	}
	s.result(s.request(s.rev, "resources/list", nil), &list)
	if len(list.Resources) != 4 || list.TTLMs == nil || *list.TTLMs != 100 || list.CacheScope != "public" {
		t.Errorf("resources/list: %+v", list)
	}
	var read struct {
		Contents   []struct{ Text string }
		TTLMs      *int64
		CacheScope string
	}
	s.result(s.request(s.rev, "resources/read", map[string]any{"uri": "greet://you"}), &read)
	if len(read.Contents) != 1 || read.Contents[0].Text != "hello you at greet://you" || read.TTLMs == nil || *read.TTLMs != 0 || read.CacheScope != "private" {
		t.Errorf("read of a dynamic resource: %+v", read)
	}
	s.result(s.request(s.rev, "resources/templates/list", nil), &struct{}{})
	s.result(s.request(s.rev, "prompts/list", nil), &struct{}{})
	s.result(s.request(s.rev, "prompts/get", map[string]any{"name": "review", "arguments": map[string]string{"file": "x"}}), &struct{}{})
	s.result(s.request(s.rev, "completion/complete", map[string]any{"ref": map[string]string{"type": "ref/prompt", "name": "review"}, "argument": map[string]string{"name": "focus", "value": ""}}), &struct{}{})
	if e := s.rpcError(s.request(s.rev, "resources/subscribe", map[string]any{"uri": "docs://readme"})); e.Code != codec.CodeMethodNotFound {
		t.Errorf("modern resources/subscribe: %d %s, want -32601", e.Code, e.Message)
	}
}

// Over Streamable HTTP a resource subscription belongs to the session: the
// subscribe is one POST, the update arrives on the session's GET stream.
func TestResourceSubscriptionHTTP(t *testing.T) {
	f := newSurfaceFixture(t)
	url := startRouteHTTP(t, f.root, append([]string{"--http", "127.0.0.1:0"}, f.args()...)...)
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" || !strings.Contains(body, `"subscribe":true`) {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	events := sessionStream(t, url, sid)
	notes := "file://" + filepath.Join(f.resources, "notes.txt")
	if _, body := post(sid, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"`+notes+`"}}`); !strings.Contains(body, `"result":{}`) {
		t.Fatalf("subscribe: %s", body)
	}
	time.Sleep(150 * time.Millisecond)
	write(t, filepath.Join(f.resources, "notes.txt"), "changed over HTTP, longer\n", 0o644)
	if !awaitEvent(events, `"notifications/resources/updated"`, notes) {
		t.Fatalf("no notifications/resources/updated on the GET stream within %v", waitLong)
	}
}

// sessionStream opens the GET stream of a 2025-11-25 Streamable HTTP
// session and returns its SSE events' data, one string each, until it
// ends; it is closed when the test ends.
func sessionStream(t *testing.T, url, sid string) <-chan string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	t.Cleanup(func() { stream.Body.Close() })
	events := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	return events
}

// awaitEvent reports whether an event holding every one of want comes
// within waitLong, before the stream ends.
func awaitEvent(events <-chan string, want ...string) bool {
	timeout := time.After(waitLong)
	for {
		select {
		case d, ok := <-events:
			if !ok {
				return false
			}
			if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(d, w) }) {
				return true
			}
		case <-timeout:
			return false
		}
	}
}

// The official Go SDK client lists and reads resources, gets prompts and
// completes against mcp-route.
func TestInteropSurfaceGoSDK(t *testing.T) {
	f := newSurfaceFixture(t)
	tools := filepath.Join(f.dir, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t)
	cs, _, _, err := goSDKRoute(t, ctx, tools, f.root, nil, nil, "--resources", f.resources, "--prompts", f.prompts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 4 || lr.Resources[0].URI != "docs://readme" || lr.Resources[0].Title != "Read me" {
		t.Fatalf("ListResources: %v %+v", err, lr)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "greet://sdk"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello sdk at greet://sdk" {
		t.Fatalf("ReadResource: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://nothing"}); err == nil || !strings.Contains(err.Error(), "Resource not found") {
		t.Errorf("ReadResource of nothing: %v", err)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "greet://{who}" {
		t.Errorf("ListResourceTemplates: %v %+v", err, lt)
	}
	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(lp.Prompts) != 3 {
		t.Fatalf("ListPrompts: %v %+v", err, lp)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"file": "a.go", "focus": "speed"}})
	if err != nil || len(gp.Messages) != 1 {
		t.Fatalf("GetPrompt: %v %+v", err, gp)
	}
	if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review a.go for speed." {
		t.Errorf("GetPrompt message: %#v", gp.Messages[0].Content)
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, Argument: mcp.CompleteParamsArgument{Name: "focus", Value: "se"}})
	if err != nil || !slices.Equal(cr.Completion.Values, []string{"security"}) {
		t.Errorf("Complete: %v %+v", err, cr)
	}
}

// A dynamic resource runs confined like a tool: it cannot read a file
// outside --root and the granted places, and can read one inside --root.
// The fixture's resources/escape is a symlink to the secret: refused as a
// resource, it must not grant its target to the confinement either (the
// targets of symlinked executables in a tool directory are granted, so
// that linked tools run; a data file is no tool).
func TestDynamicResourceConfined(t *testing.T) {
	if out, err := exec.Command(routeBin(t), "--confine-check").CombinedOutput(); err != nil || !strings.Contains(string(out), "landlock: ABI") {
		t.Skipf("no Landlock here: %s", out)
	}
	f := newSurfaceFixture(t)
	write(t, filepath.Join(f.root, "inside.txt"), "inside\n", 0o644)
	write(t, filepath.Join(f.resources, "cat"), "#!/bin/sh\nexec cat \"$MCP_ARG_FILE\"\n", 0o755)
	write(t, filepath.Join(f.resources, "cat.json"), `{"uriTemplate": "cat://{+file}"}`, 0o644)
	s := startServer(t, f.dir, nil, f.args("--confine", "require")...)
	s.initialize(codec.Rev20251125)
	var c struct{ Contents []struct{ Text string } }
	s.result(s.request(s.rev, "resources/read", map[string]any{"uri": "cat://" + filepath.Join(f.root, "inside.txt")}), &c)
	if len(c.Contents) != 1 || c.Contents[0].Text != "inside\n" {
		t.Errorf("a file inside --root: %+v", c)
	}
	e := s.rpcError(s.request(s.rev, "resources/read", map[string]any{"uri": "cat://" + f.secret}))
	if e.Code != codec.CodeInternalError || strings.Contains(e.Message, "the secret") || !strings.Contains(e.Message, "ermission denied") {
		t.Errorf("a file outside: %d %s, want -32603 permission denied", e.Code, e.Message)
	}
}

// With --poll 0 nothing polls: each request re-reads the directories, so a
// new resource is listed and read at once.
func TestSurfaceNoPoll(t *testing.T) {
	f := newSurfaceFixture(t)
	s := startServer(t, f.dir, nil, f.args("--poll", "0")...)
	s.initialize(codec.Rev20251125)
	var list struct{ Resources []listedResource }
	s.result(s.request(s.rev, "resources/list", nil), &list) // the first load is done
	write(t, filepath.Join(f.resources, "fresh.txt"), "fresh\n", 0o644)
	s.result(s.request(s.rev, "resources/list", nil), &list)
	fresh := "file://" + filepath.Join(f.resources, "fresh.txt")
	if !slices.ContainsFunc(list.Resources, func(r listedResource) bool { return r.URI == fresh }) {
		t.Errorf("a new file is not listed with --poll 0: %+v", list.Resources)
	}
	waitNote(t, s, "notifications/resources/list_changed", "")
}
