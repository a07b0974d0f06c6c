package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// runIn runs the built mcp-route in dir with stdin, to its exit.
func runIn(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route"), args...)
	cmd.Dir = dir
	cmd.Env = os.Environ() // XDG_CACHE_HOME from TestMain
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// configDir lays out a directory holding a config file, the env tool in
// tools/ and a root work/, and returns it.
func configDir(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	tools := envTool(t)
	if err := os.Rename(tools, filepath.Join(dir, "tools")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "mcp-route.toml"), config)
	return dir
}

// A config file mounts a tool directory and serves a call; its relative
// paths are relative to the file, wherever mcp-route runs.
func TestConfigFileServes(t *testing.T) {
	dir := configDir(t, `# the example tools, confined to work/
tools = ["tools"]
root = "work"
log = "route.log"
timeout = "20s"

[env]
GREETING = "hello from the file"
`)
	elsewhere := t.TempDir()
	code, out, errs := runIn(t, elsewhere, initLine+"\n"+callEnv+"\n", "--config", filepath.Join(dir, "mcp-route.toml"))
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errs)
	}
	for _, want := range []string{"GREETING=hello from the file", "MCP_ROOT=" + filepath.Join(dir, "work")} {
		if !strings.Contains(out, want) {
			t.Errorf("the call's output lacks %q: %s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "route.log")); err != nil {
		t.Errorf("log = \"route.log\" did not log next to the file: %v", err)
	}
}

// A flag on the command line wins over the file's key, a repeatable one
// as a whole; the file's other keys still hold.
func TestConfigFlagsOverride(t *testing.T) {
	dir := configDir(t, `tools = ["tools"]
name = "from-file"
pass-env = ["MCP_ROUTE_TEST_A"]
[env]
FROM_FILE = "1"
`)
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "two"), "#!/bin/sh\necho two\n")
	os.Chmod(filepath.Join(other, "two"), 0o755)
	writeFile(t, filepath.Join(other, "two.json"), `{"description":"two"}`)
	list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	t.Setenv("MCP_ROUTE_TEST_A", "a-passed")
	t.Setenv("MCP_ROUTE_TEST_B", "b-passed")
	cfg := filepath.Join(dir, "mcp-route.toml")

	code, out, errs := runIn(t, other, initLine+"\n"+callEnv+"\n"+list+"\n", "--config", cfg, "--name", "from-flag", "--pass-env", "MCP_ROUTE_TEST_B")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errs)
	}
	if !strings.Contains(out, `"name":"from-flag"`) || strings.Contains(out, "from-file") {
		t.Errorf("--name did not override name =: %s", out)
	}
	if !strings.Contains(out, "MCP_ROUTE_TEST_B=b-passed") || strings.Contains(out, "a-passed") {
		t.Errorf("--pass-env did not replace the file's pass-env list: %s", out)
	}
	if !strings.Contains(out, "FROM_FILE=1") {
		t.Errorf("the file's [env] was lost: %s", out)
	}

	code, out, errs = runIn(t, t.TempDir(), initLine+"\n"+list+"\n", "--config", cfg, "--tools", other)
	if code != 0 || !strings.Contains(out, `"name":"two"`) || strings.Contains(out, `"name":"env"`) {
		t.Errorf("--tools did not replace tools =: exit %d, %s; stderr %s", code, out, errs)
	}
}

// config print shows the effective configuration as a file that loads back
// to the same (printed again, the same lines), with every path absolute.
func TestConfigPrintRoundTrip(t *testing.T) {
	// ~/ is the home directory: make sure there is one (Bazel's test
	// environment has no HOME).
	t.Setenv("HOME", t.TempDir())
	dir := configDir(t, `tools = "tools"
root = "work"
readonly = true
max-procs = 3
timeout = "1m30s"
allow-read = ["data", "~/shared"]
log = "logs/route.log"
pin = "pins.json"
describe-cache = ""
http-token-file = "secrets/tokens"
session-key-file = "secrets/session.key"
tls-cert = "tls/cert.pem"
tls-key = "tls/key.pem"
allow-write = ["scratch"]
allow-exec = ["~/.cargo/bin"]
upstream-backoff = "1s,10s"

[upstream]
fs = "npx -y @modelcontextprotocol/server-filesystem ."
remote = "https://mcp.example.com/mcp"

[upstream-token-file]
remote = "secrets/remote"
`)
	home, _ := os.UserHomeDir()
	code, first, errs := runIn(t, t.TempDir(), "", "config", "print", "--config", filepath.Join(dir, "mcp-route.toml"), "--max-procs", "5")
	if code != 0 || errs != "" {
		t.Fatalf("config print: exit %d; stderr %s", code, errs)
	}
	for _, want := range []string{
		`tools = ["` + filepath.Join(dir, "tools") + `"]`,
		`root = "` + filepath.Join(dir, "work") + `"`,
		`readonly = true`,
		`max-procs = 5`, // the flag wins
		`timeout = "1m30s"`,
		`allow-read = ["` + filepath.Join(dir, "data") + `", "` + filepath.Join(home, "shared") + `"]`,
		`log = "` + filepath.Join(dir, "logs/route.log") + `"`,
		`pin = "` + filepath.Join(dir, "pins.json") + `"`,
		`describe-cache = ""`, // set, to off: not the default
		`http-token-file = "` + filepath.Join(dir, "secrets/tokens") + `"`,
		`session-key-file = "` + filepath.Join(dir, "secrets/session.key") + `"`,
		`tls-cert = "` + filepath.Join(dir, "tls/cert.pem") + `"`,
		`tls-key = "` + filepath.Join(dir, "tls/key.pem") + `"`,
		`allow-write = ["` + filepath.Join(dir, "scratch") + `"]`,
		`allow-exec = ["` + filepath.Join(home, ".cargo/bin") + `"]`,
		`# grace = "2s"`, // a default, commented out
		"\n[upstream]\nfs = \"npx -y @modelcontextprotocol/server-filesystem .\"\nremote = \"https://mcp.example.com/mcp\"\n",
		"\n[upstream-token-file]\nremote = \"" + filepath.Join(dir, "secrets/remote") + "\"\n",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("config print lacks %q:\n%s", want, first)
		}
	}

	// Loaded from elsewhere, the printed file prints the same.
	printed := writeFile(t, filepath.Join(t.TempDir(), "printed.toml"), first)
	code, second, errs := runIn(t, t.TempDir(), "", "config", "print", "--config", printed)
	if code != 0 {
		t.Fatalf("config print of the printed file: exit %d; stderr %s", code, errs)
	}
	body := func(s string) string { _, b, _ := strings.Cut(s, "\n"); return b } // the first line names the file
	if body(first) != body(second) {
		t.Errorf("printed twice, the configuration changed:\n%s\n---\n%s", first, second)
	}
}

// config print withholds what may be a secret (an --env value, a header,
// an upstream URL with a query), with what goes with it; the rest loads.
func TestConfigPrintWithholdsSecrets(t *testing.T) {
	dir := configDir(t, `tools = ["tools"]
[upstream]
plain = "https://mcp.example.com/mcp"
keyed = "https://mcp.example.com/mcp?api_key=SECRET-IN-QUERY"
[upstream-header]
plain = ["Authorization: Bearer SECRET-IN-HEADER", "X-Team: blue"]
[upstream-token-file]
keyed = "keyed.token"
[env]
API_KEY = "SECRET-IN-ENV"
`)
	code, out, errs := runIn(t, t.TempDir(), "", "config", "print", "--config", filepath.Join(dir, "mcp-route.toml"), "--env", "FLAG_KEY=SECRET-IN-FLAG")
	if code != 0 {
		t.Fatalf("config print: exit %d; stderr %s", code, errs)
	}
	for _, secret := range []string{"SECRET-IN-QUERY", "SECRET-IN-HEADER", "SECRET-IN-ENV", "SECRET-IN-FLAG"} {
		if strings.Contains(out, secret) || strings.Contains(errs, secret) {
			t.Errorf("config print shows the secret %s:\n%s%s", secret, out, errs)
		}
	}
	for _, want := range []string{
		"[env]\n# FLAG_KEY = (withheld: --env values may be secrets)\n",
		"[upstream]\nplain = \"https://mcp.example.com/mcp\"\n# keyed = (withheld: its URL has user info or a query, which may hold a secret)\n",
		"[upstream-header]\n# plain = (withheld: --upstream-header values may be secrets)\n",
		"[upstream-token-file]\n# keyed = (withheld: with its upstream)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config print lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "4 values withheld") {
		t.Errorf("stderr does not say values were withheld: %q", errs)
	}
	printed := writeFile(t, filepath.Join(t.TempDir(), "printed.toml"), out)
	if code, _, errs := runIn(t, t.TempDir(), "", "config", "print", "--config", printed); code != 0 {
		t.Errorf("the printed file does not load: exit %d, %s", code, errs)
	}
}

// The printed configuration of a working file serves as the file does.
func TestConfigPrintServes(t *testing.T) {
	dir := configDir(t, "tools = [\"tools\"]\nroot = \"work\"\n")
	_, printed, _ := runIn(t, dir, "", "config", "print", "--config", "mcp-route.toml")
	cfg := writeFile(t, filepath.Join(t.TempDir(), "printed.toml"), printed)
	code, out, errs := runIn(t, t.TempDir(), initLine+"\n"+callEnv+"\n", "--config", cfg)
	if code != 0 || !strings.Contains(out, "MCP_ROOT="+filepath.Join(dir, "work")) {
		t.Errorf("exit %d, %s; stderr %s", code, out, errs)
	}
}

// A bad key or value is a usage error naming the file, the line and what
// is expected; an unknown key names the nearest one.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ name, config, want string }{
		{"unknown key", "tools = []\n\nmax-proc = 4\n", `:3: unknown key "max-proc": did you mean "max-procs"?`},
		{"underscore", "max_output = 4\n", `:1: unknown key "max_output": did you mean "max-output"?`},
		{"unknown table", "# mounts\n[upstreams]\nfs = \"npx x\"\n", `:2: unknown key "upstreams": did you mean "upstream"?`},
		{"nothing near", "colour = \"blue\"\n", `:1: unknown key "colour": the keys are the flags of mcp-route --help`},
		{"string for a number", "readonly = true\nmax-procs = \"4\"\n", `:2: max-procs: want an integer (max-procs = 8), not a string`},
		{"number for a bool", "readonly = 1\n", `:1: readonly: want true or false (readonly = true), not an integer`},
		{"bad duration", "\ntimeout = \"5 minutes\"\n", `:2: timeout = "5 minutes": want a duration such as "30s"`},
		{"number for a duration", "grace = 5\n", `:1: grace: want a duration as a string (grace = "2s"), not an integer`},
		{"table for a scalar", "[root]\npath = \"/\"\n", `:1: root: want a string (root = "DIR"), not a table`},
		{"bad element", "allow-read = [\n  \"/usr\",\n  7,\n]\n", `:3: allow-read: element 2: want a string, not an integer`},
		{"bad table value", "[env]\nA = \"1\"\nB = false\n", `:3: env.B: want a string (or an array of strings), not a boolean`},
		{"table for a list", "[pass-env]\nHOME = \"x\"\n", `:1: pass-env: want a string or an array of strings (pass-env = ["NAME"]), not a table`},
		{"action flag", "version = true\n", `:1: version is not a configuration key: give --version on the command line`},
		{"not TOML", "max-procs = 4\ntools = [\"a\"\n", `:2:13: array is incomplete (not valid TOML)`},
		{"range", "max-procs = 0\n", `--max-procs 0: want a positive number (set in %s:1)`},
		{"later check", "[upstream]\nok = \"cat\"\n\"bad name\" = \"cat\"\n", `--upstream "bad name=cat": name "bad name": want 1 to 32 letters, digits or '-' (it prefixes the tools: NAME__TOOL) (set in %s:3)`},
		{"later check of a table", "[upstream]\nok = \"cat\"\n[upstream-header]\nok = \"X-A: b\"\n", `--upstream-header ok: upstream ok is not an HTTP upstream (NAME=https://...): a stdio upstream gets no headers (set in %s:4)`},
		{"later check of a size", "\nlimit-mem = \"lots\"\n", `--limit-mem "lots": want a size such as "512MiB" or "2G" (at least 1MiB; 0: no limit) (set in %s:2)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeFile(t, filepath.Join(t.TempDir(), "bad.toml"), c.config)
			if strings.Contains(c.want, "%s") {
				c.want = fmt.Sprintf(c.want, cfg)
			}
			code, out, errs := runIn(t, t.TempDir(), "", "--config", cfg)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			if !strings.Contains(errs, cfg) || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q; want one line naming %s with %q", errs, cfg, c.want)
			}
		})
	}
	code, _, errs := runIn(t, t.TempDir(), "", "--config", "missing.toml")
	if code != 1 || !strings.Contains(errs, "missing.toml: no such file") {
		t.Errorf("a missing file: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runIn(t, t.TempDir(), "", "config", "show")
	if code != 2 || !strings.Contains(errs, "mcp-route config print") {
		t.Errorf("config show: exit %d, stderr %q", code, errs)
	}
}

// A config file tools could write is refused: a tool would choose the
// next start's flags (--confine off, an --allow-write of its choice). The
// same file out of their reach, or under a --readonly root, serves.
func TestConfigWhereToolsWrite(t *testing.T) {
	tools := envTool(t)
	root := t.TempDir()
	inRoot := writeFile(t, filepath.Join(root, "mcp-route.toml"), "tools = [\""+tools+"\"]\nroot = \".\"\n")
	code, _, errs := runIn(t, t.TempDir(), "", "--config", inRoot)
	if code != 1 || !strings.Contains(errs, "--config "+inRoot+" is inside --root "+root+", where tools can write") {
		t.Errorf("config inside the root: exit %d, stderr %q", code, errs)
	}
	// A link from elsewhere to it is the same file.
	link := filepath.Join(t.TempDir(), "link.toml")
	os.WriteFile(filepath.Join(root, "abs.toml"), []byte("tools = [\""+tools+"\"]\nroot = \""+root+"\"\n"), 0o644)
	os.Symlink(filepath.Join(root, "abs.toml"), link)
	code, _, errs = runIn(t, t.TempDir(), "", "--config", link)
	if code != 1 || !strings.Contains(errs, "is inside --root "+root+" (as "+filepath.Join(root, "abs.toml")+")") {
		t.Errorf("a link into the root: exit %d, stderr %q", code, errs)
	}
	// Read only, tools cannot write the root: served.
	code, out, errs := runIn(t, t.TempDir(), initLine+"\n"+callEnv+"\n", "--config", inRoot, "--readonly")
	if code != 0 || !strings.Contains(out, "MCP_ROOT="+root) {
		t.Errorf("config in a --readonly root: exit %d, %s; stderr %s", code, out, errs)
	}

	writable := t.TempDir()
	inWritable := writeFile(t, filepath.Join(writable, "sub", "mcp-route.toml"), "tools = [\""+tools+"\"]\nallow-write = [\"..\"]\n")
	code, _, errs = runIn(t, root, "", "--config", inWritable)
	if code != 1 || !strings.Contains(errs, "is inside --allow-write "+writable) {
		t.Errorf("config inside --allow-write: exit %d, stderr %q", code, errs)
	}

	inTools := writeFile(t, filepath.Join(tools, "mcp-route.toml"), "tools = [\".\"]\n")
	code, _, errs = runIn(t, root, "", "--config", inTools, "--readonly")
	if code != 1 || !strings.Contains(errs, "is inside --tools "+tools) {
		t.Errorf("config inside a tool directory: exit %d, stderr %q", code, errs)
	}

	// A file holding a header value is a secret: not where tools read.
	secret := writeFile(t, filepath.Join(root, "secret.toml"), "tools = [\""+tools+"\"]\n[upstream]\napi = \"https://mcp.example.com/mcp\"\n[upstream-header]\napi = \"Authorization: Bearer x\"\n")
	code, _, errs = runIn(t, t.TempDir(), "", "--config", secret, "--readonly", "--root", root)
	if code != 1 || !strings.Contains(errs, "--config (it holds an upstream's header or URL credentials): "+secret+" is inside --root") {
		t.Errorf("a config with a header value, readable by tools: exit %d, stderr %q", code, errs)
	}
	keyed := writeFile(t, filepath.Join(root, "keyed.toml"), "tools = [\""+tools+"\"]\n[upstream]\napi = \"https://mcp.example.com/mcp?key=x\"\n")
	code, _, errs = runIn(t, t.TempDir(), "", "--config", keyed, "--readonly", "--root", root)
	if code != 1 || !strings.Contains(errs, "--config (it holds an upstream's header or URL credentials): "+keyed+" is inside --root") {
		t.Errorf("a config with a URL key, readable by tools: exit %d, stderr %q", code, errs)
	}
}

// Keys come from the FlagSet alone: a flag another file adds (here a
// flag.Func, whose String says nothing) gets its key, from the file and
// the command line, and config print shows what was given.
func TestConfigAnyFlag(t *testing.T) {
	newFS := func(seen *[]string) *flag.FlagSet {
		fs := flag.NewFlagSet(prog, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Func("grant", "grant the tool `NAME` (repeatable)", func(v string) error {
			if v == "bad" {
				return errors.New("no tool named bad")
			}
			*seen = append(*seen, v)
			return nil
		})
		fs.Int("workers", 2, "workers")
		fs.Bool("all", false, "accept every change (pin's choice: no key)")
		configFlag(fs)
		return fs
	}
	cfg := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), "workers = 3\ngrant = [\"fs__read\", \"fs__write\"]\n")
	for _, c := range []struct {
		args       []string
		seen, want []string
	}{
		{[]string{"--config", cfg}, []string{"fs__read", "fs__write"}, []string{"workers = 3\n", "grant = [\"fs__read\", \"fs__write\"]\n"}},
		{[]string{"--config", cfg, "--grant", "gh__issue"}, []string{"gh__issue"}, []string{"workers = 3\n", "grant = [\"gh__issue\"]\n"}},
	} {
		var seen []string
		fs := newFS(&seen)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		file, err := applyConfig(fs, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seen, c.seen) {
			t.Errorf("%q: the flag got %q, want %q", c.args, seen, c.seen)
		}
		var out, errb bytes.Buffer
		if code := printConfig(fs, c.args, file, &out, &errb); code != 0 {
			t.Fatalf("print: %d %s", code, errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%q: config print lacks %q:\n%s", c.args, w, out.String())
			}
		}
	}
	bad := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), "\ngrant = [\"ok\", \"bad\"]\n")
	var seen []string
	fs := newFS(&seen)
	fs.Parse(nil)
	if _, err := applyConfig(fs, bad); err == nil || !strings.Contains(err.Error(), bad+`:2: grant = "bad": no tool named bad`) {
		t.Errorf("a value the flag refuses: %v", err)
	}
	all := writeFile(t, filepath.Join(t.TempDir(), "c.toml"), "all = true\n")
	fs = newFS(&seen)
	fs.Parse(nil)
	if _, err := applyConfig(fs, all); err == nil || !strings.Contains(err.Error(), all+":1: all is not a configuration key: give --all on the command line") {
		t.Errorf("pin's --all in a file: %v", err)
	}
}

// Without a home directory, ~/ in the file is refused at its line: taken
// as is, it would name a directory "~" under the file's one.
func TestConfigTildeWithoutHome(t *testing.T) {
	dir := configDir(t, "tools = \"tools\"\nroot = \"work\"\nallow-read = [\"~/shared\"]\n")
	t.Setenv("HOME", "")
	code, _, errs := runIn(t, dir, "", "--config", filepath.Join(dir, "mcp-route.toml"))
	if code != 2 || !strings.Contains(errs, "mcp-route.toml:3: allow-read") || !strings.Contains(errs, "write the path in full") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming mcp-route.toml:3 and saying to write the path in full", code, errs)
	}
	t.Setenv("HOME", t.TempDir())
	code, out, errs := runIn(t, dir, "", "config", "print", "--config", filepath.Join(dir, "mcp-route.toml"))
	if code != 0 || !strings.Contains(out, "/shared") {
		t.Fatalf("with a home directory: exit %d, stdout %q, stderr %q; want the path under it", code, out, errs)
	}
}
