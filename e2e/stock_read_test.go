package e2e

// End-to-end tests of mcp-stock's 18 read tools: the real mcp-stock
// binary installed with `mcp-stock install DIR`, served by the real
// mcp-route, driven through pipes. Binaries: MCP_ROUTE_BIN and
// MCP_STOCK_BIN under Bazel (internal/testbin).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// readCanary is the content of every file outside the root; no answer may
// ever contain it.
const readCanary = "CANARY-outside-the-root-7f3a"

// readTools is DESIGN.md's read roster.
var readTools = []string{
	"fs_count", "fs_du", "fs_exists", "fs_find", "fs_first_match", "fs_glob",
	"fs_grep", "fs_grep_count", "fs_hash", "fs_head", "fs_lines", "fs_list",
	"fs_read", "fs_readlink", "fs_realpath", "fs_slice", "fs_stat", "fs_tail",
}

// readOnlyTools is the read-only roster: the read tools and the system ones.
var readOnlyTools = append(slices.Clone(readTools), "env_get", "sys_info", "time_now")

// readPackInstall runs `mcp-stock install DIR [--readonly]` into a new
// directory and returns it.
func readPackInstall(t *testing.T, readonly bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tools")
	args := []string{"install", dir}
	if readonly {
		args = append(args, "--readonly")
	}
	cmd := exec.CommandContext(ctxTimeout(t), testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock"), args...)
	cmd.Env = baseEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcp-stock %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return dir
}

// readPackFixture is a root with files, links and a FIFO, beside a sibling
// whose name starts with the root's ("data-evil") and an "outside"
// directory; both hold the canary.
type readPackFixture struct {
	base, root string
}

func newReadPackFixture(t *testing.T) readPackFixture {
	t.Helper()
	base := t.TempDir()
	// The root's own path must not hide behind a symlink (e.g. /tmp on
	// some systems): absolute names are written against the real path.
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	f := readPackFixture{base: base, root: filepath.Join(base, "data")}
	var lines strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	files := map[string]string{
		"data/hello.txt":          "hello\nworld\n",
		"data/lines.txt":          lines.String(),
		"data/dir/a.go":           "package a\n// TODO first\n",
		"data/dir/b.txt":          "b\n",
		"data-evil/secret.txt":    readCanary + "\n",
		"outside/secret.txt":      readCanary + "\n",
		"outside/canary-name.txt": readCanary + "\n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-in":   "hello.txt",
		"link-out":  "../outside/secret.txt",
		"abs-out":   filepath.Join(base, "outside", "secret.txt"),
		"chain1":    "chain2",
		"chain2":    "dir/../chain3",
		"chain3":    "../outside/secret.txt",
		"dir-out":   "../outside",
		"root-up":   "..",
		"proc-link": "/proc/self/root" + filepath.Join(base, "outside", "secret.txt"),
		"proc-cwd":  "/proc/self/cwd",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(f.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(f.root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// start serves the pack in tools over the fixture's root, with the
// session in the modern revision.
func (f readPackFixture) start(t *testing.T, tools string, args ...string) *server {
	t.Helper()
	// The server runs in base, not the root: nothing may depend on the
	// working directory being the root.
	s := startServer(t, f.base, nil, append([]string{"--tools", tools, "--root", f.root, "--poll", "0", "--timeout", "15s"}, args...)...)
	s.rev = modern
	return s
}

// readText is the concatenated text of a result's text blocks.
func readText(r *codec.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == codec.ContentText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

func readWantOK(t *testing.T, name string, r *codec.CallToolResult) string {
	t.Helper()
	text := readText(r)
	if r.IsError {
		t.Fatalf("%s: isError: %s", name, text)
	}
	if strings.Contains(text, readCanary) || strings.Contains(string(r.StructuredContent), readCanary) {
		t.Fatalf("%s: the answer holds the canary from outside the root: %s", name, text)
	}
	return text
}

func TestStockPackLists(t *testing.T) {
	f := newReadPackFixture(t)
	full := readPackInstall(t, false)
	ro := readPackInstall(t, true)
	for _, tc := range []struct {
		name  string
		tools string
		args  []string
		want  int
	}{
		{"full", full, nil, 32},
		{"install --readonly", ro, nil, 21},
		{"mcp-route --readonly", full, []string{"--readonly"}, 21},
		{"both", ro, []string{"--readonly"}, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := f.start(t, tc.tools, tc.args...)
			tools := s.listTools()
			got := names(tools)
			if len(got) != tc.want {
				t.Errorf("%d tools, want %d: %v", len(got), tc.want, got)
			}
			for _, name := range readTools {
				if !slices.Contains(got, name) {
					t.Errorf("%s missing", name)
				}
			}
			for _, tl := range tools {
				ro := tl.Annotations != nil && tl.Annotations.ReadOnlyHint != nil && *tl.Annotations.ReadOnlyHint
				if ro != slices.Contains(readOnlyTools, tl.Name) {
					t.Errorf("%s: readOnlyHint %v", tl.Name, ro)
				}
				if tc.want == 21 && !ro {
					t.Errorf("%s served read-only but not annotated readOnlyHint", tl.Name)
				}
				if err := codec.ValidateTool(&tl); err != nil {
					t.Errorf("%s: %v", tl.Name, err)
				}
			}
		})
	}
}

// TestStockReadTools calls each read tool end to end on its happy path.
func TestStockReadTools(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true))
	type check func(t *testing.T, text string, structured map[string]any)
	textIs := func(want string) check {
		return func(t *testing.T, text string, _ map[string]any) {
			if text != want {
				t.Errorf("text %q, want %q", text, want)
			}
		}
	}
	field := func(key string, want any) check {
		return func(t *testing.T, _ string, sc map[string]any) {
			if got := fmt.Sprint(sc[key]); got != fmt.Sprint(want) {
				t.Errorf("structuredContent %s = %v, want %v (%v)", key, got, want, sc)
			}
		}
	}
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		checks []check
	}{
		{"fs_read", map[string]any{"path": "hello.txt"}, []check{textIs("hello\nworld\n")}},
		{"fs_read", map[string]any{"path": filepath.Join(f.root, "link-in")}, []check{textIs("hello\nworld\n")}},
		{"fs_head", map[string]any{"path": "lines.txt", "lines": 2}, []check{textIs("line 1\nline 2\n")}},
		{"fs_tail", map[string]any{"path": "lines.txt", "lines": 2}, []check{textIs("line 99\nline 100\n")}},
		{"fs_lines", map[string]any{"path": "lines.txt", "start": 50, "end": 51, "numbered": false}, []check{textIs("line 50\nline 51\n")}},
		{"fs_slice", map[string]any{"path": "hello.txt", "offset": 6, "length": 5}, []check{field("data", "world"), field("size", 12)}},
		{"fs_stat", map[string]any{"path": "hello.txt"}, []check{field("type", "file"), field("size", 12)}},
		{"fs_stat", map[string]any{"path": "link-in"}, []check{field("type", "symlink"), field("target", "hello.txt")}},
		{"fs_exists", map[string]any{"path": "dir"}, []check{field("exists", true), field("type", "directory")}},
		{"fs_exists", map[string]any{"path": "nope"}, []check{field("exists", false)}},
		{"fs_readlink", map[string]any{"path": "link-in"}, []check{textIs("hello.txt\n")}},
		{"fs_realpath", map[string]any{"path": "dir/../link-in"}, []check{field("relative", "hello.txt"), field("exists", true)}},
		{"fs_hash", map[string]any{"path": "dir/b.txt", "algorithm": "md5"}, []check{field("hash", "3b5d5c3712955042212316173ccf37be")}},
		{"fs_count", map[string]any{"path": "lines.txt"}, []check{field("lines", 100)}},
		{"fs_list", map[string]any{"path": "dir"}, []check{field("total", 2)}},
		{"fs_du", map[string]any{"path": "dir"}, []check{field("files", 2), field("bytes", 26)}},
		{"fs_glob", map[string]any{"pattern": "**/*.go"}, []check{textIs("dir/a.go\n")}},
		{"fs_find", map[string]any{"name": "*.txt", "type": "file"}, []check{textIs("dir/b.txt\nhello.txt\nlines.txt\n")}},
		{"fs_grep", map[string]any{"pattern": "TODO"}, []check{textIs("dir/a.go:2:// TODO first\n")}},
		{"fs_grep_count", map[string]any{"pattern": "^line 1"}, []check{field("total", 12)}},
		{"fs_first_match", map[string]any{"pattern": "world"}, []check{field("path", "hello.txt"), field("line", 2)}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := s.callTool(tc.tool, tc.args)
			text := readWantOK(t, tc.tool, r)
			var sc map[string]any
			if len(r.StructuredContent) > 0 {
				if err := json.Unmarshal(r.StructuredContent, &sc); err != nil {
					t.Fatalf("structuredContent: %v", err)
				}
			}
			for _, c := range tc.checks {
				c(t, text, sc)
			}
		})
	}
}

// readEscape is one way of naming something outside the root.
type readEscape struct {
	class, path string
	reason      string // expected in the error text
}

func readEscapes(f readPackFixture) []readEscape {
	const esc = "path escapes root"
	return []readEscape{
		{"dotdot", "../outside/secret.txt", esc},
		{"dotdot-alone", "..", esc},
		{"dotdot-middle", "dir/../../outside/secret.txt", esc},
		{"dotdot-deep", "dir/./../dir/../../outside", esc},
		{"absolute-outside", filepath.Join(f.base, "outside", "secret.txt"), esc},
		{"absolute-outside-dir", filepath.Join(f.base, "outside"), esc},
		{"absolute-etc", "/etc/passwd", esc},
		{"prefix-sibling", "../data-evil/secret.txt", esc},
		{"prefix-sibling-absolute", filepath.Join(f.base, "data-evil", "secret.txt"), esc},
		{"prefix-sibling-spelled", f.root + "-evil/secret.txt", esc},
		{"symlink-out", "link-out", esc},
		{"symlink-absolute", "abs-out", esc},
		{"symlink-chain", "chain1", esc},
		{"symlink-dir-out", "dir-out/secret.txt", esc},
		{"symlink-dir-out-itself", "dir-out", esc},
		{"symlink-to-parent", "root-up/outside/secret.txt", esc},
		{"proc-magic-link", "proc-link", esc},
		{"proc-cwd", "proc-cwd/outside/secret.txt", esc},
		{"trailing-slash", "../outside/", esc},
		{"repeated-slashes", ".//..//outside//secret.txt", esc},
		{"nul-byte", "hello.txt\x00/../../outside/secret.txt", "invalid"},
		{"very-long", strings.Repeat("a/", 3000) + "x", ""},
	}
}

// readToolArgs are the arguments each read tool needs besides path.
func readToolArgs(tool string) map[string]any {
	switch tool {
	case "fs_grep", "fs_grep_count", "fs_first_match":
		return map[string]any{"pattern": "."}
	case "fs_glob":
		return map[string]any{"pattern": "**"}
	case "fs_lines":
		return map[string]any{"start": 1}
	}
	return map[string]any{}
}

// statLinkItself are the escape classes whose last component is a symlink
// out: fs_stat (follow false) describes the link instead of refusing it.
var statLinkItself = map[string]bool{"symlink-out": true, "symlink-absolute": true, "symlink-chain": true, "symlink-dir-out-itself": true, "proc-magic-link": true}

// TestStockReadEscapes sends every escape class through every read tool:
// each call must fail, say why, and never show the canary (fs_stat of a
// link out describes the link: statLinkItself).
func TestStockReadEscapes(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true))
	for _, tool := range readTools {
		t.Run(tool, func(t *testing.T) {
			// All calls in flight at once, then the answers: the server
			// runs them concurrently, which is a test of its own.
			escapes := readEscapes(f)
			ids := make([]codec.ID, len(escapes))
			for i, e := range escapes {
				args := readToolArgs(tool)
				args["path"] = e.path
				ids[i] = s.startCall(tool, args, nil)
			}
			for i, e := range escapes {
				var r codec.CallToolResult
				s.result(ids[i], &r)
				text := readText(&r)
				if tool == "fs_stat" && statLinkItself[e.class] {
					// fs_stat describes a link itself (never following
					// it): its target as text, no contents.
					if r.IsError || !strings.Contains(text, `"type":"symlink"`) || strings.Contains(text, readCanary) || strings.Contains(text, "canary-name") {
						t.Errorf("%s %s: fs_stat of the link itself: %.300s", e.class, e.path, text)
					}
					continue
				}
				if !r.IsError {
					t.Errorf("%s %s: not refused: %.300s", e.class, e.path, text)
				} else if !strings.Contains(text, e.reason) {
					t.Errorf("%s %s: error %q, want it to say %q", e.class, e.path, text, e.reason)
				}
				if strings.Contains(text, readCanary) || strings.Contains(string(r.StructuredContent), readCanary) || strings.Contains(text, "canary-name") {
					t.Errorf("%s %s: LEAK: %s", e.class, e.path, text)
				}
			}
		})
	}
}

// TestStockReadPatternEscapes: the search patterns of fs_glob cannot lead
// out either, and walks do not follow symlinks out of the root.
func TestStockReadPatternEscapes(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true))
	for _, pattern := range []string{"../*", "../**", "dir/../../outside/*", "dir-out/*", "root-up/**"} {
		r := s.callTool("fs_glob", map[string]any{"pattern": pattern})
		if text := readText(r); !r.IsError || !strings.Contains(text, "path escapes root") {
			t.Errorf("fs_glob %q: %v %s", pattern, r.IsError, text)
		}
	}
	// A walk of the whole root meets every link out and follows none.
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"fs_glob", map[string]any{"pattern": "**"}},
		{"fs_find", map[string]any{}},
		{"fs_grep", map[string]any{"pattern": "CANARY"}},
		{"fs_grep_count", map[string]any{"pattern": "CANARY"}},
		{"fs_first_match", map[string]any{"pattern": "CANARY"}},
		{"fs_du", map[string]any{}},
		{"fs_list", map[string]any{}},
	} {
		r := s.callTool(tc.tool, tc.args)
		text := readWantOK(t, tc.tool, r)
		if strings.Contains(text, "canary-name") || strings.Contains(string(r.StructuredContent), "canary-name") {
			t.Errorf("%s walked out of the root: %s", tc.tool, text)
		}
	}
}

// TestStockReadFIFO: a FIFO is never read (a read would block the call);
// the content tools refuse it, the metadata tools describe it.
func TestStockReadFIFO(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true))
	content := []string{"fs_count", "fs_first_match", "fs_grep", "fs_grep_count", "fs_hash", "fs_head", "fs_lines", "fs_read", "fs_slice", "fs_tail"}
	for _, tool := range readTools {
		args := readToolArgs(tool)
		args["path"] = "fifo"
		r := s.callTool(tool, args)
		text := readText(r)
		if slices.Contains(content, tool) && (!r.IsError || !strings.Contains(text, "not a regular file")) {
			t.Errorf("%s fifo: isError %v, %q; want a refusal", tool, r.IsError, text)
		}
	}
	var st map[string]any
	r := s.callTool("fs_stat", map[string]any{"path": "fifo"})
	readWantOK(t, "fs_stat", r)
	json.Unmarshal(r.StructuredContent, &st)
	if st["type"] != "fifo" {
		t.Errorf("fs_stat fifo: %v", st)
	}
}

// TestStockReadEveryRevision calls a text tool, a json tool and a failing
// tool in a session of every revision; every answer is checked against that
// revision's schema as it arrives.
func TestStockReadEveryRevision(t *testing.T) {
	f := newReadPackFixture(t)
	tools := readPackInstall(t, true)
	for _, rev := range codec.Revisions {
		t.Run(rev, func(t *testing.T) {
			s := f.start(t, tools)
			if codec.IsModernRevision(rev) {
				s.rev = rev
			} else {
				s.initialize(rev)
			}
			if text := readWantOK(t, "fs_read", s.callTool("fs_read", map[string]any{"path": "hello.txt"})); text != "hello\nworld\n" {
				t.Errorf("fs_read: %q", text)
			}
			r := s.callTool("fs_stat", map[string]any{"path": "dir"})
			text := readWantOK(t, "fs_stat", r)
			if !strings.Contains(text, `"type":"directory"`) {
				t.Errorf("fs_stat text: %q", text)
			}
			if r := s.callTool("fs_read", map[string]any{"path": "link-out"}); !r.IsError || !strings.Contains(readText(r), "path escapes root") {
				t.Errorf("fs_read link-out: %+v", r)
			}
		})
	}
}
