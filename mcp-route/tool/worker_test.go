package tool_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// workerTools are the tools the test binary serves as a worker
// (TOOL_TEST_AS_WORKER=1, see TestMain).
var workerTools = []tool.Tool{
	{
		Definition: tool.Definition{Name: "echo", Description: "Report what the call sees."},
		Handler: func(c *tool.Call) error {
			c.Progress(1, 2, "seen")
			// Stray writes to the process's stdout and reads of its stdin
			// must neither corrupt the answers nor steal a request.
			fmt.Println("stray line on os.Stdout")
			os.Stdout.WriteString("stray bytes without a newline")
			n, _ := os.Stdin.Read(make([]byte, 64))
			return c.JSON(map[string]any{
				"name":      c.Name(),
				"args":      c.RawArgs(),
				"argName":   c.Getenv("MCP_ARG_NAME"),
				"protocol":  c.ProtocolVersion(),
				"root":      c.Root(),
				"worker":    c.Getenv(tool.EnvWorker),
				"stdinRead": n,
			})
		},
	},
	{
		Definition: tool.Definition{Name: "fail", Description: "Fail."},
		Handler:    func(c *tool.Call) error { return tool.Errorf("it failed") },
	},
	{
		Definition: tool.Definition{Name: "slow", Description: "Wait for cancellation."},
		Handler: func(c *tool.Call) error {
			<-c.Context().Done()
			return c.Context().Err()
		},
	},
	{
		Definition: tool.Definition{Name: "binary", Description: "Write bytes that are not UTF-8."},
		Handler:    func(c *tool.Call) error { c.Text("ok\xff"); return nil },
	},
	{
		Definition: tool.Definition{Name: "boom", Description: "Panic."},
		Handler:    func(c *tool.Call) error { panic("kaboom") },
	},
	{
		Definition: tool.Definition{Name: "asker", Description: "Log, ask the user, report the answer."},
		Handler: func(c *tool.Call) error {
			c.Log("info", "asking")
			action, content, err := c.Elicit("Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
			if err != nil {
				return err
			}
			c.Textf("%s %v", action, content["name"])
			return nil
		},
	},
	{
		Definition: tool.Definition{Name: "procs", Description: "Report GOMAXPROCS."},
		Handler:    func(c *tool.Call) error { c.Text(strconv.Itoa(runtime.GOMAXPROCS(0))); return nil },
	},
}

// workerProc is the test binary running as a worker, over real pipes.
type workerProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	answers chan map[string]json.RawMessage
	stderr  bytes.Buffer
	junk    chan string // stdout lines that are not answers
}

func startWorker(t *testing.T, env ...string) *workerProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	w := &workerProc{t: t, answers: make(chan map[string]json.RawMessage, 100), junk: make(chan string, 100)}
	w.cmd = exec.Command(self)
	w.cmd.Env = append([]string{"TOOL_TEST_AS_WORKER=1", "MCP_WORKER=1", "MCP_ROOT=/the/root"}, env...)
	w.cmd.Stderr = &w.stderr
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
		for sc.Scan() {
			var a map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil || a["id"] == nil {
				w.junk <- sc.Text()
				continue
			}
			w.answers <- a
		}
	}()
	t.Cleanup(func() { w.cmd.Process.Kill(); w.cmd.Wait() })
	return w
}

func (w *workerProc) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		w.t.Fatalf("writing %s: %v", line, err)
	}
}

// next returns the next answer line; the worker's exit ends the wait.
func (w *workerProc) next() map[string]json.RawMessage {
	w.t.Helper()
	select {
	case j := <-w.junk:
		w.t.Fatalf("stdout line that is not an answer: %q", j)
	case a, ok := <-w.answers:
		if ok {
			return a
		}
	}
	w.t.Fatalf("worker closed stdout; stderr:\n%s", w.stderr.String())
	return nil
}

// exit closes stdin and returns the exit status.
func (w *workerProc) exit() int {
	w.t.Helper()
	w.stdin.Close()
	for a := range w.answers {
		w.t.Errorf("answer after the last request: %s", a["id"])
	}
	err := w.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return 0
}

func str(raw json.RawMessage) string {
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// TestWorkerCalls drives one worker process through calls of several
// tools: the answers are what exec mode would give, per-call state does not
// carry over, stray stdout writes do not reach the answers, a bad request
// line is skipped and the next is served, and EOF exits 0.
func TestWorkerCalls(t *testing.T) {
	w := startWorker(t)

	w.send(`{"id":1,"tool":"echo","arguments":{"name":"Ann"},"protocolVersion":"2025-06-18","progress":true}`)
	a := w.next()
	if string(a["id"]) != "1" || string(a["progress"]) != `{"progress":1,"total":2,"message":"seen"}` {
		t.Fatalf("first line of call 1 = %v, want its progress", a)
	}
	a = w.next()
	var seen struct {
		Name, Protocol, ArgName, Root, Worker string
		Args                                  json.RawMessage
		StdinRead                             int
	}
	if err := json.Unmarshal([]byte(str(a["output"])), &seen); err != nil || string(a["id"]) != "1" {
		t.Fatalf("answer to call 1 = %v (%v)", a, err)
	}
	want := `echo 2025-06-18 Ann /the/root 1 {"name":"Ann"} 0`
	if got := fmt.Sprint(seen.Name, " ", seen.Protocol, " ", seen.ArgName, " ", seen.Root, " ", seen.Worker, " ", string(seen.Args), " ", seen.StdinRead); got != want {
		t.Errorf("call 1 saw %s, want %s", got, want)
	}

	// The second call asks for no progress and has other arguments: it
	// sees nothing of the first.
	w.send(`{"id":"two","tool":"echo","arguments":{"other":1}}`)
	a = w.next()
	if string(a["id"]) != `"two"` || a["progress"] != nil {
		t.Fatalf("call 2: %v, want its answer and no progress", a)
	}
	seen.ArgName, seen.Protocol = "unchanged", "unchanged"
	json.Unmarshal([]byte(str(a["output"])), &seen)
	if seen.ArgName != "" || seen.Protocol != "" || string(seen.Args) != `{"other":1}` {
		t.Errorf("call 2 saw MCP_ARG_NAME %q, protocol %q, args %s; want \"\", \"\", {\"other\":1}", seen.ArgName, seen.Protocol, seen.Args)
	}

	// Errors, each answered with the id and the next request still served.
	w.send(`this is not JSON`)
	w.send(`{"tool":"echo"}`)
	for _, tc := range []struct{ req, err string }{
		{`{"id":3,"tool":"fail","arguments":{}}`, "fail: it failed"},
		{`{"id":4,"tool":"nope"}`, `unknown tool "nope" (this worker serves asker, binary, boom, echo, fail, procs, slow)`},
		{`{"id":41,"tool":"binary"}`, "binary: output is not valid UTF-8 (byte 2); use result mode json or mcp with base64 content for binary data"},
		{`{"id":5,"tool":"echo","arguments":[1]}`, "echo: the arguments are not a JSON object"},
	} {
		w.send(tc.req)
		a = w.next()
		var req struct{ ID json.RawMessage }
		json.Unmarshal([]byte(tc.req), &req)
		if string(a["id"]) != string(req.ID) || str(a["error"]) != tc.err || a["output"] != nil {
			t.Errorf("%s: answer %v, want error %q", tc.req, a, tc.err)
		}
	}

	// A call in flight does not hold up the next; a cancel ends it.
	w.send(`{"id":6,"tool":"slow"}`)
	w.send(`{"id":7,"tool":"fail"}`)
	if a = w.next(); string(a["id"]) != "7" {
		t.Fatalf("answer %v, want call 7's while 6 runs", a)
	}
	w.send(`{"cancel": 6 }`)
	if a = w.next(); string(a["id"]) != "6" || str(a["error"]) != "slow: context canceled" {
		t.Errorf("cancelled call: %v", a)
	}

	if code := w.exit(); code != 0 {
		t.Errorf("exit status %d after EOF, want 0; stderr:\n%s", code, w.stderr.String())
	}
	stderr := w.stderr.String()
	for _, s := range []string{"stray line on os.Stdout", "stray bytes", "request skipped: not a JSON object", `request skipped: "id" is missing`} {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr)
		}
	}
}

// TestWorkerEOFFinishesCalls: EOF with a call in flight still answers it
// before the worker exits 0.
func TestWorkerEOFFinishesCalls(t *testing.T) {
	w := startWorker(t)
	w.send(`{"id":1,"tool":"echo","arguments":{"name":"Zed"}}`)
	w.stdin.Close()
	if a := w.next(); !strings.Contains(str(a["output"]), `"argName":"Zed"`) {
		t.Errorf("answer %v", a)
	}
	if code := w.exit(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestWorkerPanic: a handler panic is an error answer for that call, with
// the stack on stderr, and then the worker exits 2 so that mcp-route starts
// a fresh one; a call still running is cancelled and answered first.
func TestWorkerPanic(t *testing.T) {
	w := startWorker(t)
	w.send(`{"id":1,"tool":"slow"}`)
	w.send(`{"id":2,"tool":"boom"}`)
	a := w.next()
	if string(a["id"]) != "2" || str(a["error"]) != "boom: panic: kaboom" {
		t.Fatalf("answer %v, want boom's panic", a)
	}
	if a = w.next(); string(a["id"]) != "1" || str(a["error"]) != "slow: context canceled" {
		t.Errorf("answer %v, want the running call cancelled", a)
	}
	if code := w.exit(); code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if !strings.Contains(w.stderr.String(), "goroutine") || !strings.Contains(w.stderr.String(), "panicked") {
		t.Errorf("stderr lacks the stack and the reason:\n%s", w.stderr.String())
	}
}

// TestWorkerFlagsStillWork: --mcp-describe works in a worker's environment,
// and without MCP_WORKER=1 the same program is an exec'd call.
func TestWorkerFlagsStillWork(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(self, "echo", "--mcp-describe")
	cmd.Env = []string{"TOOL_TEST_AS_WORKER=1", "MCP_WORKER=1"}
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), `{"name":"echo"`) {
		t.Errorf("--mcp-describe in a worker's environment: %v, %q", err, out)
	}
	cmd = exec.Command(self, "fail")
	cmd.Env = []string{"TOOL_TEST_AS_WORKER=1"}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || errb.String() != "fail: it failed\n" {
		t.Errorf("exec'd call: %v, stderr %q", err, errb.String())
	}
}

// TestWorkerOneProcessor: a worker process runs on one processor unless
// the GOMAXPROCS variable says otherwise (package doc, Workers).
func TestWorkerOneProcessor(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "1"},
		{[]string{"GOMAXPROCS=3"}, "3"},
	} {
		w := startWorker(t, c.env...)
		w.send(`{"id":1,"tool":"procs"}`)
		if a := w.next(); str(a["output"]) != c.want {
			t.Errorf("env %q: the worker reports GOMAXPROCS %s, want %s", c.env, a["output"], c.want)
		}
		if code := w.exit(); code != 0 {
			t.Errorf("env %q: exit status %d", c.env, code)
		}
	}
}

// A call logs and asks through the worker protocol: {"id":N,"channel":...}
// out, {"answer":N,"line":...} in; an answer for another call, or a late
// one, is not taken for this call's.
func TestWorkerChannel(t *testing.T) {
	w := startWorker(t)
	w.send(`{"id":5,"tool":"asker","arguments":{}}`)
	if a := w.next(); string(a["id"]) != "5" || string(a["channel"]) != `{"level":"info","data":"asking"}` {
		t.Fatalf("first line %v, want the log record", a)
	}
	a := w.next()
	var q struct {
		Ask    string          `json:"ask"`
		ID     json.RawMessage `json:"id"`
		Params struct{ Message string }
	}
	if json.Unmarshal(a["channel"], &q) != nil || q.Ask != tool.MethodElicit || q.Params.Message != "Name?" {
		t.Fatalf("second line %v, want the question", a)
	}
	w.send(`{"answer":99,"line":{"id":1,"result":{"action":"accept","content":{"name":"Nobody"}}}}`)
	w.send(`{"answer":5,"line":{"id":0,"result":{"action":"accept","content":{"name":"Late"}}}}`)
	w.send(`{"answer":5,"line":{"id":` + string(q.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}}`)
	if a := w.next(); str(a["output"]) != "accept Ada" {
		t.Fatalf("answer %v, want the output \"accept Ada\"", a)
	}
	// A refusal is the call's error.
	w.send(`{"id":6,"tool":"asker","arguments":{}}`)
	w.next()
	w.next()
	w.send(`{"answer":6,"line":{"id":1,"error":"cannot ask the client for elicitation (form mode): the client did not declare that capability"}}`)
	if a := w.next(); !strings.Contains(str(a["error"]), "asker: cannot ask the client") {
		t.Fatalf("answer %v, want the refusal as the error", a)
	}
	if code := w.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// An exec'd call asks on fd 3 and reads fd 4 (here: buffers).
func TestExecChannel(t *testing.T) {
	var asker tool.Tool
	for _, tl := range workerTools {
		if tl.Name == "asker" {
			asker = tl
		}
	}
	var fd3, stdout bytes.Buffer
	p := tool.Process{
		Args:     []string{"asker"},
		Stdin:    strings.NewReader("{}"),
		Stdout:   &stdout,
		Progress: &fd3,
		Answers:  strings.NewReader(`{"id":1,"result":{"action":"decline"}}` + "\n"),
	}
	if code := tool.Exec(p, asker); code != 0 || stdout.String() != "decline <nil>" {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
	want := `{"level":"info","data":"asking"}` + "\n" + `{"ask":"elicitation/create","id":1,"params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}` + "\n"
	if fd3.String() != want {
		t.Errorf("fd 3:\n%s\nwant\n%s", fd3.String(), want)
	}
	// Without fd 4: ErrNoChannel, the call fails.
	p.Answers, p.Stdin = nil, strings.NewReader("{}")
	stdout.Reset()
	var stderr bytes.Buffer
	p.Stderr = &stderr
	if code := tool.Exec(p, asker); code != 1 || !strings.Contains(stderr.String(), "no channel to ask on") {
		t.Errorf("without fd 4: exit %d, stderr %q", code, stderr.String())
	}
}
