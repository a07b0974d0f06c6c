package shexec

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// never maps the programs sh_exec never runs, even when the allowlist names
// them, to the reason. Each one runs other programs or code given in its
// arguments (or reads it from stdin or the terminal), so allowing it would
// allow everything: shells, interpreters, programs that exist to run a
// command (env, xargs, nice, timeout ...), remote shells, editors and pagers
// with a shell escape, schedulers and privilege changers. Names are matched
// in every form [nameForms] gives, so Debian's alternative and versioned
// names (bash5.2, ksh93, sh.distrib, busybox.static, guile-3.0, vim.basic)
// are the same program.
var never = sync.OnceValue(neverTable)

// neverPrefixes are families refused by name prefix: every program whose
// name (in one of its forms) starts with one of them.
var neverPrefixes = []struct{ prefix, why string }{
	{"python", whyInterpreter}, {"pypy", whyInterpreter}, {"perl", whyInterpreter}, {"ruby", whyInterpreter},
	{"php", whyInterpreter}, {"lua", whyInterpreter}, {"node", whyInterpreter}, {"tclsh", whyInterpreter},
	{"wish", whyInterpreter}, {"guile", whyInterpreter}, {"busybox", whyShell}, {"toybox", whyShell},
	{"vim", whyEditor}, {"nvim", whyEditor}, {"gvim", whyEditor}, {"rvim", whyEditor}, {"evim", whyEditor},
	{"emacs", whyEditor}, {"sensible-", "a program that runs the user's editor, pager or browser"},
	{"git-", "a git helper program (git-shell, git-upload-pack ...); allow git itself"},
}

const (
	whyShell       = "a shell"
	whyInterpreter = "an interpreter that runs code from its arguments"
	whyWrapper     = "a program that runs another program"
	whyRemote      = "a remote shell or network relay"
	whyEditor      = "an editor or pager with a shell escape"
)

// neverTable builds never, on the first check of a program rather than
// when any tool process starts.
func neverTable() map[string]string {
	never := map[string]string{}
	add := func(why string, names ...string) {
		for _, n := range names {
			never[strings.ToLower(n)] = why
		}
	}
	add(whyShell, "sh", "bash", "dash", "zsh", "ksh", "lksh", "mksh", "pdksh", "oksh", "loksh", "posh",
		"ash", "csh", "tcsh", "fish", "rbash", "yash", "elvish", "nu", "xonsh", "pwsh", "powershell",
		"busybox", "toybox", "eval", "exec", "command", "builtin", "source", ".")
	add(whyInterpreter, "awk", "gawk", "mawk", "nawk", "original-awk", "sed", "gsed", "ssed",
		"perl", "python", "python2", "python3", "ruby", "irb", "node", "nodejs", "deno", "bun",
		"php", "lua", "luajit", "tclsh", "wish", "expect", "R", "Rscript", "julia", "guile", "racket",
		"sbcl", "clisp", "ghci", "runghc", "scala", "groovy", "jshell", "osascript", "bc", "dc",
		"gdb", "lldb", "sqlite3", "psql", "mysql", "mariadb", "redis-cli", "mongo", "mongosh",
		"npx", "pnpx", "uvx", "pipx", "m4", "cmake", "jq-repl", "gnuplot", "octave", "m4sugar")
	add(whyWrapper, "env", "xargs", "nice", "nohup", "timeout", "stdbuf",
		"setsid", "unshare", "nsenter", "chroot", "ionice", "taskset", "chrt", "flock", "time",
		"watch", "strace", "ltrace", "script", "parallel", "run-parts", "start-stop-daemon",
		"systemd-run", "at", "batch", "crontab", "dbus-launch", "ssh-agent", "xdg-open", "open",
		"sudo", "su", "doas", "pkexec", "runuser", "sg", "newgrp", "capsh", "firejail", "bwrap",
		"faketime", "fakeroot", "proot", "valgrind", "perf", "catchsegv", "x-terminal-emulator",
		"x-www-browser", "www-browser", "gnome-www-browser", "select-editor", "sensible-editor",
		"sensible-pager", "sensible-browser", "entr", "inotifywait-exec", "runcon", "setpriv",
		"prlimit", "nsjail", "systemd-nspawn", "lxc-attach", "docker", "podman", "kubectl")
	add(whyRemote, "ssh", "scp", "sftp", "slogin", "rsh", "rlogin", "telnet",
		"nc", "ncat", "netcat", "socat", "mosh")
	add(whyEditor, "vi", "vim", "nvim", "view", "rview", "gview", "vimdiff", "ex", "rex", "ed", "red", "editor", "emacs",
		"emacsclient", "nano", "rnano", "pico", "jed", "joe", "mcedit", "less", "more", "most", "pg",
		"pager", "man", "info", "mc", "tmux", "screen", "lesspipe", "lessfile")
	return never
}

// multiCall are the programs that are many: they run the applet their
// argv[0] names, so a link to one is judged by its own name.
var multiCall = setOf("busybox", "toybox")

// runners are programs that run code from the project's own files
// (Makefile, package.json scripts, go.mod toolchains and tests, build
// scripts, compiler plugins and wrappers): with the write tools enabled,
// allowing one gives the client command execution. They run only when
// MCP_SH_ALLOW_RUNNERS names them too, so that the operator says so.
var runners = setOf(
	"make", "gmake", "bmake", "ninja", "meson", "scons", "bazel", "bazelisk", "go",
	"cargo", "rustc", "rustup", "gcc", "cc", "c++", "g++", "clang", "clang++", "tcc", "cpp",
	"javac", "java", "mvn", "gradle", "gradlew", "ant", "sbt", "npm", "pnpm", "yarn", "corepack",
	"pip", "pip3", "poetry", "pipenv", "uv", "tox", "nox", "pytest", "bundle", "bundler", "rake",
	"gem", "composer", "dotnet", "swift", "zig", "helm", "terraform", "ansible", "ansible-playbook",
	"vagrant", "nix", "nix-shell", "nix-build", "just", "task", "mage", "ctest", "eslint",
	"prettier", "jest", "vitest", "mocha", "webpack", "vite", "rollup", "babel", "tsc", "ts-node",
	"hg", // a repository's .hg/hgrc loads extensions (Python) and runs hooks
)

// nameForms returns the names program name is matched under: the name
// lowercased; without a cross-compiler triplet (x86_64-linux-gnu-gcc-12);
// without a variant suffix (.static, .distrib, .basic, .tiny, -static
// ...); and without a trailing version (bash5.2, ksh93, guile-3.0,
// python3.12).
func nameForms(name string) []string {
	n := strings.ToLower(name)
	forms := []string{n}
	if i := strings.Index(n, "-linux-gnu-"); i >= 0 {
		n = n[i+len("-linux-gnu-"):]
		forms = append(forms, n)
	}
	for changed := true; changed; {
		changed = false
		for _, suf := range []string{".static", "-static", ".distrib", ".basic", ".tiny", ".gtk3",
			".gtk", ".nox", ".athena", ".lucid", ".real", ".orig", ".bin", "-nox", ".exe"} {
			if strings.HasSuffix(n, suf) && len(n) > len(suf) {
				n = strings.TrimSuffix(n, suf)
				changed = true
			}
		}
	}
	forms = append(forms, n)
	if v := strings.TrimRight(n, "0123456789.-_"); v != "" && v != n {
		forms = append(forms, v)
	}
	return forms
}

// neverReason returns why name is never run, or "".
func neverReason(name string) string {
	for _, f := range nameForms(name) {
		if why, ok := never()[f]; ok {
			return why
		}
		for _, p := range neverPrefixes {
			if strings.HasPrefix(f, p.prefix) {
				return p.why
			}
		}
	}
	return ""
}

// isMultiCall reports whether name, in one of its forms, is busybox or
// toybox.
func isMultiCall(name string) bool {
	for _, f := range nameForms(name) {
		if multiCall.has(f) {
			return true
		}
	}
	return false
}

// isRunner reports whether name, in one of its forms, is a runner.
func isRunner(name string) bool {
	for _, f := range nameForms(name) {
		if runners.has(f) {
			return true
		}
	}
	return false
}

// Allowlist is the set of programs sh_exec may run, parsed from
// MCP_SH_ALLOW and MCP_SH_ALLOW_RUNNERS. The zero value allows nothing.
type Allowlist struct {
	names   map[string]bool
	runners map[string]bool   // runners the operator acknowledged
	ignored map[string]string // entry -> why it is ignored
}

// ParseAllowlist parses the comma-separated program names of MCP_SH_ALLOW
// (list, such as "git,ls,wc") and of MCP_SH_ALLOW_RUNNERS (runnerList, such
// as "make,npm"). Spaces around names are dropped, empty entries skipped.
// An entry is a bare program name, looked up in PATH when it runs: an entry
// with a slash (a path), with a space or other shell character, or naming a
// program that is never run (see Check) is ignored; so is a runner (a
// program that runs the project's code: make, npm, go, cargo, gcc ...) that
// runnerList does not name too. Ignored says which and why, and a command
// naming it is refused with that reason.
func ParseAllowlist(list, runnerList string) Allowlist {
	a := Allowlist{names: map[string]bool{}, runners: map[string]bool{}, ignored: map[string]string{}}
	for _, e := range strings.Split(runnerList, ",") {
		if e = strings.TrimSpace(e); e != "" {
			a.runners[e] = true
		}
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case !plainName(e):
			a.ignored[e] = "not a plain program name (no paths, spaces or shell characters)"
		case neverReason(e) != "":
			a.ignored[e] = neverReason(e) + ", never run even when MCP_SH_ALLOW lists it"
		case isRunner(e) && !a.runners[e]:
			a.ignored[e] = runnerRefusal
		default:
			a.names[e] = true
		}
	}
	return a
}

const runnerRefusal = "runs the project's own code (build files, scripts, tests): with the write tools a client could run any command through it, so it runs only when MCP_SH_ALLOW_RUNNERS names it too"

// plainName reports whether s is a bare program name: letters, digits and
// ._+- only, not starting with "-" or ".".
func plainName(s string) bool {
	if s == "" || s[0] == '-' || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// Names returns the allowed programs, sorted.
func (a Allowlist) Names() []string {
	out := make([]string, 0, len(a.names))
	for n := range a.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Ignored returns the entries that were left out, each with the reason,
// sorted.
func (a Allowlist) Ignored() []string {
	out := make([]string, 0, len(a.ignored))
	for n, why := range a.ignored {
		out = append(out, n+": "+why)
	}
	sort.Strings(out)
	return out
}

// Allows reports whether name is on the allowlist.
func (a Allowlist) Allows(name string) bool { return a.names[name] }

// Check decides whether argv (as Split returns it) may run: the program
// argv[0] must be a plain name on the allowlist and not one that is never
// run, and no argument may turn it into something that runs another
// program (see checkArgs). A refusal wraps ErrRefused.
func (a Allowlist) Check(argv []string) error {
	if len(argv) == 0 {
		return refusef("empty command")
	}
	prog := argv[0]
	if len(a.names) == 0 && len(a.ignored) == 0 {
		return refusef("sh_exec is disabled: MCP_SH_ALLOW lists no programs; to enable it, the operator starts mcp-route with --env MCP_SH_ALLOW=PROG,PROG naming the programs it may run (e.g. --env MCP_SH_ALLOW=git,ls)")
	}
	if strings.ContainsRune(prog, '/') {
		return refusef("%q: the program must be a bare name on the allowlist, not a path", prog)
	}
	if why := neverReason(prog); why != "" {
		return refusef("%q is %s: sh_exec never runs it, even when MCP_SH_ALLOW lists it", prog, why)
	}
	if why, ok := a.ignored[prog]; ok {
		return refusef("%q: %s", prog, why)
	}
	if !a.names[prog] {
		return refusef("%q is not on the allowlist (MCP_SH_ALLOW: %s)", prog, strings.Join(a.Names(), ", "))
	}
	return checkArgs(prog, argv[1:])
}

// CheckProgram decides whether the file LookPath found for the allowed
// name may run, by what it is rather than what it is called: the symlinks
// (and so /etc/alternatives) are resolved, and the real file's name is
// matched like a name on the command line. editor -> vim.basic, cc ->
// x86_64-linux-gnu-gcc-12 and awk -> mawk are refused, or need
// MCP_SH_ALLOW_RUNNERS, as those programs are. A link to busybox or
// toybox is judged by its name, since they run the applet argv[0] names.
func (a Allowlist) CheckProgram(name, path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return refusef("%q: cannot resolve %s: %v", name, path, err)
	}
	base := filepath.Base(real)
	if isMultiCall(base) && neverReason(name) == "" {
		// busybox and toybox run the applet argv[0] names, and argv[0] is
		// the allowed name: ls -> busybox runs ls.
		return nil
	}
	if why := neverReason(base); why != "" {
		return refusef("%q is %s (%s is %s): sh_exec never runs it, even when MCP_SH_ALLOW lists it", name, base, path, why)
	}
	if isRunner(base) && !a.runners[name] && !a.runners[base] {
		return refusef("%q is %s, which %s", name, base, runnerRefusal)
	}
	return nil
}
