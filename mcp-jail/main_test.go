package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/internal/version"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// fixture builds base/data (the root) with links in and out, a FIFO and a
// sibling base/data-evil, and returns base.
func fixture(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"outside", "data-evil", "data/sub/deep"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"outside/secret.txt", "data-evil/secret.txt", "data/f.txt", "data/sub/g.txt"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"data/link-in":      "sub",
		"data/out-abs":      filepath.Join(base, "outside"),
		"data/out-rel":      "../outside",
		"data/chain1":       "chain2",
		"data/chain2":       "sub/chain3",
		"data/sub/chain3":   "../../outside",
		"data/parent":       "..",
		"data/evil-sib":     "../data-evil",
		"data/magic-root":   "/proc/self/root/etc/passwd",
		"data/magic-cwd":    "/proc/self/cwd",
		"data/devzero":      "/dev/zero",
		"data/sub/up":       "..",
		"data/link-nowhere": "sub/new",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(base, "data/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return base
}

func escapes(base string) []string {
	root := base + "/data"
	return []string{
		"..", "../x", "a/../../x", "sub/../..", "../data/f.txt", "../data-evil", "../data-evil/secret.txt",
		root + "-evil", root + "-evil/secret.txt", root + "/../outside", "/etc/passwd", "/",
		"out-abs", "out-abs/secret.txt", "out-rel/secret.txt", "out-rel/", "chain1/secret.txt",
		"parent", "parent/outside", "evil-sib/secret.txt", "sub/up/..", "link-in/up/../..",
		"magic-root", "magic-cwd", "magic-cwd/x", "devzero",
	}
}

func runBuf(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunUsage(t *testing.T) {
	cases := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{nil, 2, "", "mcp-jail: --root DIR is required (see --help)\n"},
		{[]string{"--bogus"}, 2, "", "mcp-jail: flag provided but not defined: -bogus (see --help)\n"},
		{[]string{"--root"}, 2, "", "mcp-jail: flag needs an argument: -root (see --help)\n"},
		{[]string{"--version"}, 0, "mcp-jail " + version.Number + "\n", ""},
		{[]string{"--help"}, 0, usage, ""},
		{[]string{"-h"}, 0, usage, ""},
		{[]string{"--root", "/nonexistent/dir", "x"}, 1, "", "mcp-jail: /nonexistent/dir: no such file or directory\n"},
	}
	for _, c := range cases {
		code, stdout, stderr := runBuf(c.args, "")
		if code != c.code || stdout != c.stdout || stderr != c.stderr {
			t.Errorf("run(%q) = %d, %q, %q; want %d, %q, %q", c.args, code, stdout, stderr, c.code, c.stdout, c.stderr)
		}
	}
}

func TestRun(t *testing.T) {
	base := fixture(t)
	root := base + "/data"
	cases := []struct {
		name           string
		args           []string
		stdin          string
		code           int
		stdout, stderr string
	}{
		{"args", []string{"--root", root, "f.txt", "link-in/g.txt", "new/file", "link-nowhere", "fifo", ".", root + "//sub/"}, "", 0,
			root + "/f.txt\n" + root + "/sub/g.txt\n" + root + "/new/file\n" + root + "/sub/new\n" + root + "/fifo\n" + root + "\n" + root + "/sub\n", ""},
		{"stdin", []string{"--root", root}, "./f.txt\n../x\nsub/deep/\n", 1,
			root + "/f.txt\n" + root + "/sub/deep\n", "mcp-jail: ../x: path escapes root\n"},
		{"relative", []string{"--root", root, "--relative"}, root + "\nlink-in\n", 0, ".\nsub\n", ""},
		{"nul", []string{"--root", root, "-0", "--relative"}, "a\nb\x00..\x00", 1, "a\nb\x00", "mcp-jail: ..: path escapes root\n"},
		{"lexical", []string{"--root", root, "--lexical"}, "out-rel/secret.txt\na/../b\n../x\n", 1,
			root + "/out-rel/secret.txt\n" + root + "/b\n", "mcp-jail: ../x: path escapes root\n"},
		{"lexical relative", []string{"--lexical", "--relative", "--root", "/srv/data", "/srv/data", "x//y/"}, "", 0, ".\nx/y\n", ""},
		{"lexical root /", []string{"--lexical", "--root", "/", "a/../b", ".."}, "", 1, "/b\n", "mcp-jail: ..: path escapes root\n"},
		{"nul byte", []string{"--root", root}, "a\x00b\n", 1, "", "mcp-jail: \"a\\x00b\": invalid path: contains a NUL byte\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runBuf(c.args, c.stdin)
			if code != c.code || stdout != c.stdout || stderr != c.stderr {
				t.Errorf("got %d, %q, %q\nwant %d, %q, %q", code, stdout, stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
}

// binary runs the built mcp-jail with a bounded time, in dir.
func binary(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"} // no HOME needed
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcp-jail %q did not finish: %v", args, ctx.Err())
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("mcp-jail %q: %v", args, err)
	}
	return code, out.String(), errb.String()
}

// TestBinaryEscapes runs every escape class through the real binary, as
// arguments, as lines and as NUL records, and checks each stderr line.
func TestBinaryEscapes(t *testing.T) {
	base := fixture(t)
	root := base + "/data"
	names := escapes(base)
	var want strings.Builder
	for _, n := range names {
		want.WriteString("mcp-jail: " + n + ": path escapes root\n")
	}
	check := func(how string, code int, stdout, stderr string) {
		t.Helper()
		if code != 1 || stdout != "" || stderr != want.String() {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s\nwant exit 1, no stdout, stderr:\n%s", how, code, stdout, stderr, want.String())
		}
	}
	code, stdout, stderr := binary(t, base, "", append([]string{"--root", "data"}, names...)...)
	check("arguments", code, stdout, stderr)
	code, stdout, stderr = binary(t, root, strings.Join(names, "\n")+"\n", "--root", ".")
	check("stdin", code, stdout, stderr)
	code, stdout, stderr = binary(t, "/", strings.Join(names, "\x00"), "--root", root, "-0")
	check("stdin -0", code, stdout, stderr)

	// Invalid names: NUL in a line, over-long.
	long := strings.Repeat("d/", 2100)
	code, stdout, stderr = binary(t, root, "ok\na\x00b\n"+long+"\n", "--root", ".")
	wantErr := "mcp-jail: \"a\\x00b\": invalid path: contains a NUL byte\n" +
		"mcp-jail: " + long + ": invalid path: longer than 4095 bytes\n"
	if code != 1 || stdout != root+"/ok\n" || stderr != wantErr {
		t.Errorf("invalid: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestBinaryFindPipeline is `find . | mcp-jail --root .` over a tree of
// thousands of files, links and a FIFO (which must not block anything),
// then the same with -print0 and -0, then with escapes mixed in.
func TestBinaryFindPipeline(t *testing.T) {
	find, err := exec.LookPath("find")
	if err != nil {
		t.Skip("no find(1)")
	}
	base := fixture(t)
	root := base + "/data"
	for i := 0; i < 50; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%02d/e%d", i, i%4))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 60; j++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", j)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("f00.txt", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
	}
	// The out-* links, chain1, parent and so on escape; keep the listing
	// to what resolves inside, and check the escapes separately below.
	list := func(print string) string {
		cmd := exec.Command(find, ".", "-path", "./d[0-9]*", print)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	lines := list("-print")
	n := strings.Count(lines, "\n")
	if n < 3000 {
		t.Fatalf("find listed only %d paths", n)
	}
	code, stdout, stderr := binary(t, root, lines, "--root", ".")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	in := strings.Split(strings.TrimSuffix(lines, "\n"), "\n")
	if len(got) != len(in) {
		t.Fatalf("%d paths in, %d out", len(in), len(got))
	}
	for i, p := range got {
		want := root + strings.TrimPrefix(in[i], ".")
		if strings.HasSuffix(in[i], "/link") {
			want = strings.TrimSuffix(want, "link") + "f00.txt"
		}
		if p != want {
			t.Fatalf("line %d: %q for %q, want %q", i, p, in[i], want)
		}
	}

	// -print0 / -0, relative.
	code, stdout, stderr = binary(t, root, list("-print0"), "--root", ".", "-0", "--relative")
	if code != 0 || stderr != "" || strings.Count(stdout, "\x00") != n || strings.Contains(stdout, "\n") {
		t.Fatalf("-0: exit %d, stderr %q, %d records", code, stderr, strings.Count(stdout, "\x00"))
	}
	if !strings.HasPrefix(stdout, "d") {
		t.Errorf("-0 --relative: output starts %.40q", stdout)
	}

	// The whole tree, escapes included: every escaping link is reported,
	// everything else printed, exit 1.
	cmd := exec.Command(find, ".")
	cmd.Dir = root
	all, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = binary(t, root, string(all), "--root", ".")
	if code != 1 {
		t.Errorf("whole tree: exit %d", code)
	}
	for _, link := range []string{"out-abs", "out-rel", "chain1", "chain2", "sub/chain3", "parent", "evil-sib", "magic-root", "magic-cwd", "devzero"} {
		if !strings.Contains(stderr, "mcp-jail: ./"+link+": path escapes root\n") {
			t.Errorf("whole tree: %s not refused; stderr:\n%s", link, stderr)
		}
	}
	if got, want := strings.Count(stdout, "\n")+strings.Count(stderr, "\n"), strings.Count(string(all), "\n"); got != want {
		t.Errorf("whole tree: %d lines out for %d in", got, want)
	}
	if strings.Contains(stdout, base+"/outside") || strings.Contains(stdout, "/proc") || strings.Contains(stdout, "/dev") {
		t.Errorf("whole tree: an escape was printed")
	}
}

func TestBinaryUsage(t *testing.T) {
	dir := t.TempDir()
	if code, stdout, _ := binary(t, dir, "", "--help"); code != 0 || !strings.HasPrefix(stdout, "Usage: mcp-jail") {
		t.Errorf("--help: %d %q", code, stdout)
	}
	if code, stdout, _ := binary(t, dir, "", "--version"); code != 0 || stdout != "mcp-jail "+version.Number+"\n" {
		t.Errorf("--version: %d %q", code, stdout)
	}
	if code, stdout, stderr := binary(t, dir, "", "x"); code != 2 || stdout != "" || !strings.HasPrefix(stderr, "mcp-jail: ") {
		t.Errorf("no --root: %d %q %q", code, stdout, stderr)
	}
	if code, _, stderr := binary(t, dir, "", "--root", dir+"/nope", "x"); code != 1 || !strings.HasPrefix(stderr, "mcp-jail: ") {
		t.Errorf("bad root: %d %q", code, stderr)
	}
}

// TestBinaryLexicalEscapes: with --lexical (no file system access) every
// escape spelled in the name itself is still refused.
func TestBinaryLexicalEscapes(t *testing.T) {
	root := "/srv/data"
	names := []string{"..", "../x", "a/../../x", "sub/../..", "../data/f.txt", "../data-evil", "/srv/data-evil",
		"/srv/data-evil/x", "/srv/data/../outside", "/etc/passwd", "/", "./..", "..//x", "x/./../../y"}
	var want strings.Builder
	for _, n := range names {
		want.WriteString("mcp-jail: " + n + ": path escapes root\n")
	}
	code, stdout, stderr := binary(t, t.TempDir(), strings.Join(names, "\n")+"\nok//x/\n", "--lexical", "--root", root)
	if code != 1 || stdout != root+"/ok/x\n" || stderr != want.String() {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant:\n%s", code, stdout, stderr, want.String())
	}
}

// TestBinarySwapRace feeds thousands of "dir/f" to mcp-jail while dir flips
// between a directory and a symlink to outside: every answer is the path
// inside or a refusal, never a path outside.
func TestBinarySwapRace(t *testing.T) {
	base := fixture(t)
	root := base + "/data"
	if err := os.Mkdir(root+"/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		n := 0
		defer func() { flipped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Not atomic on purpose: dir is missing for a moment too.
			os.Rename(root+"/dir", root+"/parked")
			os.Symlink("../outside", root+"/dir")
			os.Remove(root + "/dir")
			os.Rename(root+"/parked", root+"/dir")
			n++
		}
	}()
	in := strings.Repeat("dir/secret.txt\n", 20000)
	code, stdout, stderr := binary(t, root, in, "--root", ".")
	close(stop)
	t.Logf("exit %d after %d flips; %d resolved, %d refused", code, <-flipped,
		strings.Count(stdout, "\n"), strings.Count(stderr, "\n"))
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line != "" && line != root+"/dir/secret.txt" {
			t.Fatalf("printed %q", line)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		// Refusals are escapes; a resolution that kept losing the race
		// may give up with another reason, which is still a refusal.
		if line != "" && line != "mcp-jail: dir/secret.txt: path escapes root" {
			if !strings.HasPrefix(line, "mcp-jail: dir/secret.txt: ") {
				t.Fatalf("stderr %q", line)
			}
			t.Logf("stderr %q", line)
		}
	}
	if got := strings.Count(stdout, "\n") + strings.Count(stderr, "\n"); got != 20000 {
		t.Errorf("%d answers for 20000 paths", got)
	}
}
