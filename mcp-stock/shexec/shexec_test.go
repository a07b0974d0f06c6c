package shexec

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"ls -la", []string{"ls", "-la"}},
		{"  git   log  --oneline ", []string{"git", "log", "--oneline"}},
		{`grep 'a;b|c' file`, []string{"grep", "a;b|c", "file"}},
		{`echo "x > y" '&&' z`, []string{"echo", "x > y", "&&", "z"}},
		{`echo '$(touch canary)' '$HOME' '` + "`id`" + `'`, []string{"echo", "$(touch canary)", "$HOME", "`id`"}},
		{`find . -name '*.go'`, []string{"find", ".", "-name", "*.go"}},
		{`echo a\;b`, []string{"echo", "a;b"}},
		{`echo "it's"`, []string{"echo", "it's"}},
		{`echo ''`, []string{"echo", ""}},
		{`echo a$ "b$" c#d`, []string{"echo", "a$", "b$", "c#d"}},
		{`git log HEAD@{1}`, []string{"git", "log", "HEAD@{1}"}},
	} {
		got, err := Split(tc.line)
		if err != nil {
			t.Errorf("Split(%q): %v", tc.line, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Split(%q) (-want +got):\n%s", tc.line, diff)
		}
	}
}

func TestSplitRefuses(t *testing.T) {
	for _, line := range []string{
		"", "   ", "ls\x00x",
		"ls; touch canary", "ls && touch canary", "ls || touch canary", "ls | touch canary",
		"ls & touch canary", "ls > canary", "ls >> canary", "ls < x", "ls 2>canary",
		"(touch canary)", "ls\ntouch canary", "ls\rtouch canary",
		"echo $(touch canary)", "echo `touch canary`", `echo "$(touch canary)"`,
		"echo \"`touch canary`\"", "echo $HOME", "echo ${HOME}", `echo "$HOME"`, "echo $?", "echo $$",
		"ls *.go", "ls ?", "ls [ab]", "ls ~", "ls ~root", "ls # comment",
		`echo 'unterminated`, `echo "unterminated`, `echo trailing\`,
		strings.Repeat("a", MaxCommandLen+1),
	} {
		if got, err := Split(line); !errors.Is(err, ErrRefused) {
			t.Errorf("Split(%q) = %q, %v; want ErrRefused", line, got, err)
		}
	}
}

func TestAllowlist(t *testing.T) {
	a := ParseAllowlist(" git, ls ,,wc,bash,/bin/cat,python3.12,cat x,sed", "")
	if diff := cmp.Diff([]string{"git", "ls", "wc"}, a.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got := len(a.Ignored()); got != 5 {
		t.Errorf("Ignored = %q, want 5 entries", a.Ignored())
	}
	for _, argv := range [][]string{
		{"ls", "-la"}, {"wc", "-l", "f"}, {"git", "status"}, {"git", "-C", "sub", "log", "--oneline"},
		{"git", "--no-pager", "diff", "--stat"}, {"git", "--version"}, {"git", "log", "--color=never"},
		{"git", "grep", "--recurse-submodules", "x"},
		{"git", "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-m", "x"},
		{"git", "-cuser.name=A", "log", "-c"},
		{"git", "clone", "-c", "init.defaultBranch=main", "--config=user.name=x", "a", "b"},
		{"git", "log", "-c", "-p"},
	} {
		if err := a.Check(argv); err != nil {
			t.Errorf("Check(%q): %v", argv, err)
		}
	}
	for _, argv := range [][]string{
		{"cat", "f"}, {"bash", "-c", "id"}, {"/bin/ls"}, {"./ls"}, {"sed", "s/a/b/e"}, {"python3.12"},
	} {
		if err := a.Check(argv); !errors.Is(err, ErrRefused) {
			t.Errorf("Check(%q) = %v, want ErrRefused", argv, err)
		}
	}
	var none Allowlist
	if err := none.Check([]string{"ls"}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("zero Allowlist: %v", err)
	}
	if err := ParseAllowlist("", "").Check([]string{"ls"}); !errors.Is(err, ErrRefused) {
		t.Errorf("empty MCP_SH_ALLOW: %v", err)
	}
}

// TestNeverEvenIfListed: shells, interpreters and wrappers are refused
// whatever the allowlist says.
func TestNeverEvenIfListed(t *testing.T) {
	names := []string{"sh", "bash", "zsh", "busybox", "awk", "gawk", "sed", "perl", "perl5.36", "python", "python3",
		"ruby", "node", "php8.2", "lua5.4", "env", "xargs", "nice", "timeout", "sudo", "ssh", "scp", "vim", "less",
		"sqlite3", "nohup", "strace", "npx"}
	a := ParseAllowlist(strings.Join(names, ","), "")
	for _, n := range names {
		err := a.Check([]string{n, "x"})
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "never") {
			t.Errorf("Check(%s) = %v, want a never refusal", n, err)
		}
	}
}

func TestArgumentRefusals(t *testing.T) {
	a := ParseAllowlist("git,find,tar,rsync,zip,make,go,npm,sort,ls,grep,curl", "make,go,npm")
	for _, argv := range [][]string{
		{"git", "-c", "alias.x=!touch canary", "x"},
		{"git", "-calias.x=!touch canary", "x"},
		{"git", "--config-env=core.pager=X", "log"},
		{"git", "--exec-path=/tmp", "status"},
		{"git", "x"}, // an alias
		{"git", "config", "alias.x", "!touch canary"},
		{"git", "submodule", "foreach", "touch canary"},
		{"git", "bisect", "run", "touch"},
		{"git", "filter-branch", "--tree-filter", "touch canary"},
		{"git", "difftool", "-x", "touch"},
		{"git", "help", "log"},
		{"git", "clone", "--upload-pack=touch canary", "repo"},
		{"git", "clone", "--upload-p=touch canary", "repo"},
		{"git", "clone", "-u", "touch canary", "repo"},
		{"git", "clone", "ext::sh -c touch% canary", "x"},
		{"git", "clone", "--template=tpl", "a", "b"},
		{"git", "clone", "-c", "core.fsmonitor=touch canary", "a", "b"},
		{"git", "clone", "--config", "core.fsmonitor=touch canary", "a", "b"},
		{"git", "clone", "--conf=core.fsmonitor=touch canary", "a", "b"},
		{"git", "clone", "-ccore.fsmonitor=touch canary", "a", "b"},
		{"git", "-c", "USER.NAME.x=1", "-c", "core.pager=touch canary", "log"},
		{"git", "-c"},
		{"git", "fetch", "--upload-pack", "touch canary"},
		{"git", "push", "--receive-pack=touch canary"},
		{"git", "push", "--exec=touch canary"},
		{"git", "archive", "--remote=x", "--exec=touch canary"},
		{"git", "rebase", "-x", "touch canary"},
		{"git", "rebase", "--exec", "touch canary"},
		{"git", "rebase", "-ix", "touch canary"},
		{"git", "grep", "-Otouch", "x"},
		{"git", "grep", "--open-files-in-pager=touch", "x"},
		{"find", ".", "-exec", "touch", "canary", ";"},
		{"find", ".", "-execdir", "touch", "canary", "+"},
		{"find", ".", "-ok", "touch", "canary", ";"},
		{"find", ".", "-okdir", "touch", "canary", ";"},
		{"find", ".", "-delete"},
		{"find", ".", "-fprint", "canary"},
		{"find", ".", "-fprintf", "canary", "%p"},
		{"tar", "-cf", "a.tar", "--to-command=touch canary", "x"},
		{"tar", "-c", "--use-compress-program=touch canary", "-f", "a.tar", "x"},
		{"tar", "-c", "--use-compress-prog=touch", "-f", "a.tar", "x"},
		{"tar", "-cIx", "-f", "a.tar", "x"},
		{"tar", "cIf", "x", "a.tar"},
		{"tar", "-cf", "host:a.tar", "x"},
		{"tar", "-cf", "a.tar", "--checkpoint=1", "--checkpoint-action=exec=touch canary", "x"},
		{"tar", "-xf", "a.tar", "--rsh-command=touch"},
		{"tar", "-xf", "a.tar", "--info-script=touch"},
		{"rsync", "-e", "touch canary", "a", "b"},
		{"rsync", "-ave", "touch", "a", "b"},
		{"rsync", "--rsh=touch canary", "a", "b"},
		{"rsync", "--rsync-path=touch canary", "a", "b"},
		{"rsync", "a", "host:b"},
		{"zip", "-T", "-TT", "touch canary", "a.zip", "x"},
		{"zip", "--unzip-command", "touch", "a.zip", "x"},
		{"make", "--eval=$(shell touch canary)"},
		{"make", "-E", "x:=$(shell touch canary)"},
		{"make", "X=$(shell touch canary)"},
		{"make", "SHELL=/bin/touch"},
		{"go", "generate", "./..."},
		{"go", "env", "-w", "GOFLAGS=-toolexec=touch"},
		{"go", "build", "-toolexec=touch canary", "."},
		{"go", "test", "-exec", "touch", "."},
		{"go", "vet", "-vettool=/bin/touch", "."},
		{"npm", "exec", "touch", "canary"},
		{"npm", "x", "touch"},
		{"sort", "--compress-program=touch", "f"},
		{"grep", "--exec", "x"},
		{"ls", "--pager=x"},
		{"curl", "--proxy-command=x"},
	} {
		if err := a.Check(argv); !errors.Is(err, ErrRefused) {
			t.Errorf("Check(%q) = %v, want ErrRefused", argv, err)
		}
	}
	for _, argv := range [][]string{
		{"find", ".", "-name", "*.go", "-type", "f"},
		{"tar", "-tf", "a.tar"},
		{"tar", "-czf", "a.tgz", "dir"},
		{"rsync", "-av", "a/", "b/"},
		{"zip", "-ry", "a.zip", "dir"},
		{"make", "-C", "sub", "test"},
		{"go", "test", "./..."},
		{"go", "env", "GOOS"},
		{"npm", "test"},
		{"sort", "-r", "f"},
		{"git", "log", "-p", "--", "file"},
		{"git", "rebase", "main"},
		{"git", "clone", "src", "dst"},
	} {
		if err := a.Check(argv); err != nil {
			t.Errorf("Check(%q): %v", argv, err)
		}
	}
}

func TestPathCandidates(t *testing.T) {
	for word, want := range map[string][]string{
		"file":                  {"file"},
		"-la":                   {"a"},
		"-C..":                  {".."},
		"-f/etc/passwd":         {"/etc/passwd"},
		"--directory=/":         {"/"},
		"--all":                 nil,
		"if=/dev/sda":           {"if=/dev/sda", "/dev/sda"},
		"file:///etc/passwd":    {"file:///etc/passwd", "/etc/passwd"},
		"-":                     {"-"},
		"--output=file:/x":      {"file:/x", "/x"},
		"-n":                    nil,
		"-I=/usr/include":       {"/usr/include", "=/usr/include"},
		"../outside":            {"../outside"},
		"/abs":                  {"/abs"},
		"@/etc/passwd":          {"@/etc/passwd", "/etc/passwd"},
		"--data=@../x":          {"@../x", "../x"},
		"f=</etc/shadow":        {"f=</etc/shadow", "</etc/shadow", "/etc/shadow"},
		"some pattern with / ?": {"some pattern with / ?"},
	} {
		if diff := cmp.Diff(want, PathCandidates(word)); diff != "" {
			t.Errorf("PathCandidates(%q) (-want +got):\n%s", word, diff)
		}
	}
}

func TestLookPath(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A planted "ls" inside the root must never be picked, nor one found
	// through a relative PATH entry.
	if err := os.WriteFile(filepath.Join(bin, "ls"), []byte("#!/bin/sh\ntouch canary\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sys, err := exec.LookPath("ls")
	if err != nil {
		t.Skip("no ls in PATH")
	}
	pathList := bin + ":bin:.:" + filepath.Dir(sys)
	got, err := LookPath("ls", pathList, root)
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join(filepath.Dir(sys), "ls") {
		t.Errorf("LookPath = %q, want the system ls", got)
	}
	if _, err := LookPath("ls", bin, root); err == nil {
		t.Error("LookPath found the planted ls inside the root")
	}
	if _, err := LookPath("../ls", pathList, root); err == nil {
		t.Error("LookPath accepted a name with a slash")
	}
	if _, err := LookPath("no-such-program-here", pathList, root); err == nil {
		t.Error("LookPath found a missing program")
	}
}

func TestEnvMinimal(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/u", "SECRET_TOKEN": "x", "MCP_SH_ALLOW": "ls"}[k]
	}
	env := Env(getenv, []string{"ls"}, "/srv/root")
	joined := strings.Join(env, "\n")
	for _, bad := range []string{"SECRET_TOKEN", "MCP_SH_ALLOW", "GIT_CONFIG"} {
		if strings.Contains(joined, bad) {
			t.Errorf("Env leaks %s:\n%s", bad, joined)
		}
	}
	if !strings.Contains(joined, "PATH=/usr/bin:/bin") || !strings.Contains(joined, "HOME=/home/u") {
		t.Errorf("Env lacks PATH or HOME:\n%s", joined)
	}
	if g := strings.Join(Env(getenv, []string{"git", "log"}, "/srv/root"), "\n"); !strings.Contains(g, "GIT_CONFIG_KEY_0=core.hooksPath") {
		t.Errorf("git Env lacks the hooks setting:\n%s", g)
	}
	if e := Env(func(string) string { return "" }, []string{"ls"}, "/srv/root"); e[0] != "PATH="+DefaultPath {
		t.Errorf("Env without PATH: %q", e[0])
	}
}

func mustLook(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s in PATH", name)
	}
	return p
}

func TestRunOutputAndExit(t *testing.T) {
	dir := t.TempDir()
	sh := mustLook(t, "sh")
	r, err := Run(context.Background(), Command{
		Path: sh, Argv: []string{"sh", "-c", "pwd; echo err >&2; exit 3"},
		Dir: dir, Env: []string{"PATH=" + DefaultPath}, Timeout: time.Minute, MaxOutput: 1024,
	})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(string(r.Stdout)); got != dir && got != real {
		t.Errorf("stdout %q, want the working directory %q", got, dir)
	}
	if string(r.Stderr) != "err\n" || r.ExitCode != 3 || r.TimedOut {
		t.Errorf("Result %+v", r)
	}
}

func TestRunOutputCap(t *testing.T) {
	sh := mustLook(t, "sh")
	r, err := Run(context.Background(), Command{
		Path: sh, Argv: []string{"sh", "-c", "i=0; while [ $i -lt 200 ]; do echo 0123456789; i=$((i+1)); done"},
		Dir: t.TempDir(), Env: []string{"PATH=" + DefaultPath}, Timeout: time.Minute, MaxOutput: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stdout) != 100 || r.StdoutTotal != 2200 || r.ExitCode != 0 {
		t.Errorf("kept %d of %d bytes, exit %d; want 100 of 2200, exit 0", len(r.Stdout), r.StdoutTotal, r.ExitCode)
	}
}

// TestRunTimeoutKillsGroup: the timeout kills the program and the
// background child it started, which holds stdout open; Run returns.
func TestRunTimeoutKillsGroup(t *testing.T) {
	sh := mustLook(t, "sh")
	r, err := Run(context.Background(), Command{
		Path: sh, Argv: []string{"sh", "-c", "sleep 300 & sleep 300"},
		Dir: t.TempDir(), Env: []string{"PATH=" + DefaultPath}, Timeout: 200 * time.Millisecond, MaxOutput: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.TimedOut || r.Signal != "killed" || r.ExitCode != -1 {
		t.Errorf("Result %+v, want timed out and killed", r)
	}
}

// TestRunBackgroundChildDies: a child left running in the background when
// the program exits is killed with the group, so it cannot act later.
func TestRunBackgroundChildDies(t *testing.T) {
	dir := t.TempDir()
	sh := mustLook(t, "sh")
	canary := filepath.Join(dir, "canary")
	r, err := Run(context.Background(), Command{
		Path: sh, Argv: []string{"sh", "-c", "(sleep 1; touch " + canary + ") >/dev/null 2>&1 & echo started"},
		Dir: dir, Env: []string{"PATH=" + DefaultPath}, Timeout: time.Minute, MaxOutput: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Stdout) != "started\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	// The sleep is the point: the background child would touch the canary
	// after one second had it survived.
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(canary); err == nil {
		t.Error("background child outlived the call")
	}
}

// TestRunOverflowKills: a program that writes past MaxDrain is killed and
// the result says so.
func TestRunOverflowKills(t *testing.T) {
	sh := mustLook(t, "sh")
	defer func(old int64) { MaxDrain = old }(MaxDrain)
	MaxDrain = 1 << 16
	r, err := Run(context.Background(), Command{
		Path: sh, Argv: []string{"sh", "-c", "while :; do echo 0123456789abcdef; done"},
		Dir: t.TempDir(), Env: []string{"PATH=" + DefaultPath}, Timeout: time.Minute, MaxOutput: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Overflowed || r.TimedOut || len(r.Stdout) != 100 || r.StdoutTotal <= MaxDrain {
		t.Errorf("Result: overflowed %v, timed out %v, kept %d of %d", r.Overflowed, r.TimedOut, len(r.Stdout), r.StdoutTotal)
	}
}
