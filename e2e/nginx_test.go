package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// A real nginx (Debian's package; .ci/run installs it) in front of HTTP
// replicas, run by the test on a loopback port with everything in the
// test's temp dir: its prefix, pid file, error log and temp paths. The
// load-balancing part is examples/deploy/nginx/mcp.conf.template, rendered
// as its header says; only the process-level main file is the test's.

// nginxBin returns the nginx binary, or skips the test saying why.
func nginxBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("nginx is not installed (Debian: apt-get install nginx-light, or nginx; .ci/run installs it): the load-balancer tests need a real nginx")
	return ""
}

// repoFile reads a file of the repository, relative to its root.
func repoFile(t *testing.T, rel string) []byte {
	t.Helper()
	// The tests run in e2e/ (go test) or in the Bazel runfiles tree, where
	// data files keep their repository paths.
	for _, base := range []string{"..", "."} {
		if b, err := os.ReadFile(filepath.Join(base, rel)); err == nil {
			return b
		}
	}
	if dir := os.Getenv("TEST_SRCDIR"); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, os.Getenv("TEST_WORKSPACE"), rel)); err == nil {
			return b
		}
	}
	t.Fatalf("cannot find %s from %s", rel, mustGetwd())
	return nil
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

// renderNginxTemplate fills examples/deploy/nginx/mcp.conf.template as
// envsubst would.
func renderNginxTemplate(t *testing.T, listen string, upstreams []string) string {
	t.Helper()
	var servers strings.Builder
	for _, u := range upstreams {
		fmt.Fprintf(&servers, "server %s; ", u)
	}
	vars := map[string]string{"MCP_LISTEN": listen, "MCP_UPSTREAM_SERVERS": servers.String()}
	tmpl := string(repoFile(t, "examples/deploy/nginx/mcp.conf.template"))
	// Only ${NAME} of the two variables, like envsubst '$MCP_LISTEN
	// $MCP_UPSTREAM_SERVERS': nginx's own $host and $scheme stay.
	for k, v := range vars {
		if !strings.Contains(tmpl, "${"+k+"}") {
			t.Fatalf("the template lacks ${%s}", k)
		}
		tmpl = strings.ReplaceAll(tmpl, "${"+k+"}", v)
	}
	return tmpl
}

// nginxProc is an nginx the test started.
type nginxProc struct {
	URL string // http://127.0.0.1:PORT/mcp
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startNginx runs nginx round-robin over upstreams (HOST:PORT) until the
// test ends, then stops it (SIGQUIT, then SIGKILL to its process group) and
// checks that none of its processes is left.
func startNginx(t *testing.T, upstreams []string) *nginxProc {
	t.Helper()
	bin := nginxBin(t)
	var lastErr string
	// The port is picked free and then bound by nginx: another process may
	// take it in between, so a failed bind is retried with a new port.
	for attempt := 0; attempt < 3; attempt++ {
		n, errText := tryStartNginx(t, bin, upstreams)
		if n != nil {
			return n
		}
		lastErr = errText
		if !strings.Contains(errText, "Address already in use") {
			break
		}
	}
	t.Fatalf("nginx did not start:\n%s", lastErr)
	return nil
}

func tryStartNginx(t *testing.T, bin string, upstreams []string) (*nginxProc, string) {
	dir := t.TempDir()
	port := freePort(t)
	for _, d := range []string{"logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	user := ""
	if os.Geteuid() == 0 {
		// Workers would switch to nobody and could not use the test's
		// 0700 temp dir; the test's nginx has nothing to protect.
		user = "user root;"
	}
	main := fmt.Sprintf(`# The test's nginx: process-level settings only; the proxying is the
# deploy example's (mcp.conf, rendered from mcp.conf.template).
%[2]s
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log notice;
events { worker_connections 1024; }
http {
    access_log %[1]s/logs/access.log;
    client_body_temp_path %[1]s/tmp/client_body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    include %[1]s/mcp.conf;
}
`, dir, user)
	conf := renderNginxTemplate(t, fmt.Sprintf("127.0.0.1:%d", port), upstreams)
	if err := os.WriteFile(filepath.Join(dir, "mcp.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	// -e: the error log before the configuration is read, so nothing is
	// written under /var/log/nginx.
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "logs", "error.log"), "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	var stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	n := &nginxProc{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
	deadline := time.Now().Add(waitLong)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			return nil, stderr.String() + string(log)
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
			t.Fatalf("nginx did not accept on port %d within %v", port, waitLong)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		// SIGQUIT: graceful shutdown, workers finish their connections.
		_ = syscall.Kill(pgid, syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(waitLong):
			t.Errorf("nginx did not quit on SIGQUIT within %v; killing it", waitLong)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-exited
		}
		proctest.WaitGroupGone(t, pgid)
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			t.Logf("nginx error log:\n%s", tail(log, 4000))
		}
	})
	return n, ""
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}

// upstreamsOf returns the HOST:PORT of each replica URL.
func upstreamsOf(t *testing.T, urls []string) []string {
	t.Helper()
	var out []string
	for _, u := range urls {
		hostport, ok := strings.CutPrefix(u, "http://")
		if !ok {
			t.Fatalf("replica URL %q is not http://", u)
		}
		hostport, _, _ = strings.Cut(hostport, "/")
		out = append(out, hostport)
	}
	return out
}
