package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec/shexectest"
)

// attackScript is a tool that tries what the confinement must refuse, one
// operation per call (MCP_ARG_OP), and says what happened on one line:
// "refused" when the operation failed, what it got otherwise.
const attackScript = `#!/bin/sh
case $MCP_ARG_OP in
read)
	if out=$(cat -- "$MCP_ARG_PATH" 2>/dev/null); then echo "read: $out"; else echo refused; fi ;;
write)
	if (echo written > "$MCP_ARG_PATH") 2>/dev/null; then echo created; else echo refused; fi ;;
signal0)
	if kill -0 "$MCP_ARG_PID" 2>/dev/null; then echo signalled; else echo refused; fi ;;
term)
	if kill -TERM "$MCP_ARG_PID" 2>/dev/null; then echo signalled; else echo refused; fi ;;
child)
	sleep 30 &
	if kill -TERM $! 2>/dev/null; then echo signalled; else echo refused; fi
	wait ;;
environ)
	if out=$(tr '\0' '\n' < "/proc/$MCP_ARG_PID/environ" 2>/dev/null); then echo "environ: $out"; else echo refused; fi
	if (exec 3<"/proc/$MCP_ARG_PID/mem") 2>/dev/null; then echo "mem: opened"; else echo "mem: refused"; fi ;;
sh)
	# Whatever the command line says, run by a shell: no allowlist at all.
	# Printable characters only: some write archives to stdout.
	sh -c "$MCP_ARG_CMD" </dev/null 2>&1 | tr -c '[:print:]\n' '?' ;;
tmp)
	if (echo x > "$TMPDIR/t") 2>/dev/null && [ "$(cat "$TMPDIR/t")" = x ]; then echo "tmp: $TMPDIR"; else echo refused; fi ;;
esac
`

// connectTool is the name under which this test binary, linked into the
// tool directory, is a tool that makes a TCP connection (TestMain): the
// shell has no portable way to, and a symlinked tool whose target is
// outside every tool directory is what mcp-stock install makes too.
const connectTool = "connect"

// connectMain runs as the connect tool when MCP_TOOL says so: a TCP
// connect to MCP_ARG_ADDR, or with MCP_ARG_PROTO=mptcp an MPTCP one
// (which Landlock's TCP rules do not see; the seccomp filter of
// --no-network refuses the socket).
func connectMain() {
	if os.Getenv("MCP_ARG_PROTO") == "mptcp" {
		ap, err := netip.ParseAddrPort(os.Getenv("MCP_ARG_ADDR"))
		if err != nil {
			fmt.Println("bad addr:", err)
			os.Exit(0)
		}
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262) // IPPROTO_MPTCP
		if err == nil {
			err = syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()})
		}
		if err != nil {
			fmt.Println("refused:", err)
			os.Exit(0)
		}
		fmt.Println("connected")
		os.Exit(0)
	}
	c, err := net.DialTimeout("tcp", os.Getenv("MCP_ARG_ADDR"), 10*time.Second)
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(0)
	}
	c.Close()
	fmt.Println("connected")
	os.Exit(0)
}

// noNetworkFilter: this architecture has the seccomp filter that closes
// the ways past Landlock's TCP rules, so --no-network is enforced in full
// from ABI 4.
var noNetworkFilter = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64"

const confineSecret = "confine-secret-only-in-mcp-route-5c1f"

// confineFixture is a root, a tool directory beside it (not in it: mcp-route
// refuses tools its tools could write) and a directory outside both.
type confineFixture struct {
	bin, root, tools, outside, tmpBase string
}

func newConfineFixture(t *testing.T) *confineFixture {
	t.Helper()
	dir := t.TempDir()
	f := &confineFixture{
		bin:     testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route"),
		root:    filepath.Join(dir, "root"),
		tools:   filepath.Join(dir, "tools"),
		outside: filepath.Join(dir, "outside"),
		tmpBase: filepath.Join(dir, "tmp"),
	}
	for _, d := range []string{f.root, f.tools, f.outside, f.tmpBase} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.tools, "attack"), attackScript, 0o755)
	// A run object that tries to widen the policy: there is no such
	// member, and it must change nothing.
	write(filepath.Join(f.tools, "attack.json"), `{"description":"tries what confinement refuses",
		"run":{"allowRead":["/"],"allowWrite":["/"],"confine":"off","readExec":["/"]}}`, 0o644)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(f.tools, connectTool)); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(f.tools, connectTool+".json"), `{"description":"connects to MCP_ARG_ADDR"}`, 0o644)
	write(filepath.Join(f.root, "inside.txt"), "inside-content", 0o644)
	write(filepath.Join(f.outside, "secret.txt"), "outside-content", 0o644)
	if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "link-out")); err != nil {
		t.Fatal(err)
	}
	return f
}

// confinedRoute is a running mcp-route, spoken to one request at a time.
type confinedRoute struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	r      *codec.Reader
	stderr *bytes.Buffer
	id     int
}

// start runs mcp-route on the fixture with args, its environment holding
// confineSecret, and does the handshake.
func (f *confineFixture) start(t *testing.T, args ...string) *confinedRoute {
	t.Helper()
	return f.startEnv(t, []string{"PATH=/usr/bin:/bin"}, args...)
}

// startEnv is start with env (PATH and the like) in mcp-route's
// environment besides TMPDIR and confineSecret.
func (f *confineFixture) startEnv(t *testing.T, env []string, args ...string) *confinedRoute {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, f.bin, append([]string{"--tools", f.tools, "--root", f.root, "--describe-cache", ""}, args...)...)
	cmd.Env = append([]string{"TMPDIR=" + f.tmpBase, "CONFINE_TEST_SECRET=" + confineSecret}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &confinedRoute{t: t, cmd: cmd, in: in, r: codec.NewReader(out, 0), stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop() })
	p.send(initLine)
	p.recv(1)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.id = 1
	return p
}

func (p *confinedRoute) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("mcp-route is gone: %v\nstderr:\n%s", err, p.stderr)
	}
}

// recv returns the result of the response to id.
func (p *confinedRoute) recv(id int) json.RawMessage {
	p.t.Helper()
	for {
		l, err := p.r.ReadFrame()
		if err != nil {
			p.t.Fatalf("no answer to request %d: %v\nstderr:\n%s", id, err, p.stderr)
		}
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  json.RawMessage
		}
		if json.Unmarshal(l, &m) != nil || string(m.ID) != strconv.Itoa(id) {
			continue
		}
		if m.Error != nil {
			p.t.Fatalf("request %d: error %s", id, m.Error)
		}
		return m.Result
	}
}

// call calls tool with args and returns the text of its result, failing
// the test on an isError result.
func (p *confinedRoute) call(tool string, args map[string]any) string {
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
	if r.IsError {
		p.t.Fatalf("%s %s: isError: %s\nstderr:\n%s", tool, a, b.String(), p.stderr)
	}
	return strings.TrimSpace(b.String())
}

func (p *confinedRoute) stop() {
	p.in.Close()
	p.cmd.Wait()
}

// want checks one operation of the attack tool: got must be want exactly
// (refusals) or start with it (what was read).
func (p *confinedRoute) want(args map[string]any, want string) {
	p.t.Helper()
	if got := p.call("attack", args); got != want && !strings.HasPrefix(got, want+"\n") {
		p.t.Errorf("attack %v: got %q, want %q", args, got, want)
	}
}

// TestConfineFiles: a tool reads and writes the root, and is refused
// everything outside, also through a symlink in the root, whatever its
// run object says; --confine off shows the same tool reading and writing
// outside, so the refusals are the confinement's.
func TestConfineFiles(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	secret := filepath.Join(f.outside, "secret.txt")
	p := f.start(t)
	p.want(map[string]any{"op": "read", "path": "inside.txt"}, "read: inside-content")
	p.want(map[string]any{"op": "read", "path": secret}, "refused")
	p.want(map[string]any{"op": "read", "path": "link-out"}, "refused")
	p.want(map[string]any{"op": "write", "path": "new.txt"}, "created")
	p.want(map[string]any{"op": "write", "path": filepath.Join(f.outside, "new.txt")}, "refused")
	if _, err := os.Stat(filepath.Join(f.root, "new.txt")); err != nil {
		t.Errorf("the file created inside the root is not there: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(f.outside, "new.txt")); err == nil {
		t.Errorf("a confined tool created a file outside the root")
	}
	// The private TMPDIR: writable, inside the directory mcp-route's
	// TMPDIR names, and gone when mcp-route exits.
	got := p.call("attack", map[string]any{"op": "tmp"})
	if !strings.HasPrefix(got, "tmp: "+f.tmpBase+"/") {
		t.Errorf("TMPDIR of a confined tool: %q, want a private directory in %s", got, f.tmpBase)
	}
	p.stop()
	if ents, _ := os.ReadDir(f.tmpBase); len(ents) != 0 {
		t.Errorf("the private TMPDIR outlived mcp-route: %v", ents)
	}

	off := f.start(t, "--confine", "off")
	off.want(map[string]any{"op": "read", "path": secret}, "read: outside-content")
	off.want(map[string]any{"op": "read", "path": "link-out"}, "read: outside-content")
	off.want(map[string]any{"op": "write", "path": filepath.Join(f.outside, "new.txt")}, "created")
	if got := off.call("attack", map[string]any{"op": "tmp"}); got != "tmp: "+f.tmpBase {
		t.Errorf("--confine off: TMPDIR %q, want mcp-route's own %s", got, f.tmpBase)
	}
}

// TestConfineAllow: --allow-read opens a directory for reading only,
// --allow-write for writing too.
func TestConfineAllow(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	secret := filepath.Join(f.outside, "secret.txt")
	p := f.start(t, "--allow-read", f.outside)
	p.want(map[string]any{"op": "read", "path": secret}, "read: outside-content")
	p.want(map[string]any{"op": "write", "path": filepath.Join(f.outside, "new.txt")}, "refused")
	p.stop()
	p = f.start(t, "--allow-write", f.outside)
	p.want(map[string]any{"op": "write", "path": filepath.Join(f.outside, "new.txt")}, "created")
}

// TestConfineReadOnly: under --readonly the kernel refuses writes to the
// root too; reading it works.
func TestConfineReadOnly(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	// --readonly serves only tools annotated read-only.
	os.WriteFile(filepath.Join(f.tools, "attack.json"), []byte(`{"description":"tries to write","annotations":{"readOnlyHint":true}}`), 0o644)
	p := f.start(t, "--readonly")
	p.want(map[string]any{"op": "read", "path": "inside.txt"}, "read: inside-content")
	p.want(map[string]any{"op": "write", "path": "new.txt"}, "refused")
	p.want(map[string]any{"op": "write", "path": "inside.txt"}, "refused")
	if b, _ := os.ReadFile(filepath.Join(f.root, "inside.txt")); string(b) != "inside-content" {
		t.Errorf("inside.txt changed under --readonly: %q", b)
	}
}

// TestConfineNoNetwork: with --no-network (and --confine require, which
// starts only when it is enforced in full) a tool cannot connect to a
// loopback listener of the test, with a TCP socket nor an MPTCP one;
// without, it connects both ways.
func TestConfineNoNetwork(t *testing.T) {
	confinetest.Need(t, 4)
	if !noNetworkFilter {
		t.Skipf("no seccomp filter for %s: --no-network is not enforced in full here", runtime.GOARCH)
	}
	f := newConfineFixture(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := map[string]any{"addr": l.Addr().String()}
	mptcp := map[string]any{"addr": l.Addr().String(), "proto": "mptcp"}
	open := f.start(t, "--confine", "require")
	if got := open.call(connectTool, addr); got != "connected" {
		t.Errorf("without --no-network: %q, want connected", got)
	}
	openMPTCP := open.call(connectTool, mptcp)
	if strings.Contains(openMPTCP, "protocol not") {
		t.Logf("this kernel has no MPTCP (%s): only the TCP connect is tried", openMPTCP)
	} else if openMPTCP != "connected" {
		t.Errorf("MPTCP without --no-network: %q, want connected", openMPTCP)
	}
	closed := f.start(t, "--no-network", "--confine", "require")
	if got := closed.call(connectTool, addr); got != "refused: dial tcp "+l.Addr().String()+": connect: permission denied" {
		t.Errorf("with --no-network: %q, want refused", got)
	}
	if got := closed.call(connectTool, mptcp); openMPTCP == "connected" && got != "refused: permission denied" {
		t.Errorf("MPTCP with --no-network: %q, want refused", got)
	}
}

// TestConfineSignals: a tool cannot signal mcp-route (ABI 6), which
// serves the next call; it can signal its own child.
func TestConfineSignals(t *testing.T) {
	confinetest.Need(t, 6)
	f := newConfineFixture(t)
	p := f.start(t)
	pid := p.cmd.Process.Pid
	p.want(map[string]any{"op": "signal0", "pid": pid}, "refused")
	p.want(map[string]any{"op": "term", "pid": pid}, "refused")
	p.want(map[string]any{"op": "child"}, "signalled")
	p.want(map[string]any{"op": "read", "path": "inside.txt"}, "read: inside-content")
	// The counterpart: unconfined, the same tool reaches mcp-route.
	off := f.start(t, "--confine", "off")
	off.want(map[string]any{"op": "signal0", "pid": off.cmd.Process.Pid}, "signalled")
}

// TestConfineProcEnviron: a confined tool cannot read mcp-route's
// /proc/PID/environ nor open its mem, as root too (CI): /proc is not in
// the policy. --pass-env still hands over what it names.
func TestConfineProcEnviron(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	p := f.start(t)
	got := p.call("attack", map[string]any{"op": "environ", "pid": p.cmd.Process.Pid})
	if strings.Contains(got, confineSecret) {
		t.Fatalf("a confined tool read mcp-route's environment: %q", got)
	}
	if got != "refused\nmem: refused" {
		t.Errorf("environ and mem of mcp-route: %q, want both refused", got)
	}
	// The counterpart: the tool does read a file, and /proc is the
	// confinement's refusal (unconfined, the read gets through, if only
	// to selfguard's zeros).
	p.want(map[string]any{"op": "read", "path": "inside.txt"}, "read: inside-content")
	if os.Geteuid() == 0 { // an unprivileged uid is refused by selfguard alone
		off := f.start(t, "--confine", "off")
		if got := off.call("attack", map[string]any{"op": "environ", "pid": off.cmd.Process.Pid}); strings.HasPrefix(got, "refused\n") {
			t.Errorf("--confine off: reading environ was refused (%q): the test proves nothing", got)
		}
	}
}

// TestConfineCheck: --confine-check prints the ABI and every rule, exit 0
// on this kernel; --confine require starts; a bogus --confine exits 2.
func TestConfineCheck(t *testing.T) {
	abi := confinetest.Need(t, 1)
	f := newConfineFixture(t)
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(f.bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + f.tmpBase}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	code, out, errs := run("--confine-check", "--tools", f.tools, "--root", f.root, "--allow-read", f.outside, "--no-network")
	// Only where no seccomp filter closes the ways past Landlock's TCP
	// rules (MPTCP, TCP Fast Open) is --no-network reported not enforced.
	sideDoor := !noNetworkFilter && code == 1 && strings.Contains(errs, "past Landlock's TCP rules")
	if (code != 0 || errs != "") && !sideDoor {
		t.Fatalf("--confine-check: exit %d, stderr %q", code, errs)
	}
	noNetwork := "deny tcp bind and connect"
	filterLine := "deny mount, unshare, setns, chroot, pivot_root, bpf,"
	if !noNetworkFilter {
		filterLine = "NOT ENFORCED: system call filter"
	}
	if sideDoor {
		noNetwork = "NOT ENFORCED: no-network"
	}
	root, _ := filepath.EvalSymlinks(f.root)
	tools, _ := filepath.EvalSymlinks(f.tools)
	outside, _ := filepath.EvalSymlinks(f.outside)
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for _, want := range []string{
		fmt.Sprintf("landlock: ABI %d\n", abi),
		"read+write " + root + " ",
		"read+exec  " + tools + " ",
		"read+exec  " + self + " (file)", // the connect tool's target
		"read       " + outside + " ",
		"/usr ",
		"deny everything else",
		noNetwork,
		"deny every capability (bounding, effective, permitted, inheritable, ambient)\n",
		filterLine,
		"limits per tool process tree: memory 1GiB, pids 512, cpu none\n",
		"limits enforced by: memory: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--confine-check output lacks %q:\n%s", want, out)
		}
	}
	// /proc: its global files, each a file rule, never /proc/self nor a
	// process's directory; /etc: its files, never the directory whole.
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "allow" {
			continue
		}
		path := f[2]
		if strings.HasPrefix(path, "/proc") && (!strings.HasSuffix(l, "(file)  [proc]") || strings.HasPrefix(path, "/proc/self") || strings.Trim(strings.TrimPrefix(path, "/proc/"), "0123456789") == "") || path == "/etc" {
			t.Errorf("--confine-check: %q", l)
		}
	}
	for _, want := range []string{"allow read       /proc/cpuinfo (file)  [proc]", "/proc/self and every /proc/<pid> denied (no private pid namespace", "allow read       /etc/passwd (file)  [etc]"} {
		if !strings.Contains(out, want) {
			t.Errorf("--confine-check output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run("--confine-check", "--tools", f.tools, "--root", f.root, "--readonly")
	if code != 0 || !strings.Contains(out, "read       "+root+" ") {
		t.Errorf("--confine-check --readonly: exit %d, the root is not read-only:\n%s", code, out)
	}
	if ents, _ := os.ReadDir(f.tmpBase); len(ents) != 0 {
		t.Errorf("--confine-check left %v behind", ents)
	}

	p := f.start(t, "--confine", "require")
	p.want(map[string]any{"op": "read", "path": "inside.txt"}, "read: inside-content")
	p.want(map[string]any{"op": "read", "path": filepath.Join(f.outside, "secret.txt")}, "refused")

	code, out, _ = run("--help")
	for _, want := range []string{"--confine", "--allow-read", "--allow-write", "--allow-exec", "--no-network", "--confine-check", "not /proc/<pid>", "never /etc whole", "private TMPDIR", "require exits 1"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--help (exit %d) does not explain %q", code, want)
		}
	}
	code, out, errs = run("--confine", "bogus")
	if code != 2 || out != "" || !strings.Contains(errs, `--confine "bogus": want auto, require or off`) || strings.Count(errs, "\n") != 1 {
		t.Errorf("--confine bogus: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = run("--allow-write", filepath.Join(f.outside, "missing"), "--tools", f.tools, "--root", f.root)
	if code != 1 || !strings.Contains(errs, "--allow-write") {
		t.Errorf("--allow-write of a missing path: exit %d, stderr %q", code, errs)
	}
}

// TestConfineStartupLog: with --verbose the start-up line says what is
// enforced, in one line; by default stderr stays quiet.
func TestConfineStartupLog(t *testing.T) {
	abi := confinetest.Need(t, 1)
	f := newConfineFixture(t)
	p := f.start(t, "--verbose")
	p.call("attack", map[string]any{"op": "read", "path": "inside.txt"})
	p.stop()
	sc := bufio.NewScanner(bytes.NewReader(p.stderr.Bytes()))
	found := false
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "tools confined") {
			found = true
			if !strings.Contains(l, fmt.Sprintf("landlock ABI %d (verified)", abi)) || !strings.Contains(l, "level=INFO") {
				t.Errorf("start-up line: %s", l)
			}
		}
	}
	if !found {
		t.Errorf("no start-up line about confinement:\n%s", p.stderr)
	}
	q := f.start(t)
	q.call("attack", map[string]any{"op": "read", "path": "inside.txt"})
	q.stop()
	if q.stderr.Len() != 0 {
		t.Errorf("default stderr is not quiet: %s", q.stderr)
	}
}

// TestConfineReload: a tool linked into the tool directory after start,
// whose target is outside the domain, gets a new spawner and runs
// confined.
func TestConfineReload(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	p := f.start(t, "--poll", "0")
	elsewhere := filepath.Join(t.TempDir(), "late")
	os.WriteFile(elsewhere, []byte(attackScript), 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(f.tools, "late")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.tools, "late.json"), []byte(`{"description":"a tool added later"}`), 0o644)
	p.id++
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, p.id))
	p.recv(p.id)
	if got := p.call("late", map[string]any{"op": "read", "path": "inside.txt"}); got != "read: inside-content" {
		t.Errorf("late tool: %q", got)
	}
	if got := p.call("late", map[string]any{"op": "read", "path": filepath.Join(f.outside, "secret.txt")}); got != "refused" {
		t.Errorf("late tool read outside: %q", got)
	}
}

// TestConfineKernelAloneHolds replays sh_exec's attacks with every check of
// its allowlist switched off: each command line goes to a shell in a
// confined tool. The kernel alone must stop every write and read outside
// the root: the canary outside never appears and the secret outside is
// never read, while the canary in the root does appear (the control).
func TestConfineKernelAloneHolds(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	in, out := filepath.Join(f.root, "canary"), filepath.Join(f.outside, "canary")
	os.WriteFile(filepath.Join(f.root, "hello.txt"), []byte("hello\n"), 0o644)
	secret := filepath.Join(f.outside, "secret.txt")
	cmds := shexectest.InjectionCorpus(in, out)
	// Reads out of the root, the security-fixes way: named, through a
	// symlink, walked, archived, copied in.
	cmds = append(cmds,
		"cat "+secret, "cat link-out", "cat ../outside/secret.txt", "cp "+secret+" copied", "cp link-out copied2",
		"find "+f.outside+" -type f -exec cat {} +", "find -L . -type f -exec cat {} +", "grep -r . "+f.outside,
		"tar -chf - link-out", "tar -cf - -C "+f.outside+" .", "ln -s "+f.outside+" out && cat out/secret.txt",
		"git clone "+f.outside+" x", "ls -la "+f.outside, "cat /proc/self/environ", "cat $HOME/.ssh/id_rsa",
	)
	p := f.start(t, "--timeout", "10s")
	for _, c := range cmds {
		got := p.call("attack", map[string]any{"op": "sh", "cmd": c})
		if strings.Contains(got, "outside-content") {
			t.Errorf("%q read outside the root: %q", c, got)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Fatalf("%q created %s outside the root: %q", c, out, got)
		}
	}
	for _, name := range []string{"copied", "copied2"} {
		if b, err := os.ReadFile(filepath.Join(f.root, name)); err == nil && strings.Contains(string(b), "outside-content") {
			t.Errorf("%s holds the secret", name)
		}
	}
	if ents, _ := os.ReadDir(f.outside); len(ents) != 1 {
		t.Errorf("the outside directory changed: %v", ents)
	}
	if _, err := os.Stat(in); err != nil {
		t.Errorf("control: no command created the canary in the root (%v): the test proves nothing", err)
	}
}

// TestConfineFailClosed: a policy that cannot be proven (--allow-read /
// would open everything) makes --confine require exit 1 with one line,
// and --confine auto serve unconfined with one WARN line saying so, never
// a line claiming confinement; the tool then does read outside, as the
// warning said.
func TestConfineFailClosed(t *testing.T) {
	confinetest.Need(t, 1)
	f := newConfineFixture(t)
	cmd := exec.Command(f.bin, "--tools", f.tools, "--root", f.root, "--confine", "require", "--allow-read", "/")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + f.tmpBase}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 || !strings.HasPrefix(errb.String(), "mcp-route: --confine require: ") {
		t.Errorf("require, unprovable policy: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}

	p := f.start(t, "--allow-read", "/", "--verbose")
	p.want(map[string]any{"op": "read", "path": filepath.Join(f.outside, "secret.txt")}, "read: outside-content")
	p.stop()
	var warns []string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, "confined") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "level=WARN") || !strings.Contains(warns[0], "tools are NOT confined") {
		t.Errorf("auto, unprovable policy: want one WARN line saying tools are NOT confined, got %q", warns)
	}
}
