package stock

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestFsRead(t *testing.T) {
	root := tree(t, map[string]string{
		"a.txt":    "hello\nworld\n",
		"dir/b.md": "# b\n",
		"bin":      "ab\x00cd",
		"bad.txt":  "ok \xff\xfe end\n",
		"big.txt":  strings.Repeat("x", 300000),
		"utf.txt":  "héllo", // é is 2 bytes: 0-1 h, 1-3 é
	})
	if got := ok(t, "fs_read", root, `{"path":"a.txt"}`); got != "hello\nworld\n" {
		t.Errorf("a.txt: %q", got)
	}
	if got := ok(t, "fs_read", root, `{"path":"./dir//b.md"}`); got != "# b\n" {
		t.Errorf("dir/b.md: %q", got)
	}
	if got := ok(t, "fs_read", root, argsJSON(t, "path", filepath.Join(root, "a.txt"))); got != "hello\nworld\n" {
		t.Errorf("absolute inside: %q", got)
	}
	if got := ok(t, "fs_read", root, `{"path":"bad.txt"}`); got != "ok \uFFFD end\n" {
		t.Errorf("invalid UTF-8: %q", got)
	}
	got := ok(t, "fs_read", root, `{"path":"big.txt"}`)
	if !strings.HasSuffix(got, "\n[truncated: 262144 of 300000 bytes shown]\n") || len(got) > DefaultMaxBytes+100 {
		t.Errorf("big.txt: %d bytes, ends %q", len(got), got[max(0, len(got)-60):])
	}
	if got := ok(t, "fs_read", root, `{"path":"utf.txt","maxBytes":2}`); got != "h\n[truncated: 1 of 6 bytes shown]\n" {
		t.Errorf("cut inside a character: %q", got)
	}
	failsWith(t, "binary file", "fs_read", root, `{"path":"bin"}`)
	failsWith(t, "dir: is a directory", "fs_read", root, `{"path":"dir"}`)
	failsWith(t, "nope: no such file or directory", "fs_read", root, `{"path":"nope"}`)
	failsWith(t, "invalid arguments", "fs_read", root, `{"path":"a.txt","bogus":1}`)
	failsWith(t, "invalid arguments", "fs_read", root, `{"path":3}`)
}

func TestFsHead(t *testing.T) {
	root := tree(t, map[string]string{
		"n.txt":    numbered(50),
		"crlf.txt": "a\r\nb\r\n",
		"short":    "one\ntwo",
		"long":     strings.Repeat("y", 10000) + "\nnext\n",
		"bin":      "\x00",
	})
	if got := ok(t, "fs_head", root, `{"path":"n.txt"}`); got != numbered(10) {
		t.Errorf("default: %q", got)
	}
	if got := ok(t, "fs_head", root, `{"path":"n.txt","lines":3}`); got != numbered(3) {
		t.Errorf("3 lines: %q", got)
	}
	if got := ok(t, "fs_head", root, `{"path":"n.txt","lines":100}`); got != numbered(50) {
		t.Errorf("more than the file: %q", got)
	}
	if got := ok(t, "fs_head", root, `{"path":"crlf.txt"}`); got != "a\nb\n" {
		t.Errorf("crlf: %q", got)
	}
	if got := ok(t, "fs_head", root, `{"path":"short"}`); got != "one\ntwo\n" {
		t.Errorf("no final newline: %q", got)
	}
	got := ok(t, "fs_head", root, `{"path":"long","lines":2}`)
	if !strings.HasPrefix(got, strings.Repeat("y", MaxLineBytes)+"… [line cut: 10000 bytes]\nnext\n") {
		t.Errorf("long line: %q", got[len(got)-60:])
	}
	if got := ok(t, "fs_head", root, `{"path":"n.txt","lines":50,"maxBytes":20}`); got != "line 1\nline 2\n[truncated: 2 of 50 lines shown, byte cap reached]\n" {
		t.Errorf("byte cap: %q", got)
	}
	failsWith(t, "binary file", "fs_head", root, `{"path":"bin"}`)
	failsWith(t, "is a directory", "fs_head", root, `{"path":"."}`)
}

func TestFsTail(t *testing.T) {
	root := tree(t, map[string]string{
		"n.txt": numbered(50),
		"nonl":  "a\nb\nc",
		"one":   "only\n",
		"empty": "",
		"nl":    "\n\n",
		"bin":   "\x00",
		"huge":  numbered(200000), // ~2.3 MB: more than any chunk
		"crlf":  "x\r\ny\r\n",
	})
	if got := ok(t, "fs_tail", root, `{"path":"n.txt"}`); got != strings.TrimPrefix(numbered(50), numbered(40)) {
		t.Errorf("default: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"nonl","lines":2}`); got != "b\nc\n" {
		t.Errorf("no final newline: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"one","lines":5}`); got != "only\n" {
		t.Errorf("one line: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"empty"}`); got != "" {
		t.Errorf("empty: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"nl","lines":5}`); got != "\n\n" {
		t.Errorf("empty lines: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"crlf","lines":1}`); got != "y\n" {
		t.Errorf("crlf: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"huge","lines":3}`); got != "line 199998\nline 199999\nline 200000\n" {
		t.Errorf("huge: %q", got)
	}
	got := ok(t, "fs_tail", root, `{"path":"huge","lines":100000,"maxBytes":30}`)
	if got != "[truncated: last 2 of 100000 lines shown, byte cap reached]\nline 199999\nline 200000\n" {
		t.Errorf("byte cap: %q", got)
	}
	failsWith(t, "binary file", "fs_tail", root, `{"path":"bin"}`)
}

func TestFsLines(t *testing.T) {
	root := tree(t, map[string]string{"n.txt": numbered(30)})
	if got := ok(t, "fs_lines", root, `{"path":"n.txt","start":5,"end":6}`); got != "     5\tline 5\n     6\tline 6\n" {
		t.Errorf("5-6: %q", got)
	}
	if got := ok(t, "fs_lines", root, `{"path":"n.txt","start":29,"numbered":false}`); got != "line 29\nline 30\n[end of file at line 30]\n" {
		t.Errorf("29-: %q", got)
	}
	if got := ok(t, "fs_lines", root, `{"path":"n.txt","start":40,"end":41}`); got != "[the file has 30 lines]\n" {
		t.Errorf("past the end: %q", got)
	}
	if got := ok(t, "fs_lines", root, `{"path":"n.txt","start":1,"end":30,"numbered":false,"maxBytes":14}`); got != "line 1\nline 2\n[truncated: 2 of 30 lines shown (1-2), byte cap reached]\n" {
		t.Errorf("byte cap: %q", got)
	}
	if got := ok(t, "fs_lines", root, `{"path":"n.txt","start":30,"end":30}`); got != "    30\tline 30\n" {
		t.Errorf("last line: %q", got)
	}
	failsWith(t, "end 3 is before start 4", "fs_lines", root, `{"path":"n.txt","start":4,"end":3}`)
	failsWith(t, "start 0", "fs_lines", root, `{"path":"n.txt","start":0}`)
}

func TestFsSlice(t *testing.T) {
	root := tree(t, map[string]string{"b": "\x00\x01hello\xff"})
	var res sliceResult
	okJSON(t, &res, "fs_slice", root, `{"path":"b","offset":2,"length":5}`)
	if res != (sliceResult{Path: "b", Offset: 2, Length: 5, Size: 8, EOF: false, Encoding: "text", Data: "hello"}) {
		t.Errorf("text: %+v", res)
	}
	res = sliceResult{}
	okJSON(t, &res, "fs_slice", root, `{"path":"b","encoding":"hex"}`)
	if res.Data != "000168656c6c6fff" || !res.EOF || res.Length != 8 {
		t.Errorf("hex: %+v", res)
	}
	res = sliceResult{}
	okJSON(t, &res, "fs_slice", root, `{"path":"b","offset":6,"encoding":"base64"}`)
	if res.Data != "b/8=" || !res.EOF {
		t.Errorf("base64: %+v", res)
	}
	res = sliceResult{}
	okJSON(t, &res, "fs_slice", root, `{"path":"b","offset":100}`)
	if res.Data != "" || res.Length != 0 || !res.EOF {
		t.Errorf("past the end: %+v", res)
	}
	failsWith(t, "encoding", "fs_slice", root, `{"path":"b","encoding":"rot13"}`)
	failsWith(t, "negative", "fs_slice", root, `{"path":"b","offset":-1}`)
}

func TestFsStat(t *testing.T) {
	root := tree(t, map[string]string{"f": "12345", "d/": "", "l": "->f", "dl": "->missing", "out": "->../../etc"})
	os.Chmod(filepath.Join(root, "f"), 0o640)
	var res statResult
	okJSON(t, &res, "fs_stat", root, `{"path":"f"}`)
	if res.Type != "file" || res.Size != 5 || res.Mode != "0640" || res.ModeString != "-rw-r-----" || res.Name != "f" || res.Links != 1 {
		t.Errorf("f: %+v", res)
	}
	res = statResult{}
	okJSON(t, &res, "fs_stat", root, `{"path":"d"}`)
	if res.Type != "directory" {
		t.Errorf("d: %+v", res)
	}
	res = statResult{}
	okJSON(t, &res, "fs_stat", root, `{"path":"l"}`)
	if res.Type != "symlink" || res.Target != "f" {
		t.Errorf("l: %+v", res)
	}
	res = statResult{}
	okJSON(t, &res, "fs_stat", root, `{"path":"l","follow":true}`)
	if res.Type != "file" || res.Size != 5 {
		t.Errorf("l followed: %+v", res)
	}
	res = statResult{}
	okJSON(t, &res, "fs_stat", root, `{"path":"dl"}`)
	if res.Type != "symlink" || res.Target != "missing" {
		t.Errorf("dangling: %+v", res)
	}
	// A link out is described itself, as ls -l shows it; never followed.
	res = statResult{}
	okJSON(t, &res, "fs_stat", root, `{"path":"out"}`)
	if res.Type != "symlink" || res.Target != "../../etc" || res.ModeString != "lrwxrwxrwx" {
		t.Errorf("link out: %+v", res)
	}
	failsWith(t, "path escapes root", "fs_stat", root, `{"path":"out","follow":true}`)
	failsWith(t, "path escapes root", "fs_stat", root, `{"path":"out/passwd"}`)
	failsWith(t, "path escapes root", "fs_stat", root, `{"path":"../x"}`)
	failsWith(t, "no such file", "fs_stat", root, `{"path":"dl","follow":true}`)
}

func TestFsExists(t *testing.T) {
	root := tree(t, map[string]string{"f": "x", "d/": "", "l": "->d", "dl": "->missing", "out": "->/etc"})
	type ex struct {
		Path   string `json:"path"`
		Exists bool   `json:"exists"`
		Type   string `json:"type"`
	}
	okJSONPaths(t, "fs_exists", root, []pathCase[ex]{
		{"f", ex{"f", true, "file"}},
		{"d/", ex{"d/", true, "directory"}},
		{"l", ex{"l", true, "directory"}},
		{"dl", ex{"dl", false, ""}},
		{"nope", ex{"nope", false, ""}},
		{"nope/deeper", ex{"nope/deeper", false, ""}},
		{"f/under", ex{"f/under", false, ""}},
	})
	failsWith(t, "path escapes root", "fs_exists", root, `{"path":"out"}`)
	failsWith(t, "path escapes root", "fs_exists", root, `{"path":"../x"}`)
}

func TestFsReadlinkRealpath(t *testing.T) {
	root := tree(t, map[string]string{"d/f": "x", "l": "->d/f", "ld": "->d", "out": "->../x", "chain": "->out"})
	if got := ok(t, "fs_readlink", root, `{"path":"l"}`); got != "d/f\n" {
		t.Errorf("readlink l: %q", got)
	}
	failsWith(t, "invalid argument", "fs_readlink", root, `{"path":"d/f"}`)
	failsWith(t, "out: path escapes root", "fs_readlink", root, `{"path":"out"}`)
	failsWith(t, "chain: path escapes root", "fs_readlink", root, `{"path":"chain"}`)

	type rp struct {
		Path     string `json:"path"`
		Relative string `json:"relative"`
		Absolute string `json:"absolute"`
		Exists   bool   `json:"exists"`
	}
	real, _ := filepath.EvalSymlinks(root)
	okJSONPaths(t, "fs_realpath", root, []pathCase[rp]{
		{"ld/f", rp{"ld/f", "d/f", real + "/d/f", true}},
		{"./d/../l", rp{"./d/../l", "d/f", real + "/d/f", true}},
		{".", rp{".", ".", real, true}},
		{"d/new/file", rp{"d/new/file", "d/new/file", real + "/d/new/file", false}},
	})
	failsWith(t, "path escapes root", "fs_realpath", root, `{"path":"chain"}`)
	failsWith(t, "path escapes root", "fs_realpath", root, `{"path":"d/../.."}`)
}

func TestFsList(t *testing.T) {
	root := tree(t, map[string]string{"b": "12", "a/": "", ".h": "", "l": "->b", "out": "->/etc"})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		Path      string      `json:"path"`
		Entries   []listEntry `json:"entries"`
		Total     int         `json:"total"`
		Truncated bool        `json:"truncated"`
	}
	var got res
	okJSON(t, &got, "fs_list", root, `{}`)
	var names []string
	for _, e := range got.Entries {
		names = append(names, e.Name+":"+e.Type+":"+e.Target)
	}
	if want := ".h:file:,a:directory:,b:file:,fifo:fifo:,l:symlink:b,out:symlink:"; strings.Join(names, ",") != want || got.Total != 6 || got.Truncated || got.Path != "." {
		t.Errorf("list: %v %+v, want %s", names, got, want)
	}
	if e := got.Entries[2]; e.Size == nil || *e.Size != 2 || e.Mode != "0644" || e.ModTime == "" {
		t.Errorf("b: %+v", e)
	}
	got = res{}
	okJSON(t, &got, "fs_list", root, `{"hidden":false,"maxResults":2}`)
	if len(got.Entries) != 2 || got.Entries[0].Name != "a" || got.Total != 5 || !got.Truncated {
		t.Errorf("truncated: %+v", got)
	}
	got = res{}
	okJSON(t, &got, "fs_list", root, `{"path":"a"}`)
	if len(got.Entries) != 0 || got.Path != "a" {
		t.Errorf("empty: %+v", got)
	}
	failsWith(t, "out: path escapes root", "fs_list", root, `{"path":"out"}`)
	failsWith(t, "not a directory", "fs_list", root, `{"path":"b"}`)
}

// TestJSONBudget: json results stay under MaxJSONBytes however large the
// caps the caller asks for, and say they were cut.
func TestJSONBudget(t *testing.T) {
	files := map[string]string{"bin": strings.Repeat("\x00\x01", 600000)}
	for i := range 6000 {
		files[fmt.Sprintf("d/%s-%05d", strings.Repeat("n", 100), i)] = "match\n"
	}
	root := tree(t, files)
	for _, tc := range []struct{ tool, args string }{
		{"fs_list", `{"path":"d","maxResults":10000}`},
		{"fs_grep_count", `{"pattern":"match","maxResults":10000}`},
		{"fs_du", `{"path":"d","maxResults":10000}`},
		{"fs_slice", `{"path":"bin","length":1024000,"encoding":"hex"}`},
		{"fs_slice", `{"path":"bin","length":1024000,"encoding":"base64"}`},
		{"fs_slice", `{"path":"bin","length":1024000}`},
	} {
		out := ok(t, tc.tool, root, tc.args)
		if len(out) > MaxJSONBytes {
			t.Errorf("%s %s: %d bytes of JSON", tc.tool, tc.args, len(out))
		}
		if !strings.Contains(out, `"truncated":true`) && !strings.Contains(out, `"childrenTruncated":true`) && !strings.Contains(out, `"eof":false`) {
			t.Errorf("%s %s: not marked as cut: %.200s", tc.tool, tc.args, out)
		}
	}
}

// TestLsMode: modeString is what ls -l writes.
func TestLsMode(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0o644:                                     "-rw-r--r--",
		fs.ModeDir | 0o755:                        "drwxr-xr-x",
		fs.ModeSymlink | 0o777:                    "lrwxrwxrwx",
		fs.ModeNamedPipe | 0o600:                  "prw-------",
		fs.ModeSocket | 0o755:                     "srwxr-xr-x",
		fs.ModeDevice | 0o660:                     "brw-rw----",
		fs.ModeDevice | fs.ModeCharDevice | 0o666: "crw-rw-rw-",
		fs.ModeSetuid | 0o755:                     "-rwsr-xr-x",
		fs.ModeSetuid | 0o644:                     "-rwSr--r--",
		fs.ModeSetgid | 0o755:                     "-rwxr-sr-x",
		fs.ModeDir | fs.ModeSticky | 0o777:        "drwxrwxrwt",
		fs.ModeDir | fs.ModeSticky | 0o770:        "drwxrwx--T",
	} {
		if got := lsMode(m); got != want {
			t.Errorf("lsMode(%v) = %q, want %q", m, got, want)
		}
	}
}
