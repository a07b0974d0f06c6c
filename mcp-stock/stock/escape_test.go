package stock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// canary is the content of the files outside the root.
const canary = "CANARY-outside-7f3a"

// escapeTree makes base/root with links leading out, a FIFO, a sibling
// base/root-evil and base/outside (both holding the canary), and returns
// base and root.
func escapeTree(t *testing.T) (base, root string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	for _, d := range []string{"root/dir", "root-evil", "outside"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"root/ok.txt", "root-evil/secret", "outside/secret"} {
		content := canary + "\n"
		if strings.HasPrefix(f, "root/") {
			content = "fine\n"
		}
		if err := os.WriteFile(filepath.Join(base, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"out":       "../outside/secret",
		"abs":       filepath.Join(base, "outside/secret"),
		"c1":        "c2",
		"c2":        "dir/../c3",
		"c3":        "../outside",
		"up":        "..",
		"proc":      "/proc/self/root" + filepath.Join(base, "outside/secret"),
		"dev":       "/dev/zero",
		"dir/under": "../../outside",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	return base, root
}

// extraArgs are the arguments a read tool needs besides path.
func extraArgs(tool string) []any {
	switch tool {
	case "fs_grep", "fs_grep_count", "fs_first_match":
		return []any{"pattern", "."}
	case "fs_glob":
		return []any{"pattern", "**"}
	case "fs_lines":
		return []any{"start", 1}
	}
	return nil
}

// TestReadToolsRefuseEscapes sends every escape class through every read
// tool in-process: each fails with exit 1 and the reason, and nothing
// from outside shows.
func TestReadToolsRefuseEscapes(t *testing.T) {
	base, root := escapeTree(t)
	const esc = "path escapes root"
	cases := []struct{ class, path, reason string }{
		{"dotdot", "../outside/secret", esc},
		{"dotdot-alone", "..", esc},
		{"dotdot-middle", "dir/../../outside", esc},
		{"absolute", filepath.Join(base, "outside/secret"), esc},
		{"absolute-etc", "/etc/passwd", esc},
		{"sibling", "../root-evil/secret", esc},
		{"sibling-absolute", root + "-evil/secret", esc},
		{"symlink-out", "out", esc},
		{"symlink-absolute", "abs", esc},
		{"symlink-chain", "c1/secret", esc},
		{"symlink-deep", "dir/under/secret", esc},
		{"symlink-up", "up/outside", esc},
		{"proc-magic", "proc", esc},
		{"dev-zero", "dev", esc},
		{"trailing-slash", "../outside/", esc},
		{"nul", "ok.txt\x00../../outside/secret", "invalid path"},
		{"long", strings.Repeat("x/", 2100), "invalid path"},
	}
	for _, tool := range readRoster {
		t.Run(tool, func(t *testing.T) {
			for _, tc := range cases {
				args := argsJSON(t, append([]any{"path", tc.path}, extraArgs(tool)...)...)
				r := call(t, tool, root, args)
				if tool == "fs_stat" && linkItself[tc.class] {
					// fs_stat describes a link itself, never following it.
					if r.Code != 0 || !strings.Contains(r.Stdout, `"type":"symlink"`) || strings.Contains(r.Stdout, canary) {
						t.Errorf("%s: fs_stat of the link itself: exit %d, stdout %q, stderr %q", tc.class, r.Code, r.Stdout, r.Stderr)
					}
					continue
				}
				if r.Code != 1 || !strings.Contains(r.Stderr, tc.reason) {
					t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", tc.class, r.Code, r.Stderr, tc.reason)
				}
				if strings.Contains(r.Stdout+r.Stderr, canary) {
					t.Errorf("%s: LEAK: %q %q", tc.class, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// linkItself are the escape classes whose last component is a symlink out:
// fs_stat (follow false) describes such a link instead of refusing it.
var linkItself = map[string]bool{"symlink-out": true, "symlink-absolute": true, "proc-magic": true, "dev-zero": true}

// TestReadToolsFIFO: the tools that read contents refuse a FIFO at once
// instead of blocking on it.
func TestReadToolsFIFO(t *testing.T) {
	_, root := escapeTree(t)
	for _, tool := range []string{"fs_read", "fs_head", "fs_tail", "fs_lines", "fs_slice", "fs_hash", "fs_count", "fs_grep", "fs_grep_count", "fs_first_match"} {
		args := argsJSON(t, append([]any{"path", "fifo"}, extraArgs(tool)...)...)
		failsWith(t, "fifo: not a regular file", tool, root, args)
	}
}

// TestWalksStayInside: walking the whole root meets every link out and
// follows none.
func TestWalksStayInside(t *testing.T) {
	_, root := escapeTree(t)
	for _, tc := range []struct{ tool, args string }{
		{"fs_glob", `{"pattern":"**"}`},
		{"fs_find", `{}`},
		{"fs_grep", `{"pattern":"CANARY"}`},
		{"fs_grep_count", `{"pattern":"CANARY"}`},
		{"fs_first_match", `{"pattern":"CANARY"}`},
		{"fs_du", `{}`},
		{"fs_list", `{}`},
	} {
		out := ok(t, tc.tool, root, tc.args)
		if strings.Contains(out, canary) || strings.Contains(out, "secret") {
			t.Errorf("%s: walked out: %s", tc.tool, out)
		}
	}
}
