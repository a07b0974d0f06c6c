package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// stockWorker is mcp-stock running as a worker, over real pipes, the way
// mcp-route starts one: through a tool's link, MCP_WORKER=1 and MCP_ROOT in
// its environment, the root as its working directory.
type stockWorker struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	mu      sync.Mutex
	stderr  strings.Builder
	answers chan workerAnswer
}

type workerAnswer struct {
	ID       json.RawMessage `json:"id"`
	Output   *string         `json:"output"`
	Error    string          `json:"error"`
	Progress json.RawMessage `json:"progress"`
	junk     string          // a stdout line that is not an answer
}

func (w *stockWorker) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.Write(p)
}

func (w *stockWorker) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stderr.String()
}

// startStock installs the stock tools in a new directory and starts a
// worker through the link named link, in root, with env added.
func startStock(t *testing.T, link, root string, env ...string) *stockWorker {
	t.Helper()
	bin := testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock")
	dir := filepath.Join(t.TempDir(), "tools")
	if _, errs, code := runBin(t, bin, "", nil, "install", dir); code != 0 {
		t.Fatalf("install: %s", errs)
	}
	w := &stockWorker{t: t, answers: make(chan workerAnswer, 1000)}
	w.cmd = exec.Command(filepath.Join(dir, link))
	w.cmd.Dir = root
	w.cmd.Env = append([]string{"PATH=/usr/bin:/bin", "MCP_WORKER=1", "MCP_ROOT=" + root}, env...)
	w.cmd.Stderr = w
	var err error
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.answers)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a workerAnswer
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a.ID == nil {
				a = workerAnswer{junk: sc.Text()}
			}
			w.answers <- a
		}
	}()
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	return w
}

func (w *stockWorker) send(format string, args ...any) {
	w.t.Helper()
	if _, err := fmt.Fprintf(w.stdin, format+"\n", args...); err != nil {
		w.t.Fatalf("writing a request: %v", err)
	}
}

func (w *stockWorker) next() workerAnswer {
	w.t.Helper()
	a, ok := <-w.answers
	switch {
	case !ok:
		w.t.Fatalf("the worker closed stdout; stderr:\n%s", w.log())
	case a.junk != "":
		w.t.Fatalf("stdout line that is not an answer: %q", a.junk)
	}
	return a
}

// call sends one request and returns its answer, skipping progress.
func (w *stockWorker) call(id int, tool, args string) workerAnswer {
	w.t.Helper()
	w.send(`{"id":%d,"tool":%q,"arguments":%s,"protocolVersion":"2025-06-18"}`, id, tool, args)
	for {
		a := w.next()
		if string(a.ID) != strconv.Itoa(id) {
			w.t.Fatalf("answer to %s while waiting for %d", a.ID, id)
		}
		if a.Progress == nil {
			return a
		}
	}
}

// wait closes stdin and returns the exit status.
func (w *stockWorker) wait() int {
	w.t.Helper()
	w.stdin.Close()
	for a := range w.answers {
		w.t.Errorf("unexpected line after the last answer: %+v", a)
	}
	err := w.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return 0
}

func stockRoot(t *testing.T) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestWorkerServesEveryTool: one worker process, started through the
// fs_read link, answers calls of read, mutating and system tools in turn
// with what the exec'd tools print, errors included, and exits 0 at EOF.
func TestWorkerServesEveryTool(t *testing.T) {
	root := stockRoot(t)
	// Not under mcp-route, so not confined: sh_exec needs the opt-in.
	w := startStock(t, "fs_read", root, "MCP_SH_ALLOW=echo", "MCP_ENV_ALLOW=MCP_ROOT", "MCP_SH_UNCONFINED=1")
	steps := []struct {
		tool, args string
		output     string // a prefix of the output; "" for an error
		err        string
	}{
		{"fs_read", `{"path":"a.txt"}`, "alpha\nbeta\n", ""},
		{"fs_write", `{"path":"b.txt","content":"written by a worker\n"}`, "", ""},
		{"fs_read", `{"path":"b.txt"}`, "written by a worker\n", ""},
		{"fs_tail", `{"path":"a.txt","lines":1}`, "beta\n", ""},
		{"fs_exists", `{"path":"b.txt"}`, `{"path":"b.txt","exists":true`, ""},
		{"fs_read", `{"path":"/etc/passwd"}`, "", "fs_read: /etc/passwd: path escapes root"},
		{"fs_read", `{"path":"nope.txt"}`, "", "fs_read: nope.txt: "},
		{"fs_read", `{"path":"a.txt","bogus":1}`, "", `fs_read: invalid arguments: unknown field "bogus"`},
		{"env_get", `{}`, `{"variables":{"MCP_ROOT":` + strconv.Quote(root), ""},
		{"sh_exec", `{"command":"echo from sh_exec"}`, `{"content":[{"type":"text","text":"from sh_exec\n"}]`, ""},
		// A name that is not a stock tool goes to the link's tool, as
		// MCP_TOOL does in exec mode (a sidecar may rename a link).
		{"read_file", `{"path":"a.txt"}`, "alpha\n", ""},
		{"read_file", `{}`, "", "read_file: invalid path: empty"},
	}
	for i, s := range steps {
		a := w.call(i+1, s.tool, s.args)
		switch {
		case s.err != "" && (a.Output != nil || !strings.HasPrefix(a.Error, s.err)):
			t.Errorf("%s %s: output %v error %q, want error %q...", s.tool, s.args, a.Output, a.Error, s.err)
		case s.err == "" && s.output == "" && (a.Output == nil || a.Error != ""):
			t.Errorf("%s %s: error %q, want success", s.tool, s.args, a.Error)
		case s.err == "" && s.output != "" && (a.Output == nil || !strings.HasPrefix(*a.Output, s.output)):
			t.Errorf("%s %s: output %v error %q, want %q...", s.tool, s.args, a.Output, a.Error, s.output)
		}
	}
	// Many calls over the same process, several in flight: each answered
	// once.
	const n = 200
	go func() {
		for i := range n {
			tl := []string{"fs_read", "fs_stat", "fs_list", "fs_head"}[i%4]
			w.send(`{"id":%d,"tool":%q,"arguments":{"path":%q}}`, 1000+i, tl, map[bool]string{true: ".", false: "a.txt"}[tl == "fs_list"])
		}
	}()
	seen := map[string]bool{}
	for range n {
		a := w.next()
		if seen[string(a.ID)] || a.Output == nil {
			t.Fatalf("answer %s twice or failed: %+v", a.ID, a)
		}
		seen[string(a.ID)] = true
	}
	if code := w.wait(); code != 0 {
		t.Errorf("exit status %d after EOF, want 0; stderr:\n%s", code, w.log())
	}
}

// TestWorkerStdio: in the running worker, fd 1 is no longer the answer
// pipe but a copy of stderr, and fd 0 is /dev/null, so a stray write or
// read by a handler or library cannot touch the protocol; the harmless
// counterpart, answers, still flow.
func TestWorkerStdio(t *testing.T) {
	w := startStock(t, "fs_read", stockRoot(t))
	if a := w.call(1, "fs_read", `{"path":"a.txt"}`); a.Output == nil {
		t.Fatalf("fs_read: %+v", a)
	}
	fd := func(n int) string {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", w.cmd.Process.Pid, n))
		if err != nil {
			t.Skipf("no /proc: %v", err)
		}
		return l
	}
	if fd(1) != fd(2) || fd(0) != os.DevNull {
		t.Errorf("worker fds: 0 -> %s, 1 -> %s, 2 -> %s; want /dev/null and stderr twice", fd(0), fd(1), fd(2))
	}
	if code := w.wait(); code != 0 {
		t.Errorf("exit status %d", code)
	}
}

// TestWorkerShExecChildren: a program sh_exec runs in a worker ends with
// its call: cancelled, and when the worker gets SIGTERM.
func TestWorkerShExecChildren(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep")
	}
	for _, how := range []string{"cancel", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			w := startStock(t, "sh_exec", stockRoot(t), "MCP_SH_ALLOW=sleep", "MCP_SH_UNCONFINED=1")
			w.send(`{"id":1,"tool":"sh_exec","arguments":{"command":"sleep 300"}}`)
			sleeper := waitChild(t, w.cmd.Process.Pid, "sleep")
			if how == "cancel" {
				w.send(`{"cancel":1}`)
			} else {
				w.cmd.Process.Signal(syscall.SIGTERM)
			}
			a := w.next()
			var res codec.CallToolResult
			if a.Output == nil || json.Unmarshal([]byte(*a.Output), &res) != nil || !res.IsError {
				t.Errorf("answer to the stopped call: %+v", a)
			}
			if err := syscall.Kill(sleeper, 0); err != syscall.ESRCH {
				t.Errorf("sleep (pid %d) outlived its call: kill 0 = %v", sleeper, err)
			}
			want := 0
			if how == "SIGTERM" {
				want = 1
			}
			if code := w.wait(); code != want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, want, w.log())
			}
		})
	}
}

// waitChild returns the pid of the child of parent whose command is comm,
// once there is one (bounded by proctest.Patience).
func waitChild(t *testing.T, parent int, comm string) int {
	t.Helper()
	pid := 0
	proctest.Eventually(t, func() string {
		for _, p := range proctest.Children(t, parent) {
			if p.Comm == comm {
				pid = p.PID
				return ""
			}
		}
		return fmt.Sprintf("no %s child of pid %d", comm, parent)
	})
	return pid
}

// TestWorkerShExecCannotTouchWorker: a program sh_exec runs is in a
// Landlock domain nested in the worker's, so it can neither signal nor
// ptrace the worker, which holds the whole environment and the other
// calls; without that any allowed program (or a Makefile under a runner)
// could attach to it. The same kill -0 from outside the nest works, and
// sh_exec still runs the allowed program.
func TestWorkerShExecCannotTouchWorker(t *testing.T) {
	confinetest.Need(t, 6)
	kill, err := exec.LookPath("kill")
	if err != nil || !strings.HasPrefix(kill, "/") {
		t.Skip("no kill program")
	}
	w := startStock(t, "sh_exec", stockRoot(t), "MCP_SH_ALLOW=kill", "MCP_SH_UNCONFINED=1")
	pid := w.cmd.Process.Pid
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("kill -0 of the worker from the test: %v", err)
	}
	var res shOut
	a := w.call(1, "sh_exec", fmt.Sprintf(`{"command":"kill -0 %d"}`, pid))
	if a.Output == nil || json.Unmarshal([]byte(*a.Output), &res) != nil || res.Structured.ExitCode == 0 || !strings.Contains(res.Structured.Stderr, "ermitted") {
		t.Errorf("kill -0 of the worker from sh_exec: %+v (%+v)", a, res)
	}
	a = w.call(2, "sh_exec", `{"command":"kill -l 9"}`)
	if a.Output == nil || json.Unmarshal([]byte(*a.Output), &res) != nil || res.Structured.ExitCode != 0 || !strings.Contains(res.Structured.Stdout, "KILL") {
		t.Errorf("kill -l from sh_exec: %s (%+v)", *a.Output, res)
	}
	if code := w.wait(); code != 0 {
		t.Errorf("exit status %d; stderr:\n%s", code, w.log())
	}
}

// shOut is the part of sh_exec's result the tests look at.
type shOut struct {
	Structured struct {
		ExitCode int    `json:"exitCode"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	} `json:"structuredContent"`
}

// TestWorkerRootReplaced: a worker keeps its root open between calls, yet
// a call works in the directory MCP_ROOT names when it starts, as a tool
// run once per call does: after the root is renamed and another directory
// put in its place, or a symlink root pointed elsewhere, calls see the new
// directory and cannot reach the old one; with no directory there, a call
// fails and the worker serves the next one once it is back.
func TestWorkerRootReplaced(t *testing.T) {
	parent := t.TempDir()
	mkRoot := func(name, content string) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	root := mkRoot("root", "first\n")
	w := startStock(t, "fs_read", parent, "MCP_ROOT="+root)
	id := 0
	read := func(path, wantOut, wantErr string) {
		t.Helper()
		id++
		a := w.call(id, "fs_read", fmt.Sprintf(`{"path":%q}`, path))
		switch {
		case wantErr != "" && (a.Output != nil || !strings.Contains(a.Error, wantErr)):
			t.Errorf("read %s: output %v error %q, want error containing %q", path, a.Output, a.Error, wantErr)
		case wantErr == "" && (a.Output == nil || *a.Output != wantOut):
			t.Errorf("read %s: output %v error %q, want %q", path, a.Output, a.Error, wantOut)
		}
	}
	read("a.txt", "first\n", "")
	read("a.txt", "first\n", "")

	if err := os.Rename(root, filepath.Join(parent, "old")); err != nil {
		t.Fatal(err)
	}
	mkRoot("root", "second\n")
	read("a.txt", "second\n", "")
	read(filepath.Join(parent, "old", "a.txt"), "", "path escapes root")

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	read("a.txt", "", "opening the root")
	mkRoot("root", "third\n")
	read("a.txt", "third\n", "")

	// A root given through a symlink follows the link's target.
	link := filepath.Join(parent, "link")
	if err := os.Symlink("root", link); err != nil {
		t.Fatal(err)
	}
	w.wait()
	w = startStock(t, "fs_read", parent, "MCP_ROOT="+link)
	id = 0
	read("a.txt", "third\n", "")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("old", link); err != nil {
		t.Fatal(err)
	}
	read("a.txt", "first\n", "")
	if code := w.wait(); code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", code, w.log())
	}
}
