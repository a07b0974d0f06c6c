package main

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// runBin runs the built binary (MCP_STOCK_BIN under Bazel) as prog with
// args, stdin and env, and returns its output and exit status.
func runBin(t *testing.T, prog string, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only catches a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return out.String(), errb.String(), 0
}

func TestBinary(t *testing.T) {
	bin := testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock")
	out, _, code := runBin(t, bin, "", nil, "--help")
	if code != 0 || !strings.Contains(out, "usage: mcp-stock install DIR") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	out, _, code = runBin(t, bin, "", nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "mcp-stock ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	_, errs, code := runBin(t, bin, "", nil, "nope")
	if code != 2 || !strings.HasPrefix(errs, "mcp-stock: ") {
		t.Errorf("nope: exit %d, %q", code, errs)
	}

	dir := filepath.Join(t.TempDir(), "tools")
	out, errs, code = runBin(t, bin, "", nil, "install", dir, "--readonly")
	if code != 0 || out != "installed 21 tools in "+dir+"\n" {
		t.Fatalf("install: exit %d, %q %q", code, out, errs)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Through the link, in a directory that is not the root: MCP_ROOT
	// decides.
	link := filepath.Join(dir, "fs_tail")
	out, errs, code = runBin(t, link, `{"path":"f.txt","lines":1}`, []string{"MCP_ROOT=" + root})
	if code != 0 || out != "two\n" {
		t.Errorf("fs_tail: exit %d, %q %q", code, out, errs)
	}
	out, _, code = runBin(t, link, "", nil, "--mcp-describe")
	if code != 0 || !strings.HasPrefix(out, `{"name":"fs_tail"`) || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("--mcp-describe: exit %d, %q", code, out)
	}
	_, errs, code = runBin(t, link, `{"path":"/etc/passwd"}`, []string{"MCP_ROOT=" + root})
	if code != 1 || errs != "fs_tail: /etc/passwd: path escapes root\n" {
		t.Errorf("escape: exit %d, %q", code, errs)
	}
	if _, err := os.Lstat(filepath.Join(dir, "fs_write")); err == nil {
		t.Errorf("install --readonly linked fs_write")
	}

	// --exe: links for an image built elsewhere point where mcp-stock will
	// be there, which need not exist here; a relative path is refused.
	img := filepath.Join(t.TempDir(), "img-tools")
	out, errs, code = runBin(t, bin, "", nil, "install", "--exe", "/usr/local/bin/mcp-stock", img)
	if code != 0 || out != "installed 32 tools in "+img+"\n" {
		t.Fatalf("install --exe: exit %d, %q %q", code, out, errs)
	}
	if target, err := os.Readlink(filepath.Join(img, "fs_write")); err != nil || target != "/usr/local/bin/mcp-stock" {
		t.Errorf("install --exe: fs_write links to %q (%v), want /usr/local/bin/mcp-stock", target, err)
	}
	_, errs, code = runBin(t, bin, "", nil, "install", "--exe", "bin/mcp-stock", filepath.Join(t.TempDir(), "rel"))
	if code != 2 || !strings.Contains(errs, "--exe bin/mcp-stock is not an absolute path") {
		t.Errorf("install --exe relative: exit %d, %q", code, errs)
	}
}

// TestSignals: a read tool keeps SIGTERM's default and dies of it (it
// changed nothing); sh_exec, a mutating tool, catches it, stops its
// command's process group, which a signal to sh_exec's own group would not
// reach, and exits reporting the call.
func TestSignals(t *testing.T) {
	bin := testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep in PATH")
	}
	root := t.TempDir()

	// fs_read waits for its arguments on stdin: a SIGTERM then, whether
	// it lands before or after the runtime starts, ends it.
	read := exec.Command(bin, "fs_read")
	read.Env = []string{"MCP_ROOT=" + root}
	stdin, err := read.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := read.Start(); err != nil {
		t.Fatal(err)
	}
	read.Process.Signal(syscall.SIGTERM)
	err = read.Wait()
	stdin.Close()
	if ws, ok := read.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("fs_read at SIGTERM: %v, want killed by SIGTERM", err)
	}

	// sh_exec runs sleep in a group of its own; once sleep runs, sh_exec
	// has its handler, so the SIGTERM is caught.
	sh := exec.Command(bin, "sh_exec")
	sh.Env = []string{"MCP_ROOT=" + root, "MCP_SH_ALLOW=sleep", "MCP_SH_UNCONFINED=1", "PATH=" + filepath.Dir(sleep)}
	sh.Stdin = strings.NewReader(`{"command":"sleep 120","timeoutSeconds":300}`)
	var errb strings.Builder
	sh.Stderr = &errb
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	child := waitChild(t, sh.Process.Pid, "sleep")
	sh.Process.Signal(syscall.SIGTERM)
	err = sh.Wait()
	if ws, ok := sh.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Exited() {
		t.Errorf("sh_exec at SIGTERM: %v, want an exit (it caught the signal); stderr %q", err, errb.String())
	}
	if syscall.Kill(child, 0) == nil {
		t.Errorf("sleep (pid %d) outlived sh_exec's SIGTERM", child)
	}
}

// raceBuild is set when the tests, and the binaries they start, are built
// with the race detector (race_test.go).
var raceBuild bool

// TestStaticBinary: mcp-stock runs once per exec'd tool call, and a
// dynamically linked binary pays the dynamic loader on every one (0.6 ms,
// 40% of a call, when a dependency pulled in cgo). A dependency that
// brings cgo back fails here rather than in a benchmark nobody runs.
func TestStaticBinary(t *testing.T) {
	if raceBuild {
		t.Skip("built with the race detector, which links cgo; test.sh checks a plain go build of mcp-stock instead")
	}
	bin := testbin.Path(t, "MCP_STOCK_BIN", "mcp-stock")
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s is dynamically linked (it names an interpreter): a dependency brought in cgo; every tool exec would pay the dynamic loader", bin)
		}
	}
}
