package registry

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/servertest"
)

// logBuf keeps the records a registry logs (servertest.Log: "debug: "
// before the routine ones, then the message and " key=value" per
// attribute).
type logBuf struct{ servertest.Log }

func (l *logBuf) logger() *slog.Logger { return l.Logger() }

// warns returns the lines of events an operator must see (not Debug).
func (l *logBuf) warns() []string {
	var w []string
	for _, s := range l.Lines() {
		if !strings.HasPrefix(s, "debug: ") {
			w = append(w, s)
		}
	}
	return w
}

func (l *logBuf) has(sub string) bool {
	for _, s := range l.Lines() {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	// Make each write visible to the mtime fingerprint even on coarse
	// clocks: bump the time explicitly instead of sleeping.
	ts := time.Now().Add(time.Duration(len(content)) * time.Second)
	os.Chtimes(path, ts, ts)
}

func names(r *Registry) []string {
	var out []string
	for _, t := range r.Tools() {
		out = append(out, t.Def.Name)
	}
	return out
}

func newReg(t *testing.T, opts Options) (*Registry, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	opts.Logger = lb.logger()
	opts.DescribeEnv = []string{"PATH=/usr/bin:/bin"}
	r := New(opts)
	r.Reload(context.Background())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", strings.Join(lb.Lines(), "\n"))
		}
	})
	return r, lb
}

func TestSidecarAndDescribe(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "side"), "#!/bin/sh\necho hi\n", 0o755)
	write(t, filepath.Join(dir, "side.json"), `{"description":"from sidecar","run":{"timeout":"3s","result":"json","maxOutput":10,"env":{"A":"1"},"passEnv":["B"]}}`, 0o644)
	write(t, filepath.Join(dir, "desc"), `#!/bin/sh
if [ "$1" = --mcp-describe ]; then echo '{"name":"described","description":"from describe","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}'; exit 0; fi
exit 1
`, 0o755)
	write(t, filepath.Join(dir, "notexec"), "#!/bin/sh\n", 0o644)
	write(t, filepath.Join(dir, ".hidden"), "#!/bin/sh\n", 0o755)
	os.Mkdir(filepath.Join(dir, "subdir"), 0o755)
	os.Symlink(filepath.Join(dir, "side"), filepath.Join(dir, "link"))
	write(t, filepath.Join(dir, "link.json"), `{"description":"a symlink"}`, 0o644)

	r, _ := newReg(t, Options{Dirs: []string{dir}})
	if got := names(r); !slices.Equal(got, []string{"described", "link", "side"}) {
		t.Fatalf("tools %v", got)
	}
	side := r.Lookup("side")
	if side.Run.Timeout != 3*time.Second || side.Run.Result != ResultJSON || side.Run.MaxOutput != 10 ||
		side.Run.Env["A"] != "1" || !slices.Equal(side.Run.PassEnv, []string{"B"}) {
		t.Errorf("run %+v", side.Run)
	}
	if string(side.Def.InputSchema) != `{"type":"object"}` {
		t.Errorf("default inputSchema %s", side.Def.InputSchema)
	}
	if d := r.Lookup("described"); d == nil || d.Path != filepath.Join(dir, "desc") || d.Run.Result != ResultText {
		t.Errorf("described %+v", d)
	}
}

func TestInvalidDefinitionsLeftOutWithALogLine(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]string{
		"nodesc":      `{"inputSchema":{"type":"object"}}`,
		"badschema":   `{"description":"d","inputSchema":{"type":"string"}}`,
		"badname":     `{"name":"has space","description":"d"}`,
		"badresult":   `{"description":"d","run":{"result":"xml"}}`,
		"badtimeout":  `{"description":"d","run":{"timeout":"soon"}}`,
		"notjson":     `{"description":`,
		"badenv":      `{"description":"d","run":{"env":{"A=B":"x"}}}`,
		"outputarray": `{"description":"d","outputSchema":{"type":"array"}}`,
	}
	for n, def := range bad {
		write(t, filepath.Join(dir, n), "#!/bin/sh\n", 0o755)
		write(t, filepath.Join(dir, n+".json"), def, 0o644)
	}
	write(t, filepath.Join(dir, "nodef"), "#!/bin/sh\necho oops >&2; exit 1\n", 0o755)
	write(t, filepath.Join(dir, "good"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "good.json"), `{"description":"fine"}`, 0o644)
	// The describe timeout is short only where nothing could finish in
	// time anyway: hangs, alone in its directory, never answers. nodef's
	// --mcp-describe must fail by itself, however busy the machine.
	hangDir := t.TempDir()
	write(t, filepath.Join(hangDir, "hangs"), "#!/bin/sh\nexec sleep 30\n", 0o755)
	r, lb := newReg(t, Options{Dirs: []string{dir}, DescribeTimeout: 5 * time.Minute})
	if got := names(r); !slices.Equal(got, []string{"good"}) {
		t.Errorf("tools %v", got)
	}
	for n := range bad {
		if !lb.has("tool left out tool=" + n + " path=" + filepath.Join(dir, n)) {
			t.Errorf("no log line for %s", n)
		}
	}
	if !lb.has("tool=nodef") || !lb.has("oops") {
		t.Errorf("no useful log line for a failing --mcp-describe")
	}
	r, lb = newReg(t, Options{Dirs: []string{hangDir}, DescribeTimeout: 200 * time.Millisecond})
	if got := names(r); len(got) != 0 {
		t.Errorf("tools %v, want none", got)
	}
	if !lb.has("tool=hangs") || !lb.has("timed out after 200ms") {
		t.Errorf("no useful log line for a hanging --mcp-describe")
	}
}

func TestReadOnlyAndShadowing(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, filepath.Join(a, "ro"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(a, "ro.json"), `{"description":"first","annotations":{"readOnlyHint":true}}`, 0o644)
	write(t, filepath.Join(b, "ro"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(b, "ro.json"), `{"description":"second","annotations":{"readOnlyHint":true}}`, 0o644)
	write(t, filepath.Join(b, "rw"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(b, "rw.json"), `{"description":"writes"}`, 0o644)

	r, lb := newReg(t, Options{Dirs: []string{a, b}})
	if got := names(r); !slices.Equal(got, []string{"ro", "rw"}) {
		t.Errorf("tools %v", got)
	}
	if r.Lookup("ro").Def.Description != "first" || !lb.has("already taken") {
		t.Errorf("first directory must win, with a log line")
	}
	r, _ = newReg(t, Options{Dirs: []string{a, b}, ReadOnly: true})
	if got := names(r); !slices.Equal(got, []string{"ro"}) {
		t.Errorf("readonly tools %v", got)
	}
}

func TestReloadDetectsChanges(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "a.json"), `{"description":"one"}`, 0o644)
	r, _ := newReg(t, Options{Dirs: []string{dir}})
	ctx := context.Background()
	if r.Reload(ctx) {
		t.Error("Reload without changes reported a change")
	}
	write(t, filepath.Join(dir, "a.json"), `{"description":"two!"}`, 0o644)
	if !r.Reload(ctx) || r.Lookup("a").Def.Description != "two!" {
		t.Error("sidecar edit not seen")
	}
	write(t, filepath.Join(dir, "b"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "b.json"), `{"description":"b"}`, 0o644)
	if !r.Reload(ctx) || len(r.Tools()) != 2 {
		t.Error("new tool not seen")
	}
	os.Remove(filepath.Join(dir, "a"))
	if !r.Reload(ctx) || !slices.Equal(names(r), []string{"b"}) {
		t.Errorf("removal not seen: %v", names(r))
	}
	// A change that clients cannot see (run settings) is not a list change.
	write(t, filepath.Join(dir, "b.json"), `{"description":"b","run":{"timeout":"1s"}}`, 0o644)
	if r.Reload(ctx) {
		t.Error("a run-only change reported as a list change")
	}
	if r.Lookup("b").Run.Timeout != time.Second {
		t.Error("run-only change not applied")
	}
}

func TestDescribeIsCached(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(t.TempDir(), "count")
	write(t, filepath.Join(dir, "d"), `#!/bin/sh
echo x >> `+count+`
echo '{"description":"described"}'
`, 0o755)
	r, _ := newReg(t, Options{Dirs: []string{dir}})
	// Touch the directory with an unrelated file: a reload, but d is unchanged.
	write(t, filepath.Join(dir, "unrelated.txt"), "x", 0o644)
	r.Reload(context.Background())
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 1 {
		t.Errorf("--mcp-describe ran %d times, want 1", n)
	}
}

func TestMissingDirStillServes(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "a.json"), `{"description":"one"}`, 0o644)
	r, lb := newReg(t, Options{Dirs: []string{filepath.Join(dir, "missing"), dir}})
	if !slices.Equal(names(r), []string{"a"}) || !lb.has("missing") {
		t.Errorf("tools %v", names(r))
	}
}

func TestQuietReloads(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bad"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "bad.json"), `{"description":""}`, 0o644)
	r, lb := newReg(t, Options{Dirs: []string{dir}})
	ctx := context.Background()
	// A non-executable file changing (a log, say) is not a change.
	write(t, filepath.Join(dir, "app.log"), "one line", 0o644)
	r.Reload(ctx)
	write(t, filepath.Join(dir, "app.log"), "one line, then another", 0o644)
	if r.Reload(ctx) {
		t.Error("a growing log file reported as a change")
	}
	// Another tool appears: a reload, but the bad one is not logged again.
	write(t, filepath.Join(dir, "good"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "good.json"), `{"description":"fine"}`, 0o644)
	if !r.Reload(ctx) {
		t.Error("new tool not seen")
	}
	n := 0
	for _, l := range lb.Lines() {
		if strings.Contains(l, "tool left out tool=bad ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("bad tool logged %d times, want 1", n)
	}
}

// TestCancelledLoadIsQuiet: a load cut short (mcp-route shutting down while
// tools are still being described) logs one routine line, not one per tool, keeps
// nothing, and the next Reload reads every tool again.
func TestCancelledLoadIsQuiet(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	release := filepath.Join(t.TempDir(), "release")
	// Each --mcp-describe marks that it runs, then waits for the release
	// file (bounded: 10s) before answering.
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		write(t, filepath.Join(dir, n), `#!/bin/sh
echo x >> `+started+`
i=0; while [ ! -e `+release+` ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done
echo '{"description":"described"}'
`, 0o755)
	}
	lb := &logBuf{}
	r := New(Options{Dirs: []string{dir}, Logger: lb.logger(), DescribeEnv: []string{"PATH=/usr/bin:/bin"}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool, 1)
	go func() { done <- r.Reload(ctx) }()
	waitFile(t, started)
	cancel()
	select {
	case changed := <-done:
		if changed {
			t.Error("a cancelled Reload reported a change")
		}
	case <-time.After(time.Minute): // only catches a hang
		t.Fatal("Reload did not return after cancel")
	}
	lines := lb.Lines()
	// Routine (a client that only asked server/discover), so Debug: a
	// quiet mcp-route says nothing.
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "debug: tool loading cancelled at shutdown") {
		t.Errorf("log %q, want one routine (Debug) line saying loading was cancelled", lines)
	}
	if len(r.Tools()) != 0 {
		t.Errorf("a cancelled load published tools %v", names(r))
	}
	os.WriteFile(release, nil, 0o644)
	if !r.Reload(context.Background()) || len(r.Tools()) != 6 {
		t.Errorf("the next Reload did not read the tools again: %v", names(r))
	}
	if lb.has("left out") {
		t.Errorf("a tool was left out: %q", lb.Lines())
	}
}

// waitFile waits (bounded) for a file a tool creates: the tool runs in
// another process, so a short poll is unavoidable.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
