package e2e

// End-to-end tests of mcp-stock's 10 file-mutating tools and its 3 system
// tools: the real mcp-stock binary installed with `mcp-stock install DIR`,
// served by the real mcp-route, driven through pipes (the fixture and the
// server helpers are those of stock_read_test.go). sh_exec has its own
// file, stock_shexec_test.go. Binaries: MCP_ROUTE_BIN and MCP_STOCK_BIN
// under Bazel (internal/testbin).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outsideState records everything outside the fixture's root: each file
// and directory below base but not below the root, with its mode, size,
// modification time and (for files) contents. Two states differ when any
// escape wrote, created, deleted, moved, chmodded or touched anything.
func outsideState(t *testing.T, f readPackFixture) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(f.base, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == f.root {
			return filepath.SkipDir
		}
		b.WriteString(p + " " + fi.Mode().String() + " " + fi.ModTime().String())
		if fi.Mode().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(c))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStockWriteEscapes sends every escape class through every path
// argument of every mutating tool, served by the real mcp-route: each call
// is refused with "path escapes root" (or "invalid path" for a NUL byte),
// and nothing outside the root changes. A name whose last component is a
// symlink out may instead be acted on as a link by the tools that never
// follow a final link (fs_delete, fs_move, fs_rmdir): that changes only the
// root, which outsideState confirms.
func TestStockWriteEscapes(t *testing.T) {
	probe := newReadPackFixture(t)
	escapes := map[string]string{
		"dotdot":          "../outside/secret.txt",
		"dotdot-deep":     "dir/../../outside/secret.txt",
		"dotdot-new":      "../outside/new.txt",
		"absolute":        filepath.Join(probe.base, "outside", "secret.txt"),
		"absolute-new":    filepath.Join(probe.base, "outside", "new.txt"),
		"absolute-system": "/etc/passwd",
		"prefix-sibling":  filepath.Join(probe.base, "data-evil", "secret.txt"),
		"prefix-rel":      "../data-evil/secret.txt",
		"symlink-out":     "link-out",
		"symlink-abs":     "abs-out",
		"symlink-dir":     "dir-out/secret.txt",
		"symlink-dir-new": "dir-out/new.txt",
		"symlink-chain":   "chain1",
		"symlink-up":      "root-up/outside/secret.txt",
		"proc-magic":      "proc-link",
		"proc-cwd":        "proc-cwd/hello.txt",
		"trailing-dots":   "dir/./../../outside/./secret.txt",
		"slashes":         "dir//..//..//outside//secret.txt",
	}
	finalLinks := map[string]bool{"symlink-out": true, "symlink-abs": true, "symlink-chain": true, "proc-magic": true}
	linkActs := map[string]bool{"fs_delete": true, "fs_move": true, "fs_move#dst": true, "fs_rmdir": true}
	calls := []struct{ tool, args string }{
		{"fs_write", `{"path":%s,"content":"pwned"}`},
		{"fs_write", `{"path":%s,"content":"pwned","createDirs":true}`},
		{"fs_append", `{"path":%s,"content":"pwned"}`},
		{"fs_replace", `{"path":%s,"old":"CANARY","new":"pwned","all":true}`},
		{"fs_chmod", `{"path":%s,"mode":"777"}`},
		{"fs_mkdir", `{"path":%s}`},
		{"fs_touch", `{"path":%s,"time":"2001-01-01T00:00:00Z"}`},
		{"fs_rmdir", `{"path":%s}`},
		{"fs_delete", `{"path":%s,"recursive":true}`},
		{"fs_copy", `{"source":%s,"destination":"stolen.txt"}`},
		{"fs_copy#dst", `{"source":"hello.txt","destination":%s,"overwrite":true}`},
		{"fs_move", `{"source":%s,"destination":"stolen.txt"}`},
		{"fs_move#dst", `{"source":"hello.txt","destination":%s,"overwrite":true}`},
	}
	tools := readPackInstall(t, false)
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			// A fresh fixture and server per call shape: a call that acts
			// on a final link (or moves hello.txt) must not change what
			// the next class sees.
			f := newReadPackFixture(t)
			s := f.start(t, tools)
			before := outsideState(t, f)
			toolName, _, _ := strings.Cut(c.tool, "#")
			for class, name := range escapes {
				os.WriteFile(filepath.Join(f.root, "hello.txt"), []byte("hello\nworld\n"), 0o644)
				var args map[string]any
				if err := json.Unmarshal([]byte(strings.Replace(c.args, "%s", mustJSON(t, name), 1)), &args); err != nil {
					t.Fatal(err)
				}
				r := s.callTool(toolName, args)
				text := readText(r)
				switch {
				case finalLinks[class] && linkActs[c.tool]:
					// Acted on the link, or refused it: outsideState decides.
				case !r.IsError:
					t.Errorf("%s %s: succeeded: %s", class, mustJSON(t, args), text)
				case !strings.Contains(text, "path escapes root"):
					t.Errorf("%s %s: %q, want path escapes root", class, mustJSON(t, args), text)
				}
				if strings.Contains(text, readCanary) {
					t.Errorf("%s: the answer holds the canary: %s", class, text)
				}
				if after := outsideState(t, f); after != before {
					t.Fatalf("%s %s changed something outside the root:\nbefore:\n%s\nafter:\n%s", class, mustJSON(t, args), before, after)
				}
			}
			// A NUL byte is an invalid path, whatever follows it.
			os.WriteFile(filepath.Join(f.root, "hello.txt"), []byte("hello\nworld\n"), 0o644)
			var args map[string]any
			json.Unmarshal([]byte(strings.Replace(c.args, "%s", mustJSON(t, "hello.txt\x00/../../outside/secret.txt"), 1)), &args)
			if r := s.callTool(toolName, args); !r.IsError || !strings.Contains(readText(r), "invalid path") {
				t.Errorf("NUL: %v %q", r.IsError, readText(r))
			}
		})
	}
}

// TestStockWriteFIFO: no mutating tool opens the FIFO for writing or
// reading (that would block, or feed a reader); those that would are
// refused, and the calls return.
func TestStockWriteFIFO(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, false))
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"fs_write", map[string]any{"path": "fifo", "content": "x"}},
		{"fs_append", map[string]any{"path": "fifo", "content": "x"}},
		{"fs_replace", map[string]any{"path": "fifo", "old": "a", "new": "b"}},
		{"fs_copy", map[string]any{"source": "fifo", "destination": "copy"}},
		{"fs_touch", map[string]any{"path": "fifo"}},
		{"fs_chmod", map[string]any{"path": "fifo", "mode": "600"}},
	} {
		r := s.callTool(tc.tool, tc.args)
		if !r.IsError {
			t.Errorf("%s on a FIFO: succeeded: %s", tc.tool, readText(r))
		}
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}

// TestStockWriteTools runs each mutating tool's happy path and main guard
// end to end.
func TestStockWriteTools(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, false))
	okCall := func(tool string, args map[string]any) string {
		t.Helper()
		r := s.callTool(tool, args)
		if r.IsError {
			t.Fatalf("%s %s: %s", tool, mustJSON(t, args), readText(r))
		}
		return readText(r)
	}
	errCall := func(want, tool string, args map[string]any) {
		t.Helper()
		r := s.callTool(tool, args)
		if !r.IsError || !strings.Contains(readText(r), want) {
			t.Errorf("%s %s: isError %v %q, want an error with %q", tool, mustJSON(t, args), r.IsError, readText(r), want)
		}
	}
	file := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(f.root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	gone := func(name string) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(f.root, name)); err == nil {
			t.Errorf("%s still exists", name)
		}
	}

	okCall("fs_write", map[string]any{"path": "new/a.txt", "content": "one\ntwo\ntwo\n", "createDirs": true})
	if file("new/a.txt") != "one\ntwo\ntwo\n" {
		t.Error("fs_write")
	}
	errCall("already exists", "fs_write", map[string]any{"path": "new/a.txt", "content": "x", "overwrite": false})
	// Arguments are checked against the inputSchema before anything runs.
	errCall("content", "fs_write", map[string]any{"path": "x"})
	errCall("", "fs_write", map[string]any{"path": "x", "content": "y", "extra": true})

	okCall("fs_append", map[string]any{"path": "new/a.txt", "content": "three\n"})
	if file("new/a.txt") != "one\ntwo\ntwo\nthree\n" {
		t.Error("fs_append")
	}
	errCall("occurs 2 times", "fs_replace", map[string]any{"path": "new/a.txt", "old": "two", "new": "2"})
	okCall("fs_replace", map[string]any{"path": "new/a.txt", "old": "one", "new": "1"})
	okCall("fs_replace", map[string]any{"path": "new/a.txt", "old": "two", "new": "2", "all": true})
	if file("new/a.txt") != "1\n2\n2\nthree\n" {
		t.Errorf("fs_replace: %q", file("new/a.txt"))
	}
	errCall("not found", "fs_replace", map[string]any{"path": "new/a.txt", "old": "absent", "new": "x"})

	okCall("fs_chmod", map[string]any{"path": "new/a.txt", "mode": "600"})
	if fi, _ := os.Stat(filepath.Join(f.root, "new/a.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("fs_chmod: %v", fi.Mode())
	}
	errCall("", "fs_chmod", map[string]any{"path": "new/a.txt", "mode": "4755"})

	okCall("fs_mkdir", map[string]any{"path": "m/n/o"})
	okCall("fs_mkdir", map[string]any{"path": "m/n/o"})
	errCall("file exists", "fs_mkdir", map[string]any{"path": "m/n/o", "parents": false})

	okCall("fs_touch", map[string]any{"path": "m/t", "time": "2002-03-04T05:06:07Z"})
	if fi, err := os.Stat(filepath.Join(f.root, "m/t")); err != nil || !fi.ModTime().Equal(time.Date(2002, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Errorf("fs_touch: %v %v", fi, err)
	}

	okCall("fs_copy", map[string]any{"source": "new/a.txt", "destination": "m/copy.txt"})
	if file("m/copy.txt") != "1\n2\n2\nthree\n" {
		t.Error("fs_copy")
	}
	okCall("fs_copy", map[string]any{"source": "dir", "destination": "dir2", "recursive": true})
	if file("dir2/a.go") != file("dir/a.go") {
		t.Error("fs_copy recursive")
	}
	errCall("into itself", "fs_copy", map[string]any{"source": "dir", "destination": "dir/sub", "recursive": true})

	okCall("fs_move", map[string]any{"source": "m/copy.txt", "destination": "moved.txt"})
	gone("m/copy.txt")
	if file("moved.txt") != "1\n2\n2\nthree\n" {
		t.Error("fs_move")
	}
	errCall("already exists", "fs_move", map[string]any{"source": "moved.txt", "destination": "hello.txt"})

	errCall("not empty", "fs_rmdir", map[string]any{"path": "m/n"})
	okCall("fs_rmdir", map[string]any{"path": "m/n/o"})
	gone("m/n/o")

	errCall("recursive: true", "fs_delete", map[string]any{"path": "m"})
	okCall("fs_delete", map[string]any{"path": "m", "recursive": true})
	gone("m")
	okCall("fs_delete", map[string]any{"path": "moved.txt"})
	gone("moved.txt")
	for _, p := range []string{".", "dir/..", f.root} {
		errCall("", "fs_delete", map[string]any{"path": p, "recursive": true})
	}
	if _, err := os.Stat(filepath.Join(f.root, "hello.txt")); err != nil {
		t.Error("the root was emptied")
	}
}

// TestStockSystemTools: env_get reveals only its allowlist, time_now and
// sys_info answer with structuredContent that matches their schemas
// (mcp-route checks a json result against the outputSchema).
func TestStockSystemTools(t *testing.T) {
	f := newReadPackFixture(t)
	s := f.start(t, readPackInstall(t, true),
		"--env", "MCP_ENV_ALLOW=APP_MODE,UNSET_VAR", "--env", "APP_MODE=dev", "--env", "SECRET_TOKEN=hunter2")
	r := s.callTool("env_get", map[string]any{})
	var env struct {
		Variables map[string]string `json:"variables"`
		Unset     []string          `json:"unset"`
	}
	if err := json.Unmarshal(r.StructuredContent, &env); err != nil || r.IsError {
		t.Fatalf("env_get: %v %s", err, readText(r))
	}
	if len(env.Variables) != 1 || env.Variables["APP_MODE"] != "dev" || len(env.Unset) != 1 {
		t.Errorf("env_get: %+v", env)
	}
	for _, name := range []string{"SECRET_TOKEN", "PATH", "MCP_ROOT"} {
		r := s.callTool("env_get", map[string]any{"name": name})
		if !r.IsError || strings.Contains(readText(r), "hunter2") || !strings.Contains(readText(r), "allowlist") {
			t.Errorf("env_get %s: %v %q", name, r.IsError, readText(r))
		}
	}
	r = s.callTool("time_now", map[string]any{"timezone": "Europe/Paris"})
	var tn struct {
		UTC      string `json:"utc"`
		Timezone string `json:"timezone"`
	}
	if err := json.Unmarshal(r.StructuredContent, &tn); err != nil || r.IsError || tn.Timezone != "Europe/Paris" {
		t.Errorf("time_now: %v %s", err, readText(r))
	}
	if _, err := time.Parse(time.RFC3339Nano, tn.UTC); err != nil {
		t.Errorf("time_now utc %q: %v", tn.UTC, err)
	}
	if r := s.callTool("time_now", map[string]any{"timezone": "../../etc/passwd"}); !r.IsError {
		t.Errorf("time_now with a path for a zone: %s", readText(r))
	}
	r = s.callTool("sys_info", map[string]any{})
	var si map[string]any
	if err := json.Unmarshal(r.StructuredContent, &si); err != nil || r.IsError {
		t.Fatalf("sys_info: %v %s", err, readText(r))
	}
	if si["os"] == "" || si["cpus"] == nil {
		t.Errorf("sys_info: %v", si)
	}
	if text := readText(r); strings.Contains(text, "hunter2") || strings.Contains(text, f.base) {
		t.Errorf("sys_info reveals the environment or paths: %s", text)
	}
}
