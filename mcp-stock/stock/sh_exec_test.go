package stock

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec/shexectest"
)

// shPath is the PATH the sh_exec tests give the tool: the directories of
// the programs they run, so that a host with an odd PATH still works.
func shPath(t *testing.T, progs ...string) string {
	t.Helper()
	var dirs []string
	seen := map[string]bool{}
	for _, p := range progs {
		full, err := exec.LookPath(p)
		if err != nil {
			t.Skipf("no %s in PATH", p)
		}
		if d := filepath.Dir(full); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":")
}

// shCall runs sh_exec and decodes its "mcp" result.
func shCall(t *testing.T, root, allow, path, args string, env ...string) (*codec.CallToolResult, shResult) {
	t.Helper()
	out := ok(t, "sh_exec", root, args, append([]string{"MCP_SH_ALLOW", allow, "PATH", path}, env...)...)
	var res codec.CallToolResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result %q: %v", out, err)
	}
	var sc shResult
	dec := json.NewDecoder(strings.NewReader(string(res.StructuredContent)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		t.Fatalf("structuredContent %s: %v", res.StructuredContent, err)
	}
	return &res, sc
}

func TestShExec(t *testing.T) {
	root := tree(t, map[string]string{"a.txt": "alpha\nbeta\n", "sub/b.txt": "x"})
	path := shPath(t, "echo", "cat", "pwd", "ls", "printenv", "sleep", "head")
	allow := "echo,cat,pwd,ls,printenv,sleep,head"

	res, sc := shCall(t, root, allow, path, `{"command":"echo hello 'a  b' \"c;d\""}`)
	if sc.Stdout != "hello a  b c;d\n" || sc.ExitCode != 0 || res.IsError || res.Text() != "hello a  b c;d\n" {
		t.Errorf("echo: %+v %q", sc, res.Text())
	}
	if strings.Join(sc.Argv, "|") != "echo|hello|a  b|c;d" {
		t.Errorf("argv %q", sc.Argv)
	}
	_, sc = shCall(t, root, allow, path, `{"command":"pwd"}`)
	if real, _ := filepath.EvalSymlinks(root); strings.TrimSpace(sc.Stdout) != real && strings.TrimSpace(sc.Stdout) != root {
		t.Errorf("pwd %q, want the root %q", sc.Stdout, root)
	}
	_, sc = shCall(t, root, allow, path, `{"command":"cat sub/b.txt a.txt"}`)
	if sc.Stdout != "xalpha\nbeta\n" {
		t.Errorf("cat: %q", sc.Stdout)
	}
	// A failing program: an error result with stderr and the status.
	res, sc = shCall(t, root, allow, path, `{"command":"ls no-such-file"}`)
	if !res.IsError || sc.ExitCode == 0 || sc.Stderr == "" || !strings.Contains(res.Text(), "[exit status") || !strings.Contains(res.Text(), "[stderr]") {
		t.Errorf("failing ls: %+v %q", sc, res.Text())
	}
	// The environment is minimal: nothing but what Env passes.
	_, sc = shCall(t, root, allow, path, `{"command":"printenv"}`, "SECRET_TOKEN", "hunter2", "MCP_ENV_ALLOW", "X")
	if strings.Contains(sc.Stdout, "hunter2") || strings.Contains(sc.Stdout, "MCP_") || !strings.Contains(sc.Stdout, "PATH=") {
		t.Errorf("environment: %q", sc.Stdout)
	}
	// Output cap.
	big := strings.Repeat("0123456789\n", 1000)
	if err := os.WriteFile(filepath.Join(root, "big"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	res, sc = shCall(t, root, allow, path, `{"command":"cat big","maxBytes":100}`)
	if len(sc.Stdout) != 100 || sc.StdoutBytes != 11000 || !sc.Truncated || !strings.Contains(res.Text(), "[truncated: 100 of 11000 stdout bytes shown]") {
		t.Errorf("cap: %d bytes, %+v, %q", len(sc.Stdout), sc.StdoutBytes, res.Text()[max(0, len(res.Text())-80):])
	}
	// Timeout: the program is killed and the result says so.
	res, sc = shCall(t, root, allow, path, `{"command":"sleep 30","timeoutSeconds":1}`)
	if !sc.TimedOut || !res.IsError || !strings.Contains(res.Text(), "timed out after 1s") {
		t.Errorf("timeout: %+v %q", sc, res.Text())
	}
	if _, sc = shCall(t, root, allow, path, `{"command":"ls"}`); !strings.Contains(sc.Stdout, "a.txt") {
		t.Errorf("ls: %q", sc.Stdout)
	}
}

func TestShExecRefusals(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	if err := os.MkdirAll(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(parent, "secret"), []byte("s"), 0o644)
	os.MkdirAll(filepath.Join(parent, "root-evil"), 0o755)
	os.Symlink(parent, filepath.Join(root, "out"))
	path := shPath(t, "echo", "cat", "ls")
	env := []string{"MCP_SH_ALLOW", "echo,cat,ls,bash", "PATH", path}
	for _, tc := range []struct{ command, want string }{
		{"cat ../secret", "outside the root"},
		{"cat " + filepath.Join(parent, "secret"), "outside the root"},
		{"cat ../root-evil/x", "outside the root"},
		{"cat " + filepath.Join(parent, "root-evil"), "outside the root"},
		{"cat out/secret", "outside the root"},
		{"ls -la /", "outside the root"},
		{"ls --directory=/etc", "outside the root"},
		{"ls -d/etc", "outside the root"},
		{"cat file:///etc/passwd", "outside the root"},
		{"cat in/../../secret", "outside the root"},
		{"touch x", "not on the allowlist"},
		{"/bin/echo x", "bare name"},
		{"bash -c 'echo x'", "never runs it"},
		{"echo x; ls", "no pipes"},
		{"echo $HOME", "no variable"},
		{"ls *", "no file name expansion"},
	} {
		stderr := fails(t, "sh_exec", root, argsJSON(t, "command", tc.command), env...)
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: stderr %q, want %q", tc.command, stderr, tc.want)
		}
	}
	failsWith(t, "disabled", "sh_exec", root, `{"command":"echo x"}`, "PATH", path)
	failsWith(t, "disabled", "sh_exec", root, `{"command":"echo x"}`, "MCP_SH_ALLOW", " , ", "PATH", path)
	// Inside the root, absolute and relative, is fine.
	ok(t, "sh_exec", root, argsJSON(t, "command", "ls "+root+"/in in ."), env...)
}

// TestShExecInjectionCorpus: none of these command lines runs anything
// but an allowed program (and those harmlessly); the canaries, one in the
// root and one outside it, never appear. The allowlist is generous on
// purpose, with shells and wrappers that must stay refused.
func TestShExecInjectionCorpus(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(root, "canary"), filepath.Join(parent, "canary")
	path := shPath(t, "echo", "ls", "touch")
	for _, p := range []string{"find", "git", "tar", "sh", "bash", "env", "xargs", "awk", "timeout", "nice", "make", "sort", "rsync",
		"zip", "wget", "curl", "editor", "vimdiff", "view", "ex", "mawk", "man"} {
		if full, err := exec.LookPath(p); err == nil && !strings.Contains(path, filepath.Dir(full)) {
			path += ":" + filepath.Dir(full)
		}
	}
	for _, cmd := range shexectest.InjectionCorpus(in, out, "canary") {
		r := call(t, "sh_exec", root, argsJSON(t, "command", cmd, "timeoutSeconds", 5), "MCP_SH_ALLOW", shexectest.Allow, "MCP_SH_ALLOW_RUNNERS", shexectest.AllowRunners, "PATH", path)
		for _, c := range []string{in, out} {
			if _, err := os.Lstat(c); err == nil {
				t.Fatalf("%q created %s (exit %d, stdout %q, stderr %q)", cmd, c, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	// The control: with touch allowed, the canary in the root does appear,
	// so the corpus above would have seen one.
	ok(t, "sh_exec", root, argsJSON(t, "command", "touch canary"), "MCP_SH_ALLOW", "touch", "PATH", path)
	if _, err := os.Stat(in); err != nil {
		t.Errorf("control: touch canary did not create it: %v", err)
	}
}

// TestShExecUnconfined: in this test process no kernel confinement is in
// force, so sh_exec refuses, saying why and how to opt in, and runs
// nothing; with MCP_SH_UNCONFINED=1 the same command runs.
func TestShExecUnconfined(t *testing.T) {
	if confine.InForce() {
		t.Skip("the test process itself is confined: sh_exec would run")
	}
	root := t.TempDir()
	path := shPath(t, "touch")
	args := argsJSON(t, "command", "touch canary")
	for _, v := range []string{"", "0", "yes"} {
		stderr := fails(t, "sh_exec", root, args, "MCP_SH_ALLOW", "touch", "PATH", path, shexec.UnconfinedEnv, v)
		for _, want := range []string{"kernel confinement", "not in force", "MCP_SH_UNCONFINED=1"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("MCP_SH_UNCONFINED=%q: refusal %q does not say %q", v, stderr, want)
			}
		}
		if _, err := os.Lstat(filepath.Join(root, "canary")); err == nil {
			t.Fatalf("MCP_SH_UNCONFINED=%q: refused, yet touch ran", v)
		}
	}
	ok(t, "sh_exec", root, args, "MCP_SH_ALLOW", "touch", "PATH", path, shexec.UnconfinedEnv, "1")
	if _, err := os.Stat(filepath.Join(root, "canary")); err != nil {
		t.Errorf("MCP_SH_UNCONFINED=1: touch did not run: %v", err)
	}
}
