package main

// The sh_exec attacks of the security-fixes work, replayed as plain
// commands under mcp-jail --exec: none of sh_exec's argument checks
// apply, only the kernel's. Each program is turned against the files
// outside the root through its own options (hooks, pagers, commands it
// runs, URLs, output files); every read and write outside must fail,
// while the same program doing a harmless thing in the root works. A
// program missing on the host skips its cases.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

type attack struct {
	argv []string
	// ran: the attack's own program (ROOT/script) must have run, which
	// shows the attack got as far as the kernel.
	ran bool
}

type harmless struct {
	argv []string
	want string // in the output, or the name of a file made in the root
}

func TestExecKernelAloneHolds(t *testing.T) {
	b := newJailBox(t)
	root, secret, out := b.root, b.secret, b.outside
	other := filepath.Join(b.base, "other") // a git repository outside
	b.write(filepath.Join(root, "a.txt"), "beta\nalpha\n")
	b.write(filepath.Join(root, "sub", "b.txt"), "b\n")
	var big strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&big, "line %d\n", 60000-i)
	}
	b.write(filepath.Join(root, "big.txt"), big.String())
	// What a hostile option runs: it marks that it ran (in the root,
	// allowed), then tries to read and write outside.
	b.write(filepath.Join(root, "script"), fmt.Sprintf("#!/bin/sh\necho ran > %s/ran\ncat %s\ncat %s > %s/stolen\ntouch %s/PWNED\n", root, secret, secret, out, b.base))
	// The same for programs that write to its stdin (sort's compressor,
	// tar's --to-command), which must drain it or they die of SIGPIPE.
	b.write(filepath.Join(root, "drain"), fmt.Sprintf("#!/bin/sh\necho ran > %s/ran\ncat %s >&2\ncat %s > %s/stolen\ntouch %s/PWNED\nexec cat >/dev/null\n", root, secret, secret, out, b.base))
	for _, s := range []string{"script", "drain"} {
		if err := os.Chmod(filepath.Join(root, s), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "served") })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	if _, err := exec.LookPath("git"); err == nil {
		git := func(dir string, args ...string) {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
			cmd.Dir, cmd.Env = dir, []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + b.base}
			if o, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %q: %v\n%s", args, err, o)
			}
		}
		for _, d := range []string{root, other} {
			b.write(filepath.Join(other, "secret.txt"), canary+"\n")
			git(d, "init", "-q")
			git(d, "add", "-A")
			git(d, "commit", "-qm", "first")
		}
		b.write(filepath.Join(root, "a.txt"), "changed\n")
	}
	for _, tar := range []string{"sub.tar"} {
		cmd := exec.Command("tar", "-cf", tar, "sub")
		cmd.Dir = root
		if err := cmd.Run(); err != nil {
			t.Logf("tar fixture: %v", err)
		}
	}

	attacks := []attack{
		{argv: []string{"git", "-c", "core.sshCommand=" + root + "/script", "ls-remote", "ssh://example.invalid/x"}, ran: true},
		{argv: []string{"git", "-c", "diff.external=" + root + "/script", "diff"}, ran: true},
		{argv: []string{"git", "-c", "core.fsmonitor=" + root + "/script", "status"}},
		{argv: []string{"git", "-c", "alias.x=!cat " + secret, "x"}},
		{argv: []string{"git", "-c", "core.worktree=" + out, "status"}},
		{argv: []string{"git", "clone", "-q", "file://" + other, "stolen"}},
		{argv: []string{"git", "clone", "-q", other, "stolen2"}},
		{argv: []string{"git", "format-patch", "-q", "-o", out, "--root", "HEAD"}},
		{argv: []string{"git", "-C", out, "init", "-q"}},
		{argv: []string{"tar", "-cf", "got.tar", "-C", b.base, "outside/secret.txt"}},
		{argv: []string{"tar", "-cf", out + "/x.tar", "a.txt"}},
		{argv: []string{"tar", "-cf", "got2.tar", "--checkpoint=1", "--checkpoint-action=exec=" + root + "/script", "a.txt"}, ran: true},
		{argv: []string{"tar", "-xf", "sub.tar", "--to-command=" + root + "/drain"}, ran: true},
		{argv: []string{"tar", "-xf", "sub.tar", "-C", out}},
		{argv: []string{"find", ".", "-name", "a.txt", "-exec", "cat", secret, ";"}},
		{argv: []string{"find", ".", "-name", "a.txt", "-exec", root + "/script", ";"}, ran: true},
		{argv: []string{"find", out, "-name", "secret.txt", "-exec", "cat", "{}", ";"}},
		{argv: []string{"find", ".", "-name", "a.txt", "-fprint", out + "/list"}},
		{argv: []string{"curl", "-s", "file://" + secret}},
		{argv: []string{"curl", "-s", "file://" + root + "/link-out"}},
		{argv: []string{"curl", "-s", "-o", out + "/got", "file://" + root + "/a.txt"}},
		{argv: []string{"curl", "-s", "-o", out + "/got", url}},
		{argv: []string{"wget", "-q", "-O", out + "/got", url}},
		{argv: []string{"wget", "-q", "-P", out, url}},
		{argv: []string{"rsync", "-e", root + "/script", "a.txt", "x:y"}, ran: true},
		{argv: []string{"rsync", secret, "."}},
		{argv: []string{"sort", secret}},
		{argv: []string{"sort", "-o", out + "/x", "a.txt"}},
		{argv: []string{"sort", "--compress-program=" + root + "/drain", "-S", "64K", "-T", ".", "big.txt"}, ran: true},
		{argv: []string{"sort", "-T", out, "-S", "64K", "big.txt"}},
		{argv: []string{"zip", "-q", "-T", "-TT", root + "/script", "got.zip", "a.txt"}, ran: true},
		{argv: []string{"zip", "-q", "got3.zip", secret}},
		{argv: []string{"zip", "-q", out + "/x.zip", "a.txt"}},
		{argv: []string{"cp", secret, "."}},
		{argv: []string{"ln", secret, "hard"}},
		{argv: []string{"mv", secret, "."}},
		{argv: []string{"dd", "if=" + secret, "of=dd.out"}},
		{argv: []string{"xargs", "-a", secret, "echo"}},
		{argv: []string{"env", "cat", secret}},
		{argv: []string{"perl", "-e", "open F, '<', '" + secret + "' or die $!; print <F>"}},
		{argv: []string{"perl", "-e", "open F, '>', '" + out + "/p' or die $!"}},
		{argv: []string{"sh", "-c", "cat " + secret + "; echo x > " + out + "/sh"}},
	}
	for _, a := range attacks {
		if _, err := exec.LookPath(a.argv[0]); err != nil {
			t.Logf("skipped %q: no %s in PATH", a.argv, a.argv[0])
			continue
		}
		os.Remove(filepath.Join(root, "ran"))
		code, stdout, stderr := jailed(t, root, a.argv)
		if strings.Contains(stdout+stderr, canary) {
			t.Errorf("%q (status %d) read the canary: %q %q", a.argv, code, stdout, stderr)
		}
		b.untouched(strings.Join(a.argv, " "))
		if _, err := os.Stat(filepath.Join(root, "ran")); a.ran && err != nil {
			t.Errorf("%q (status %d): the attack's program did not run, so this case proves nothing: %q", a.argv, code, stderr)
		}
	}

	for _, h := range []harmless{
		{[]string{"git", "log", "--oneline"}, "first"},
		{[]string{"git", "diff"}, "+changed"},
		{[]string{"git", "-c", "alias.x=!cat sub/b.txt", "x"}, "b\n"},
		{[]string{"tar", "-cf", "ok.tar", "sub"}, "ok.tar"},
		{[]string{"tar", "-tf", "ok.tar"}, "sub/b.txt"},
		{[]string{"find", ".", "-name", "b.txt", "-exec", "cat", "{}", ";"}, "b\n"},
		{[]string{"curl", "-s", "file://" + root + "/sub/b.txt"}, "b\n"},
		{[]string{"curl", "-s", url}, "served"},
		{[]string{"wget", "-q", "-O", "fetched", url}, "fetched"},
		{[]string{"sort", "-o", "sorted", "a.txt"}, "sorted"},
		{[]string{"sort", "-S", "64K", "-T", ".", "big.txt"}, "line 9999\n"},
		{[]string{"zip", "-q", "ok.zip", "sub/b.txt"}, "ok.zip"},
		{[]string{"ln", "a.txt", "hard-in"}, "hard-in"},
		{[]string{"perl", "-e", "open F, '<', 'sub/b.txt' or die $!; print <F>"}, "b\n"},
	} {
		if _, err := exec.LookPath(h.argv[0]); err != nil {
			t.Logf("skipped %q: no %s in PATH", h.argv, h.argv[0])
			continue
		}
		code, stdout, stderr := binary(t, root, "", append([]string{"--root", root, "--exec", "--"}, h.argv...)...)
		_, made := os.Stat(filepath.Join(root, h.want))
		if code != 0 || (!strings.Contains(stdout, h.want) && made != nil) {
			t.Errorf("harmless %q: status %d, stdout %q, stderr %q, want %q", h.argv, code, stdout, stderr, h.want)
		}
	}
	b.untouched("the harmless commands")
}

// jailed runs argv under mcp-jail --root root --exec, bounded. Unlike
// binary, a command killed by a signal is a result, not a test failure:
// what matters is what it could touch.
func jailed(t *testing.T, root string, argv []string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t, "MCP_JAIL_BIN", "mcp-jail"), append([]string{"--root", root, "--exec", "--"}, argv...)...)
	cmd.Dir, cmd.Env = root, []string{"PATH=/usr/bin:/bin"}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish: %v", argv, ctx.Err())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}
