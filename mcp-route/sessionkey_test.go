package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// testKey is a session key (and a bearer token) the tests may write: 37
// bytes of 20 distinct values, which the key loader takes.
const testKey = "test-session-key-0123456789abcdefghij"

// The documented recipe through the real binary: a key from
// head -c 32 /dev/urandom that starts with a newline and ends with a space
// (what a trimming loader refused 1 time in 20) is taken as it is, so two
// replicas reading it share sessions, and a replica whose key lacks only
// the last byte does not. An empty key file is refused, naming the file,
// its size and the recipe.
func TestSessionKeyFileBinary(t *testing.T) {
	dir := t.TempDir()
	k := make([]byte, 32)
	rand.Read(k)
	k[0], k[31] = '\n', ' '
	key, trimmed, empty := filepath.Join(dir, "key"), filepath.Join(dir, "trimmed"), filepath.Join(dir, "empty")
	os.WriteFile(key, k, 0o600)
	os.WriteFile(trimmed, append(bytes.TrimSpace(k), 'x', 'y'), 0o600) // as long, still different
	os.WriteFile(empty, nil, 0o600)

	tools := httpTools(t)
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	cmd := exec.Command(bin, "--http", "127.0.0.1:0", "--confine", "off", "--tools", tools, "--session-key-file", empty)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	want := "mcp-route: --session-key-file: session key file " + empty + ": 0 bytes, want at least 32 (every byte counts, white space too); make one with: head -c 32 /dev/urandom > FILE\n"
	if code := cmd.ProcessState.ExitCode(); code != 1 || stderr.String() != want {
		t.Errorf("empty key file: exit %d (%v), stderr %q, want %q", code, err, stderr.String(), want)
	}

	a := startHTTP(t, "--tools", tools, "--session-key-file", key)
	b := startHTTP(t, "--tools", tools, "--session-key-file", key)
	c := startHTTP(t, "--tools", tools, "--session-key-file", trimmed)
	sid := initialize(t, a.url, "2025-06-18")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	sess := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-06-18"}
	if code, _, body := post(t, b.url, list, sess...); code != 200 || !strings.Contains(body, `"name":"echo"`) {
		t.Errorf("replica with the same key file: %d %s", code, body)
	}
	if code, _, body := post(t, c.url, list, sess...); code != 404 {
		t.Errorf("replica whose key differs in its white space: %d %s, want 404", code, body)
	}
}
