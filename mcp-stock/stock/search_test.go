package stock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func searchTree(t *testing.T) string {
	t.Helper()
	root := tree(t, map[string]string{
		"a.go":          "package a\n// TODO one\nfunc A() {}\n",
		"b.txt":         "todo lower\nnothing\nTODO two\n",
		"sub/c.go":      "package sub\n// TODO three\n",
		"sub/deep/d.go": "// TODO four\n",
		"bin.dat":       "TODO\x00binary",
		".git/config":   "TODO in git\n",
		"link.go":       "->a.go",
		"out":           "->../",
		"sub/empty.txt": "",
	})
	if err := syscall.Mkfifo(filepath.Join(root, "sub", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFsGrep(t *testing.T) {
	root := searchTree(t)
	got := ok(t, "fs_grep", root, `{"pattern":"TODO"}`)
	want := "a.go:2:// TODO one\nb.txt:3:TODO two\nsub/c.go:2:// TODO three\nsub/deep/d.go:1:// TODO four\n[1 binary files skipped]\n"
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"todo","ignoreCase":true,"include":"*.txt"}`)
	if got != "b.txt:1:todo lower\nb.txt:3:TODO two\n" {
		t.Errorf("ignoreCase include: %q", got)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"TODO","path":"sub","include":"deep/**"}`)
	if got != "sub/deep/d.go:1:// TODO four\n" {
		t.Errorf("include with a slash: %q", got)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"A()","literal":true}`)
	if got != "a.go:3:func A() {}\n[1 binary files skipped]\n" {
		t.Errorf("literal: %q", got)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"TODO","path":"link.go"}`)
	if got != "a.go:2:// TODO one\n" {
		t.Errorf("one file through a symlink: %q", got)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"TODO","path":".git/config"}`)
	if got != ".git/config:1:TODO in git\n" {
		t.Errorf(".git named: %q", got)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"TODO","maxResults":2}`)
	if !strings.HasPrefix(got, "a.go:2:// TODO one\nb.txt:3:TODO two\n[truncated: 2 of 4 matching lines shown]\n") {
		t.Errorf("maxResults: %q", got)
	}
	if got := ok(t, "fs_grep", root, `{"pattern":"zzz","path":"sub"}`); got != "[no matches]\n" {
		t.Errorf("no matches: %q", got)
	}
	// RE2: a pattern that backtracking engines take exponential time on.
	big := tree(t, map[string]string{"x": strings.Repeat("a", 5000) + "!\n"})
	if got := ok(t, "fs_grep", big, `{"pattern":"^(a+)+$"}`); got != "[no matches]\n" {
		t.Errorf("catastrophic pattern: %q", got)
	}
	failsWith(t, "invalid pattern", "fs_grep", root, `{"pattern":"(?<=x)"}`)
	failsWith(t, "invalid pattern", "fs_grep", root, `{"pattern":"("}`)
	failsWith(t, "invalid include", "fs_grep", root, `{"pattern":"x","include":"[a"}`)
	failsWith(t, "binary file", "fs_grep", root, `{"pattern":"x","path":"bin.dat"}`)
	failsWith(t, "not a regular file", "fs_grep", root, `{"pattern":"x","path":"sub/fifo"}`)
	failsWith(t, "out: path escapes root", "fs_grep", root, `{"pattern":"x","path":"out"}`)
	failsWith(t, "path escapes root", "fs_grep", root, `{"pattern":"x","path":"../"}`)
}

func TestFsGrepLongLines(t *testing.T) {
	line := strings.Repeat("x", 100000) + "NEEDLE"
	root := tree(t, map[string]string{"f": line + "\n"})
	got := ok(t, "fs_grep", root, `{"pattern":"NEEDLE"}`)
	if !strings.HasPrefix(got, "f:1:xxxx") || !strings.HasSuffix(got, "… [line cut: 100006 bytes]\n") || len(got) > MaxLineBytes+100 {
		t.Errorf("long line: %d bytes, %q", len(got), got[len(got)-40:])
	}
}

func TestFsGrepCount(t *testing.T) {
	root := searchTree(t)
	var got grepCountResult
	okJSON(t, &got, "fs_grep_count", root, `{"pattern":"todo","ignoreCase":true}`)
	if got.Total != 5 || got.MatchingFiles != 4 || len(got.Files) != 4 || got.Files[1] != (fileCount{"b.txt", 2}) || got.BinarySkipped != 1 || got.FilesSearched != 5 || got.Truncated || !got.Complete {
		t.Errorf("%+v", got)
	}
	got = grepCountResult{}
	okJSON(t, &got, "fs_grep_count", root, `{"pattern":"todo","ignoreCase":true,"maxResults":1}`)
	if got.Total != 5 || len(got.Files) != 1 || got.Files[0] != (fileCount{"a.go", 1}) || !got.Truncated {
		t.Errorf("truncated: %+v", got)
	}
	got = grepCountResult{}
	okJSON(t, &got, "fs_grep_count", root, `{"pattern":"zzz"}`)
	if got.Total != 0 || len(got.Files) != 0 {
		t.Errorf("none: %+v", got)
	}
	failsWith(t, "path escapes root", "fs_grep_count", root, `{"pattern":"x","path":"/etc"}`)
}

func TestFsFirstMatch(t *testing.T) {
	root := searchTree(t)
	var got firstMatchResult
	okJSON(t, &got, "fs_first_match", root, `{"pattern":"TODO (t\\w+)","path":"sub"}`)
	if !got.Found || got.Path != "sub/c.go" || got.Line != 2 || got.Text == nil || *got.Text != "// TODO three" || got.Complete != nil {
		t.Errorf("%+v", got)
	}
	got = firstMatchResult{}
	okJSON(t, &got, "fs_first_match", root, `{"pattern":"^$"}`)
	if got.Found || got.Complete == nil || !*got.Complete {
		t.Errorf("none: %+v", got)
	}
	failsWith(t, "path escapes root", "fs_first_match", root, `{"pattern":"x","path":"out/etc"}`)
}

func TestFsGlob(t *testing.T) {
	root := searchTree(t)
	okOutputs(t, "fs_glob", root, []outputCase{
		{`{"pattern":"*.go"}`, "a.go\nlink.go\n"},
		{`{"pattern":"**/*.go"}`, "a.go\nlink.go\nsub/c.go\nsub/deep/d.go\n"},
		{`{"pattern":"sub/**"}`, "sub/\nsub/c.go\nsub/deep/\nsub/deep/d.go\nsub/empty.txt\nsub/fifo\n"},
		{`{"pattern":"**/*.go","path":"sub"}`, "sub/c.go\nsub/deep/d.go\n"},
		{`{"pattern":"sub/*/*.go"}`, "sub/deep/d.go\n"},
		{`{"pattern":"{a,b}.*"}`, "a.go\nb.txt\n"},
		{`{"pattern":".git/*"}`, ".git/config\n"},
		{`{"pattern":"nope/**"}`, "[no matches]\n"},
		{`{"pattern":"*.go","maxResults":1}`, "a.go\n[truncated: 1 of 2 paths shown]\n"},
	})
	failsWith(t, "path escapes root", "fs_glob", root, `{"pattern":"out/*"}`)
	failsWith(t, "path escapes root", "fs_glob", root, `{"pattern":"../*"}`)
	failsWith(t, "path escapes root", "fs_glob", root, `{"pattern":"*","path":".."}`)
	failsWith(t, "invalid glob", "fs_glob", root, `{"pattern":"[a"}`)
	failsWith(t, "must be relative", "fs_glob", root, `{"pattern":"/etc/*"}`)
	failsWith(t, "not a directory", "fs_glob", root, `{"pattern":"*","path":"a.go"}`)
}

var past = time.Now().Add(-48 * time.Hour)

func TestFsFind(t *testing.T) {
	root := searchTree(t)
	os.Chtimes(filepath.Join(root, "b.txt"), past, past)
	okOutputs(t, "fs_find", root, []outputCase{
		{`{"name":"*.go"}`, "a.go\nlink.go\nsub/c.go\nsub/deep/d.go\n"},
		{`{"name":"*.go","type":"file"}`, "a.go\nsub/c.go\nsub/deep/d.go\n"},
		{`{"type":"symlink"}`, "link.go\nout\n"},
		{`{"type":"directory"}`, "sub/\nsub/deep/\n"},
		{`{"path":"sub","maxDepth":1}`, "sub/c.go\nsub/deep/\nsub/empty.txt\nsub/fifo\n"},
		{`{"type":"file","maxSize":0}`, "sub/empty.txt\n"},
		{`{"type":"file","minSize":27}`, "a.go\nb.txt\n"},
		{`{"type":"file","modifiedWithin":"1h","name":"*.txt"}`, "sub/empty.txt\n"},
		{`{"name":"zzz"}`, "[no matches]\n"},
		{`{"type":"file","maxResults":2}`, "a.go\nb.txt\n[truncated: 2 of 6 paths shown]\n"},
	})
	failsWith(t, "path escapes root", "fs_find", root, `{"path":"out"}`)
	failsWith(t, "modifiedWithin", "fs_find", root, `{"modifiedWithin":"yesterday"}`)
	failsWith(t, "not a directory", "fs_find", root, `{"path":"a.go"}`)
}

func TestFsDu(t *testing.T) {
	root := tree(t, map[string]string{"a/x": strings.Repeat("x", 1000), "a/y": "yy", "b": "bbb", "l": "->b", ".git/o": "12345"})
	if err := os.Link(filepath.Join(root, "b"), filepath.Join(root, "a", "hard")); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Path string `json:"path"`
		usage
		Children          []childUsage `json:"children"`
		ChildrenTruncated bool         `json:"childrenTruncated"`
		Complete          bool         `json:"complete"`
	}
	okJSON(t, &got, "fs_du", root, `{}`)
	if got.Path != "." || got.Bytes != 1000+2+3+5+int64(len("b")) || got.Files != 5 || got.Dirs != 3 || got.Symlinks != 1 || !got.Complete {
		t.Errorf("%+v", got)
	}
	if len(got.Children) != 4 || got.Children[0].Name != "a" || got.Children[0].Bytes != 1005 {
		t.Errorf("children: %+v", got.Children)
	}
	okJSON(t, &got, "fs_du", root, `{"path":"a","maxResults":1}`)
	if got.Path != "a" || len(got.Children) != 1 || !got.ChildrenTruncated || got.Children[0].Name != "x" {
		t.Errorf("a: %+v", got)
	}
	failsWith(t, "path escapes root", "fs_du", root, `{"path":"a/../.."}`)
}

func TestFsCount(t *testing.T) {
	root := tree(t, map[string]string{"f": "one two\nthree  héllo\n\nlast", "e": "", "bad": "\xff\xfe x"})
	var got countResult
	okJSON(t, &got, "fs_count", root, `{"path":"f"}`)
	if got != (countResult{Path: "f", Lines: 4, Words: 5, Chars: 26, Bytes: 27, LongestLine: 13}) {
		t.Errorf("%+v", got)
	}
	got = countResult{}
	okJSON(t, &got, "fs_count", root, `{"path":"e"}`)
	if got != (countResult{Path: "e"}) {
		t.Errorf("empty: %+v", got)
	}
	got = countResult{}
	okJSON(t, &got, "fs_count", root, `{"path":"bad"}`)
	if got.Chars != 4 || got.Bytes != 4 || got.Words != 2 {
		t.Errorf("invalid UTF-8: %+v", got)
	}
	failsWith(t, "is a directory", "fs_count", root, `{"path":"."}`)
}

func TestFsHash(t *testing.T) {
	root := tree(t, map[string]string{"f": "abc"})
	for alg, want := range map[string]string{
		"":       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		"sha1":   "a9993e364706816aba3e25717850c26c9cd0d89d",
		"md5":    "900150983cd24fb0d6963f7d28e17f72",
		"sha512": "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
	} {
		args := `{"path":"f"}`
		if alg != "" {
			args = fmt.Sprintf(`{"path":"f","algorithm":%q}`, alg)
		}
		var got struct {
			Path, Algorithm, Hash string
			Size                  int64
		}
		okJSON(t, &got, "fs_hash", root, args)
		if got.Hash != want || got.Size != 3 || (alg != "" && got.Algorithm != alg) || (alg == "" && got.Algorithm != "sha256") {
			t.Errorf("%s: %+v", alg, got)
		}
	}
	failsWith(t, "algorithm", "fs_hash", root, `{"path":"f","algorithm":"crc32"}`)
}

func TestFsGrepContext(t *testing.T) {
	root := tree(t, map[string]string{
		"f": "1\n2\nhit a\n4\n5\n6\n7\nhit b\nhit c\n10\n",
		"g": "hit d\n2\n",
	})
	got := ok(t, "fs_grep", root, `{"pattern":"hit","context":1}`)
	want := "f-2-2\nf:3:hit a\nf-4-4\n--\nf-7-7\nf:8:hit b\nf:9:hit c\nf-10-10\n--\ng:1:hit d\ng-2-2\n"
	if got != want {
		t.Errorf("context 1:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"hit","context":3,"path":"f"}`)
	want = "f-1-1\nf-2-2\nf:3:hit a\nf-4-4\nf-5-5\nf-6-6\nf-7-7\nf:8:hit b\nf:9:hit c\nf-10-10\n"
	if got != want {
		t.Errorf("context 3, groups merged:\n%s\nwant:\n%s", got, want)
	}
	got = ok(t, "fs_grep", root, `{"pattern":"hit","context":1,"maxResults":1}`)
	want = "f-2-2\nf:3:hit a\nf-4-4\n[truncated: 1 of 4 matching lines shown]\n"
	if got != want {
		t.Errorf("context with maxResults:\n%s\nwant:\n%s", got, want)
	}
	failsWith(t, "context 21", "fs_grep", root, `{"pattern":"hit","context":21}`)
}
