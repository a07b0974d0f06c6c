package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/pelletier/go-toml/v2"
)

// hostServer is one server entry of a host's configuration, in any of the
// formats: Claude Code, Claude Desktop and Cursor put them under
// "mcpServers", VS Code under "servers"; "type" is stdio or http (Cursor
// has none: a url makes it HTTP).
type hostServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
}

// hostFile is an example host configuration and what it must be.
type hostFile struct {
	path     string // under examples/hosts
	key      string // "mcpServers" or "servers"
	http     bool   // an HTTP entry (or Claude Desktop's bridge to one)
	absolute bool   // the command must be an absolute path (desktop app)
	runs     bool   // works as written from the repository root
}

var hostFiles = []hostFile{
	{path: "claude-code/.mcp.json", key: "mcpServers", runs: true},
	{path: "claude-code/http/.mcp.json", key: "mcpServers", http: true},
	{path: "claude-desktop/claude_desktop_config.json", key: "mcpServers", absolute: true},
	{path: "claude-desktop/linux/claude_desktop_config.json", key: "mcpServers", absolute: true},
	{path: "claude-desktop/http/claude_desktop_config.json", key: "mcpServers", absolute: true, http: true},
	{path: "cursor/.cursor/mcp.json", key: "mcpServers", runs: true},
	{path: "cursor/http/.cursor/mcp.json", key: "mcpServers", http: true},
	{path: "vscode/.vscode/mcp.json", key: "servers", runs: true},
	{path: "vscode/http/.vscode/mcp.json", key: "servers", http: true},
}

func hostsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../examples/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Skipf("host configurations not available: %v", err)
	}
	return dir
}

func readHostServers(t *testing.T, f hostFile) map[string]hostServer {
	t.Helper()
	path := filepath.Join(hostsDir(t), f.path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", f.path, err)
	}
	var servers map[string]hostServer
	if err := json.Unmarshal(doc[f.key], &servers); err != nil || len(servers) == 0 {
		t.Fatalf("%s: no %q servers (%v); keys %v", f.path, f.key, err, slices.Collect(mapKeys(doc)))
	}
	return servers
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// exampleHTTPURL is the URL the example server config serves:
// http://ADDR/mcp for its http key.
func exampleHTTPURL(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostsDir(t), "mcp-route.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		HTTP string `toml:"http"`
	}
	if err := toml.Unmarshal(b, &cfg); err != nil || cfg.HTTP == "" {
		t.Fatalf("examples/hosts/mcp-route.toml: no http key (%v)", err)
	}
	return "http://" + cfg.HTTP + "/mcp"
}

// withWorkspace is args with the editors' ${workspaceFolder} as repo.
func withWorkspace(args []string, repo string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "${workspaceFolder}", repo)
	}
	return out
}

// Every example is a configuration its host reads: the right top-level key
// and type, mcp-route as the command with flags it takes (checked by
// `mcp-route config print` with the same arguments: an unknown flag or a
// bad value exits 2), and every HTTP example pointing at the URL the
// example server config serves.
func TestHostConfigs(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	want := exampleHTTPURL(t)
	for _, f := range hostFiles {
		t.Run(f.path, func(t *testing.T) {
			for name, srv := range readHostServers(t, f) {
				switch {
				case srv.URL != "":
					if !f.http {
						t.Errorf("%s: a URL in a stdio example", name)
					}
					if srv.Type != "" && srv.Type != "http" || srv.Type == "" && f.key == "servers" {
						t.Errorf("%s: type %q for a URL, want \"http\"", name, srv.Type)
					}
					if srv.URL != want {
						t.Errorf("%s: url %s, want %s (what examples/hosts/mcp-route.toml serves)", name, srv.URL, want)
					}
					continue
				case srv.Type != "" && srv.Type != "stdio" || srv.Type == "" && f.key == "servers":
					t.Errorf("%s: type %q for a command, want \"stdio\"", name, srv.Type)
				}
				if filepath.Base(srv.Command) != "mcp-route" || f.absolute != filepath.IsAbs(srv.Command) {
					t.Errorf("%s: command %q, want mcp-route (an absolute path: %v)", name, srv.Command, f.absolute)
				}
				args := withWorkspace(srv.Args, repo)
				if f.http {
					// The desktop app's bridge: an upstream at the URL.
					if i := slices.Index(args, "--upstream"); i < 0 || i+1 == len(args) || !strings.HasSuffix(args[i+1], "="+want) {
						t.Errorf("%s: args %q, want --upstream NAME=%s", name, args, want)
					}
				}
				cmd := exec.CommandContext(ctxTimeout(t), routeBin(t), append([]string{"config", "print"}, args...)...)
				cmd.Dir, cmd.Env = repo, baseEnv()
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				// A placeholder --config (/home/you/...) is missing here:
				// that is exit 1, after every flag was parsed.
				placeholder := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "/home/you/") })
				if code := exitStatus(cmd.ProcessState, err); code != 0 && !(code == 1 && placeholder && strings.Contains(stderr.String(), "--config: open /home/you/")) {
					t.Errorf("%s: mcp-route config print %q: exit %d: %s", name, args, code, stderr.String())
				}
			}
		})
	}
	readme, err := os.ReadFile(filepath.Join(hostsDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`claude mcp add --transport http (\S+) (\S+)`).FindSubmatch(readme); m == nil || string(m[2]) != want {
		t.Errorf("examples/hosts/README.md: `claude mcp add --transport http NAME %s` missing (found %q)", want, m)
	}
}

// The stdio examples for Claude Code, Cursor and VS Code work as written,
// from the repository root (the editors' ${workspaceFolder}): each serves
// the example tools.
func TestHostConfigsServe(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range hostFiles {
		if !f.runs {
			continue
		}
		t.Run(f.path, func(t *testing.T) {
			for _, srv := range readHostServers(t, f) {
				s := startServer(t, repo, nil, withWorkspace(srv.Args, repo)...)
				s.initialize(codec.LatestLegacyRevision)
				got := names(s.listTools())
				for _, want := range []string{"echo", "wordcount", "steps", "crash", "sleep"} {
					if !slices.Contains(got, want) {
						t.Errorf("tools %q lack %s", got, want)
					}
				}
			}
		})
	}
}

// The HTTP examples work end to end: mcp-route --config
// examples/hosts/mcp-route.toml serves the example tools at the path the
// hosts' URLs name (the port is overridden by a flag, as a user could), and
// Claude Desktop's bridge (a stdio mcp-route whose upstream is that URL)
// lists and calls them.
func TestHostConfigHTTP(t *testing.T) {
	want, err := url.Parse(exampleHTTPURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(routeBin(t), "--config", filepath.Join(hostsDir(t), "mcp-route.toml"), "--http", "127.0.0.1:0")
	cmd.Env = baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	served := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`serving MCP at (http://\S+?)"?$`).FindStringSubmatch(sc.Text()); m != nil {
				served <- m[1]
			}
		}
		close(served)
	}()
	var at string
	select {
	case at = <-served:
	case <-time.After(waitLong):
		t.Fatal("mcp-route --config examples/hosts/mcp-route.toml: no \"serving MCP at\" line")
	}
	u, err := url.Parse(at)
	if err != nil || u.Path != want.Path || u.Hostname() != want.Hostname() {
		t.Fatalf("served at %s; the examples name %s", at, want)
	}

	var bridge hostServer
	for _, srv := range readHostServers(t, hostFile{path: "claude-desktop/http/claude_desktop_config.json", key: "mcpServers"}) {
		bridge = srv
	}
	root := t.TempDir()
	var args []string
	for _, a := range bridge.Args {
		a = strings.ReplaceAll(a, want.String(), at)
		switch {
		case strings.HasPrefix(a, "/Users/you/") && len(args) > 0 && args[len(args)-1] == "--root":
			a = root // the placeholders: a root, a log
		case strings.HasPrefix(a, "/Users/you/"):
			a = filepath.Join(root, filepath.Base(a))
		}
		args = append(args, a)
	}
	s := startServer(t, root, nil, args...)
	s.initialize(codec.LatestLegacyRevision)
	var got []string
	for deadline := time.Now().Add(waitLong); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// The upstream's tools come once it has listed them.
		if got = names(s.listTools()); slices.Contains(got, "mcpipe__echo") {
			break
		}
	}
	if !slices.Contains(got, "mcpipe__echo") {
		t.Fatalf("through the bridge: tools %q, want mcpipe__echo", got)
	}
	res := s.callTool("mcpipe__echo", map[string]any{"text": "over http"})
	if res.IsError || len(res.Content) != 1 || !strings.Contains(mustJSON(t, res.Content[0]), "over http") {
		t.Errorf("mcpipe__echo through the bridge: %s", mustJSON(t, res))
	}
}
