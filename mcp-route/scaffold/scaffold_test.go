package scaffold_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/scaffold"
)

var update = flag.Bool("update", false, "rewrite examples/tools/src/hello/main.go from the Go template")

// goldenHello is the Go skeleton for "hello", checked in as an example so
// that `go build ./...` proves the template compiles.
const goldenHello = "../../examples/tools/src/hello/main.go"

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// runTool runs path as mcp-route would, with args on stdin and a minimal
// environment, and returns stdout.
func runTool(t *testing.T, path, stdin string, env []string, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v; stderr %q", path, argv, err, errb.String())
	}
	return string(out)
}

func checkDefinition(t *testing.T, doc []byte, name string) {
	t.Helper()
	var tl codec.Tool
	if err := json.Unmarshal(doc, &tl); err != nil {
		t.Fatalf("definition: %v\n%s", err, doc)
	}
	if err := codec.ValidateTool(&tl); err != nil {
		t.Errorf("definition: %v", err)
	}
	if tl.Name != name {
		t.Errorf("definition name %q, want %q", tl.Name, name)
	}
}

func TestWriteSh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "tools")
	files, err := scaffold.Write(dir, "say_hi", "sh")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "say_hi"), filepath.Join(dir, "say_hi.json")}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %q, want %q", files, want)
	}
	if m := mode(t, files[0]); m != 0o755 {
		t.Errorf("script mode %v, want 0755", m)
	}
	if m := mode(t, files[1]); m&0o111 != 0 {
		t.Errorf("sidecar mode %v is executable: mcp-route would take it for a tool", m)
	}
	doc, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	checkDefinition(t, doc, "say_hi")
	if out := runTool(t, files[0], `{"name":"Ann"}`, []string{"MCP_ARG_NAME=Ann"}); out != "Hello, Ann!\n" {
		t.Errorf("call: %q", out)
	}
	if out := runTool(t, files[0], `{}`, nil); out != "Hello, world!\n" {
		t.Errorf("call without name: %q", out)
	}
}

// TestWriteScripts: the Python and Node skeletons run one call when
// MCP_WORKER is unset, as mcp-route's exec mode and a person at a shell run
// them.
func TestWriteScripts(t *testing.T) {
	for _, tc := range []struct{ lang, interpreter string }{{"python", "python3"}, {"node", "node"}} {
		t.Run(tc.lang, func(t *testing.T) {
			if _, err := exec.LookPath(tc.interpreter); err != nil {
				t.Skipf("%s not on PATH", tc.interpreter)
			}
			dir := t.TempDir()
			files, err := scaffold.Write(dir, "py.tool", tc.lang)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || mode(t, files[0]) != 0o755 {
				t.Fatalf("files %q", files)
			}
			checkDefinition(t, []byte(runTool(t, files[0], "", nil, "--mcp-describe")), "py.tool")
			if out := runTool(t, files[0], `{"name":"Bo"}`, nil); out != "Hello, Bo!\n" {
				t.Errorf("call: %q", out)
			}
			if out := runTool(t, files[0], "", nil); out != "Hello, world!\n" {
				t.Errorf("call with empty stdin: %q", out)
			}
		})
	}
}

// TestScriptWorkers drives the Python and Node skeletons as mcp-route
// drives a worker: started once with MCP_WORKER=1, requests and answers one
// JSON object per line over pipes. Each call sees only its own arguments
// and progress wish, an error is answered and the next call served, a
// stray print by the tool's author lands on stderr, not among the answers,
// and EOF exits 0.
func TestScriptWorkers(t *testing.T) {
	for _, tc := range []struct {
		lang, interpreter string
		progress, stray   string // the skeleton's progress call, and it with a stray print added
	}{
		{"python", "python3", `    c.progress(1, 1, "greeting")`, `    print("stray print"); c.progress(1, 1, "greeting")`},
		{"node", "node", `  c.progress(1, 1, "greeting");`, `  console.log("stray print"); c.progress(1, 1, "greeting");`},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			if _, err := exec.LookPath(tc.interpreter); err != nil {
				t.Skipf("%s not on PATH", tc.interpreter)
			}
			scriptWorker(t, tc.lang, tc.progress, tc.stray)
		})
	}
}

func scriptWorker(t *testing.T, lang, progress, stray string) {
	dir := t.TempDir()
	files, err := scaffold.Write(dir, "w.tool", lang)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), progress+"\n") {
		t.Fatalf("the skeleton has no line %q", progress)
	}
	if err := os.WriteFile(files[0], []byte(strings.Replace(string(src), progress+"\n", stray+"\n", 1)), 0o755); err != nil {
		t.Fatal(err)
	}
	var def struct {
		Run struct{ Mode string }
	}
	if err := json.Unmarshal([]byte(runTool(t, files[0], "", nil, "--mcp-describe")), &def); err != nil || def.Run.Mode != "worker" {
		t.Fatalf("definition: run.mode %q (%v), want worker", def.Run.Mode, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only catches a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, files[0])
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "MCP_WORKER=1", "MCP_ROOT=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answers := bufio.NewScanner(stdout)
	exchange := func(req string, want ...string) {
		t.Helper()
		if _, err := io.WriteString(stdin, req+"\n"); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !answers.Scan() {
				t.Fatalf("%s: no answer; stderr:\n%s", req, stderr.String())
			}
			var got, wantV any
			if err := json.Unmarshal(answers.Bytes(), &got); err != nil {
				t.Fatalf("%s: answer %q is not JSON: %v", req, answers.Text(), err)
			}
			json.Unmarshal([]byte(w), &wantV)
			if !reflect.DeepEqual(got, wantV) {
				t.Errorf("%s: answer %s, want %s", req, answers.Text(), w)
			}
		}
	}
	exchange(`{"id":1,"tool":"w.tool","arguments":{"name":"Ann"},"protocolVersion":"2025-06-18","progress":true}`,
		`{"id":1,"progress":{"progress":1,"total":1,"message":"greeting"}}`,
		`{"id":1,"output":"Hello, Ann!\n"}`)
	exchange(`{"id":2,"tool":"w.tool","arguments":{}}`, `{"id":2,"output":"Hello, world!\n"}`)
	exchange(`not json`)
	exchange(`{"cancel":2}`)
	exchange(`{"id":"three","tool":"w.tool","arguments":{"name":""}}`, `{"id":"three","error":"w.tool: name must not be empty"}`)
	exchange(`{"id":4,"tool":"w.tool","arguments":[1]}`, `{"id":4,"error":"w.tool: the arguments are not a JSON object"}`)
	exchange(`{"id":5,"tool":"w.tool"}`, `{"id":5,"output":"Hello, world!\n"}`)
	stdin.Close()
	if answers.Scan() {
		t.Errorf("unexpected line after the last answer: %q", answers.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after EOF: %v; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"request skipped: not JSON", "stray print"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestWriteGoMatchesExample(t *testing.T) {
	dir := t.TempDir()
	files, err := scaffold.Write(dir, "hello", "go")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "src", "hello", "main.go"); len(files) != 1 || files[0] != want {
		t.Fatalf("files %q, want [%s]", files, want)
	}
	got, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(goldenHello, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenHello)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the Go skeleton differs from %s; run go test -update ./mcp-route/scaffold", goldenHello)
	}
}

// TestGoHint: the Go build hint is one go build command inside a module
// that provides github.com/mcpipe/mcpipe, and the module recipe elsewhere
// (it is not on the module proxy).
func TestGoHint(t *testing.T) {
	gomod := func(t *testing.T, text string) string {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	for _, text := range []string{
		"module github.com/mcpipe/mcpipe\n\ngo 1.26.0\n",
		"module example.com/mine\n\nreplace github.com/mcpipe/mcpipe => ../mcpipe\n",
		"module example.com/mine\n\nreplace (\n\tgithub.com/mcpipe/mcpipe v0.1.0 => /src/mcpipe\n)\n",
	} {
		root := gomod(t, text)
		t.Chdir(root)
		if h := scaffold.Hint("tools", "hello", "go"); h != "build it into tools with: go build -o tools/hello ./tools/src/hello" {
			t.Errorf("go.mod %q, in the module: Hint = %q", text, h)
		}
		t.Chdir(t.TempDir())
		want := "build it into " + root + "/tools from the module at " + root + " with: cd " + root +
			" && go build -o " + root + "/tools/hello ./tools/src/hello"
		if h := scaffold.Hint(filepath.Join(root, "tools"), "hello", "go"); h != want {
			t.Errorf("go.mod %q, from elsewhere: Hint = %q, want %q", text, h, want)
		}
	}
	// The nearest go.mod is the one go build uses: a module that neither is
	// nor replaces mcpipe gets the recipe (even inside a checkout).
	root := gomod(t, "module example.com/other\n\nrequire github.com/mcpipe/mcpipe v0.1.0\n")
	t.Chdir(root)
	h := scaffold.Hint("tools", "wf", "go")
	src := filepath.Join(root, "tools", "src", "wf")
	for _, want := range []string{"not on the module proxy", "cd " + src + "\n", "go mod init wf\n",
		"go mod edit -replace github.com/mcpipe/mcpipe=/path/to/mcpipe\n", "go mod tidy\n",
		"go build -o " + filepath.Join(root, "tools", "wf") + " ."} {
		if !strings.Contains(h, want) {
			t.Errorf("Hint outside a providing module lacks %q:\n%s", want, h)
		}
	}
}

// TestGoRecipeBuilds follows the recipe of the hint (and of the skeleton's
// comment) outside this module, against this checkout: the skeleton builds
// and answers --mcp-describe. It needs the go command and a checkout with
// its go.mod; it skips without them (under Bazel there is no go.mod).
//
// The checksum database is never asked (CI cannot reach it): before `go mod
// tidy` the new module's go.sum is seeded from the checkout's, which holds
// every module the tool can need, so the go command finds each checksum
// there. Modules come from the module cache, else from $GOPROXY.
func TestGoRecipeBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(checkout, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module github.com/mcpipe/mcpipe\n") {
		t.Skip("no checkout of github.com/mcpipe/mcpipe at ../.. (run under go test)")
	}
	dir := t.TempDir()
	if _, err := scaffold.Write(dir, "wf", "go"); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // not inside any module
	hint := scaffold.Hint(dir, "wf", "go")
	var cmds [][]string
	for line := range strings.Lines(hint) {
		line = strings.TrimSpace(line)
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "cd" || f[0] == "go") && !strings.HasPrefix(line, "go:") {
			cmds = append(cmds, strings.Fields(strings.ReplaceAll(line, "/path/to/mcpipe", checkout)))
		}
	}
	if len(cmds) != 5 || cmds[0][0] != "cd" {
		t.Fatalf("want cd and four go commands in the hint:\n%s", hint)
	}
	sums, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	for _, c := range cmds[1:] {
		if slices.Equal(c[1:], []string{"mod", "tidy"}) {
			if err := os.WriteFile(filepath.Join(cmds[0][1], "go.sum"), sums, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The bound only catches a hang: a cold module cache on a
		// loaded machine may take minutes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, goBin, c[1:]...)
		cmd.Dir, cmd.Env = cmds[0][1], env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	if out := runTool(t, filepath.Join(dir, "wf"), "", nil, "--mcp-describe"); !strings.Contains(out, `"name":"wf"`) {
		t.Errorf("wf --mcp-describe: %q", out)
	}
}

func TestRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	sidecar := filepath.Join(dir, "t.json")
	if err := os.WriteFile(sidecar, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := scaffold.Write(dir, "t", "sh")
	if !errors.Is(err, scaffold.ErrExists) || len(files) != 0 {
		t.Fatalf("Write over an existing sidecar: %q, %v; want ErrExists", files, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "t")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the script was written although the sidecar exists")
	}
	if b, _ := os.ReadFile(sidecar); string(b) != "mine" {
		t.Errorf("sidecar overwritten: %q", b)
	}
	if _, err := scaffold.Write(dir, "u", "python"); err != nil {
		t.Fatal(err)
	}
	if _, err := scaffold.Write(dir, "u", "sh"); !errors.Is(err, scaffold.ErrExists) {
		t.Errorf("second Write: %v, want ErrExists", err)
	}
	// A Go skeleton takes the name for the other languages, and back.
	if _, err := scaffold.Write(dir, "g", "go"); err != nil {
		t.Fatal(err)
	}
	for _, lang := range scaffold.Languages {
		if _, err := scaffold.Write(dir, "g", lang); !errors.Is(err, scaffold.ErrExists) {
			t.Errorf("Write(g, %s) after a Go skeleton: %v, want ErrExists", lang, err)
		}
		if _, err := scaffold.Write(dir, "u", lang); !errors.Is(err, scaffold.ErrExists) {
			t.Errorf("Write(u, %s) after a Python skeleton: %v, want ErrExists", lang, err)
		}
	}
}

func TestRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"", "a b", "x/y", "../up", ".hidden", "..", "é", strings.Repeat("a", 129)} {
		if _, err := scaffold.Write(dir, name, "sh"); err == nil {
			t.Errorf("Write(%q) succeeded", name)
		}
	}
	if _, err := scaffold.Write(dir, "ok", "ruby"); err == nil || !strings.Contains(err.Error(), "unknown language") {
		t.Errorf("Write(lang ruby) = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused writes left files: %v", entries)
	}
	if _, err := scaffold.Write(dir, strings.Repeat("a", 128), ""); err != nil {
		t.Errorf("128-character name: %v", err)
	}
}
