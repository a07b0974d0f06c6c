package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDockerImageFiles builds the image's file tree the way the Dockerfile
// does, without Docker (which CI cannot run): the build stage's RUN
// commands run here through sh, with the repository as their WORKDIR (it
// is what COPY . . gives them) and /release and /rootfs moved into a temp
// dir; the final stage's COPY sources must then exist. The tree is
// checked (static stamped binaries, the stock tools linked where the image
// has mcp-stock, CA certificates, /tmp, the USER in /etc/passwd), and
// mcp-route runs from it as the ENTRYPOINT and CMD say, chrooted into it in
// a user and network namespace of its own, with the token file mounted
// where CMD reads it: a client without the token is refused, one with it
// writes a file through a stock tool into the root volume.
//
// What it cannot show: the USER switch (the namespace maps one uid, so
// mcp-route runs as the namespace's root) and Docker's own handling of
// COPY --chown and VOLUME.
func TestDockerImageFiles(t *testing.T) {
	needSourceTree(t)
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; this test builds it for the host")
	}
	for _, c := range []string{"unshare", "chroot", "ip", "sh"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s not found: the image's tree is run in a chroot of a user namespace", c)
		}
	}
	if out, err := exec.Command("unshare", "-r", "-n", "-m", "-p", "-f", "true").CombinedOutput(); err != nil {
		t.Skipf("no unprivileged user and network namespaces here (%v: %s): the image's tree cannot be run", err, bytes.TrimSpace(out))
	}
	root := repoRoot(t)
	commit, _ := gitHead(t, root)
	df := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	build, final := df.stage("build"), df.stages[len(df.stages)-1]
	tmp := t.TempDir()
	move := regexp.MustCompile(`(^|[\s"'=])/(release|rootfs|busybox)\b`)
	relocate := func(s string) string { return move.ReplaceAllString(s, "${1}"+tmp+"/${2}") }

	// The build stage's ARGs, with the target the host, and a version of
	// the test's own so that the stamp shows.
	const version = "9.8.7-image.1"
	env := os.Environ()
	for _, in := range build.all("ARG") {
		name, def, _ := strings.Cut(in.args, "=")
		switch name {
		case "TARGETOS":
			def = runtime.GOOS
		case "TARGETARCH":
			def = runtime.GOARCH
		case "VERSION":
			def = version
		case "MCPIPE_COMMIT", "SOURCE_DATE_EPOCH":
			continue // empty in the Dockerfile: taken from git
		}
		env = append(env, name+"="+def)
	}
	for _, in := range build.all("RUN") {
		if strings.Contains(in.args, "apt-get download") {
			// The build image's package step: apt-get update and
			// dpkg --add-architecture would change this machine, so
			// only the download and extraction run, for the host's
			// architecture (the target here).
			m := regexp.MustCompile(`apt-get download "?([a-z0-9.+-]+):\$TARGETARCH"?`).FindStringSubmatch(in.args)
			x := regexp.MustCompile(`dpkg-deb -x \S+ (/\S+?);`).FindStringSubmatch(in.args)
			if m == nil || x == nil {
				t.Fatalf("Dockerfile:%d: the package step is not \"apt-get download PKG:$TARGETARCH ... dpkg-deb -x DEB DIR;\": update the test", in.line)
			}
			debs := t.TempDir()
			cmd := exec.Command("sh", "-c", `apt-get download "$1" && dpkg-deb -x "$1"_*.deb "$2"`, "sh", m[1], relocate(" " + x[1])[1:])
			cmd.Dir = debs
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("Dockerfile:%d: apt-get download %s, as the build stage does: %v\n%s", in.line, m[1], err, out)
			}
			continue
		}
		cmd := exec.Command("sh", "-c", relocate(in.args))
		cmd.Dir, cmd.Env = root, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("Dockerfile:%d: RUN (%s)", in.line, time.Since(start).Round(time.Second))
		if err != nil {
			t.Fatalf("Dockerfile:%d: RUN %s: %v\n%s", in.line, relocate(in.args), err, out)
		}
	}
	rootfs := tmp + "/rootfs"
	for _, in := range final.all("COPY") {
		f := strings.Fields(in.args)
		if src := relocate(f[len(f)-2]); !exists(src) {
			t.Errorf("Dockerfile:%d: COPY %s: the build stage made no %s", in.line, in.args, src)
		}
	}
	if f := strings.Fields(final.all("COPY")[0].args); f[len(f)-2] != "/rootfs/" || f[len(f)-1] != "/" {
		t.Fatalf("Dockerfile: the final stage's first COPY is %q, want the build stage's /rootfs/ as /", f)
	}

	// The tree.
	for _, bin := range []string{"mcp-route", "mcp-call", "mcp-stock", "mcp-jail", "mcp-frame"} {
		p := rootfs + "/usr/local/bin/" + bin
		checkStatic(t, p)
	}
	checkStatic(t, rootfs+"/bin/sh")
	if bin := listDir(t, rootfs+"/bin"); len(bin) != 1 {
		t.Errorf("/bin holds %q, want sh alone", bin)
	}
	links, err := filepath.Glob(rootfs + final.toolsDir(t) + "/*")
	if err != nil || len(links) != 32 {
		t.Errorf("%s holds %d tools, want the 32 stock tools", final.toolsDir(t), len(links))
	}
	for _, l := range links {
		if target, err := os.Readlink(l); err != nil || target != "/usr/local/bin/mcp-stock" {
			t.Errorf("%s: links to %q (%v), want /usr/local/bin/mcp-stock", l, target, err)
		}
	}
	if fi, err := os.Stat(rootfs + "/tmp"); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v, want a sticky 1777 directory (mcp-route keeps the tools' TMPDIR there)", fi.Mode(), err)
	}
	if fi, err := os.Stat(rootfs + "/etc/ssl/certs/ca-certificates.crt"); err != nil || fi.Size() < 1000 {
		t.Errorf("the CA certificates: %v", err)
	}
	uid, gid := final.user(t)
	if passwd := string(readFile(t, rootfs+"/etc/passwd")); !strings.Contains(passwd, fmt.Sprintf(":x:%d:%d:", uid, gid)) {
		t.Errorf("/etc/passwd names no user %d:%d (USER):\n%s", uid, gid, passwd)
	}

	// Run it as the image would: ENTRYPOINT and CMD, the token file
	// mounted (here: written) where CMD reads it, since the image has none.
	tokens := final.flag(t, "http-token-file")
	if exists(rootfs + tokens) {
		t.Fatalf("the image holds %s: a secret baked in", tokens)
	}
	if err := os.MkdirAll(filepath.Dir(rootfs+tokens), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rootfs+tokens, []byte("image-test-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(final.flag(t, "http"), ":")
	url := "http://127.0.0.1:" + port + "/mcp"
	q := func(args []string) string {
		var b strings.Builder
		for _, a := range args {
			b.WriteString(" '" + strings.ReplaceAll(a, "'", `'\''`) + "'")
		}
		return b.String()
	}
	server := append(final.exec(t, "ENTRYPOINT"), final.exec(t, "CMD")...)
	call := []string{"/usr/local/bin/mcp-call", "--url", url}
	withToken := append(append([]string{}, call...), "--token-file", tokens)
	// The client polls until the server listens: the server has no other
	// way to say it is ready to a process outside it.
	script := `set -u
ip link set lo up
# What Docker gives every container: /proc, and the usual devices.
mkdir -p "$R/proc" "$R/dev"
mount -t proc proc "$R/proc"
for d in null zero random urandom; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
chroot "$R"` + q(server) + ` 2>"$LOG" &
pid=$!
i=0
until chroot "$R"` + q(withToken) + ` ping >/dev/null 2>&1; do
	i=$((i+1)); [ $i -lt 300 ] || { echo "mcp-route never answered"; kill $pid; exit 1; }
	kill -0 $pid 2>/dev/null || { echo "mcp-route exited"; exit 1; }
	sleep 0.1
done
chroot "$R"` + q(append(call, "tools")) + ` >/dev/null 2>"$NOTOKEN"; echo "no token: exit $?"
chroot "$R"` + q(append(withToken, "call", "fs_write", "path=hello.txt", "content=from the image")) + `; echo "fs_write: exit $?"
chroot "$R"` + q(append(withToken, "call", "fs_read", "path=hello.txt")) + `; echo "fs_read: exit $?"
chroot "$R"` + q([]string{"/usr/local/bin/mcp-route", "--version"}) + `
kill -TERM $pid; wait $pid; echo "mcp-route: exit $?"
`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // only catches a hang
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "-r", "-n", "-m", "-p", "-f", "sh", "-c", script)
	log := tmp + "/mcp-route.log"
	notoken := tmp + "/no-token.stderr"
	cmd.Env = append(os.Environ(), "R="+rootfs, "LOG="+log, "NOTOKEN="+notoken)
	out, err := cmd.CombinedOutput()
	serverLog, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("running the image's tree: %v\n%s\nmcp-route's stderr:\n%s", err, out, serverLog)
	}
	want := "no token: exit 2\n" + // mcp-call's status for an HTTP error
		"wrote 14 bytes to hello.txt" // fs_write's text
	got := string(out)
	if !strings.HasPrefix(got, want) ||
		!strings.Contains(got, "fs_write: exit 0\nfrom the image\nfs_read: exit 0\n") ||
		!strings.Contains(got, "mcp-route "+version+" (commit "+commit+")\n") ||
		!strings.HasSuffix(got, "mcp-route: exit 0\n") {
		t.Errorf("the image's tree, run:\n%s\nwant: no token refused, fs_write then fs_read of hello.txt, the stamped version, exit 0 on SIGTERM\nmcp-route's stderr:\n%s", got, serverLog)
	}
	if b, _ := os.ReadFile(notoken); !bytes.Contains(b, []byte("401")) {
		t.Errorf("mcp-call without the token said %q, want the server's 401", b)
	}
	if bytes.Contains(serverLog, []byte("NOT confined")) {
		t.Errorf("in the image's tree the tools run unconfined:\n%s", serverLog)
	}
	if b, err := os.ReadFile(rootfs + final.rootDir(t) + "/hello.txt"); err != nil || string(b) != "from the image" {
		t.Errorf("the root volume holds %q (%v), want what fs_write wrote", b, err)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
