package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

// tokenServer is a 2026-07-28 server with one tool, echo, that wants
// "Authorization: Bearer s3cret" and echoes X-Tenant back in its answer.
func tokenServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m codec.Message
		_ = json.Unmarshal(body, &m)
		var res any
		switch m.Method {
		case codec.MethodDiscover:
			res = map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}}
		case codec.MethodToolsList:
			res = map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
		case codec.MethodToolsCall:
			res = map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "tenant " + r.Header.Get("X-Tenant")}}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestURLTokenFile(t *testing.T) {
	url := tokenServer(t)
	dir := t.TempDir()
	good, wrong, empty := filepath.Join(dir, "good"), filepath.Join(dir, "wrong"), filepath.Join(dir, "empty")
	for p, s := range map[string]string{good: "\n  s3cret  \nignored\n", wrong: "guess\n", empty: "\n \n"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// No token and a wrong one: refused, exit 2, with the server's words
	// and how it wants to be authenticated.
	for _, argv := range [][]string{{"--url", url, "tools"}, {"--url", url, "--token-file", wrong, "tools"}} {
		r := runT(t, "", nil, argv...)
		if r.code != 2 || !strings.Contains(r.stderr, "HTTP 401 Unauthorized") ||
			!strings.Contains(r.stderr, `WWW-Authenticate: Bearer realm="mcp"`) || r.stdout != "" ||
			!strings.HasSuffix(r.stderr, "; the server wants a credential it accepts: give its bearer token with --token-file FILE (first line of FILE), or another scheme with --header 'Authorization: ...'\n") {
			t.Errorf("%q: %+v", argv, r)
		}
	}
	// The right token, trimmed from the first non-blank line, and an
	// extra header.
	r := runT(t, "", nil, "--url", url, "--token-file", good, "--header", "X-Tenant: blue", "call", "echo")
	if r.code != 0 || r.stdout != "tenant blue\n" {
		t.Errorf("good token: %+v", r)
	}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--url", url, "--token-file", empty, "tools"}, "no token in it"},
		{[]string{"--url", url, "--token-file", filepath.Join(dir, "nope"), "tools"}, "no such file"},
		{[]string{"--url", url, "--token-file", good, "--header", "Authorization: Basic x", "tools"}, "exclude each other"},
		{[]string{"--url", "localhost:8080", "tools"}, "want http://"},
	} {
		if r := runT(t, "", nil, tc.argv...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: %+v, want %q", tc.argv, r, tc.want)
		}
	}
}
