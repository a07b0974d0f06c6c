package tool_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

var greet = tool.Tool{
	Definition: tool.Definition{
		Name:        "greet",
		Description: "Say hello.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		Annotations: &codec.ToolAnnotations{ReadOnlyHint: codec.Bool(true)},
		Run:         &tool.Run{Timeout: "5s", Env: map[string]string{"A": "b"}},
	},
	Handler: func(c *tool.Call) error {
		var args struct{ Name string }
		if err := c.Args(&args); err != nil {
			return err
		}
		if args.Name == "" {
			return tool.Errorf("name is empty")
		}
		c.Progress(1, 2, "half")
		c.Textf("Hello, %s!", args.Name)
		c.Progress(2, 0, "")
		return nil
	},
}

// TestMain doubles as a tool process for TestProcess: with
// TOOL_TEST_AS_TOOL=1 the test binary is the greet tool.
func TestMain(m *testing.M) {
	if os.Getenv("TOOL_TEST_AS_TOOL") == "1" {
		tool.Main(greet.Definition, greet.Handler)
	}
	if os.Getenv("TOOL_TEST_AS_WORKER") == "1" {
		tool.Dispatch(workerTools...)
	}
	os.Exit(m.Run())
}

func exec1(t *testing.T, tools []tool.Tool, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	p := tool.Process{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	var code int
	if len(tools) == 1 {
		code = tool.Exec(p, tools[0])
	} else {
		code = tool.ExecMany(p, tools)
	}
	return code, out.String(), errb.String()
}

func TestDescribe(t *testing.T) {
	code, out, stderr := exec1(t, []tool.Tool{greet}, "", "anything", "--mcp-describe")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("describe output is not one line: %q", out)
	}
	var doc struct {
		codec.Tool
		Run *tool.Run `json:"run"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("describe output: %v: %s", err, out)
	}
	if err := codec.ValidateTool(&doc.Tool); err != nil {
		t.Errorf("described tool invalid: %v", err)
	}
	if doc.Name != "greet" || doc.Run == nil || doc.Run.Timeout != "5s" || doc.Run.Env["A"] != "b" {
		t.Errorf("describe output lost fields: %s", out)
	}
}

func TestDescribeDefaultSchemaAndNoRun(t *testing.T) {
	d := tool.Definition{Name: "x", Description: "An <x> & co."}
	b, err := tool.Describe(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"x","description":"An <x> & co.","inputSchema":{"type":"object"}}`
	if string(b) != want {
		t.Errorf("Describe = %s, want %s", b, want)
	}
}

func TestDescribeInvalid(t *testing.T) {
	for name, d := range map[string]tool.Definition{
		"no description": {Name: "x"},
		"bad name":       {Name: "a b", Description: "d"},
		"bad schema":     {Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"string"}`)},
		"bad result":     {Name: "x", Description: "d", Run: &tool.Run{Result: "xml"}},
		"bad timeout":    {Name: "x", Description: "d", Run: &tool.Run{Timeout: "soon"}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := exec1(t, []tool.Tool{{Definition: d}}, "", "x", "--mcp-describe")
			if code != 2 || out != "" || !strings.HasPrefix(stderr, d.Name+": invalid definition") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, an error", code, out, stderr)
			}
		})
	}
}

func TestUsage(t *testing.T) {
	code, _, stderr := exec1(t, []tool.Tool{greet}, "", "greet", "--name", "x")
	if code != 2 || !strings.Contains(stderr, `unexpected argument "--name"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, out, _ := exec1(t, []tool.Tool{greet}, "", "greet", "--help")
	if code != 0 || !strings.Contains(out, "Say hello.") {
		t.Errorf("--help: exit %d, stdout %q", code, out)
	}
}

func TestInvoke(t *testing.T) {
	tests := []struct {
		name, args string
		code       int
		out, err   string
	}{
		{"ok", `{"name":"Ann"}`, 0, "Hello, Ann!", ""},
		{"whitespace", "\n {\"name\":\"Bo\"}\n", 0, "Hello, Bo!", ""},
		{"empty is {}", "", 1, "", "greet: name is empty\n"},
		{"not an object", `["x"]`, 1, "", "greet: the arguments on stdin are not a JSON object\n"},
		{"not JSON", `{"name":`, 1, "", "greet: the arguments on stdin are not a JSON object\n"},
		{"wrong type", `{"name":3}`, 1, "", "greet: invalid arguments: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := tool.Invoke(greet, []byte(tc.args), nil, &out, &errb)
			if code != tc.code || out.String() != tc.out || !strings.HasPrefix(errb.String(), tc.err) || (tc.err == "" && errb.Len() > 0) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q...", code, out.String(), errb.String(), tc.code, tc.out, tc.err)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	var out, progress bytes.Buffer
	code := tool.InvokeWith(greet, tool.Invocation{Args: []byte(`{"name":"A"}`), Stdout: &out, Progress: &progress})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := "{\"progress\":1,\"total\":2,\"message\":\"half\"}\n{\"progress\":2}\n"
	if progress.String() != want {
		t.Errorf("progress = %q, want %q", progress.String(), want)
	}
}

func TestCallAccessors(t *testing.T) {
	var got []string
	probe := tool.Tool{
		Definition: tool.Definition{Name: "probe", Description: "d"},
		Handler: func(c *tool.Call) error {
			got = []string{c.Name(), c.Root(), c.ProtocolVersion(), c.Getenv("X"),
				c.Arg("s"), c.Arg("n"), c.Arg("b"), c.Arg("o"), c.Arg("null"), c.Arg("missing"), string(c.RawArgs())}
			c.Logf("log %d", 1)
			return nil
		},
	}
	var errb bytes.Buffer
	args := `{"s":"str","n":1.5,"b":true,"o":{"k":[1]},"null":null}`
	tool.Invoke(probe, []byte(args), map[string]string{"MCP_TOOL": "alias", "MCP_ROOT": "/r", "MCP_PROTOCOL_VERSION": "2025-06-18", "X": "y"}, nil, &errb)
	want := []string{"alias", "/r", "2025-06-18", "y", "str", "1.5", "true", `{"k":[1]}`, "", "", args}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("accessors = %q, want %q", got, want)
	}
	if errb.String() != "log 1\n" {
		t.Errorf("stderr = %q", errb.String())
	}
	tool.Invoke(probe, nil, nil, nil, nil)
	if got[0] != "probe" || got[1] != "." || got[10] != "{}" {
		t.Errorf("defaults: name %q root %q args %q", got[0], got[1], got[10])
	}
}

func TestResults(t *testing.T) {
	run := func(h tool.Handler) (int, string, string) {
		var out, errb bytes.Buffer
		code := tool.Invoke(tool.Tool{Definition: tool.Definition{Name: "r", Description: "d"}, Handler: h}, nil, nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, _ := run(func(c *tool.Call) error { return c.JSON(map[string]any{"a": "<&>"}) })
	if code != 0 || out != "{\"a\":\"<&>\"}\n" {
		t.Errorf("JSON: exit %d, stdout %q", code, out)
	}
	code, out, _ = run(func(c *tool.Call) error { return c.Result(&codec.CallToolResult{IsError: true}) })
	if code != 0 || out != "{\"content\":[],\"isError\":true}\n" {
		t.Errorf("Result: exit %d, stdout %q", code, out)
	}
	code, _, stderr := run(func(c *tool.Call) error {
		c.Text("x")
		if err := c.JSON(1); !errors.Is(err, tool.ErrResultWritten) {
			t.Errorf("JSON after Text: %v, want ErrResultWritten", err)
		}
		return c.Result(&codec.CallToolResult{})
	})
	if code != 1 || !strings.Contains(stderr, "already written") {
		t.Errorf("Result after Text: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(func(c *tool.Call) error { panic("boom") })
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || lines[len(lines)-1] != "r: panic: boom" {
		t.Errorf("panic: exit %d, stderr %q", code, stderr)
	}
}

func TestExecMany(t *testing.T) {
	other := tool.Tool{Definition: tool.Definition{Name: "other", Description: "d"},
		Handler: func(c *tool.Call) error { c.Text("other"); return nil }}
	tools := []tool.Tool{greet, other}
	tests := []struct {
		name  string
		args  []string
		code  int
		out   string
		inErr string
	}{
		{"argv0", []string{"/bin/dir/other"}, 0, "other", ""},
		{"argv1", []string{"/bin/stock", "other"}, 0, "other", ""},
		{"argv1 describe", []string{"stock", "greet", "--mcp-describe"}, 0, `{"name":"greet"`, ""},
		{"argv0 beats argv1", []string{"greet", "other"}, 2, "", "unexpected argument"},
		{"unknown", []string{"stock", "nope"}, 2, "", `unknown tool "nope"`},
		{"no tool", []string{"stock"}, 2, "", "tools: greet other"},
		{"help", []string{"stock", "--help"}, 0, "usage: stock TOOL", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := exec1(t, tools, `{"name":"x"}`, tc.args...)
			if code != tc.code || !strings.HasPrefix(out, tc.out) || !strings.Contains(stderr, tc.inErr) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
			}
		})
	}
	code, _, stderr := exec1(t, []tool.Tool{greet, greet}, "", "greet")
	if code != 2 || !strings.Contains(stderr, "defined twice") {
		t.Errorf("duplicate: exit %d, stderr %q", code, stderr)
	}
}

// TestProcess runs the test binary as a real tool process: progress goes to
// fd 3 only when fd 3 is a pipe given on purpose.
func TestProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	for _, withFD3 := range []bool{true, false} {
		cmd := exec.Command(self)
		cmd.Env = []string{"TOOL_TEST_AS_TOOL=1"}
		cmd.Stdin = strings.NewReader(`{"name":"P"}`)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		var pr *os.File
		if withFD3 {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			pr = r
			cmd.ExtraFiles = []*os.File{w}
			defer r.Close()
			defer w.Close()
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		if pr != nil {
			cmd.ExtraFiles[0].Close()
			pr.SetReadDeadline(time.Now().Add(30 * time.Second))
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("fd3=%v: %v, stderr %q", withFD3, err, errb.String())
		}
		if out.String() != "Hello, P!" {
			t.Errorf("fd3=%v: stdout %q", withFD3, out.String())
		}
		if withFD3 && len(lines) != 2 {
			t.Errorf("progress lines = %q, want 2", lines)
		}
	}
}

// TestProcessProgressFile: fd 3 may be a regular file opened for writing
// (the access mode is read from the descriptor); opened read-only, it is no
// progress channel and the call still succeeds.
func TestProcessProgressFile(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "progress")
	for _, flag := range []int{os.O_WRONLY | os.O_CREATE, os.O_RDONLY} {
		f, err := os.OpenFile(path, flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(self)
		cmd.Env = []string{"TOOL_TEST_AS_TOOL=1"}
		cmd.Stdin = strings.NewReader(`{"name":"P"}`)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.ExtraFiles = []*os.File{f}
		err = cmd.Run()
		f.Close()
		if err != nil || out.String() != "Hello, P!" || errb.Len() > 0 {
			t.Fatalf("flag %#x: %v, stdout %q, stderr %q", flag, err, out.String(), errb.String())
		}
		b, _ := os.ReadFile(path)
		if lines := strings.Count(string(b), "\n"); lines != 2 {
			t.Errorf("flag %#x: %d progress lines in the file, want 2 (written while it was open for writing): %q", flag, lines, b)
		}
	}
}
