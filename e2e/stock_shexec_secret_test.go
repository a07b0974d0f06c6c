package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// TestStockShExecGitApplyDiff replays an attack on a server's key under
// --confine require with only MCP_SH_ALLOW=git,diff: git apply makes a
// symlink in the root pointing at the key, and diff -r (or diff of the two
// directories) reads it through the link and prints it. The key's
// directory is --allow-read here, so Landlock lets the read through: what
// stops it is sh_exec, which refuses diff of directories without
// --no-dereference. The harmless counterparts run: diff of two files in
// the root, and diff -r --no-dereference, which shows the link as a link.
func TestStockShExecGitApplyDiff(t *testing.T) {
	confinetest.Need(t, 1)
	for _, p := range []string{"git", "diff"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s in PATH", p)
		}
	}
	e := newShEscape(t)
	key := filepath.Join(e.base, "outside", "secret.txt") // holds readCanary
	// The patch the client sends: a new symlink x/k -> the key, made by
	// git itself in a scratch repository.
	scratch := filepath.Join(e.base, "scratch")
	if err := os.MkdirAll(filepath.Join(scratch, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.git(scratch, "init", "-q")
	if err := os.Symlink(key, filepath.Join(scratch, "x", "k")); err != nil {
		t.Fatal(err)
	}
	e.git(scratch, "add", "-A")
	cmd := exec.Command("git", "diff", "--cached")
	cmd.Dir = scratch
	cmd.Env = baseEnv("GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+e.base)
	patch, err := cmd.Output()
	if err != nil || !strings.Contains(string(patch), "new file mode 120000") {
		t.Fatalf("git diff --cached: %v\n%s", err, patch)
	}
	os.RemoveAll(scratch)
	e.write(filepath.Join(e.root, "evil.patch"), string(patch))
	e.write(filepath.Join(e.root, "y", "k"), "not the key\n")
	e.write(filepath.Join(e.root, "a2.txt"), "beta\nalpha\nalpha\n") // as a.txt
	e.gitRepo(e.root)
	e.start("git,diff", "--confine", "require", "--allow-read", filepath.Join(e.base, "outside"))

	e.run([]shCase{{command: "git apply evil.patch", check: func(shStructured) string {
		if target, err := os.Readlink(filepath.Join(e.root, "x", "k")); err != nil || target != key {
			return "git apply did not make the link x/k -> the key"
		}
		return ""
	}}})
	e.run([]shCase{
		{command: "diff -r x y", refused: "--no-dereference"},
		{command: "diff -ru x y", refused: "--no-dereference"},
		{command: "diff --recursive x y", refused: "--no-dereference"},
		{command: "diff x y", refused: "--no-dereference"},
		{command: "diff x/k y/k", refused: "outside the root"},
		{command: "diff a.txt a2.txt"}, // two files in the root: runs
	})
	// diff -r --no-dereference runs and compares the link as a link: the
	// key is not in its answer (noEscape checks every answer for it).
	// (diff exits 1 when the directories differ: an error result.)
	r := e.server.callTool("sh_exec", map[string]any{"command": "diff -r --no-dereference x y", "timeoutSeconds": 20})
	if text := readText(r); !strings.Contains(text, "x/k is a symbolic link") || !strings.Contains(text, "exit status 1") {
		t.Errorf("diff -r --no-dereference x y: %q, want exit status 1 naming the symbolic link", text)
	}
	e.noEscape("diff -r --no-dereference x y", readText(r)+string(r.StructuredContent))
}
