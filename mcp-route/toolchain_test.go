package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
)

// callRaw calls tool and returns the text of its result and isError.
func (p *confinedRoute) callRaw(tool string, args map[string]any) (string, bool) {
	p.t.Helper()
	p.id++
	a, _ := json.Marshal(args)
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, p.id, tool, a))
	var r codec.CallToolResult
	if err := json.Unmarshal(p.recv(p.id), &r); err != nil {
		p.t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return strings.TrimSpace(b.String()), r.IsError
}

// listNames returns the names tools/list gives.
func (p *confinedRoute) listNames() []string {
	p.t.Helper()
	p.id++
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, p.id))
	var r struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(p.recv(p.id), &r); err != nil {
		p.t.Fatal(err)
	}
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// addTool writes an executable tool and its sidecar into dir.
func addTool(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// A generous bound: pyenv's shim runs a dozen bash processes, slow
	// on a loaded CI machine.
	if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(`{"description":"toolchain matrix: `+name+`","run":{"timeout":"5m"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pyenvRoot returns the pyenv installation of this host, "" when none.
func pyenvRoot() string {
	root := os.Getenv("PYENV_ROOT")
	if root == "" && os.Getenv("HOME") != "" {
		root = filepath.Join(os.Getenv("HOME"), ".pyenv")
	}
	if root == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "shims", "python3")); err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "libexec", "pyenv")); err != nil {
		return ""
	}
	return root
}

// TestToolchainMatrix runs tools written for the usual toolchains through
// the real mcp-route under its default confinement: each one's
// interpreter chain must be granted (a pyenv shim is a bash script that
// runs pyenv, which execs the real python; a venv's python needs the
// stdlib of the python it was made from), and each must run, confined.
// Before the chains were granted, everything outside /usr failed with
// exit 126 or "No module named 'encodings'". A toolchain this host lacks
// is skipped, saying so.
func TestToolchainMatrix(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	// The interpreters live outside the root, as a user's do.
	envs := t.TempDir()
	type tool struct {
		name, script string
		want         string // the result starts with this
		env          []string
	}
	var tools []tool
	skip := map[string]string{}
	have := func(name, prog string) bool {
		if _, err := exec.LookPath(prog); err != nil {
			skip[name] = prog + " not installed"
			return false
		}
		return true
	}
	tools = append(tools, tool{name: "sh", script: "#!/bin/sh\necho sh ran in \"$PWD\"\n", want: "sh ran in " + f.root})
	if have("bash", "bash") {
		tools = append(tools, tool{name: "bash", script: "#!/usr/bin/env bash\necho \"bash ${BASH_VERSINFO[0]}\"\n", want: "bash "})
	}
	const pyScript = "import sys, json\nprint('python', sys.prefix, json.dumps({'ok': True}))\n"
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		tools = append(tools, tool{name: "python_system", script: "#!/usr/bin/python3\n" + pyScript, want: "python /usr "})
		venv := filepath.Join(envs, "venv")
		if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err == nil {
			// By absolute path, and by name through the PATH of an
			// active venv (as mcp-route new's skeleton is written).
			tools = append(tools,
				tool{name: "python_venv", script: "#!" + venv + "/bin/python3\n" + pyScript, want: "python " + venv + " "},
			)
		} else {
			skip["python_venv"] = fmt.Sprintf("python3 -m venv: %v: %s", err, bytes.TrimSpace(out))
		}
	} else {
		skip["python_system"] = "/usr/bin/python3 not installed"
	}
	if root := pyenvRoot(); root != "" {
		shims := filepath.Join(root, "shims")
		tools = append(tools, tool{name: "python_pyenv", script: "#!/usr/bin/env python3\n" + pyScript, want: "python " + root + "/versions/",
			env: []string{"PATH=" + shims + ":/usr/bin:/bin"}})
		// A venv made from pyenv's python: its stdlib is in pyenv's
		// version, not in the venv.
		if real, err := exec.Command(filepath.Join(shims, "python3"), "-c", "import sys; print(sys.executable)").Output(); err == nil {
			pv := filepath.Join(envs, "pyenv-venv")
			if out, err := exec.Command(strings.TrimSpace(string(real)), "-m", "venv", "--without-pip", pv).CombinedOutput(); err == nil {
				tools = append(tools, tool{name: "python_pyenv_venv", script: "#!/usr/bin/env python3\n" + pyScript, want: "python " + pv + " ",
					env: []string{"PATH=" + pv + "/bin:/usr/bin:/bin"}})
			} else {
				skip["python_pyenv_venv"] = fmt.Sprintf("venv from pyenv's python: %v: %s", err, out)
			}
		}
	} else {
		skip["python_pyenv"] = "no pyenv on this host (PYENV_ROOT or ~/.pyenv with shims/python3)"
	}
	if have("node", "node") {
		tools = append(tools, tool{name: "node", script: "#!/usr/bin/env node\nconsole.log('node', process.version, require('os').tmpdir() === process.env.TMPDIR)\n", want: "node v"})
	}
	if have("git", "git") {
		tools = append(tools, tool{name: "git", script: `#!/bin/sh
set -e
rm -rf repo && git init -q repo && cd repo
echo a > f && git add f
git -c user.name=t -c user.email=t@example.com commit -qm first
echo "git commits: $(git rev-list --count HEAD)"
`, want: "git commits: 1"})
	}
	if have("make", "make") {
		tools = append(tools, tool{name: "make", script: `#!/bin/sh
set -e
d=$(mktemp -d)
printf 'all:\n\t@echo made in $$(basename $$PWD)\n' > "$d/Makefile"
make -s -C "$d"
`, want: "made in "})
	}
	if have("jq", "jq") {
		tools = append(tools, tool{name: "jq", script: "#!/bin/sh\necho '{\"a\":{\"b\":42}}' | jq -c '{jq: .a.b}'\n", want: `{"jq":42}`})
	}
	// One mcp-route per PATH: the chain of "#!/usr/bin/env python3" is
	// resolved with the PATH the tool sees.
	byEnv := map[string][]tool{}
	for _, tl := range tools {
		k := strings.Join(tl.env, "\x00")
		byEnv[k] = append(byEnv[k], tl)
	}
	for k, group := range byEnv {
		env := []string{"PATH=/usr/bin:/bin"}
		if k != "" {
			env = strings.Split(k, "\x00")
		}
		dir := filepath.Join(t.TempDir(), "tools")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tl := range group {
			addTool(t, dir, tl.name, tl.script)
		}
		g := *f
		g.tools = dir
		p := g.startEnv(t, env)
		for _, tl := range group {
			t.Run(tl.name, func(t *testing.T) {
				got, isErr := p.callRaw(tl.name, nil)
				if isErr || !strings.HasPrefix(got, tl.want) {
					t.Errorf("%s confined: isError %v, %q; want %q...\nmcp-route stderr:\n%s", tl.name, isErr, got, tl.want, p.stderr)
				}
			})
		}
		p.stop()
	}
	for name, why := range skip {
		t.Run(name, func(t *testing.T) { t.Skip(why) })
	}
}

// TestInterpreterGrantNotFromRoot: a tool outside the root whose
// interpreter is a "venv" inside the root. A client can write there: its
// pyvenv.cfg names as the venv's home a directory outside, and its python
// (a script the client wrote) reads a secret there. Nothing under the root
// may steer a grant, so the secret stays refused and mcp-route says why;
// the same venv outside the root gets its home's lib granted, and the
// read works (the control: the grant is what the attack was after).
func TestInterpreterGrantNotFromRoot(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	mkVenv := func(venv, home string) string {
		for _, d := range []string{filepath.Join(venv, "bin"), filepath.Join(home, "bin"), filepath.Join(home, "lib")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		secret := filepath.Join(home, "lib", "secret.txt")
		os.WriteFile(secret, []byte("home-secret"), 0o644)
		os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = "+filepath.Join(home, "bin")+"\n"), 0o644)
		os.WriteFile(filepath.Join(venv, "bin", "python3"), []byte("#!/bin/sh\nif out=$(cat "+secret+" 2>/dev/null); then echo \"read: $out\"; else echo refused; fi\n"), 0o755)
		return filepath.Join(venv, "bin", "python3")
	}
	attack := mkVenv(filepath.Join(f.root, "venv"), filepath.Join(f.outside, "home-a"))
	control := mkVenv(filepath.Join(f.outside, "venv"), filepath.Join(f.outside, "home-b"))
	addTool(t, f.tools, "via_root", "#!"+attack+"\n")
	addTool(t, f.tools, "via_outside", "#!"+control+"\n")

	p := f.start(t, "--verbose")
	if got := p.call("via_outside", nil); got != "read: home-secret" {
		t.Errorf("venv outside the root: %q, want its home's lib granted", got)
	}
	if got := p.call("via_root", nil); got != "refused" {
		t.Errorf("venv inside the root steered a grant: %q", got)
	}
	p.stop()
	var warned bool
	sc := bufio.NewScanner(bytes.NewReader(p.stderr.Bytes()))
	for sc.Scan() {
		if l := sc.Text(); strings.Contains(l, "level=WARN") && strings.Contains(l, "interpreter not granted") && strings.Contains(l, "tool="+filepath.Join(f.tools, "via_root")) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no WARN line for the refused interpreter:\n%s", p.stderr)
	}

	// --confine-check shows both chains: the grant and the refusal.
	out, err := exec.Command(f.bin, "--confine-check", "--tools", f.tools, "--root", f.root).Output()
	if err != nil {
		t.Fatalf("--confine-check: %v", err)
	}
	homeB, _ := filepath.EvalSymlinks(filepath.Join(f.outside, "home-b", "lib"))
	venvA, _ := filepath.EvalSymlinks(filepath.Join(f.root, "venv", "bin", "python3"))
	for _, want := range []string{
		"tool " + filepath.Join(f.tools, "via_outside") + "\n",
		"grant    read+exec  " + homeB + "  [stdlib of the venv ",
		"REFUSED  " + venvA + "  [interpreter of ",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--confine-check lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), filepath.Join(f.outside, "home-a")) {
		t.Errorf("--confine-check grants the home named under the root:\n%s", out)
	}
}

// TestDenialExplained: a confined tool refused a path says so in its
// isError text and in a WARN record with the path and the flag that
// grants it; a plain permission error (a file its mode refuses, inside
// the root where the policy allows everything) is not blamed on the
// confinement.
func TestDenialExplained(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	secret := filepath.Join(f.outside, "secret.txt")
	addTool(t, f.tools, "reader", "#!/bin/sh\ncat \"$MCP_ARG_PATH\" || exit 1\n")
	addTool(t, f.tools, "writer", "#!/bin/sh\necho x > \"$MCP_ARG_PATH\" || exit 1\n")
	locked := filepath.Join(f.root, "locked")
	os.WriteFile(locked, []byte("x"), 0o000)
	p := f.start(t)
	got, isErr := p.callRaw("reader", map[string]any{"path": secret})
	wantNote := "mcp-route's confinement refused " + secret + " (tools are granted nothing there); --allow-read " + secret + " grants it"
	if !isErr || !strings.Contains(got, "Permission denied") || !strings.Contains(got, wantNote) {
		t.Errorf("read outside: isError %v %q; want the note %q", isErr, got, wantNote)
	}
	newFile := filepath.Join(f.outside, "new.txt")
	got, isErr = p.callRaw("writer", map[string]any{"path": newFile})
	if wantNote := "refused " + newFile + " (tools are granted nothing there); --allow-write " + f.outside + " grants it"; !isErr || !strings.Contains(got, wantNote) {
		t.Errorf("write outside: isError %v %q; want %q", isErr, got, wantNote)
	}
	if os.Geteuid() != 0 { // root reads a mode-000 file anyway
		got, isErr = p.callRaw("reader", map[string]any{"path": locked})
		if !isErr || strings.Contains(got, "confinement") {
			t.Errorf("plain permission error in the root: isError %v %q; it must not blame the confinement", isErr, got)
		}
	}
	// A file of /etc left out of the curated list: the note names the
	// file, since --allow-read /etc would open /etc/shadow and is refused.
	if _, err := os.ReadFile("/etc/machine-id"); err == nil {
		got, isErr = p.callRaw("reader", map[string]any{"path": "/etc/machine-id"})
		if want := "--allow-read /etc/machine-id grants it"; !isErr || !strings.Contains(got, want) {
			t.Errorf("read /etc/machine-id: isError %v %q; want %q", isErr, got, want)
		}
	}
	// A secret no flag grants: refused, and no flag is offered.
	if _, err := os.ReadFile("/etc/shadow"); err == nil {
		got, isErr = p.callRaw("reader", map[string]any{"path": "/etc/shadow"})
		if !isErr || strings.Contains(got, "grants it") {
			t.Errorf("read /etc/shadow: isError %v %q; want refused with no flag offered", isErr, got)
		}
	}
	// The control: a path the policy allows is read.
	if got, isErr := p.callRaw("reader", map[string]any{"path": filepath.Join(f.root, "inside.txt")}); isErr || got != "inside-content" {
		t.Errorf("read inside: isError %v %q", isErr, got)
	}
	p.stop()
	var logged bool
	sc := bufio.NewScanner(bytes.NewReader(p.stderr.Bytes()))
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="confinement refused a path the tool needed"`) &&
			strings.Contains(l, "tool=reader") && strings.Contains(l, "path="+secret) && strings.Contains(l, `grant="--allow-read `+secret+`"`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("no WARN record with tool, path and grant:\n%s", p.stderr)
	}
	// With the flag the note named, the read works.
	q := f.start(t, "--allow-read", secret)
	if got, isErr := q.callRaw("reader", map[string]any{"path": secret}); isErr || got != "outside-content" {
		t.Errorf("with --allow-read %s: isError %v %q", secret, isErr, got)
	}
}

// TestDescribeFailureOneLine: a tool whose --mcp-describe fails is left out
// with one WARN line that gives the cause, not the tool's whole stderr.
func TestDescribeFailureOneLine(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	noise := strings.Repeat("  path config noise = something long\\n", 60)
	if err := os.WriteFile(filepath.Join(f.tools, "broken"), []byte("#!/bin/sh\nprintf '"+noise+"' >&2\necho \"ModuleNotFoundError: No module named 'encodings'\" >&2\necho 'Current thread 0x1 (most recent call first):' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := f.start(t)
	names := p.listNames()
	p.stop()
	for _, n := range names {
		if n == "broken" {
			t.Fatalf("the broken tool is listed: %v", names)
		}
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(p.stderr.Bytes()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "broken") {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") ||
		!strings.Contains(lines[0], "exit status 1: ModuleNotFoundError: No module named 'encodings'") || len(lines[0]) > 400 {
		t.Errorf("want one short WARN line with the cause, got %d:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

// TestPythonSkeletonConfined: `mcp-route new --lang python` serves and
// answers under the default confinement with the system python, inside an
// active venv and under pyenv (the skeleton is "#!/usr/bin/env python3":
// which python runs is the PATH's choice).
func TestPythonSkeletonConfined(t *testing.T) {
	confinetest.Need(t, 1)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("/usr/bin/python3 not installed")
	}
	f := newConfineFixture(t)
	if code, _, errs := runWith(t, "", "new", "hello_py", "--lang", "python", "--dir", f.tools); code != 0 {
		t.Fatalf("mcp-route new: %d %s", code, errs)
	}
	paths := map[string]string{"system": "/usr/bin:/bin"}
	venv := filepath.Join(t.TempDir(), "venv")
	if err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).Run(); err == nil {
		paths["venv"] = venv + "/bin:/usr/bin:/bin"
	}
	if root := pyenvRoot(); root != "" {
		paths["pyenv"] = filepath.Join(root, "shims") + ":/usr/bin:/bin"
	}
	for _, name := range []string{"system", "venv", "pyenv"} {
		t.Run(name, func(t *testing.T) {
			path, ok := paths[name]
			if !ok {
				t.Skipf("no %s python on this host", name)
			}
			// Bounds for a loaded machine: pyenv's shim is slow to start.
			p := f.startEnv(t, []string{"PATH=" + path}, "--describe-timeout", "2m", "--timeout", "5m")
			if got, isErr := p.callRaw("hello_py", map[string]any{"name": "confined"}); isErr || !strings.Contains(got, "confined") {
				t.Errorf("skeleton under %s: isError %v %q\nstderr:\n%s", name, isErr, got, p.stderr)
			}
			p.stop()
		})
	}
}

// TestSecretInInterpreterGrant: what an interpreter chain is granted,
// every tool can read; a secret file there (a session key kept in a venv)
// is refused at start with one line naming the grant, while the same key
// beside it, outside the grant, serves.
func TestSecretInInterpreterGrant(t *testing.T) {
	confinetest.Need(t, 1)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	tools := filepath.Join(dir, "tools")
	root := filepath.Join(dir, "root")
	for _, d := range []string{filepath.Join(venv, "bin"), tools, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	writeInterp := filepath.Join(venv, "bin", "python3")
	if err := os.WriteFile(writeInterp, []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	addTool(t, tools, "venv_tool", "#!"+writeInterp+"\n")
	key := testKey + "\n"
	inVenv, beside := filepath.Join(venv, "session.key"), filepath.Join(dir, "session.key")
	for _, f := range []string{inVenv, beside} {
		if err := os.WriteFile(f, []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errs := runWith(t, "", "--tools", tools, "--root", root, "--http", "127.0.0.1:0", "--session-key-file", inVenv)
	realVenv, _ := filepath.EvalSymlinks(venv)
	want := "--session-key-file: " + inVenv + " is inside the interpreter grant of tool " + filepath.Join(tools, "venv_tool") + ", " + realVenv
	if code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Errorf("key in the venv: code %d, stderr %q; want 1 and %q", code, errs, want)
	}
	srv := startHTTP(t, "--confine", "auto", "--tools", tools, "--root", root, "--session-key-file", beside)
	if code, _, body := post(t, srv.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); code != 200 {
		t.Errorf("key outside the grant: initialize %d %s", code, body)
	}
}
