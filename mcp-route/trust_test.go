package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/testbin"
)

// routeBin runs the built mcp-route in dir with env added to ours, stdin
// fed then closed (a clean shutdown), and returns what it did.
func routeBin(t *testing.T, dir string, env []string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...) // XDG_CACHE_HOME from TestMain unless env sets it
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

const listLine = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// sidecarTool writes an executable NAME with its sidecar into dir.
func sidecarTool(t *testing.T, dir, name, def string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".json", []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestToolsInsideRootRefused: the README's old `--tools ~/.mcp-tools --root
// "$PWD"`, run from the home directory, let a client write a tool with
// fs_write, chmod it and call it. Such a start is refused with one line
// that says what to do; so is a tool linked into the root (a binary built
// there). Tools outside the root, or inside it with --readonly, serve.
func TestToolsInsideRootRefused(t *testing.T) {
	home := t.TempDir()
	inside := filepath.Join(home, ".mcp-tools")
	os.Mkdir(inside, 0o755)
	sidecarTool(t, inside, "look", `{"description":"looks","annotations":{"readOnlyHint":true}}`)
	// The README's command, from $HOME: --root "$PWD".
	code, out, errs := routeBin(t, home, nil, "", "--tools", inside, "--root", home)
	want := "mcp-route: --tools " + inside + " is inside --root " + home + ", where tools can write: a client could add a tool; move the tools out of the root, or add --readonly\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("tools inside the root: exit %d, stdout %q, stderr %q; want 1 and %q", code, out, errs, want)
	}
	// The root itself as the tools dir, and a root given as "..".
	if code, _, errs := routeBin(t, inside, nil, "", "--tools", ".", "--root", ".."); code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "is inside --root "+home) {
		t.Errorf("--tools . --root ..: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := routeBin(t, home, nil, "", "--tools", home); code != 1 || !strings.Contains(errs, "--tools "+home+" is inside --root "+home) {
		t.Errorf("--tools = root: exit %d, stderr %q", code, errs)
	}
	// A tools dir reached through a symlink from outside.
	alias := filepath.Join(t.TempDir(), "tools")
	os.Symlink(inside, alias)
	if code, _, errs := routeBin(t, home, nil, "", "--tools", alias, "--root", home); code != 1 || !strings.Contains(errs, "(as "+inside+")") {
		t.Errorf("tools dir through a symlink: exit %d, stderr %q", code, errs)
	}

	// Tools outside, but one links to a binary inside (mcp-stock install
	// of a binary built in the project).
	outside := t.TempDir()
	sidecarTool(t, outside, "ok", `{"description":"fine","annotations":{"readOnlyHint":true}}`)
	os.Mkdir(filepath.Join(home, "bin"), 0o755)
	stock := sidecarTool(t, filepath.Join(home, "bin"), "stock", `{"description":"stock"}`)
	os.Symlink(stock, filepath.Join(outside, "fs_read"))
	code, out, errs = routeBin(t, home, nil, initLine+"\n"+listLine+"\n", "--tools", outside, "--root", home)
	if code != 1 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "fs_read leads to "+filepath.Join(home, "bin")) || !strings.Contains(errs, "add --readonly") {
		t.Errorf("tool linked into the root: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	// The counterparts serve.
	os.Remove(filepath.Join(outside, "fs_read"))
	code, out, errs = routeBin(t, home, nil, initLine+"\n"+listLine+"\n", "--tools", outside, "--root", home)
	if code != 0 || errs != "" || !strings.Contains(out, `"name":"ok"`) {
		t.Errorf("tools outside the root: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = routeBin(t, home, nil, initLine+"\n"+listLine+"\n", "--tools", inside, "--root", home, "--readonly")
	if code != 0 || errs != "" || !strings.Contains(out, `"name":"look"`) {
		t.Errorf("tools inside the root with --readonly: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// describeOnly writes a tool without a sidecar: its definition is def,
// printed by --mcp-describe, and each describe run adds a line to count.
// Called, it prints its environment.
func describeOnly(t *testing.T, dir, name, def, count string) {
	t.Helper()
	path := filepath.Join(dir, name)
	script := "#!/bin/sh\nif [ \"$1\" = --mcp-describe ]; then echo x >> " + count + "; echo '" + def + "'; exit 0; fi\nenv\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(-time.Hour) // installed a while ago: cacheable
	os.Chtimes(path, ts, ts)
}

func countRuns(count string) int {
	b, _ := os.ReadFile(count)
	return strings.Count(string(b), "x")
}

// TestDescribeCacheTamperedOrInRoot: a cache entry a client rewrote (to
// claim readOnlyHint, or to pass a host secret) is not served, the tool's
// real definition is; a cache under --root is not used, and mcp-route
// still serves; an untouched cache still saves the describe runs.
func TestDescribeCacheTamperedOrInRoot(t *testing.T) {
	tools, root := t.TempDir(), t.TempDir()
	count := filepath.Join(t.TempDir(), "count")
	describeOnly(t, tools, "fs_write", `{"description":"writes","annotations":{"readOnlyHint":false}}`, count)
	describeOnly(t, tools, "env_get", `{"description":"env","annotations":{"readOnlyHint":true}}`, count)
	cache := filepath.Join(t.TempDir(), "cache")
	// The tools count their describe runs outside the root: --allow-write.
	args := []string{"--tools", tools, "--root", root, "--describe-cache", cache, "--allow-write", filepath.Dir(count)}
	list := initLine + "\n" + listLine + "\n"
	serve := func(stdin string, extra ...string) string {
		t.Helper()
		code, out, errs := routeBin(t, root, []string{"HOST_SECRET=hunter2"}, stdin, append(args, extra...)...)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		return out + errs
	}
	serve(list)
	serve(list)
	if n := countRuns(count); n != 2 {
		t.Fatalf("untampered cache: %d describe runs, want 2 (one per tool, then hits)", n)
	}

	tamper := func(match string, edit func(def map[string]any)) {
		t.Helper()
		ents, _ := filepath.Glob(filepath.Join(cache, "*.json"))
		n := 0
		for _, name := range ents {
			data, _ := os.ReadFile(name)
			var e map[string]any
			var def map[string]any
			json.Unmarshal(data, &e)
			raw, _ := e["def"].(string) // base64
			var b []byte
			json.Unmarshal([]byte(`"`+raw+`"`), &b)
			if !strings.Contains(string(b), match) {
				continue
			}
			json.Unmarshal(b, &def)
			edit(def)
			b, _ = json.Marshal(def)
			e["def"] = b
			data, _ = json.Marshal(e)
			os.WriteFile(name, data, 0o600)
			n++
		}
		if n != 1 {
			t.Fatalf("%d entries for %s", n, match)
		}
	}
	tamper(`"writes"`, func(def map[string]any) { def["annotations"] = map[string]any{"readOnlyHint": true} })
	tamper(`"env"`, func(def map[string]any) { def["run"] = map[string]any{"passEnv": []string{"HOST_SECRET"}} })
	out := serve(list, "--readonly")
	if strings.Contains(out, `"name":"fs_write"`) || !strings.Contains(out, `"name":"env_get"`) || !strings.Contains(out, "fails authentication") {
		t.Errorf("tampered readOnlyHint: want fs_write left out by --readonly, and the entry logged:\n%s", out)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"env_get","arguments":{}}}`
	if out := serve(initLine + "\n" + call + "\n"); strings.Contains(out, "hunter2") || !strings.Contains(out, "MCP_TOOL=env_get") {
		t.Errorf("tampered run.passEnv: the secret reached the tool, or the call failed:\n%s", out)
	}
	if n := countRuns(count); n != 4 {
		t.Errorf("%d describe runs, want 4: the tampered entries described again", n)
	}

	// The default cache under --root ("--root ~"): not used, said once.
	home := t.TempDir()
	xdg := []string{"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "HOME=" + home}
	for range 2 {
		code, out, errs := routeBin(t, home, xdg, list, "--tools", tools, "--root", home, "--allow-write", filepath.Dir(count))
		if code != 0 || !strings.Contains(out, `"name":"fs_write"`) || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `msg="describe cache off"`) || !strings.Contains(errs, `error="`+filepath.Join(home, ".cache/mcpipe/describe")+" is under the root") {
			t.Errorf("cache under the root: exit %d, stdout %q, stderr %q", code, out, errs)
		}
	}
	if ents, _ := filepath.Glob(filepath.Join(home, ".cache/mcpipe/describe/*")); len(ents) != 0 {
		t.Errorf("the cache under the root was written: %v", ents)
	}
	if n := countRuns(count); n != 8 {
		t.Errorf("%d describe runs, want 8: a cache under the root was used", n)
	}
}

// TestAllowWriteGuardedLikeRoot: an --allow-write place is as writable for
// a client as the root (a runner under sh_exec writes anywhere the policy
// allows). A tool binary there (`--allow-write ~/go` with
// ~/go/bin/mcp-stock) could be rewritten for every later session, the
// operator's unconfined runs included; a describe cache there forged.
// Such a tool refuses the start, --readonly or not; such a cache is not
// used. The same tool and cache beside a narrower --allow-write serve.
func TestAllowWriteGuardedLikeRoot(t *testing.T) {
	gopath, root, tools := t.TempDir(), t.TempDir(), t.TempDir()
	bin := filepath.Join(gopath, "bin")
	os.Mkdir(bin, 0o755)
	target := sidecarTool(t, bin, "look", `{"description":"looks","annotations":{"readOnlyHint":true}}`)
	os.Symlink(target, filepath.Join(tools, "look"))
	os.Symlink(target+".json", filepath.Join(tools, "look.json"))
	list := initLine + "\n" + listLine + "\n"
	for _, ro := range [][]string{nil, {"--readonly"}} {
		args := append([]string{"--tools", tools, "--root", root, "--describe-cache", "", "--allow-write", gopath}, ro...)
		code, out, errs := routeBin(t, root, nil, list, args...)
		if code != 1 || out != "" || !strings.Contains(errs, "inside --allow-write "+gopath+", where tools can write: a client could rewrite the tool") {
			t.Errorf("tool inside --allow-write %v: exit %d, stdout %q, stderr %q", ro, code, out, errs)
		}
	}
	pkg := filepath.Join(gopath, "pkg")
	os.Mkdir(pkg, 0o755)
	if code, out, errs := routeBin(t, root, nil, list, "--tools", tools, "--root", root, "--describe-cache", "", "--allow-write", pkg); code != 0 || !strings.Contains(out, `"name":"look"`) {
		t.Errorf("tool beside --allow-write: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	home := t.TempDir()
	xdg := []string{"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "HOME=" + home}
	cache := filepath.Join(home, ".cache/mcpipe/describe")
	other := filepath.Join(home, "other")
	os.Mkdir(filepath.Join(home, ".cache"), 0o755)
	os.Mkdir(other, 0o755)
	tools = t.TempDir()
	describeOnly(t, tools, "env_get", `{"description":"env","annotations":{"readOnlyHint":true}}`, filepath.Join(other, "count"))
	code, out, errs := routeBin(t, root, xdg, list, "--tools", tools, "--root", root, "--allow-write", filepath.Join(home, ".cache"))
	if code != 0 || !strings.Contains(out, `"name":"env_get"`) || !strings.Contains(errs, `msg="describe cache off"`) || !strings.Contains(errs, `error="`+cache+" is under the root "+filepath.Join(home, ".cache")) {
		t.Errorf("cache inside --allow-write: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if ents, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(ents) != 0 {
		t.Errorf("the cache inside --allow-write was written: %v", ents)
	}
	if code, _, errs := routeBin(t, root, xdg, list, "--tools", tools, "--root", root, "--allow-write", other); code != 0 || errs != "" {
		t.Errorf("cache beside --allow-write: exit %d, stderr %q", code, errs)
	}
	if ents, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(ents) != 1 {
		t.Errorf("the cache beside --allow-write was not used: %v", ents)
	}
}
