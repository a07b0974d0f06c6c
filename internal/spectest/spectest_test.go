package spectest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExamplesValidate(t *testing.T) {
	dir := filepath.Join(Dir(t), "2026-07-28", "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) < 50 {
		t.Fatalf("%d examples under %s, want the 2026-07-28 set (88 definitions)", len(files), dir)
	}
	for _, f := range files {
		def := filepath.Base(filepath.Dir(f))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		Validate(t, "2026-07-28", def, data)
	}
}

func TestServerMessages(t *testing.T) {
	ok := []struct{ rev, method, line string }{
		{"2025-06-18", "ping", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"2024-11-05", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":"a","result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`},
		{"2026-07-28", "", `{"jsonrpc":"2.0","id":"a","error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28"],"requested":"1999-01-01"}}}`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`},
		{"2025-03-26", "ping", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}]`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`},
	}
	for _, c := range ok {
		if err := CheckServerMessageErr(t, c.rev, c.method, []byte(c.line)); err != nil {
			t.Errorf("%s %s: %v", c.rev, c.line, err)
		}
	}
	bad := []struct{ rev, method, line string }{
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}`},
		{"2026-07-28", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2026-07-28","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`},
		{"2026-07-28", "", `{"jsonrpc":"2.0","id":"a","error":{"code":-32022,"message":"x"}}`},
		{"2024-11-05", "", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`},
		{"2025-06-18", "ping", `[{"jsonrpc":"2.0","id":1,"result":{}}]`},
		{"2025-06-18", "ping", `{"jsonrpc":"1.0","id":1,"result":{}}`},
	}
	for _, c := range bad {
		if err := CheckServerMessageErr(t, c.rev, c.method, []byte(c.line)); err == nil {
			t.Errorf("%s %s: accepted", c.rev, c.line)
		}
	}
}

func TestClientMessages(t *testing.T) {
	ok := []struct{ rev, line string }{
		{"2024-11-05", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"x"}}`},
		{"2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	}
	for _, c := range ok {
		if err := CheckClientMessageErr(t, c.rev, []byte(c.line)); err != nil {
			t.Errorf("%s %s: %v", c.rev, c.line, err)
		}
	}
	bad := []struct{ rev, line string }{
		{"2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`},
		{"2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
	}
	for _, c := range bad {
		if err := CheckClientMessageErr(t, c.rev, []byte(c.line)); err == nil {
			t.Errorf("%s %s: accepted", c.rev, c.line)
		}
	}
}

func TestRevisions(t *testing.T) {
	revs := Revisions(t)
	if len(revs) < 5 || revs[0] != "2024-11-05" {
		t.Errorf("Revisions = %v", revs)
	}
}

// TestDirVendored: a plain checkout finds the vendored schemas, all five
// revisions, with no environment to help.
func TestDirVendored(t *testing.T) {
	if os.Getenv(EnvDir) != "" {
		t.Skipf("%s is set: the override is in use, not the vendored copy", EnvDir)
	}
	d, err := locate()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(filepath.ToSlash(d), "/"+vendored) {
		t.Errorf("found %s, want the vendored %s", d, vendored)
	}
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		if _, err := os.Stat(filepath.Join(d, rev, "schema.json")); err != nil {
			t.Error(err)
		}
	}
}

// TestDirMissing: where there are no schemas, locate says where it looked and
// what to do, instead of finding nothing quietly; a good override is used.
func TestDirMissing(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(EnvDir, empty)
	if _, err := locate(); err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), EnvDir) {
		t.Errorf("%s=%s (empty): err %v, want one naming the directory and %s", EnvDir, empty, err, EnvDir)
	}

	good := t.TempDir()
	os.MkdirAll(filepath.Join(good, "2099-01-01"), 0o755)
	os.WriteFile(filepath.Join(good, "2099-01-01", "schema.json"), []byte("{}"), 0o644)
	t.Setenv(EnvDir, good)
	if d, err := locate(); err != nil || d != good {
		t.Errorf("%s=%s: got %q, %v", EnvDir, good, d, err)
	}

	// A module without third_party/mcp-spec, outside Bazel.
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644)
	os.MkdirAll(filepath.Join(mod, "pkg"), 0o755)
	t.Setenv(EnvDir, "")
	t.Setenv("TEST_SRCDIR", "")
	t.Chdir(filepath.Join(mod, "pkg"))
	_, err := locate()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(mod, vendored)) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("module without schemas: err %v, want one naming %s", err, filepath.Join(mod, vendored))
	}
}
