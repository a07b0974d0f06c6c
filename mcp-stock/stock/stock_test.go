package stock

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// run runs Main with args (the program name first) and returns its output.
func run(t *testing.T, stdin string, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(tool.Process{
		Args:   args,
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	}, "1.2.3")
	return out.String(), errb.String(), code
}

func TestMainCommands(t *testing.T) {
	out, _, code := run(t, "", nil, "mcp-stock", "--help")
	if code != 0 || !strings.Contains(out, "mcp-stock install DIR [--readonly]") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	out, _, code = run(t, "", nil, "mcp-stock", "--version")
	if code != 0 || out != "mcp-stock 1.2.3\n" {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	_, errs, code := run(t, "", nil, "mcp-stock")
	if code != 2 || !strings.Contains(errs, "usage:") {
		t.Errorf("no arguments: exit %d, %q", code, errs)
	}
	_, errs, code = run(t, "", nil, "mcp-stock", "frobnicate")
	if code != 2 || errs != "mcp-stock: unknown command or tool \"frobnicate\" (see --help)\n" {
		t.Errorf("unknown: exit %d, %q", code, errs)
	}
	_, errs, code = run(t, "", nil, "mcp-stock", "install")
	if code != 2 || !strings.HasPrefix(errs, "mcp-stock: install: want exactly one directory") {
		t.Errorf("install without DIR: exit %d, %q", code, errs)
	}
	_, errs, code = run(t, "", nil, "mcp-stock", "list", "--bogus")
	if code != 2 || !strings.Contains(errs, "bogus") {
		t.Errorf("list --bogus: exit %d, %q", code, errs)
	}
	out, _, code = run(t, "", nil, "mcp-stock", "list", "--help")
	if code != 0 || !strings.Contains(out, "usage:") {
		t.Errorf("list --help: exit %d, %q", code, out)
	}
}

func TestMainList(t *testing.T) {
	out, _, code := run(t, "", nil, "mcp-stock", "list")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != len(Tools(false)) || !strings.HasPrefix(lines[0], Tools(false)[0].Def.Name+" ") {
		t.Errorf("list: exit %d, %q", code, out)
	}
	if !strings.Contains(out, "fs_read         read     Read a text file\n") {
		t.Errorf("list: no fs_read line in %q", out)
	}
	out, _, code = run(t, "", nil, "mcp-stock", "list", "--json", "--readonly")
	var defs []map[string]any
	if err := json.Unmarshal([]byte(out), &defs); err != nil || code != 0 {
		t.Fatalf("list --json: exit %d, %v: %q", code, err, out)
	}
	if len(defs) != len(Tools(true)) {
		t.Errorf("list --json --readonly: %d definitions, want %d", len(defs), len(Tools(true)))
	}
	for _, d := range defs {
		if a, _ := d["annotations"].(map[string]any); a["readOnlyHint"] != true {
			t.Errorf("--readonly listed %v", d["name"])
		}
	}
}

func TestMainDispatch(t *testing.T) {
	root := tree(t, map[string]string{"f": "data\n"})
	env := map[string]string{"MCP_ROOT": root}
	// As a link named after the tool.
	out, errs, code := run(t, `{"path":"f"}`, env, "/some/dir/fs_read")
	if code != 0 || out != "data\n" {
		t.Errorf("link: exit %d, %q %q", code, out, errs)
	}
	// As mcp-stock TOOL.
	out, _, code = run(t, `{"path":"f"}`, env, "mcp-stock", "fs_read")
	if code != 0 || out != "data\n" {
		t.Errorf("mcp-stock fs_read: exit %d, %q", code, out)
	}
	// --mcp-describe.
	out, _, code = run(t, "", nil, "fs_stat", "--mcp-describe")
	var def map[string]any
	if err := json.Unmarshal([]byte(out), &def); err != nil || code != 0 || def["name"] != "fs_stat" {
		t.Errorf("--mcp-describe: exit %d, %v, %q", code, err, out)
	}
	if run, _ := def["run"].(map[string]any); run["result"] != "json" {
		t.Errorf("fs_stat --mcp-describe: run %v", def["run"])
	}
	// A failing call: exit 1, "TOOL: message" on stderr.
	_, errs, code = run(t, `{"path":"../x"}`, env, "mcp-stock", "fs_read")
	if code != 1 || errs != "fs_read: ../x: path escapes root\n" {
		t.Errorf("escape: exit %d, %q", code, errs)
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "tools")
	exe := "/opt/mcp-stock"
	n, err := Install(dir, exe, false)
	if err != nil || n != len(Tools(false)) {
		t.Fatalf("Install: %d, %v", n, err)
	}
	names := linkNames(t, dir, exe)
	if !slices.Equal(names, toolNames(Tools(false))) {
		t.Errorf("links %v", names)
	}
	// Again, read-only: the links of mutating tools go.
	n, err = Install(dir, exe, true)
	if err != nil || n != len(Tools(true)) {
		t.Fatalf("Install --readonly: %d, %v", n, err)
	}
	if names := linkNames(t, dir, exe); !slices.Equal(names, toolNames(Tools(true))) {
		t.Errorf("read-only links %v", names)
	}
	// A file of a tool's name that is not a link is left alone.
	if err := os.Remove(filepath.Join(dir, "fs_read")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fs_read"), []byte("mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir, exe, false); err == nil || !strings.Contains(err.Error(), "not a symbolic link") {
		t.Errorf("Install over a file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "fs_read")); string(b) != "mine" {
		t.Errorf("the file was changed: %q", b)
	}
}

func linkNames(t *testing.T, dir, exe string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || target != exe {
			t.Errorf("%s: %q %v", e.Name(), target, err)
		}
		names = append(names, e.Name())
	}
	return names
}

func toolNames(ts []*Tool) []string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Def.Name)
	}
	return n
}
