package shexec

import (
	"sort"
	"strings"
)

// never maps the programs sh_exec never runs, even when the allowlist names
// them, to the reason. Each one runs other programs or code given in its
// arguments (or reads it from stdin or the terminal), so allowing it would
// allow everything: shells, interpreters, programs that exist to run a
// command (env, xargs, nice, timeout ...), remote shells, editors and pagers
// with a shell escape, schedulers and privilege changers.
var never = map[string]string{}

func init() {
	add := func(why string, names ...string) {
		for _, n := range names {
			never[n] = why
		}
	}
	add("a shell", "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "ash", "csh", "tcsh",
		"fish", "rbash", "yash", "elvish", "nu", "xonsh", "pwsh", "powershell", "busybox", "toybox",
		"eval", "exec", "command", "builtin", "source", ".")
	add("an interpreter that runs code from its arguments", "awk", "gawk", "mawk", "nawk", "sed", "gsed",
		"perl", "python", "python2", "python3", "ruby", "irb", "node", "nodejs", "deno", "bun",
		"php", "lua", "luajit", "tclsh", "wish", "expect", "R", "Rscript", "julia", "guile", "racket",
		"sbcl", "clisp", "ghci", "runghc", "scala", "groovy", "jshell", "osascript", "bc", "dc",
		"gdb", "lldb", "sqlite3", "psql", "mysql", "mariadb", "redis-cli", "mongo", "mongosh",
		"npx", "pnpx", "uvx", "pipx")
	add("a program that runs another program", "env", "xargs", "nice", "nohup", "timeout", "stdbuf",
		"setsid", "unshare", "nsenter", "chroot", "ionice", "taskset", "chrt", "flock", "time",
		"watch", "strace", "ltrace", "script", "parallel", "run-parts", "start-stop-daemon",
		"systemd-run", "at", "batch", "crontab", "dbus-launch", "ssh-agent", "xdg-open", "open",
		"sudo", "su", "doas", "pkexec", "runuser", "sg", "newgrp", "capsh", "firejail", "bwrap",
		"faketime", "fakeroot", "proot", "valgrind", "perf", "catchsegv")
	add("a remote shell or network relay", "ssh", "scp", "sftp", "slogin", "rsh", "rlogin", "telnet",
		"nc", "ncat", "netcat", "socat", "mosh")
	add("an editor or pager with a shell escape", "vi", "vim", "nvim", "view", "ex", "ed", "emacs",
		"emacsclient", "nano", "pico", "less", "more", "most", "man", "info", "mc", "tmux", "screen")
}

// prefixNever lists name prefixes refused like never, for versioned names
// (python3.12, perl5.36, ruby3.2, lua5.4, php8.2 ...).
var prefixNever = []string{"python", "perl", "ruby", "lua", "php", "node", "pypy", "tclsh", "wish"}

// neverReason returns why name is never run, or "".
func neverReason(name string) string {
	if why, ok := never[name]; ok {
		return why
	}
	for _, p := range prefixNever {
		if strings.HasPrefix(name, p) {
			rest := name[len(p):]
			if rest != "" && strings.Trim(rest, "0123456789.-") == "" {
				return "an interpreter that runs code from its arguments"
			}
		}
	}
	return ""
}

// Allowlist is the set of programs sh_exec may run, parsed from
// MCP_SH_ALLOW. The zero value allows nothing.
type Allowlist struct {
	names   map[string]bool
	ignored map[string]string // entry -> why it is ignored
}

// ParseAllowlist parses a comma-separated list of program names, such as
// MCP_SH_ALLOW="git,ls,wc". Spaces around names are dropped, empty entries
// skipped. An entry is a bare program name, looked up in PATH when it runs:
// an entry with a slash (a path), with a space or other shell character, or
// naming a program that is never run (see Check) is ignored; Ignored says
// which and why, and a command naming it is refused with that reason.
func ParseAllowlist(list string) Allowlist {
	a := Allowlist{names: map[string]bool{}, ignored: map[string]string{}}
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case !plainName(e):
			a.ignored[e] = "not a plain program name (no paths, spaces or shell characters)"
		case neverReason(e) != "":
			a.ignored[e] = neverReason(e) + ", never run even when MCP_SH_ALLOW lists it"
		default:
			a.names[e] = true
		}
	}
	return a
}

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
		return refusef("sh_exec is disabled: MCP_SH_ALLOW lists no programs")
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
