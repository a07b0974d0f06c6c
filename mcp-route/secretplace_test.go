package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// TestSecretFilesOutOfToolsReach: a bearer token, session key or TLS key
// file that tools can read (under --root, an --allow-read or
// --allow-write path or a --tools directory, or reached through a link
// into one) would be read by a client with any reading tool; the start is
// refused with one line naming the flag, the file, the place and the
// remedy. The same files outside every such place serve (the TLS key:
// TestHTTPTLS, whose key is in a temporary directory of its own).
func TestSecretFilesOutOfToolsReach(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	readable := filepath.Join(dir, "readable")
	writable := filepath.Join(dir, "writable")
	tools := filepath.Join(dir, "tools")
	outside := filepath.Join(dir, "outside")
	for _, d := range []string{root, readable, writable, tools, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const token = "tok-3b1d7c-secret"
	secret := testKey // a valid token and a valid key alike
	for _, d := range []string{root, readable, writable, tools, outside} {
		if err := os.WriteFile(filepath.Join(d, "secret"), []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link") // outside the root, leading into it
	if err := os.Symlink(filepath.Join(root, "secret"), link); err != nil {
		t.Fatal(err)
	}
	// A link outside leading to a directory inside, then "..": the kernel
	// reads the root's secret; a lexical clean of the path saw the
	// outside one.
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "sub"), filepath.Join(outside, "sub")); err != nil {
		t.Fatal(err)
	}
	dotdot := filepath.Join(outside, "sub") + "/../secret"
	up := "web=http://127.0.0.1:1/mcp"
	flags := []struct {
		name string
		args func(file string) []string
	}{
		{"--http-token-file", func(f string) []string { return []string{"--http", "127.0.0.1:0", "--http-token-file", f} }},
		{"--session-key-file", func(f string) []string { return []string{"--http", "127.0.0.1:0", "--session-key-file", f} }},
		{"--upstream-token-file web", func(f string) []string { return []string{"--upstream", up, "--upstream-token-file", "web=" + f} }},
		{"--tls-key", func(f string) []string {
			return []string{"--http", "127.0.0.1:0", "--tls-cert", filepath.Join(outside, "cert.pem"), "--tls-key", f}
		}},
	}
	places := []struct {
		what, file, in, remedy string
	}{
		{"inside --root", filepath.Join(root, "secret"), "--root " + root, "move it out of the root"},
		{"inside --allow-read", filepath.Join(readable, "secret"), "--allow-read " + readable, "move it out, or narrow --allow-read"},
		{"inside --allow-write", filepath.Join(writable, "secret"), "--allow-write " + writable, "move it out, or narrow --allow-write"},
		{"inside --tools", filepath.Join(tools, "secret"), "--tools " + tools, "move it out of the tools directory"},
		{"a link into --root", link, "--root " + root + " (as " + filepath.Join(root, "secret") + ")", "move it out of the root"},
		{"a link into --root, then ..", dotdot, "--root " + root + " (as " + filepath.Join(root, "sub") + ")", "move it out of the root"},
	}
	for _, f := range flags {
		for _, p := range places {
			args := append([]string{"--confine", "off", "--root", root, "--allow-read", readable, "--allow-write", writable, "--tools", tools}, f.args(p.file)...)
			code, _, errs := runWith(t, "", args...)
			want := f.name + ": " + p.file + " is inside " + p.in + ", where tools and upstreams can read it"
			if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, p.remedy) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s %s: code %d, stderr %q; want 1 and one line with %q and %q", f.name, p.what, code, errs, want, p.remedy)
			}
			if strings.Contains(errs, secret) {
				t.Errorf("%s %s: the secret is in stderr", f.name, p.what)
			}
		}
	}
	// --readonly does not help: reading is the problem.
	code, _, errs := runWith(t, "", "--confine", "off", "--readonly", "--root", root, "--http", "127.0.0.1:0", "--http-token-file", filepath.Join(root, "secret"))
	if code != 1 || !strings.Contains(errs, "is inside --root") {
		t.Errorf("--readonly, token under --root: code %d, stderr %q", code, errs)
	}

	// The counterpart: every secret outside the tools' places serves. An
	// inner server wants the token and signs sessions with the key; the
	// outer one mounts it with the token and serves a call through it.
	tokens := filepath.Join(outside, "tokens")
	os.WriteFile(tokens, []byte(token+"\n"), 0o600)
	key := filepath.Join(outside, "secret")
	innerRoot := t.TempDir()
	inner := startHTTP(t, "--tools", httpTools(t), "--root", innerRoot, "--allow-read", readable,
		"--http-token-file", tokens, "--session-key-file", key)
	code, h, body := post(t, inner.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		"Authorization", "Bearer "+token)
	if code != 200 || h.Get("Mcp-Session-Id") == "" {
		t.Errorf("inner initialize with the token: %d %s", code, body)
	}
	outer := startHTTP(t, "--root", root, "--allow-read", readable, "--upstream", "web="+inner.url+"/mcp", "--upstream-token-file", "web="+tokens)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"web__echo","arguments":{"said":"through"},` + metaRev + `}}`
	proctest.Eventually(t, func() string {
		code, _, body := post(t, outer.url, call, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "web__echo")
		if code != 200 || !strings.Contains(body, `through`) || strings.Contains(body, `"isError":true`) {
			return "web__echo through the outer server: " + body
		}
		return ""
	})
}

// TestSecretFilesInSystemPlaces: the places every confined tool reads
// count too: a secret file under /usr, /opt or among the files of /etc the
// policy grants is refused at start, naming the place and where to keep
// it instead; one in a directory of /etc the policy does not grant (as
// /etc/credstore, systemd's) is accepted, under --confine off too.
func TestSecretFilesInSystemPlaces(t *testing.T) {
	var usr string
	for _, p := range []string{"/usr/share/common-licenses/GPL-3", "/usr/bin/env", "/usr/bin/sh"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			usr = p
			break
		}
	}
	cases := []struct{ file, in string }{
		{"/etc/hosts", "the files of /etc granted to every tool /etc/hosts"},
	}
	if usr != "" {
		cases = append(cases, struct{ file, in string }{usr, "the system directories (granted to every tool) /usr"})
	}
	// /opt, when this user may make a directory there (root, not under
	// Bazel's read-only sandbox).
	if opt, err := os.MkdirTemp("/opt", "mcpipe-secret-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(opt) })
		key := filepath.Join(opt, "key")
		if err := os.WriteFile(key, []byte(testKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ file, in string }{key, "the system directories (granted to every tool) /opt"})
	}
	root := t.TempDir()
	for _, c := range cases {
		for _, mode := range []string{"auto", "off"} {
			code, _, errs := runWith(t, "", "--confine", mode, "--root", root, "--confine-check", "--http", "127.0.0.1:0", "--http-token-file", c.file)
			want := "--http-token-file: " + c.file + " is inside " + c.in
			if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "LoadCredential=") || strings.Count(errs, "\n") != 1 {
				t.Errorf("--confine %s, token in %s: code %d, stderr %q; want 1 and one line with %q and where to keep it", mode, c.file, code, errs, want)
			}
		}
	}
	// The counterpart: a directory of /etc that is not granted.
	etc, err := os.MkdirTemp("/etc", "mcpipe-credstore-")
	if err != nil {
		t.Skipf("cannot make a directory in /etc to show the counterpart: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(etc) })
	key := filepath.Join(etc, "key")
	if err := os.WriteFile(key, []byte(testKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"auto", "off"} {
		code, out, errs := runWith(t, "", "--confine", mode, "--root", root, "--confine-check", "--http", "127.0.0.1:0", "--session-key-file", key)
		if strings.Contains(errs, key) || !strings.Contains(out, "deny everything else") {
			t.Errorf("--confine %s, key in %s: code %d, stderr %q, stdout %q; want it accepted", mode, key, code, errs, out)
		}
	}
}
