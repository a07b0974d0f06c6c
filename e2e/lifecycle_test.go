package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/mcp-route/scaffold"
)

// exampleBin is a Go example tool, built like the binaries under test.
func exampleBin(t *testing.T, envVar, pkg string) string { return testbin.Path(t, envVar, pkg) }

func writeScaffold(t *testing.T, dir, name, lang string) {
	t.Helper()
	if _, err := scaffold.Write(dir, name, lang); err != nil {
		t.Fatal(err)
	}
}

func havePython() bool {
	_, err := exec.LookPath("python3")
	return err == nil
}

func haveNode() bool {
	_, err := exec.LookPath("node")
	return err == nil
}

// gate is a tool body that records its pid in $MCP_ROOT/NAME.pid, waits
// until the test creates $MCP_ROOT/go, and prints "done N". Tests release
// it by creating the file, so nothing depends on timing.
func gate(name string) string {
	return fmt.Sprintf(`echo $$ > "$MCP_ROOT/%s-$MCP_ARG_N.pid"
while [ ! -e "$MCP_ROOT/go" ]; do sleep 0.02; done
echo "done $MCP_ARG_N"`, name)
}

func release(t *testing.T, root string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	f.tool("n", def("n", "", ""), `echo "n=$MCP_ARG_N"`)
	s := f.start("--max-procs", "8")
	s.initialize(codec.LatestLegacyRevision)
	const calls = 32
	ids := make([]codec.ID, calls)
	for i := range ids {
		// Half string ids, half numbers: each must come back as it was sent.
		if i%2 == 0 {
			ids[i] = codec.StringID("call-" + strconv.Itoa(i))
		} else {
			ids[i] = codec.IntID(int64(1000 + i))
		}
		s.requestID(ids[i], s.rev, codec.MethodToolsCall, map[string]any{"name": "n", "arguments": map[string]any{"n": i}})
	}
	for i, id := range ids {
		m := s.response(id)
		if m.ID.String() != id.String() {
			t.Errorf("id %s came back as %s", id, m.ID)
		}
		var r codec.CallToolResult
		if err := json.Unmarshal(m.Result, &r); err != nil || m.Error != nil {
			t.Errorf("call %d: %s %v", i, m.Result, m.Error)
			continue
		}
		wantOK(t, &r, fmt.Sprintf("n=%d", i))
	}
	if len(s.stash) != 0 {
		t.Errorf("%d unexpected responses", len(s.stash))
	}
	noChildren(t, s)
}

// A slow call does not hold back a fast one: responses go out as calls end.
func TestResponsesInCompletionOrder(t *testing.T) {
	f := newFixture(t)
	f.tool("slow", def("slow", "", ""), gate("slow"))
	f.tool("fast", def("fast", "", ""), `echo fast`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	slow := s.startCall("slow", map[string]any{"n": 1}, nil)
	proctest.WaitPIDFile(t, filepath.Join(f.root, "slow-1.pid"))
	fast := s.startCall("fast", nil, nil)
	m := s.next()
	for m != nil && m.IsNotification() {
		m = s.next()
	}
	if m == nil || m.ID.Key() != fast.Key() {
		t.Fatalf("first answer %+v, want the fast call's", m)
	}
	release(t, f.root)
	var r codec.CallToolResult
	s.result(slow, &r)
	wantOK(t, &r, "done 1")
}

func TestCancellation(t *testing.T) {
	f := newFixture(t)
	f.tool("slow", def("slow", "", ""), `echo $$ > "$MCP_ROOT/slow.pid"; sleep 60 & sleep 60; echo never`)
	f.tool("stubborn", def("stubborn", "", ""), `trap '' TERM; echo $$ > "$MCP_ROOT/stubborn.pid"; sleep 60; echo never`)
	s := f.start()
	s.initialize(codec.LatestLegacyRevision)
	var cancelled []codec.ID
	for _, name := range []string{"slow", "stubborn"} {
		id := s.startCall(name, nil, nil)
		pid := proctest.WaitPIDFile(t, filepath.Join(f.root, name+".pid"))
		s.notify(codec.MethodCancelled, map[string]any{"requestId": id, "reason": "test"})
		// SIGTERM to the group, and for the stubborn one SIGKILL after --grace.
		proctest.WaitGroupGone(t, pid)
		cancelled = append(cancelled, id)
	}
	var empty map[string]any
	s.result(s.request(s.rev, codec.MethodPing, nil), &empty)
	noChildren(t, s)
	s.closeStdin()
	rest := append(s.stash, s.drain()...)
	for _, m := range rest {
		for _, id := range cancelled {
			if m.ID != nil && m.ID.Key() == id.Key() {
				t.Errorf("mcp-route answered cancelled request %s: %+v", id, m)
			}
		}
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

func TestHotReloadLegacy(t *testing.T) {
	f := newFixture(t)
	f.tool("first", def("first", "", ""), `echo first`)
	s := f.start()
	s.initialize(codec.Rev20250618)
	if n := names(s.listTools()); !slices.Equal(n, []string{"first"}) {
		t.Fatalf("tools %q", n)
	}
	f.tool("second", def("second", "", ""), `echo second`)
	waitListChanged(t, s)
	if n := names(s.listTools()); !slices.Equal(n, []string{"first", "second"}) {
		t.Errorf("after adding a tool: %q", n)
	}
	wantOK(t, s.callTool("second", nil), "second")
	if err := os.Remove(filepath.Join(f.tools, "first")); err != nil {
		t.Fatal(err)
	}
	waitListChanged(t, s)
	if n := names(s.listTools()); !slices.Equal(n, []string{"second"}) {
		t.Errorf("after removing a tool: %q", n)
	}
}

// waitListChanged reads until notifications/tools/list_changed (bounded by
// next's timeout).
func waitListChanged(t *testing.T, s *server) {
	t.Helper()
	for i, m := range s.notes {
		if m.Method == codec.MethodToolsListChanged {
			s.notes = append(s.notes[:i], s.notes[i+1:]...)
			return
		}
	}
	for {
		m := s.next()
		if m == nil {
			t.Fatal("stdout closed before notifications/tools/list_changed")
		}
		if m.Method == codec.MethodToolsListChanged {
			return
		}
		if m.IsNotification() {
			s.notes = append(s.notes, m)
		} else {
			s.stash = append(s.stash, m)
		}
	}
}

func TestHotReloadModern(t *testing.T) {
	f := newFixture(t)
	f.tool("first", def("first", "", ""), `echo first`)
	s := f.start()
	s.rev = modern
	if n := names(s.listTools()); !slices.Equal(n, []string{"first"}) {
		t.Fatalf("tools %q", n)
	}
	f.tool("second", def("second", "", ""), `echo second`)
	proctest.Eventually(t, func() string {
		if n := names(s.listTools()); !slices.Equal(n, []string{"first", "second"}) {
			return fmt.Sprintf("tools/list still %q after adding a tool", n)
		}
		return ""
	})
	for _, m := range s.notes {
		if m.Method == codec.MethodToolsListChanged {
			t.Errorf("a modern client got %s", m.Method)
		}
	}
}

// EOF with calls in flight: every call still gets its answer, then exit 0.
func TestShutdownOnEOFAnswersInFlight(t *testing.T) {
	f := newFixture(t)
	f.tool("wait", def("wait", "", ""), gate("wait"))
	s := f.start("--grace", "15s")
	s.initialize(codec.LatestLegacyRevision)
	var ids []codec.ID
	for i := range 4 {
		ids = append(ids, s.startCall("wait", map[string]any{"n": i}, nil))
	}
	for i := range 4 {
		proctest.WaitPIDFile(t, filepath.Join(f.root, fmt.Sprintf("wait-%d.pid", i)))
	}
	s.closeStdin()
	release(t, f.root)
	got := map[string]bool{}
	for _, m := range append(s.stash, s.drain()...) {
		if m.ID != nil {
			got[m.ID.Key()] = true
		}
	}
	for _, id := range ids {
		if !got[id.Key()] {
			t.Errorf("call %s in flight at EOF got no answer", id)
		}
	}
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// EOF with a call that outlives the grace period: it is killed, exit 0.
func TestShutdownOnEOFKillsAfterGrace(t *testing.T) {
	f := newFixture(t)
	f.tool("hang", def("hang", "", ""), `echo $$ > "$MCP_ROOT/hang.pid"; sleep 60`)
	s := f.start("--grace", "200ms")
	s.initialize(codec.LatestLegacyRevision)
	s.startCall("hang", nil, nil)
	pid := proctest.WaitPIDFile(t, filepath.Join(f.root, "hang.pid"))
	s.closeStdin()
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	proctest.WaitGroupGone(t, pid)
}

func TestSIGTERM(t *testing.T) {
	f := newFixture(t)
	f.tool("wait", def("wait", "", ""), gate("wait"))
	s := f.start("--grace", "15s")
	s.initialize(codec.LatestLegacyRevision)
	id := s.startCall("wait", map[string]any{"n": 1}, nil)
	proctest.WaitPIDFile(t, filepath.Join(f.root, "wait-1.pid"))
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	release(t, f.root)
	var r codec.CallToolResult
	s.result(id, &r)
	wantOK(t, &r, "done 1")
	s.drain()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}

	idle := f.start()
	idle.initialize(codec.LatestLegacyRevision)
	idle.cmd.Process.Signal(syscall.SIGTERM)
	idle.drain()
	if code := idle.wait(); code != 0 {
		t.Errorf("idle server: exit %d after SIGTERM, want 0", code)
	}
}

// mcp-route's own command line: --help and --version on stdout with exit 0,
// a bad flag on stderr with exit 2, and `new` writing a skeleton.
func TestCommandLine(t *testing.T) {
	bin := routeBin(t)
	run := func(args ...string) (int, string, string) {
		cmd := exec.CommandContext(ctxTimeout(t), bin, args...)
		cmd.Env = baseEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		return exitStatus(cmd.ProcessState, err), out.String(), errb.String()
	}
	if code, out, _ := run("--help"); code != 0 || !strings.Contains(out, "--tools") {
		t.Errorf("--help: exit %d, stdout %q", code, out)
	}
	if code, out, _ := run("--version"); code != 0 || strings.TrimSpace(out) == "" {
		t.Errorf("--version: exit %d, stdout %q", code, out)
	}
	if code, out, errb := run("--no-such-flag"); code != 2 || out != "" || !strings.HasPrefix(errb, "mcp-route: ") {
		t.Errorf("bad flag: exit %d, stdout %q, stderr %q; want 2, nothing, \"mcp-route: ...\"", code, out, errb)
	}
	dir := t.TempDir()
	code, out, errb := run("new", "made_by_cli", "--lang", "sh", "--dir", dir)
	if code != 0 {
		t.Fatalf("mcp-route new: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	for _, p := range []string{"made_by_cli", "made_by_cli.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("mcp-route new: %v", err)
		}
	}
	if code, _, errb := run("new", "made_by_cli", "--dir", dir); code == 0 || errb == "" {
		t.Errorf("mcp-route new over an existing tool: exit %d, stderr %q; want a refusal", code, errb)
	}
}
