package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine/confinetest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// jailBox is base/root (with "inside" and a symlink out) beside
// base/outside/secret.txt, which holds the canary.
type jailBox struct {
	t                   *testing.T
	base, root, outside string
	secret              string
}

const canary = "CANARY-outside-the-root-b41c"

func newJailBox(t *testing.T) *jailBox {
	t.Helper()
	confinetest.Need(t, 1)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := &jailBox{t: t, base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	b.secret = filepath.Join(b.outside, "secret.txt")
	b.write(b.secret, canary+"\n")
	b.write(filepath.Join(b.root, "inside"), "inside\n")
	if err := os.Symlink("../outside/secret.txt", filepath.Join(b.root, "link-out")); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *jailBox) write(p, content string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// sh runs script under mcp-jail --root root --exec [opts] -- /bin/sh -c.
func (b *jailBox) sh(script string, opts ...string) (int, string) {
	b.t.Helper()
	args := append(append([]string{"--root", b.root, "--exec"}, opts...), "--", "/bin/sh", "-c", script)
	code, stdout, stderr := binary(b.t, b.base, "", args...)
	return code, stdout + stderr
}

// untouched fails the test when anything outside the root changed or
// the canary got into the root.
func (b *jailBox) untouched(what string) {
	b.t.Helper()
	ents, _ := os.ReadDir(b.outside)
	if len(ents) != 1 {
		b.t.Errorf("%s: outside/ now holds %d entries", what, len(ents))
	}
	if _, err := os.Lstat(filepath.Join(b.base, "PWNED")); err == nil {
		b.t.Fatalf("%s: PWNED was created outside the root", what)
	}
	filepath.WalkDir(b.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), canary) {
				b.t.Errorf("%s: the canary was copied into %s", what, p)
			}
		}
		return nil
	})
}

func TestExecReadWriteOutside(t *testing.T) {
	b := newJailBox(t)
	if code, out := b.sh("cat inside; echo made > new; cat new; pwd"); code != 0 || out != "inside\nmade\n"+b.root+"\n" {
		t.Errorf("inside: %d %q", code, out)
	}
	for _, attack := range []string{
		"cat " + b.secret,
		"cat link-out",
		"cat ../outside/secret.txt",
		"cp ../outside/secret.txt .",
		"echo x > ../outside/new",
		"touch " + b.base + "/PWNED",
		"mkdir ../outside/d",
		"ln -s inside ../outside/l",
		"mv inside ../outside/",
		"truncate -s0 " + b.secret,
		"ls ~ /root /home",
		"cat /proc/self/environ",
		"ls /sys/class",
	} {
		code, out := b.sh(attack)
		if code == 0 || strings.Contains(out, canary) {
			t.Errorf("%q: status %d, %q", attack, code, out)
		}
		b.untouched(attack)
	}
	if data, _ := os.ReadFile(b.secret); string(data) != canary+"\n" {
		t.Errorf("the secret changed: %q", data)
	}
	// Unconfined, the same read works: the refusals are the kernel's.
	if out, err := exec.Command("/bin/sh", "-c", "cat "+filepath.Join(b.root, "link-out")).Output(); err != nil || !strings.Contains(string(out), canary) {
		t.Fatalf("the symlink does not lead out, so the test proves nothing: %v %q", err, out)
	}
}

func TestExecReadonlyAndAllow(t *testing.T) {
	b := newJailBox(t)
	if code, out := b.sh("cat inside && echo x > new", "--readonly"); code == 0 || !strings.HasPrefix(out, "inside\n") {
		t.Errorf("--readonly: %d %q", code, out)
	}
	if _, err := os.Lstat(filepath.Join(b.root, "new")); err == nil {
		t.Error("--readonly: new was created")
	}
	w := filepath.Join(b.base, "w")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out := b.sh("cat "+b.secret+" && echo x > "+w+"/new && echo y > "+b.outside+"/no", "--allow-read", b.outside, "--allow-write", w)
	if code == 0 || !strings.Contains(out, canary) || !strings.Contains(out, "Permission denied") {
		t.Errorf("--allow-read/--allow-write: %d %q", code, out)
	}
	if _, err := os.Lstat(filepath.Join(w, "new")); err != nil {
		t.Errorf("--allow-write: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(b.outside, "no")); err == nil {
		t.Error("--allow-read dir was written")
	}
}

func TestExecStatusAndTmpdir(t *testing.T) {
	b := newJailBox(t)
	if code, out := b.sh("exit 7"); code != 7 || out != "" {
		t.Errorf("exit 7: %d %q", code, out)
	}
	// mcp-jail execs: a command killed by a signal shows as killed.
	killed := exec.Command(testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), "--root", b.root, "--exec", "--", "/bin/sh", "-c", "kill -TERM $$")
	if err := killed.Run(); killed.ProcessState == nil || killed.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("kill -TERM $$: %v, want killed by SIGTERM", err)
	}
	// TMPDIR is a fresh directory outside the root (the Go command
	// ignores a go.mod in TMPDIR), writable, removed at the end.
	code, out := b.sh(`echo "$TMPDIR"; f=$(mktemp) && echo ok > "$f" && cat "$f"`)
	tmp, rest, _ := strings.Cut(out, "\n")
	if code != 0 || rest != "ok\n" || !strings.HasPrefix(filepath.Base(tmp), "mcp-jail-tmp-") || strings.HasPrefix(tmp, b.root) {
		t.Errorf("TMPDIR: %d %q, want a private directory outside %s", code, out, b.root)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("private TMPDIR %s left behind (%v)", tmp, err)
	}
	// Killed by a signal, the command still leaves nothing behind.
	killed = exec.Command(testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), "--root", b.root, "--exec", "--", "/bin/sh", "-c", `echo "$TMPDIR"; kill -TERM $$`)
	var kout bytes.Buffer
	killed.Stdout = &kout
	killed.Run()
	if ws := killed.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM {
		t.Errorf("killed with a private TMPDIR: %v, want killed by SIGTERM", killed.ProcessState)
	}
	if dir := strings.TrimSpace(kout.String()); dir == "" {
		t.Errorf("killed: no TMPDIR printed")
	} else if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("killed: private TMPDIR %s left behind (%v)", dir, err)
	}
	// An inherited TMPDIR the policy lets it write is kept.
	keep := filepath.Join(b.base, "keep")
	if err := os.Mkdir(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	kc := exec.Command(testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), "--root", b.root, "--exec", "--allow-write", keep, "--", "/bin/sh", "-c", `echo "$TMPDIR"`)
	kc.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + keep}
	if got, err := kc.Output(); err != nil || string(got) != keep+"\n" {
		t.Errorf("writable inherited TMPDIR: %q %v, want %s kept", got, err, keep)
	}
	// The variable that names the private TMPDIR to the re-run mcp-jail
	// cannot make a directory of the caller's choosing writable.
	fake := exec.Command(testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), "--root", b.root, "--exec", "--", "/bin/sh", "-c", `echo x > "$TMPDIR/f"`)
	fake.Env = []string{"PATH=/usr/bin:/bin", "MCP_JAIL_PRIVATE_TMPDIR=" + b.outside}
	if out, err := fake.CombinedOutput(); err == nil || !strings.Contains(string(out), "not a private TMPDIR made by mcp-jail") {
		t.Errorf("MCP_JAIL_PRIVATE_TMPDIR=%s: %v %q, want refused", b.outside, err, out)
	}
	b.untouched("MCP_JAIL_PRIVATE_TMPDIR")
	// A command with a slash is relative to the root, its working
	// directory; one outside the system directories is allowed to run.
	b.write(filepath.Join(b.root, "bin", "tool"), "#!/bin/sh\necho tool ran in $(pwd)\n")
	if err := os.Chmod(filepath.Join(b.root, "bin", "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := binary(t, b.base, "", "--root", b.root, "--exec", "--readonly", "--", "./bin/tool"); code != 0 || stdout != "tool ran in "+b.root+"\n" {
		t.Errorf("./bin/tool: %d %q %q", code, stdout, stderr)
	}
	// An executable outside both is allowed as that one file: its
	// neighbours stay refused.
	tools := filepath.Join(b.base, "tools")
	b.write(filepath.Join(tools, "neighbour"), canary+"\n")
	b.write(filepath.Join(tools, "tool"), "#!/bin/sh\necho ran\ncat \"$(dirname \"$0\")/neighbour\"\n")
	if err := os.Chmod(filepath.Join(tools, "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := binary(t, b.base, "", "--root", b.root, "--exec", "--", filepath.Join(tools, "tool")); code == 0 || stdout != "ran\n" || strings.Contains(stderr, canary) {
		t.Errorf("%s/tool: %d %q %q", tools, code, stdout, stderr)
	}
	// Arguments and the command's own PATH lookup pass through untouched.
	code, stdout, stderr := binary(t, b.base, "", "--root", b.root, "--exec", "--", "printf", "%s|", "a b", "--root", "")
	if code != 0 || stdout != "a b|--root||" || stderr != "" {
		t.Errorf("printf: %d %q %q", code, stdout, stderr)
	}
}

func TestExecUsage(t *testing.T) {
	b := newJailBox(t)
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--exec", "--", "true"}, 2, "mcp-jail: --root DIR is required"},
		{[]string{"--root", b.root, "--exec"}, 2, "mcp-jail: --exec needs a command"},
		{[]string{"--root", b.root, "--exec", "--"}, 2, "mcp-jail: --exec needs a command"},
		{[]string{"--root", b.root, "--no-network", "x"}, 2, "mcp-jail: --no-network only goes with --exec"},
		{[]string{"--root", b.root, "--allow-read", b.base, "x"}, 2, "mcp-jail: --allow-read only goes with --exec"},
		{[]string{"--root", b.root, "--exec", "--lexical", "--", "true"}, 2, "mcp-jail: -lexical cannot be used with --exec"},
		{[]string{"--root", b.root, "--exec", "--allow-write", b.base + "/nope", "--", "true"}, 2, "mcp-jail: --allow-write " + b.base + "/nope: no such file or directory"},
		{[]string{"--root", b.base + "/nope", "--exec", "--", "true"}, 1, "mcp-jail: --root " + b.base + "/nope: no such file or directory"},
		{[]string{"--root", b.root, "--exec", "--", "no-such-command"}, 127, "mcp-jail: no-such-command: not found in PATH"},
		{[]string{"--root", b.root, "--exec", "--", b.root + "/inside"}, 127, "mcp-jail: " + b.root + "/inside: not an executable file"},
		// A policy that opens "/" cannot be confined, and says so.
		{[]string{"--root", b.root, "--exec", "--allow-read", "/", "--", "true"}, 1, `mcp-jail: cannot confine true: allow-read /: a policy that opens "/" opens everything`},
	} {
		code, stdout, stderr := binary(t, b.base, "", c.args...)
		if code != c.code || stdout != "" || !strings.HasPrefix(stderr, c.err) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: %d %q %q, want %d and one line starting %q", c.args, code, stdout, stderr, c.code, c.err)
		}
	}
	// --best-effort runs what cannot be confined, with one warning.
	code, stdout, stderr := binary(t, b.base, "", "--root", b.root, "--exec", "--best-effort", "--allow-read", "/", "--", "/bin/sh", "-c", "cat inside; exit 3")
	if code != 3 || stdout != "inside\n" || !strings.Contains(stderr, "warning: not confined") || !strings.Contains(stderr, "unconfined") {
		t.Errorf("--best-effort: %d %q %q", code, stdout, stderr)
	}
	// and confines as usual when it can.
	code, stdout, stderr = binary(t, b.base, "", "--root", b.root, "--exec", "--best-effort", "--", "/bin/sh", "-c", "cat inside; cat "+b.secret)
	if code == 0 || stdout != "inside\n" || strings.Contains(stderr, "warning") {
		t.Errorf("--best-effort on a kernel that confines: %d %q %q", code, stdout, stderr)
	}
}

func TestExecNoNetwork(t *testing.T) {
	confinetest.Need(t, 4)
	b := newJailBox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback listener: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "served")
			c.Close()
		}
	}()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for /dev/tcp")
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	connect := "exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + port + " && head -n1 <&3'"
	if code, out := b.sh(connect); code != 0 || out != "served\n" {
		t.Errorf("without --no-network: %d %q", code, out)
	}
	if code, out := b.sh(connect, "--no-network"); code == 0 || strings.Contains(out, "served") || !strings.Contains(out, "Permission denied") {
		t.Errorf("--no-network: %d %q", code, out)
	}
	// An MPTCP socket falls back to plain TCP and is not what Landlock's
	// TCP rules check: --no-network refuses it all the same.
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl for an MPTCP socket")
	}
	mptcp := `exec perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 262) or die "socket: $!\n"; connect($s, pack_sockaddr_in(` + port + `, inet_aton("127.0.0.1"))) or die "connect: $!\n"; print scalar <$s>'`
	code, out := b.sh(mptcp)
	if code != 0 && strings.Contains(out, "socket: Protocol not") {
		t.Skipf("this kernel has no MPTCP: %s", out)
	}
	if code != 0 || out != "served\n" {
		t.Fatalf("MPTCP without --no-network: %d %q", code, out)
	}
	if code, out := b.sh(mptcp, "--no-network"); code == 0 || strings.Contains(out, "served") || !strings.Contains(out, "socket: Permission denied") {
		t.Errorf("MPTCP with --no-network: %d %q", code, out)
	}
}

// TestExecSignalsAndEnviron: the confined command cannot signal an
// unconfined process or read its environment; it can signal its own
// child. The unconfined counterpart reads the environment.
func TestExecSignalsAndEnviron(t *testing.T) {
	b := newJailBox(t)
	victim := exec.Command("/bin/sleep", "120")
	victim.Env = []string{"VICTIM_SECRET=" + canary}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	pid := strconv.Itoa(victim.Process.Pid)
	environ := "tr '\\0' '\\n' < /proc/" + pid + "/environ"
	if out, err := exec.Command("/bin/sh", "-c", environ).CombinedOutput(); err != nil || !strings.Contains(string(out), canary) {
		t.Fatalf("unconfined read of the environ failed, so the test proves nothing: %v %q", err, out)
	}
	if code, out := b.sh(environ); code == 0 || strings.Contains(out, canary) {
		t.Errorf("environ: %d %q", code, out)
	}
	if code, out := b.sh("head -c 16 /proc/" + pid + "/mem"); code == 0 {
		t.Errorf("mem: %d %q", code, out)
	}
	code, out := b.sh("kill -KILL " + pid)
	if code == 0 || victim.Process.Signal(syscall.Signal(0)) != nil {
		t.Errorf("kill of an outside process: %d %q", code, out)
	}
	if code, out := b.sh("sleep 30 & kill $! && wait $!; echo status $?"); code != 0 || !strings.HasPrefix(out, "status 143\n") {
		t.Errorf("kill of its own child: %d %q", code, out)
	}
	// Its parent too: the shell that started mcp-jail.
	sh := exec.Command("/bin/sh", "-c", `"$0" --root "$1" --exec -- /bin/sh -c 'kill -0 $PPID 2>&1 || echo refused'`, testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), b.root)
	got, _ := sh.CombinedOutput()
	if !strings.Contains(string(got), "refused") {
		t.Errorf("kill -0 of the parent: %q", got)
	}
}

// TestExecSystemSecretsAndAllowExec: through the real binary, CMD reads
// the files of /etc and /proc programs need and not /etc's secrets nor
// pid 1's environ; a program in an --allow-exec directory runs, one in an
// --allow-read directory does not; --allow-exec inside the root and
// --allow-read /etc are refused with one line, exit 2.
func TestExecSystemSecretsAndAllowExec(t *testing.T) {
	b := newJailBox(t)
	code, out := b.sh("cat /etc/passwd /etc/hosts /proc/cpuinfo >/dev/null && echo allowed")
	if code != 0 || out != "allowed\n" {
		t.Errorf("reading passwd, hosts, cpuinfo: exit %d, %q", code, out)
	}
	attacks := 0
	for _, p := range []string{"/etc/shadow", "/etc/sudoers", "/proc/1/environ"} {
		if _, err := os.ReadFile(p); err != nil {
			continue // not readable here even unconfined
		}
		attacks++
		if code, out := b.sh("cat " + p); code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("cat %s: exit %d, %.200q", p, code, out)
		}
	}
	if attacks == 0 {
		t.Log("no /etc/shadow, /etc/sudoers or /proc/1/environ readable here: only the exec part is tested")
	}

	bin := filepath.Join(b.outside, "bin")
	b.write(filepath.Join(bin, "hello"), "#!/bin/sh\necho hello\n")
	if err := os.Chmod(filepath.Join(bin, "hello"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := b.sh(filepath.Join(bin, "hello"), "--allow-exec", bin); code != 0 || out != "hello\n" {
		t.Errorf("--allow-exec: exit %d, %q", code, out)
	}
	if code, out := b.sh(filepath.Join(bin, "hello"), "--allow-read", bin); code != 126 || !strings.Contains(out, "Permission denied") {
		t.Errorf("--allow-read only: exit %d, %q; want 126 Permission denied", code, out)
	}
	inRoot := filepath.Join(b.root, "bin")
	if err := os.Mkdir(inRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	refusals := [][2]string{{"--allow-exec", inRoot}}
	if _, err := os.Stat("/etc/shadow"); err == nil {
		refusals = append(refusals, [2]string{"--allow-read", "/etc"})
	}
	for _, r := range refusals {
		code, out := b.sh("echo CMD-RAN", r[0], r[1])
		if code != 2 || strings.Contains(out, "CMD-RAN") || !strings.HasPrefix(out, "mcp-jail: "+r[0]+" "+r[1]) || strings.Count(out, "\n") != 1 {
			t.Errorf("%s %s: exit %d, %q; want 2 and one line naming it", r[0], r[1], code, out)
		}
	}
}

// TestExecGoModule: the Go command run confined in a module's directory
// works in that module. With TMPDIR set to the directory (as before the
// private TMPDIR) it ignored the go.mod ("go.mod in system temp root").
func TestExecGoModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	b := newJailBox(t)
	b.write(filepath.Join(b.root, "go.mod"), "module example.com/jailed\n\ngo 1.21\n")
	goroot, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	args := []string{"--root", b.root, "--exec", "--allow-read", strings.TrimSpace(string(goroot)), "--", goBin, "env", "GOMOD"}
	cmd := exec.Command(testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + b.root, "GOCACHE=off", "GOTOOLCHAIN=local"}
	out, err := cmd.CombinedOutput()
	if want := filepath.Join(b.root, "go.mod") + "\n"; err != nil || string(out) != want {
		t.Errorf("go env GOMOD under mcp-jail --exec: %v %q, want %q", err, out, want)
	}
}
