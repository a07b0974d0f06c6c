package stock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of the mutating tools, in-process: each happy path and each
// guard. Escapes through every path-taking tool are also checked end to
// end by e2e/stock_write_test.go; TestMutatingEscapes covers the classes
// here, where a failure is cheaper to read.

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// holds checks that the file name under root holds want; what names the
// step checked.
func holds(t *testing.T, root, name, want, what string) {
	t.Helper()
	if got := readFile(t, root, name); got != want {
		t.Errorf("%s: %s holds %q, want %q", what, name, got, want)
	}
}

func missing(t *testing.T, root, name string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(root, name)); err == nil {
		t.Errorf("%s exists, want it gone", name)
	}
}

// noTemps checks that no temporary file of an atomic write was left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestFsWrite(t *testing.T) {
	root := tree(t, map[string]string{"old.txt": "old", "dir/": "", "link": "->old.txt"})
	if err := os.Chmod(filepath.Join(root, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "fs_write", root, `{"path":"new.txt","content":"hello\n"}`)
	if readFile(t, root, "new.txt") != "hello\n" || !strings.Contains(out, "wrote 6 bytes to new.txt (created)") {
		t.Errorf("create: %q", out)
	}
	out = ok(t, "fs_write", root, `{"path":"old.txt","content":"new"}`)
	if readFile(t, root, "old.txt") != "new" || !strings.Contains(out, "replaced") {
		t.Errorf("replace: %q", out)
	}
	if fi, _ := os.Stat(filepath.Join(root, "old.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after replace %v, want the file's own 0600", fi.Mode().Perm())
	}
	// Through a symlink inside the root: the target is written, the link stays.
	ok(t, "fs_write", root, `{"path":"link","content":"via link"}`)
	holds(t, root, "old.txt", "via link", "write through a link did not reach its target")
	if fi, _ := os.Lstat(filepath.Join(root, "link")); fi.Mode().Type() != os.ModeSymlink {
		t.Error("the link was replaced by a file")
	}
	ok(t, "fs_write", root, `{"path":"empty","content":""}`)
	holds(t, root, "empty", "", "empty content")
	failsWith(t, "already exists", "fs_write", root, `{"path":"old.txt","content":"x","overwrite":false}`)
	holds(t, root, "old.txt", "via link", "overwrite:false changed the file")
	ok(t, "fs_write", root, `{"path":"fresh","content":"x","overwrite":false}`)
	holds(t, root, "fresh", "x", "overwrite:false did not create a new file")
	// A missing parent: the error says the fix, createDirs.
	failsWith(t, `no such file or directory: its parent directory a/b does not exist; call fs_write again with "createDirs": true to create it`, "fs_write", root, `{"path":"a/b/c.txt","content":"x"}`)
	failsWith(t, `its parent directory a/b does not exist; call fs_write again with "createDirs": true`, "fs_write", root, `{"path":"a/b/c.txt","content":"x","overwrite":false}`)
	ok(t, "fs_write", root, `{"path":"a/b/c.txt","content":"deep","createDirs":true}`)
	holds(t, root, "a/b/c.txt", "deep", "createDirs")
	failsWith(t, "is a directory", "fs_write", root, `{"path":"dir","content":"x"}`)
	failsWith(t, "operation not permitted on the root", "fs_write", root, `{"path":".","content":"x"}`)
	failsWith(t, "invalid arguments", "fs_write", root, `{"path":"x"}`)
	failsWith(t, "invalid arguments", "fs_write", root, `{"path":"x","content":"y","bogus":1}`)
	noTemps(t, root)
}

func TestFsWriteRefusesFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, name := range []string{"fs_write", "fs_append", "fs_replace", "fs_touch", "fs_chmod"} {
		args := map[string]string{
			"fs_write":   `{"path":"fifo","content":"x"}`,
			"fs_append":  `{"path":"fifo","content":"x"}`,
			"fs_replace": `{"path":"fifo","old":"a","new":"b"}`,
			"fs_touch":   `{"path":"fifo"}`,
			"fs_chmod":   `{"path":"fifo","mode":"600"}`,
		}[name]
		// The call must fail, and fail without blocking on the FIFO.
		fails(t, name, root, args)
	}
	failsWith(t, "not a regular file", "fs_copy", root, `{"source":"fifo","destination":"copy"}`)
}

func TestFsAppend(t *testing.T) {
	root := tree(t, map[string]string{"log": "a\n", "dir/": ""})
	out := ok(t, "fs_append", root, `{"path":"log","content":"b\n"}`)
	if readFile(t, root, "log") != "a\nb\n" || !strings.Contains(out, "appended 2 bytes to log (now 4 bytes)") {
		t.Errorf("append: %q %q", readFile(t, root, "log"), out)
	}
	ok(t, "fs_append", root, `{"path":"new","content":"x"}`)
	holds(t, root, "new", "x", "append creates")
	failsWith(t, "no such file", "fs_append", root, `{"path":"absent","content":"x","create":false}`)
	missing(t, root, "absent")
	fails(t, "fs_append", root, `{"path":"dir","content":"x"}`)
	failsWith(t, "invalid arguments", "fs_append", root, `{"path":"log","content":""}`)
}

func TestFsReplace(t *testing.T) {
	root := tree(t, map[string]string{
		"one.go":  "package a\n\nfunc f() {}\n",
		"many.go": "x := 1\ny := x\nz := x\n",
		"bin":     "a\x00b",
		"dir/":    "",
	})
	if err := os.Chmod(filepath.Join(root, "one.go"), 0o640); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "fs_replace", root, `{"path":"one.go","old":"func f() {}","new":"func g() {}"}`)
	if readFile(t, root, "one.go") != "package a\n\nfunc g() {}\n" || !strings.Contains(out, "replaced 1 occurrence in one.go (line 3;") {
		t.Errorf("replace once: %q", out)
	}
	if fi, _ := os.Stat(filepath.Join(root, "one.go")); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
	}
	// Ambiguous: refused, naming the lines, file unchanged.
	stderr := fails(t, "fs_replace", root, `{"path":"many.go","old":"x","new":"w"}`)
	if !strings.Contains(stderr, "occurs 3 times (at lines 1, 2, 3)") || !strings.Contains(stderr, "all: true") {
		t.Errorf("ambiguous: %q", stderr)
	}
	holds(t, root, "many.go", "x := 1\ny := x\nz := x\n", "a refused replace changed the file")
	failsWith(t, "not the expected 2", "fs_replace", root, `{"path":"many.go","old":"x","new":"w","expectedCount":2}`)
	ok(t, "fs_replace", root, `{"path":"many.go","old":"x","new":"w","expectedCount":3}`)
	holds(t, root, "many.go", "w := 1\ny := w\nz := w\n", "expectedCount replace")
	out = ok(t, "fs_replace", root, `{"path":"many.go","old":"w","new":"v","all":true}`)
	if !strings.Contains(out, "replaced 3 occurrences") {
		t.Errorf("all: %q", out)
	}
	ok(t, "fs_replace", root, `{"path":"many.go","old":"y := v\n","new":""}`)
	if readFile(t, root, "many.go") != "v := 1\nz := v\n" {
		t.Errorf("delete text: %q", readFile(t, root, "many.go"))
	}
	failsWith(t, "not found", "fs_replace", root, `{"path":"one.go","old":"nothing like it","new":"x"}`)
	failsWith(t, "binary file", "fs_replace", root, `{"path":"bin","old":"a","new":"c"}`)
	failsWith(t, "is a directory", "fs_replace", root, `{"path":"dir","old":"a","new":"c"}`)
	failsWith(t, "no such file", "fs_replace", root, `{"path":"absent","old":"a","new":"c"}`)
	failsWith(t, "invalid arguments", "fs_replace", root, `{"path":"one.go","old":"a"}`)
	noTemps(t, root)
}

func TestFsChmod(t *testing.T) {
	root := tree(t, map[string]string{"f": "x", "d/": ""})
	out := ok(t, "fs_chmod", root, `{"path":"f","mode":"600"}`)
	if fi, _ := os.Stat(filepath.Join(root, "f")); fi.Mode().Perm() != 0o600 || !strings.Contains(out, "0644 -> 0600") {
		t.Errorf("chmod: %v %q", fi.Mode().Perm(), out)
	}
	ok(t, "fs_chmod", root, `{"path":"d","mode":"0700"}`)
	if fi, _ := os.Stat(filepath.Join(root, "d")); fi.Mode().Perm() != 0o700 {
		t.Errorf("chmod dir: %v", fi.Mode().Perm())
	}
	for _, m := range []string{"4755", "1777", "08", "rwx", "", "77", "00644"} {
		fails(t, "fs_chmod", root, argsJSON(t, "path", "f", "mode", m))
	}
	if fi, _ := os.Stat(filepath.Join(root, "f")); fi.Mode()&(os.ModeSetuid|os.ModeSticky) != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("a refused mode changed the file: %v", fi.Mode())
	}
	failsWith(t, "no such file", "fs_chmod", root, `{"path":"absent","mode":"644"}`)
}

func TestFsMkdir(t *testing.T) {
	root := tree(t, map[string]string{"f": "x", "d/": ""})
	ok(t, "fs_mkdir", root, `{"path":"a/b/c"}`)
	if fi, err := os.Stat(filepath.Join(root, "a/b/c")); err != nil || !fi.IsDir() {
		t.Error("mkdir -p")
	}
	if out := ok(t, "fs_mkdir", root, `{"path":"d"}`); !strings.Contains(out, "already exists") {
		t.Errorf("existing: %q", out)
	}
	ok(t, "fs_mkdir", root, `{"path":"single","parents":false}`)
	failsWith(t, "file exists", "fs_mkdir", root, `{"path":"single","parents":false}`)
	failsWith(t, "no such file", "fs_mkdir", root, `{"path":"x/y","parents":false}`)
	failsWith(t, "not a directory", "fs_mkdir", root, `{"path":"f"}`)
}

func TestFsTouch(t *testing.T) {
	root := tree(t, map[string]string{"f": "keep", "d/": ""})
	ok(t, "fs_touch", root, `{"path":"new"}`)
	holds(t, root, "new", "", "touch creates an empty file")
	ok(t, "fs_touch", root, `{"path":"f","time":"2001-02-03T04:05:06Z"}`)
	fi, _ := os.Stat(filepath.Join(root, "f"))
	if !fi.ModTime().Equal(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)) || readFile(t, root, "f") != "keep" {
		t.Errorf("touch time: %v", fi.ModTime())
	}
	ok(t, "fs_touch", root, `{"path":"d","time":"2001-02-03T04:05:06Z"}`)
	failsWith(t, "RFC 3339", "fs_touch", root, `{"path":"f","time":"yesterday"}`)
	failsWith(t, "no such file", "fs_touch", root, `{"path":"nodir/x"}`)
}

func TestFsRmdir(t *testing.T) {
	root := tree(t, map[string]string{"empty/": "", "full/x": "x", "f": "x", "link": "->empty"})
	failsWith(t, "not a directory", "fs_rmdir", root, `{"path":"link"}`)
	ok(t, "fs_rmdir", root, `{"path":"empty"}`)
	missing(t, root, "empty")
	failsWith(t, "not empty", "fs_rmdir", root, `{"path":"full"}`)
	failsWith(t, "not a directory", "fs_rmdir", root, `{"path":"f"}`)
	failsWith(t, "no such file", "fs_rmdir", root, `{"path":"absent"}`)
	fails(t, "fs_rmdir", root, `{"path":"."}`)
	fails(t, "fs_rmdir", root, `{"path":"full/.."}`)
}

func TestFsDelete(t *testing.T) {
	root := tree(t, map[string]string{"f": "x", "empty/": "", "tree/a/b": "x", "tree/c": "y", "link": "->f", "dangling": "->nowhere"})
	ok(t, "fs_delete", root, `{"path":"link"}`)
	missing(t, root, "link")
	holds(t, root, "f", "x", "deleting a link touched its target")
	ok(t, "fs_delete", root, `{"path":"dangling"}`)
	ok(t, "fs_delete", root, `{"path":"f"}`)
	missing(t, root, "f")
	ok(t, "fs_delete", root, `{"path":"empty"}`)
	failsWith(t, "recursive: true", "fs_delete", root, `{"path":"tree"}`)
	out := ok(t, "fs_delete", root, `{"path":"tree","recursive":true}`)
	missing(t, root, "tree")
	if !strings.Contains(out, "(4 entries)") {
		t.Errorf("recursive: %q", out)
	}
	failsWith(t, "no such file", "fs_delete", root, `{"path":"f"}`)
	for _, p := range []string{".", "./", "x/..", "/"} {
		fails(t, "fs_delete", root, argsJSON(t, "path", p, "recursive", true))
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatal("the root is gone")
	}
}

func TestFsCopy(t *testing.T) {
	root := tree(t, map[string]string{"f": "data", "g": "other", "d/x": "1", "d/sub/y": "2", "d/l": "->x", "out/": ""})
	if err := os.Chmod(filepath.Join(root, "f"), 0o751); err != nil {
		t.Fatal(err)
	}
	out := ok(t, "fs_copy", root, `{"source":"f","destination":"f2"}`)
	if readFile(t, root, "f2") != "data" || !strings.Contains(out, "(4 bytes)") {
		t.Errorf("copy: %q", out)
	}
	if fi, _ := os.Stat(filepath.Join(root, "f2")); fi.Mode().Perm() != 0o751 {
		t.Errorf("copy mode %v, want 0751", fi.Mode().Perm())
	}
	failsWith(t, "already exists", "fs_copy", root, `{"source":"f","destination":"g"}`)
	ok(t, "fs_copy", root, `{"source":"f","destination":"g","overwrite":true}`)
	holds(t, root, "g", "data", "overwrite")
	failsWith(t, "existing directory", "fs_copy", root, `{"source":"f","destination":"out"}`)
	failsWith(t, "recursive: true", "fs_copy", root, `{"source":"d","destination":"d2"}`)
	out = ok(t, "fs_copy", root, `{"source":"d","destination":"out/d2","recursive":true}`)
	if readFile(t, root, "out/d2/x") != "1" || readFile(t, root, "out/d2/sub/y") != "2" {
		t.Errorf("tree copy: %q", out)
	}
	missing(t, root, "out/d2/l")
	if !strings.Contains(out, "2 files, 2 directories") || !strings.Contains(out, "skipped 1 entry") {
		t.Errorf("tree copy report: %q", out)
	}
	failsWith(t, "into itself", "fs_copy", root, `{"source":"d","destination":"d/inner","recursive":true}`)
	failsWith(t, "into itself", "fs_copy", root, `{"source":".","destination":"all","recursive":true}`)
	failsWith(t, "existing directory", "fs_copy", root, `{"source":"d","destination":"out/d2","recursive":true}`)
	failsWith(t, "no such file", "fs_copy", root, `{"source":"absent","destination":"x"}`)
	failsWith(t, "no such file", "fs_copy", root, `{"source":"f","destination":"nodir/x"}`)
	noTemps(t, root)
	noTemps(t, filepath.Join(root, "out"))
}

func TestFsMove(t *testing.T) {
	root := tree(t, map[string]string{"f": "data", "g": "other", "d/x": "1", "e/": "", "link": "->f"})
	ok(t, "fs_move", root, `{"source":"f","destination":"f2"}`)
	missing(t, root, "f")
	holds(t, root, "f2", "data", "move")
	failsWith(t, "already exists", "fs_move", root, `{"source":"f2","destination":"g"}`)
	ok(t, "fs_move", root, `{"source":"f2","destination":"g","overwrite":true}`)
	holds(t, root, "g", "data", "move overwrite")
	// A link moves as a link.
	ok(t, "fs_move", root, `{"source":"link","destination":"link2"}`)
	if target, err := os.Readlink(filepath.Join(root, "link2")); err != nil || target != "f" {
		t.Errorf("link moved as %q, %v", target, err)
	}
	ok(t, "fs_move", root, `{"source":"d","destination":"d2"}`)
	holds(t, root, "d2/x", "1", "move dir")
	failsWith(t, "existing directory", "fs_move", root, `{"source":"g","destination":"e"}`)
	failsWith(t, "existing directory", "fs_move", root, `{"source":"d2","destination":"e","overwrite":true}`)
	failsWith(t, "into itself", "fs_move", root, `{"source":"d2","destination":"d2/inner"}`)
	fails(t, "fs_move", root, `{"source":".","destination":"x"}`)
	fails(t, "fs_move", root, `{"source":"g","destination":"."}`)
	failsWith(t, "no such file", "fs_move", root, `{"source":"absent","destination":"x"}`)
}

// escapeFixture makes parent/root with a canary outside it
// (parent/outside.txt), a sibling parent/root-evil whose name starts with
// the root's, a file root/in/f, and symlinks that lead out: out (to the
// parent), outfile (to the canary), chain1 -> chain2 -> ../outside.txt,
// and chaindir (in/../..). It returns the root and a check that nothing
// outside the root changed.
func escapeFixture(t *testing.T) (root string, unchanged func()) {
	t.Helper()
	parent := t.TempDir()
	root = filepath.Join(parent, "root")
	evil := filepath.Join(parent, "root-evil")
	for _, d := range []string{root, evil, filepath.Join(root, "in")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(parent, "outside.txt")
	for name, content := range map[string]string{outside: "canary", filepath.Join(evil, "x"): "canary", filepath.Join(root, "in", "f"): "inside"} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"out": parent, "outfile": outside, "chain1": "chain2", "chain2": "../outside.txt", "chaindir": "in/../.."} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, func() {
		t.Helper()
		for _, f := range []string{outside, filepath.Join(evil, "x")} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if b, _ := os.ReadFile(f); string(b) != "canary" || fi.Mode().Perm() != 0o644 || fi.ModTime().Year() == 2001 {
				t.Errorf("%s changed: %q %v %v", f, b, fi.Mode(), fi.ModTime())
			}
		}
		for _, d := range []string{parent, evil} {
			ents, _ := os.ReadDir(d)
			want := map[string]int{parent: 3, evil: 1}[d]
			if len(ents) != want {
				t.Errorf("%s holds %d entries, want %d", d, len(ents), want)
			}
		}
	}
}

// escapeClasses are the names that lead outside the root of escapeFixture
// (relative to it; "ABS" and "EVIL" stand for the absolute canary and the
// sibling directory).
var escapeClasses = map[string]string{
	"dotdot":       "../outside.txt",
	"dotdot-deep":  "in/../../outside.txt",
	"absolute":     "ABS",
	"prefix":       "EVIL/x",
	"prefix-rel":   "../root-evil/x",
	"symlink":      "out/outside.txt",
	"symlink-file": "outfile",
	"chain":        "chain1",
	"chain-dir":    "chaindir/outside.txt",
}

// linkActs lists the calls that act on a final symlink itself rather than
// follow it: deleting or moving a link (or replacing it by rename) changes
// only the root. For names whose last component is a link out, these may
// succeed; everything else must refuse.
var linkActs = map[string]bool{"fs_rmdir": true, "fs_delete": true, "fs_move": true, "fs_move#dst": true}

// TestMutatingEscapes runs each escape class through every path argument
// of every mutating tool, each call on a fresh fixture: every call fails
// with "path escapes root" (or acts on a final link only, see linkActs),
// and nothing outside the root changes. The NUL byte class closes it.
func TestMutatingEscapes(t *testing.T) {
	calls := []struct{ tool, args string }{
		{"fs_write", `{"path":%q,"content":"pwned"}`},
		{"fs_write", `{"path":%q,"content":"pwned","createDirs":true}`},
		{"fs_append", `{"path":%q,"content":"pwned"}`},
		{"fs_replace", `{"path":%q,"old":"canary","new":"pwned"}`},
		{"fs_chmod", `{"path":%q,"mode":"777"}`},
		{"fs_mkdir", `{"path":%q}`},
		{"fs_touch", `{"path":%q,"time":"2001-01-01T00:00:00Z"}`},
		{"fs_rmdir", `{"path":%q}`},
		{"fs_delete", `{"path":%q,"recursive":true}`},
		{"fs_copy", `{"source":%q,"destination":"stolen"}`},
		{"fs_copy#dst", `{"source":"in/f","destination":%q,"overwrite":true}`},
		{"fs_move", `{"source":%q,"destination":"stolen"}`},
		{"fs_move#dst", `{"source":"in/f","destination":%q,"overwrite":true}`},
	}
	for class, p := range escapeClasses {
		for _, c := range calls {
			t.Run(class+"/"+c.tool, func(t *testing.T) {
				root, unchanged := escapeFixture(t)
				parent := filepath.Dir(root)
				name := strings.NewReplacer("ABS", filepath.Join(parent, "outside.txt"), "EVIL", filepath.Join(parent, "root-evil")).Replace(p)
				args := strings.Replace(c.args, "%q", quoteJSON(t, name), 1)
				toolName, _, _ := strings.Cut(c.tool, "#")
				r := call(t, toolName, root, args)
				finalLink := class == "symlink-file" || class == "chain"
				switch {
				case finalLink && linkActs[c.tool] && (r.Code == 0 || r.Code == 1):
					// Acted on the link itself, or refused it (fs_rmdir:
					// not a directory); either way only the root changed.
				case r.Code != 1:
					t.Errorf("%s %s: exit %d, want 1; stdout %q", toolName, args, r.Code, r.Stdout)
				case !strings.Contains(r.Stderr, "path escapes root"):
					t.Errorf("%s %s: stderr %q, want path escapes root", toolName, args, r.Stderr)
				}
				unchanged()
			})
		}
	}
	for _, c := range calls {
		root, unchanged := escapeFixture(t)
		toolName, _, _ := strings.Cut(c.tool, "#")
		args := strings.Replace(c.args, "%q", quoteJSON(t, "in/f\x00"), 1)
		failsWith(t, "invalid path", toolName, root, args)
		unchanged()
	}
}

func quoteJSON(t *testing.T, s string) string {
	t.Helper()
	b := argsJSON(t, "s", s)
	return strings.TrimSuffix(strings.TrimPrefix(b, `{"s":`), "}")
}

// TestMutatingSwapRace swaps a directory inside the root for a symlink to
// a directory outside it, over and over, while the mutating tools write,
// append, create, touch, copy and move through it: whatever the timing,
// nothing is ever written outside (the jail opens each component relative
// to the last, refusing a symlink out at the moment of use). How the calls
// fall against the swaps depends on the machine's load, so the test then
// holds sw still as each, making both outcomes certain: through the real
// directory every call works, through the link every call is refused.
func TestMutatingSwapRace(t *testing.T) {
	parent := t.TempDir()
	root, outside := filepath.Join(parent, "root"), filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(root, "in"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "in", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	outsideInfo, err := os.Stat(outside)
	if err != nil {
		t.Fatal(err)
	}
	sw := filepath.Join(root, "sw")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(sw) // a symlink is removed, not followed
			os.Symlink(outside, sw)
			os.Remove(sw)
			os.Mkdir(sw, 0o755)
		}
	}()
	calls := []struct{ tool, args string }{
		{"fs_write", `{"path":"sw/w","content":"pwned"}`},
		{"fs_write", `{"path":"sw/deep/w","content":"pwned","createDirs":true}`},
		{"fs_append", `{"path":"sw/a","content":"pwned"}`},
		{"fs_mkdir", `{"path":"sw/m/n"}`},
		{"fs_touch", `{"path":"sw/t"}`},
		{"fs_copy", `{"source":"in/f","destination":"sw/c","overwrite":true}`},
		{"fs_chmod", `{"path":"sw","mode":"700"}`},
	}
	for i := 0; i < 150; i++ {
		for _, c := range calls {
			call(t, c.tool, root, c.args)
		}
		if ents, _ := os.ReadDir(outside); len(ents) > 0 {
			close(stop)
			<-done
			t.Fatalf("after %d rounds, outside holds %d entries: %s ...", i+1, len(ents), ents[0].Name())
		}
	}
	close(stop)
	<-done

	for _, held := range []string{"a real directory", "a link out of the root"} {
		if err := os.RemoveAll(sw); err != nil {
			t.Fatal(err)
		}
		if held == "a real directory" {
			err = os.Mkdir(sw, 0o755)
		} else {
			err = os.Symlink(outside, sw)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			r := call(t, c.tool, root, c.args)
			if held == "a real directory" && r.Code != 0 {
				t.Errorf("sw held as %s: %s %s: exit %d, %s", held, c.tool, c.args, r.Code, r.Stderr)
			}
			if held == "a link out of the root" && r.Code == 0 {
				t.Errorf("sw held as %s: %s %s succeeded", held, c.tool, c.args)
			}
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("outside holds %d entries: %s ...", len(ents), ents[0].Name())
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode() != outsideInfo.Mode() {
		t.Errorf("outside's mode changed: %v %v", fi, err)
	}
}
