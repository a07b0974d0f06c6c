package e2e

// End-to-end tests of what sh_exec refuses beyond the shell: allowed
// programs that a hostile client turns against the root through their own
// options, URLs, configuration files, other names and symlinks. Each attack
// runs through the real mcp-route serving the real mcp-stock and the real
// program, beside its harmless counterpart, which must still work. The
// canaries: readCanary in files outside the root (no answer and no file in
// the root may hold it afterwards), an "outside" directory that must stay
// as it was, and a PWNED marker a program run by the attack would create.
// A program missing on the host skips its cases (CI installs git, curl,
// wget, tar, zip and findutils: see .ci/run).

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// shEscape is a root beside an "outside" directory, with a marker path the
// attacks try to create.
type shEscape struct {
	t      *testing.T
	base   string
	root   string
	pwned  string // base/PWNED: created only if an attack ran a program
	server *server
}

func newShEscape(t *testing.T) *shEscape {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &shEscape{t: t, base: base, root: filepath.Join(base, "data"), pwned: filepath.Join(base, "PWNED")}
	for name, content := range map[string]string{
		"outside/secret.txt": readCanary + "\n",
		"data/a.txt":         "beta\nalpha\nalpha\n",
		"data/sub/b.txt":     "b\n",
		"data/dir/c.txt":     "c\n",
	} {
		e.write(filepath.Join(base, name), content)
	}
	// A script a hostile option would run.
	e.write(filepath.Join(e.root, "script"), "#!/bin/sh\ntouch "+e.pwned+"\necho pwned\n")
	if err := os.Chmod(filepath.Join(e.root, "script"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"proc_root":    "/proc/self/root",
		"dir/link-out": "../../outside",
	} {
		if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *shEscape) write(p, content string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// git runs git for the fixture (not through sh_exec), with no user or
// system configuration.
func (e *shEscape) git(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = baseEnv("GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+e.base)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// gitRepo makes dir a repository with its files committed.
func (e *shEscape) gitRepo(dir string) {
	e.t.Helper()
	e.git(dir, "init", "-q")
	e.git(dir, "add", "-A")
	e.git(dir, "commit", "-qm", "first")
}

func (e *shEscape) start(allow string, args ...string) {
	e.t.Helper()
	f := readPackFixture{base: e.base, root: e.root}
	e.server = f.start(e.t, readPackInstall(e.t, false), append(append(shUnconfined(), "--env", "MCP_SH_ALLOW="+allow), args...)...)
}

// shCase is one command: refused (an error result whose text holds the
// substring, or one of the "|"-separated ones), or, when refused is "", run with exit status 0 and then
// checked.
type shCase struct {
	command string
	needs   []string
	refused string
	check   func(sc shStructured) string // "" when fine, else what is wrong
}

func (e *shEscape) run(cases []shCase) {
	e.t.Helper()
	t := e.t
cases:
	for _, tc := range cases {
		for _, p := range tc.needs {
			if _, err := exec.LookPath(p); err != nil {
				t.Logf("skipped %q: no %s in PATH", tc.command, p)
				continue cases
			}
		}
		r := e.server.callTool("sh_exec", map[string]any{"command": tc.command, "timeoutSeconds": 20})
		text := readText(r)
		var sc shStructured
		if len(r.StructuredContent) > 0 {
			if err := json.Unmarshal(r.StructuredContent, &sc); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case tc.refused != "" && (!r.IsError || !containsAny(text, strings.Split(tc.refused, "|"))):
			t.Errorf("%q: %v %q, want a refusal with %q", tc.command, r.IsError, text, tc.refused)
		case tc.refused != "" && len(r.StructuredContent) > 0:
			t.Errorf("%q ran (%q), want it refused before running", tc.command, text)
		case tc.refused == "" && (r.IsError || sc.ExitCode != 0):
			t.Errorf("%q: %v %q, want it to run", tc.command, r.IsError, text)
		case tc.check != nil:
			if bad := tc.check(sc); bad != "" {
				t.Errorf("%q: %s (stdout %q, stderr %q)", tc.command, bad, sc.Stdout, sc.Stderr)
			}
		}
		e.noEscape(tc.command, text+string(r.StructuredContent))
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// noEscape fails the test when anything crossed the root: the canary in the
// answer or in a file in the root, a change in the outside directory, or
// the marker a program run by an attack creates.
func (e *shEscape) noEscape(command, answer string) {
	t := e.t
	t.Helper()
	if strings.Contains(answer, readCanary) {
		t.Errorf("%q: the answer holds the canary from outside the root: %q", command, answer)
	}
	for _, m := range []string{e.pwned, filepath.Join(e.root, "PWNED")} {
		if _, err := os.Lstat(m); err == nil {
			t.Fatalf("%q ran a program: %s exists", command, m)
		}
	}
	ents, err := os.ReadDir(filepath.Join(e.base, "outside"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "secret.txt" {
		var names []string
		for _, d := range ents {
			names = append(names, d.Name())
		}
		t.Fatalf("%q wrote outside the root: outside/ holds %q", command, names)
	}
	filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), readCanary) {
			t.Fatalf("%q copied the canary into the root: %s", command, p)
		}
		return nil
	})
}

func has(sub string) func(shStructured) string {
	return func(sc shStructured) string {
		if !strings.Contains(sc.Stdout+sc.Stderr, sub) {
			return fmt.Sprintf("output lacks %q", sub)
		}
		return ""
	}
}

func (e *shEscape) exists(name string) func(shStructured) string {
	return func(shStructured) string {
		if _, err := os.Lstat(filepath.Join(e.root, name)); err != nil {
			return fmt.Sprintf("%s was not made: %v", name, err)
		}
		return ""
	}
}

// TestStockShExecOptionClusters: a value glued to a later letter of a
// short-option cluster is checked like a value glued to the first.
func TestStockShExecOptionClusters(t *testing.T) {
	e := newShEscape(t)
	out := filepath.Join(e.base, "outside")
	if _, err := exec.LookPath("git"); err == nil {
		e.gitRepo(e.root)
	}
	e.start("sort,tar,ln,git")
	e.run([]shCase{
		{command: "sort -uo" + out + "/x a.txt", needs: []string{"sort"}, refused: "outside the root"},
		{command: "sort -uo../outside/x a.txt", needs: []string{"sort"}, refused: "outside the root"},
		{command: "tar -cvf got.tar -vC/ etc/hostname", needs: []string{"tar"}, refused: "outside the root"},
		{command: "tar -cvf got.tar -vC" + e.base + " outside/secret.txt", needs: []string{"tar"}, refused: "outside the root"},
		{command: "ln -vst" + out + " a.txt", needs: []string{"ln"}, refused: "outside the root"},
		{command: "git format-patch -ko" + out + " --root HEAD", needs: []string{"git"}, refused: "outside the root"},
		// A relative name after -C DIR is taken in DIR too, where
		// dir/link-out leads out of the root.
		{command: "tar -C dir -cf got.tar link-out/secret.txt", needs: []string{"tar"}, refused: "outside the root"},
		{command: "tar -cf got.tar -Cdir link-out/secret.txt", needs: []string{"tar"}, refused: "outside the root"},
		{command: "git -C dir log -- link-out/secret.txt", needs: []string{"git"}, refused: "outside the root"},
		// The harmless counterparts.
		{command: "sort -u a.txt", needs: []string{"sort"}, check: has("alpha\nbeta\n")},
		{command: "sort -uo sorted.txt a.txt", needs: []string{"sort"}, check: e.exists("sorted.txt")},
		{command: "sort -uosorted2.txt a.txt", needs: []string{"sort"}, check: e.exists("sorted2.txt")},
		{command: "tar -cvf got.tar sub", needs: []string{"tar"}, check: e.exists("got.tar")},
		{command: "tar -tvf got.tar", needs: []string{"tar"}, check: has("sub/b.txt")},
		{command: "tar -cf got2.tar -C dir c.txt", needs: []string{"tar"}, check: e.exists("got2.tar")},
		{command: "ln -vs a.txt link-a", needs: []string{"ln"}, check: e.exists("link-a")},
		{command: "git format-patch -ko patches --root HEAD", needs: []string{"git"}, check: e.exists("patches")},
	})
}

// TestStockShExecFileURLs: file: URLs are matched in any case, after their
// host, percent-decoded, and curl's URL globs are refused.
func TestStockShExecFileURLs(t *testing.T) {
	e := newShEscape(t)
	secret := filepath.Join(e.base, "outside", "secret.txt")
	hasGit := false
	if _, err := exec.LookPath("git"); err == nil {
		hasGit = true
		e.gitRepo(e.root)
		other := filepath.Join(e.base, "other")
		e.write(filepath.Join(other, "secret.txt"), readCanary+"\n")
		e.gitRepo(other)
		inside := filepath.Join(e.root, "inner")
		e.write(filepath.Join(inside, "in.txt"), "inner\n")
		e.gitRepo(inside)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "served") })}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	e.start("curl,git")
	e.run([]shCase{
		{command: "curl -s FILE://" + secret, needs: []string{"curl"}, refused: "outside the root"},
		{command: "curl -s File://" + secret, needs: []string{"curl"}, refused: "outside the root"},
		{command: "curl -s file://localhost" + secret, needs: []string{"curl"}, refused: "outside the root"},
		{command: "curl -s file://" + e.root + "/%2e%2e/outside/secret.txt", needs: []string{"curl"}, refused: "outside the root"},
		{command: "curl -s --url=FILE://" + secret, needs: []string{"curl"}, refused: "outside the root"},
		{command: "curl -o 'x_#1' 'FILE:///proc/[1-9]/environ'", needs: []string{"curl"}, refused: "pattern curl expands"},
		{command: "curl -o 'x_#1' 'file://" + e.root + "/{a.txt,../outside/secret.txt}'", needs: []string{"curl"}, refused: "pattern curl expands"},
		{command: "git clone file://localhost" + filepath.Join(e.base, "other") + " stolen", needs: []string{"git"}, refused: "outside the root"},
		{command: "curl -s --proto-default file localhost" + secret, needs: []string{"curl"}, refused: "proto-default"},
		{command: "curl -s '{fi,x}le://" + secret + "'", needs: []string{"curl"}, refused: "globoff"},
		// The harmless counterparts.
		{command: "curl -s file://" + e.root + "/a.txt", needs: []string{"curl"}, check: has("alpha")},
		{command: "curl -s http://" + ln.Addr().String() + "/", needs: []string{"curl"}, check: has("served")},
	})
	if hasGit {
		e.run([]shCase{
			{command: "git clone -q file://localhost" + filepath.Join(e.root, "inner") + " copy", check: e.exists("copy/in.txt")},
		})
	}
}

// TestStockShExecGitRepository: the repository's own configuration, a .git
// file and a larger repository around the root cannot make git run a
// program or read outside the root; a plain repository at the root works.
func TestStockShExecGitRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git in PATH")
	}
	e := newShEscape(t)
	e.gitRepo(e.root)
	e.write(filepath.Join(e.root, "a.txt"), "changed\n")
	config := filepath.Join(e.root, ".git", "config")
	clean, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	e.start("git")
	touch := "touch " + e.pwned
	for _, tc := range []struct{ config, command, refused string }{
		{"[remote \"origin\"]\n\turl = " + e.root + "\n\tuploadpack = " + touch + "\n", "git fetch origin", "uploadpack"},
		{"[diff]\n\texternal = " + touch + "\n", "git diff", "diff.external"},
		{"[core]\n\tworktree = " + filepath.Join(e.base, "outside") + "\n", "git status", "core.worktree"},
		{"[filter \"x\"]\n\tclean = " + touch + "\n", "git add a.txt", "filter.x.clean"},
		{"[diff \"x\"]\n\ttextconv = " + touch + "\n", "git log -p", "diff.x.textconv"},
		{"[pager]\n\tlog = " + touch + "\n", "git log", "pager.log"},
		// Confined (mcp-route's default where Landlock is), git cannot
		// even look at the included file, and the listing fails first.
		{"[include]\n\tpath = " + filepath.Join(e.base, "outside", "secret.txt") + "\n", "git log", "include.path|Permission denied"},
		{"[core]\n\tfsmonitor = " + touch + "\n", "git status", "core.fsmonitor"},
	} {
		if err := os.WriteFile(config, append(append([]byte{}, clean...), tc.config...), 0o644); err != nil {
			t.Fatal(err)
		}
		e.write(filepath.Join(e.root, ".gitattributes"), "* filter=x diff=x\n")
		e.run([]shCase{{command: tc.command, refused: tc.refused}})
		os.Remove(filepath.Join(e.root, ".gitattributes"))
	}
	// Remotes and URL rewriting that lead to a repository outside the
	// root.
	other := filepath.Join(e.base, "other")
	e.write(filepath.Join(other, "secret.txt"), readCanary+"\n")
	e.gitRepo(other)
	for _, tc := range []struct{ config, command, refused string }{
		{"[remote \"o\"]\n\turl = " + other + "\n", "git fetch o", "outside the root"},
		{"[remote \"o\"]\n\turl = file://localhost" + other + "\n", "git fetch o", "outside the root"},
		{"[branch \"main\"]\n\tremote = " + other + "\n", "git pull", "outside the root"},
		{"[url \"" + other + "\"]\n\tinsteadOf = https://example.invalid/x\n", "git fetch https://example.invalid/x", "url."},
	} {
		if err := os.WriteFile(config, append(append([]byte{}, clean...), tc.config...), 0o644); err != nil {
			t.Fatal(err)
		}
		e.run([]shCase{{command: tc.command, refused: tc.refused}})
	}
	if err := os.WriteFile(config, clean, 0o644); err != nil {
		t.Fatal(err)
	}
	// A repository inside the root whose objects come from one outside:
	// cloning it would check the outside files out into the root.
	fake := filepath.Join(e.root, "fake")
	e.write(filepath.Join(fake, "f.txt"), "f\n")
	e.gitRepo(fake)
	e.write(filepath.Join(fake, ".git", "objects", "info", "alternates"), filepath.Join(other, ".git", "objects")+"\n")
	e.run([]shCase{
		{command: "git clone -q fake copy", refused: "alternates"},
		{command: "git clone -q file://" + fake + " copy", refused: "alternates"},
		{command: "git clone -q --recurse-submodules nested-none copy", refused: "submodules"},
	})
	os.RemoveAll(fake)
	// A nested repository's hostile configuration is not used: git is
	// pinned to the repository at the root.
	nested := filepath.Join(e.root, "nested")
	e.write(filepath.Join(nested, "n.txt"), "n\n")
	e.gitRepo(nested)
	e.write(filepath.Join(nested, "n.txt"), "changed\n")
	e.write(filepath.Join(nested, ".git", "config"), "[diff]\n\texternal = "+touch+"\n[core]\n\tfsmonitor = "+touch+"\n")
	e.run([]shCase{
		{command: "git log --oneline", check: has("first")},
		{command: "git status --short", check: has("a.txt")},
		{command: "git diff", check: has("+changed")},
		{command: "git -C nested diff", check: has("+changed")},
		{command: "git -C nested status --short"},
	})

	// A .git file pointing elsewhere.
	g := newShEscape(t)
	gOther := filepath.Join(g.base, "other")
	g.write(filepath.Join(gOther, "secret.txt"), readCanary+"\n")
	g.gitRepo(gOther)
	g.write(filepath.Join(g.root, ".git"), "gitdir: "+filepath.Join(gOther, ".git")+"\n")
	g.start("git")
	g.run([]shCase{
		{command: "git show HEAD:secret.txt", refused: ".git is a file"},
		{command: "git log", refused: ".git is a file"},
	})

	// A root inside a larger repository.
	p := newShEscape(t)
	p.write(filepath.Join(p.base, "secret.env"), readCanary+"\n")
	p.gitRepo(p.base)
	p.start("git")
	p.run([]shCase{
		{command: "git show HEAD:secret.env", refused: "not its top"},
		{command: "git log -p", refused: "not its top"},
		{command: "git init -q", check: p.exists(".git")},
		{command: "git status --short", check: has("a.txt")},
	})
}

// TestStockShExecRunOptions: options and configuration files that make an
// allowed program run another, or read names sh_exec cannot check.
func TestStockShExecRunOptions(t *testing.T) {
	e := newShEscape(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); !ok && r.URL.Path == "/auth" {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintln(w, "served")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/auth"
	open := "http://" + ln.Addr().String() + "/open"
	e.write(filepath.Join(e.root, "curl.cfg"), "url = \"file://"+filepath.Join(e.base, "outside", "secret.txt")+"\"\n")
	e.write(filepath.Join(e.root, "names0"), filepath.Join(e.base, "outside", "secret.txt")+"\x00")
	e.write(filepath.Join(e.root, "names"), filepath.Join(e.base, "outside", "secret.txt")+"\n")
	// HOME is the root: the configuration files programs read from HOME
	// are the client's to write.
	e.write(filepath.Join(e.root, ".curlrc"), "url = \"file://"+filepath.Join(e.base, "outside", "secret.txt")+"\"\n")
	e.write(filepath.Join(e.root, ".wgetrc"), "use_askpass = "+filepath.Join(e.root, "script")+"\noutput_document = "+filepath.Join(e.base, "outside", "w")+"\n")
	e.start("wget,curl,tar,sort,find,wc,zip", "--env", "HOME="+e.root)
	e.run([]shCase{
		{command: "wget -q --use-askpass=./script " + url, needs: []string{"wget"}, refused: "run another program"},
		{command: "wget -q --use-ask=./script " + url, needs: []string{"wget"}, refused: "run another program"},
		{command: "wget -q -e use_askpass=./script " + url, needs: []string{"wget"}, refused: ".wgetrc command"},
		{command: "wget -q --execute=use_askpass=./script " + url, needs: []string{"wget"}, refused: ".wgetrc commands"},
		{command: "wget -q --config=curl.cfg " + url, needs: []string{"wget"}, refused: ".wgetrc commands"},
		{command: "curl -s -K curl.cfg", needs: []string{"curl"}, refused: "reads options from a file"},
		{command: "curl -s --config curl.cfg", needs: []string{"curl"}, refused: "reads options from a file"},
		{command: "tar -cf x.tar --to-command=./script sub", needs: []string{"tar"}, refused: "run another program"},
		{command: "tar -cf x.tar -I ./script sub", needs: []string{"tar"}, refused: "run a program"},
		{command: "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=./script sub", needs: []string{"tar"}, refused: "run another program"},
		{command: "tar -cf x.tar -F ./script sub", needs: []string{"tar"}, refused: "run a program"},
		{command: "tar -cf x.tar --new-volume-script=./script sub", needs: []string{"tar"}, refused: "run another program"},
		{command: "tar -cf x.tar -T names", needs: []string{"tar"}, refused: "from a file"},
		{command: "tar -cf x.tar --files-from=names", needs: []string{"tar"}, refused: "from a file"},
		{command: "tar -chf x.tar dir", needs: []string{"tar"}, refused: "follows symlinks"},
		{command: "sort --compress-program=./script a.txt", needs: []string{"sort"}, refused: "run another program"},
		{command: "sort --files0-from=names0", needs: []string{"sort"}, refused: "from a file"},
		{command: "wc --files0-from=names0", needs: []string{"wc"}, refused: "from a file"},
		{command: "find . -exec ./script ';'", needs: []string{"find"}, refused: "run another program"},
		{command: "find . -execdir ./script ';'", needs: []string{"find"}, refused: "run another program"},
		{command: "find . -ok ./script ';'", needs: []string{"find"}, refused: "run another program"},
		{command: "find . -okdir ./script ';'", needs: []string{"find"}, refused: "run another program"},
		{command: "find . -fprint got", needs: []string{"find"}, refused: "find a search"},
		{command: "find -files0-from names0", needs: []string{"find"}, refused: "from a file"},
		{command: "zip -r z.zip dir", needs: []string{"zip"}, refused: "add -y"},
		{command: "zip -T -TT ./script z.zip a.txt", needs: []string{"zip"}, refused: "runs a command"},
		// The harmless counterparts; curl and wget run without the
		// client's .curlrc and .wgetrc, whose HOME is the root.
		{command: "wget -q -O page.html --user=u --password=p " + url, needs: []string{"wget"}, check: e.exists("page.html")},
		{command: "wget -q " + open, needs: []string{"wget"}, check: e.exists("open")},
		{command: "curl -s -u u:p " + url, needs: []string{"curl"}, check: has("served")},
		{command: "tar -cf x.tar sub", needs: []string{"tar"}, check: e.exists("x.tar")},
		{command: "sort a.txt", needs: []string{"sort"}, check: has("alpha\nalpha\nbeta")},
		{command: "find . -name b.txt", needs: []string{"find"}, check: has("./sub/b.txt")},
		{command: "zip -ry z.zip dir", needs: []string{"zip"}, check: e.exists("z.zip")},
	})
}

// TestStockShExecProgramNames: a program is refused by what it is, under
// any of its names, and a program that runs the project's code only with
// MCP_SH_ALLOW_RUNNERS.
func TestStockShExecProgramNames(t *testing.T) {
	e := newShEscape(t)
	// Links outside the root standing in for Debian's alternatives: a
	// harmless name that is really a shell or an editor.
	bin := filepath.Join(e.base, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{}
	for name, target := range map[string]string{"mytool": "sh", "myview": "vim", "mycc": "cc", "mycat": "cat"} {
		if p, err := exec.LookPath(target); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
			links[name] = target
		}
	}
	names := []string{"editor", "vimdiff", "ksh93", "bash5.2", "busybox.static", "sh.distrib", "guile-3.0",
		"git-shell", "m4", "cmake", "python3.11", "mawk", "rview"}
	e.start(strings.Join(append(names, "mytool", "myview", "mycc", "mycat", "make", "cat", "x86_64-linux-gnu-gcc-12"), ","),
		"--env", "PATH="+bin+":"+os.Getenv("PATH"))
	var cases []shCase
	for _, n := range names {
		cases = append(cases, shCase{command: n + " -c 'touch " + e.pwned + "'", refused: "never runs it"})
	}
	cases = append(cases,
		shCase{command: "editor -es -c '!touch " + e.pwned + "'", refused: "never runs it"},
		shCase{command: "make", refused: "MCP_SH_ALLOW_RUNNERS"},
		shCase{command: "x86_64-linux-gnu-gcc-12 -wrapper ./script a.c", refused: "MCP_SH_ALLOW_RUNNERS"},
		shCase{command: "cat a.txt", check: has("alpha")},
	)
	if _, ok := links["mytool"]; ok {
		cases = append(cases, shCase{command: "mytool -c 'touch " + e.pwned + "'", refused: "never runs it"})
	}
	if _, ok := links["myview"]; ok {
		cases = append(cases, shCase{command: "myview -es -c '!touch " + e.pwned + "'", refused: "never runs it"})
	}
	if _, ok := links["mycc"]; ok {
		cases = append(cases, shCase{command: "mycc -wrapper ./script a.c", refused: "MCP_SH_ALLOW_RUNNERS"})
	}
	if _, ok := links["mycat"]; ok {
		cases = append(cases, shCase{command: "mycat a.txt", check: has("alpha")})
	}
	e.run(cases)

	// Named in MCP_SH_ALLOW_RUNNERS too, make runs the Makefile.
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make in PATH")
	}
	r := newShEscape(t)
	r.write(filepath.Join(r.root, "Makefile"), "all:\n\t@echo built\n")
	r.start("make", "--env", "MCP_SH_ALLOW_RUNNERS=make")
	r.run([]shCase{{command: "make", check: has("built")}})
}

// TestStockShExecSymlinkWalks: find -L and -follow would walk through
// proc_root -> /proc/self/root into the whole file system.
func TestStockShExecSymlinkWalks(t *testing.T) {
	e := newShEscape(t)
	e.start("find,grep,cp,ls")
	e.run([]shCase{
		{command: "find -L . -name secret.txt", needs: []string{"find"}, refused: "follows symlinks"},
		{command: "find . -follow -name secret.txt", needs: []string{"find"}, refused: "follows symlinks"},
		{command: "grep -R CANARY .", needs: []string{"grep"}, refused: "follows symlinks"},
		{command: "grep -rR CANARY dir", needs: []string{"grep"}, refused: "follows symlinks"},
		{command: "grep --dereference-recursive CANARY dir", needs: []string{"grep"}, refused: "follows symlinks"},
		{command: "cp -rL dir copy", needs: []string{"cp"}, refused: "follows symlinks"},
		{command: "ls -LR dir", needs: []string{"ls"}, refused: "follows symlinks"},
		// The harmless counterparts.
		{command: "find . -name b.txt", needs: []string{"find"}, check: has("./sub/b.txt")},
		{command: "find -H . -name c.txt", needs: []string{"find"}, check: has("./dir/c.txt")},
		{command: "find -P dir", needs: []string{"find"}, check: has("dir/link-out")},
		{command: "grep -r alpha .", needs: []string{"grep"}, check: has("a.txt")},
		{command: "cp -r dir copy", needs: []string{"cp"}, check: e.exists("copy/link-out")},
		{command: "ls -R dir", needs: []string{"ls"}, check: has("link-out")},
	})
	// Nothing under proc_root was walked into the answers above; the
	// outside directory is still just the secret.
	ents, _ := os.ReadDir(filepath.Join(e.base, "outside"))
	var got []string
	for _, d := range ents {
		got = append(got, d.Name())
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "secret.txt" {
		t.Errorf("outside: %q", got)
	}
}
