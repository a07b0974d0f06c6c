package stock

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// TestSwapRace swaps a directory for a symlink to outside the root, over
// and over, while read tools read through it: every answer is the inside
// file, a missing file or a refusal, never the outside. How the calls fall
// against the swaps depends on the machine's load, so the test then holds
// "dir" still as each of the two, making both outcomes certain: through
// the real directory every tool works, through the link every tool either
// refuses or finds nothing, and none shows the outside.
func TestSwapRace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	for _, d := range []string{"root/real", "outside"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "real", "f"), []byte("inside\n"), 0o644)
	os.WriteFile(filepath.Join(base, "outside", "f"), []byte(canary+"\n"), 0o644)
	if err := os.Symlink("../outside", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	// The flipper renames real and link in turn to "dir": rename is
	// atomic, so "dir" is at every moment absent, the real directory or
	// the link out.
	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dir := filepath.Join(root, "dir")
		for {
			for _, name := range []string{"real", "link"} {
				select {
				case <-stop:
					return
				default:
				}
				p := filepath.Join(root, name)
				if os.Rename(p, dir) == nil {
					os.Rename(dir, p)
				}
				flips.Add(1)
			}
		}
	}()
	calls := []struct{ tool, args string }{
		{"fs_read", `{"path":"dir/f"}`},
		{"fs_head", `{"path":"dir/f"}`},
		{"fs_hash", `{"path":"dir/f"}`},
		{"fs_stat", `{"path":"dir/f","follow":true}`},
		{"fs_grep", `{"pattern":".","path":"dir"}`},
		{"fs_list", `{"path":"dir"}`},
		{"fs_glob", `{"pattern":"dir/*"}`},
	}
	var readers sync.WaitGroup
	var leaks, failed atomic.Int64
	for _, c := range calls {
		readers.Add(1)
		go func() {
			defer readers.Done()
			tl, _ := Lookup(c.tool)
			for range 150 {
				var out, errb bytes.Buffer
				if tool.Invoke(tl.Exec(), []byte(c.args), map[string]string{"MCP_ROOT": root}, &out, &errb) != 0 {
					failed.Add(1)
				}
				if strings.Contains(out.String()+errb.String(), canary) {
					leaks.Add(1)
					t.Errorf("%s: LEAK: %q %q", c.tool, out.String(), errb.String())
				}
			}
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	t.Logf("%d flips, %d of %d calls failed, %d leaks", flips.Load(), failed.Load(), 150*len(calls), leaks.Load())

	// The flipper has put both back: dir is absent. Hold it still as each.
	dir := filepath.Join(root, "dir")
	for _, held := range []string{"real", "link"} {
		if err := os.Rename(filepath.Join(root, held), dir); err != nil {
			t.Fatal(err)
		}
		refusedRead := false
		for _, c := range calls {
			tl, _ := Lookup(c.tool)
			var out, errb bytes.Buffer
			code := tool.Invoke(tl.Exec(), []byte(c.args), map[string]string{"MCP_ROOT": root}, &out, &errb)
			if strings.Contains(out.String()+errb.String(), canary) {
				t.Errorf("dir held as %s: %s: LEAK: %q %q", held, c.tool, out.String(), errb.String())
			}
			if held == "real" && code != 0 {
				t.Errorf("dir held as the real directory: %s failed: exit %d, %s", c.tool, code, errb.String())
			}
			if held == "link" && c.tool == "fs_read" {
				refusedRead = code != 0
			}
		}
		if held == "link" && !refusedRead {
			t.Errorf("dir held as a link out of the root: fs_read dir/f was not refused")
		}
		if err := os.Rename(dir, filepath.Join(root, held)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancel: a call whose context is cancelled stops with the context's
// error instead of walking on.
func TestCancel(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[filepath.Join("d", string(rune('a'+i%26)), strings.Repeat("f", i+1))] = "x\n"
	}
	root := tree(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct{ tool, args string }{
		{"fs_grep", `{"pattern":"x"}`},
		{"fs_find", `{}`},
		{"fs_du", `{}`},
		{"fs_glob", `{"pattern":"**"}`},
	} {
		tl, _ := Lookup(c.tool)
		var out, errb bytes.Buffer
		code := tool.InvokeWith(tl.Exec(), tool.Invocation{
			Args: []byte(c.args), Env: map[string]string{"MCP_ROOT": root},
			Stdout: &out, Stderr: &errb, Context: ctx,
		})
		if code != 1 || !strings.Contains(errb.String(), context.Canceled.Error()) {
			t.Errorf("%s: exit %d, %q", c.tool, code, errb.String())
		}
	}
}

func TestHashProgress(t *testing.T) {
	defer func(old int64) { hashProgressStep = old }(hashProgressStep)
	hashProgressStep = 4
	root := tree(t, map[string]string{"f": "0123456789"})
	tl, _ := Lookup("fs_hash")
	var out, progress bytes.Buffer
	code := tool.InvokeWith(tl.Exec(), tool.Invocation{
		Args: []byte(`{"path":"f"}`), Env: map[string]string{"MCP_ROOT": root},
		Stdout: &out, Progress: &progress,
	})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := `{"progress":4,"total":10,"message":"hashing"}` + "\n" + `{"progress":8,"total":10,"message":"hashing"}` + "\n"
	if progress.String() != want {
		t.Errorf("progress %q, want %q", progress.String(), want)
	}
}

// TestLargeSparseFile: the range tools read only the part they need of an
// 8 GiB file (sparse, so the test costs no disk); reading it whole would
// take long enough to time the test out.
func TestLargeSparseFile(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "big")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 30
	// Text first, past the binary check's 8000 bytes; then a hole of
	// zeros up to the last lines.
	f.WriteString("first\nsecond\n" + strings.Repeat("filler line\n", 700))
	if _, err := f.WriteAt([]byte("\nnext to last\nlast\n"), size-19); err != nil {
		f.Close()
		if errors.Is(err, os.ErrInvalid) || strings.Contains(err.Error(), "too large") {
			t.Skipf("no 8 GiB sparse files here: %v", err)
		}
		t.Fatal(err)
	}
	f.Close()
	if got := ok(t, "fs_head", root, `{"path":"big","lines":2}`); got != "first\nsecond\n" {
		t.Errorf("head: %q", got)
	}
	if got := ok(t, "fs_tail", root, `{"path":"big","lines":2}`); got != "next to last\nlast\n" {
		t.Errorf("tail: %q", got)
	}
	var res sliceResult
	okJSON(t, &res, "fs_slice", root, `{"path":"big","offset":8589934587}`)
	if res.Data != "last\n" || !res.EOF || res.Size != size {
		t.Errorf("slice: %+v", res)
	}
	if got := ok(t, "fs_lines", root, `{"path":"big","start":2,"end":2}`); got != "     2\tsecond\n" {
		t.Errorf("lines: %q", got)
	}
	got := ok(t, "fs_read", root, `{"path":"big","maxBytes":6}`)
	if got != "first\n[truncated: 6 of 8589934592 bytes shown]\n" {
		t.Errorf("read: %q", got)
	}
}
