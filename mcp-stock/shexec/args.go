package shexec

import (
	"strings"
)

// runOptions are long options that make a program run a command named in
// their value (or, for a few, run one by default). They are refused for
// every program, spelled --NAME, --NAME=VALUE or as any abbreviation
// getopt_long and git's parse-options would accept (--upload-p=cmd).
var runOptions = []string{
	"to-command", "use-compress-program", "compress-program", "rsh-command", "rsh",
	"rsync-path", "upload-pack", "receive-pack", "exec", "exec-path", "execdir",
	"checkpoint-action", "info-script", "new-volume-script", "rmt-command",
	"eval", "toolexec", "vettool", "extcmd", "pager", "editor", "shell", "command",
	"interpreter", "unzip-command", "diff-program", "proxy-command",
	"open-files-in-pager", "ssh-command", "gpg-program",
}

// runFlags are single-dash long options with the same effect (find's
// -exec family, the go tool's -toolexec, -exec and -vettool), refused for
// every program, as -NAME or -NAME=VALUE.
var runFlags = []string{"exec", "execdir", "ok", "okdir", "toolexec", "vettool"}

// gitCommands are the git subcommands sh_exec runs. Anything else is
// refused: git would run an alias from the repository's configuration
// ("!cmd" aliases run a shell), and these are left out on purpose:
// config (writes aliases and hooks paths), submodule (foreach), bisect
// (run), filter-branch, difftool, mergetool, for-each-repo, help (starts
// a browser or man), daemon, instaweb, send-email, credential*, shell and
// the remote helpers.
var gitCommands = setOf(
	"add", "am", "annotate", "apply", "archive", "blame", "branch", "bundle",
	"cat-file", "check-attr", "check-ignore", "check-mailmap", "checkout",
	"checkout-index", "cherry", "cherry-pick", "clean", "clone", "commit",
	"commit-graph", "commit-tree", "count-objects", "describe", "diff",
	"diff-files", "diff-index", "diff-tree", "fetch", "for-each-ref",
	"format-patch", "fsck", "gc", "grep", "hash-object", "init", "log",
	"ls-files", "ls-remote", "ls-tree", "merge", "merge-base", "merge-file",
	"mktag", "mktree", "mv", "name-rev", "notes", "pull", "push", "range-diff",
	"read-tree", "rebase", "reflog", "remote", "repack", "replace", "reset",
	"restore", "rev-list", "rev-parse", "revert", "rm", "shortlog", "show",
	"show-branch", "show-ref", "sparse-checkout", "stash", "status",
	"stripspace", "switch", "symbolic-ref", "tag", "update-index",
	"update-ref", "var", "verify-commit", "verify-pack", "verify-tag",
	"version", "whatchanged", "worktree", "write-tree",
)

// gitGlobalsWithValue are git's global options that take the next word as
// their value.
var gitGlobalsWithValue = setOf("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds", "--attr-source")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// checkArgs refuses arguments that turn prog into a runner of other
// programs: the options in runOptions and runFlags for every program, and
// per program:
//
//   - git: -c and clone's -c/--config except for the keys in
//     gitSafeConfig (configuration can name programs: alias.x=!cmd,
//     core.sshCommand, core.fsmonitor ...), --config-env, --exec-path, a
//     subcommand that is not in the built-in list above, git grep -O,
//     rebase -x, clone -u and --template, and the ext:: and fd:: transports.
//   - find: -delete, -fprint, -fprint0, -fprintf, -fls (find stays a
//     search; -exec and -ok are refused for everyone).
//   - tar: -I and -F in short-option clusters (compress program, info
//     script), and archive names with ":" (a remote archive through rsh).
//   - rsync: -e in short-option clusters (remote shell) and any word with
//     ":" (a remote host, reached through ssh).
//   - zip: -TT (the test command).
//   - make: -E and any word with "$" or a backquote (functions such as
//     $(shell ...) in variable assignments), and SHELL=.
//   - go: env -w (persistent GOFLAGS such as -toolexec) and generate.
//   - npm, pnpm, yarn: exec, x, dlx, explore.
func checkArgs(prog string, args []string) error {
	for _, a := range args {
		if err := checkRunOption(a); err != nil {
			return err
		}
	}
	switch prog {
	case "git":
		return checkGit(args)
	case "find":
		for _, a := range args {
			switch strings.SplitN(a, "=", 2)[0] {
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return refusef("find %s: sh_exec keeps find a search (use fs_delete, fs_write)", a)
			}
		}
	case "tar":
		for i, a := range args {
			if cluster(a) && strings.ContainsAny(a[1:], "IF") {
				return refusef("tar %s: -I and -F run a program", a)
			}
			if i == 0 && !strings.HasPrefix(a, "-") && strings.ContainsAny(a, "IF") {
				return refusef("tar %s: I and F run a program", a)
			}
			if strings.Contains(a, ":") {
				return refusef("tar %q: a name with \":\" is a remote archive, reached through a remote shell", a)
			}
		}
	case "rsync":
		for _, a := range args {
			if cluster(a) && strings.Contains(a[1:], "e") {
				return refusef("rsync %s: -e runs a remote shell", a)
			}
			if strings.Contains(a, ":") {
				return refusef("rsync %q: a name with \":\" is a remote host, reached through a remote shell", a)
			}
		}
	case "zip":
		for _, a := range args {
			if a == "-TT" || strings.HasPrefix(a, "-TT") {
				return refusef("zip %s: runs a command", a)
			}
		}
	case "make", "gmake":
		for _, a := range args {
			switch {
			case a == "-E" || strings.HasPrefix(a, "-E"):
				return refusef("%s %s: evaluates make code", prog, a)
			case strings.ContainsAny(a, "$`"):
				return refusef("%s %q: make would expand it, and $(shell ...) runs a command", prog, a)
			case strings.HasPrefix(a, "SHELL=") || strings.HasPrefix(a, ".SHELLFLAGS="):
				return refusef("%s %s: sets the shell recipes run in", prog, a)
			}
		}
	case "go":
		sub := firstOperand(args)
		switch {
		case sub == "generate":
			return refusef("go generate runs the commands its source files name")
		case sub == "env":
			for _, a := range args {
				if a == "-w" || a == "-u" {
					return refusef("go env %s: writes the go tool's persistent configuration", a)
				}
			}
		}
	case "npm", "pnpm", "yarn":
		switch firstOperand(args) {
		case "exec", "x", "dlx", "explore":
			return refusef("%s %s runs an arbitrary command", prog, firstOperand(args))
		}
	}
	return nil
}

// checkRunOption refuses a runOptions or runFlags option in word a.
func checkRunOption(a string) error {
	switch {
	case strings.HasPrefix(a, "--") && len(a) > 2:
		name := strings.SplitN(a[2:], "=", 2)[0]
		for _, o := range runOptions {
			if strings.HasPrefix(o, name) {
				return refusef("option %s (--%s) can run another program", a, o)
			}
		}
	case strings.HasPrefix(a, "-") && len(a) > 1:
		name := strings.SplitN(a[1:], "=", 2)[0]
		for _, o := range runFlags {
			if name == o {
				return refusef("option %s can run another program", a)
			}
		}
	}
	return nil
}

// cluster reports whether a is a cluster of short options (-xvf).
func cluster(a string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-'
}

// firstOperand returns the first word that is not an option.
func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// gitSafeConfig are the configuration keys git -c (and git clone -c /
// --config) may set: none of them names a program.
var gitSafeConfig = setOf("user.name", "user.email", "init.defaultbranch", "core.quotepath",
	"color.ui", "advice.detachedhead", "log.showsignature", "commit.gpgsign", "tag.gpgsign")

// checkGitConfig refuses a KEY=VALUE git setting unless KEY is in
// gitSafeConfig.
func checkGitConfig(opt, kv string) error {
	key, _, _ := strings.Cut(kv, "=")
	if !gitSafeConfig[strings.ToLower(key)] {
		return refusef("git %s %s: configuration on the command line can name programs to run (alias.x=!cmd, core.pager ...); the keys sh_exec accepts are user.name, user.email, init.defaultBranch, core.quotePath, color.ui, advice.detachedHead, log.showSignature, commit.gpgSign and tag.gpgSign", opt, kv)
	}
	return nil
}

func checkGit(args []string) error {
	sub := ""
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		name := strings.SplitN(a, "=", 2)[0]
		switch {
		case a == "-c":
			if i+1 >= len(args) {
				return refusef("git -c: missing KEY=VALUE")
			}
			if err := checkGitConfig("-c", args[i+1]); err != nil {
				return err
			}
			i++
			continue
		case strings.HasPrefix(a, "-c"):
			if err := checkGitConfig("-c", a[2:]); err != nil {
				return err
			}
			continue
		case name == "--config-env" || name == "--exec-path":
			return refusef("git %s can run another program", a)
		case gitGlobalsWithValue[a]:
			i++ // its value is the next word
			continue
		case strings.HasPrefix(a, "-"):
			continue
		}
		sub = a
		break
	}
	if sub == "" {
		return nil // git --version, git -C dir: nothing runs
	}
	if !gitCommands[sub] {
		return refusef("git %s: not a git command sh_exec runs (aliases from a repository's configuration can run a shell)", sub)
	}
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case sub == "clone" && (a == "-c" || len(name) > 4 && strings.HasPrefix("--config", name) && !hasValue):
			if j+1 >= len(rest) {
				return refusef("git clone %s: missing KEY=VALUE", a)
			}
			if err := checkGitConfig(a, rest[j+1]); err != nil {
				return err
			}
			j++
		case sub == "clone" && len(name) > 4 && strings.HasPrefix("--config", name):
			if err := checkGitConfig(name, value); err != nil {
				return err
			}
		case sub == "clone" && strings.HasPrefix(a, "-c"):
			if err := checkGitConfig("-c", a[2:]); err != nil {
				return err
			}
		case sub == "grep" && (strings.HasPrefix(a, "-O") || strings.HasPrefix(a, "--open-files")):
			return refusef("git grep %s: runs a pager", a)
		case sub == "rebase" && (a == "-x" || strings.HasPrefix(a, "-x") || cluster(a) && strings.Contains(a, "x")):
			return refusef("git rebase %s: runs a command", a)
		case sub == "clone" && (a == "-u" || strings.HasPrefix(a, "-u")):
			return refusef("git clone %s: names the upload-pack program", a)
		case sub == "clone" && name == "--template":
			return refusef("git clone %s: copies hooks from a template directory", a)
		case strings.Contains(a, "ext::") || strings.HasPrefix(a, "fd::"):
			return refusef("git %s %q: the ext and fd transports run commands", sub, a)
		}
	}
	return nil
}

// PathCandidates returns the parts of an argument word that could name a
// file, for the caller to check against the root: the word itself when it
// is not an option; the value of --opt=VALUE and of NAME=VALUE (dd
// if=/etc/passwd, make DIR=..); the value attached to a short option
// (-C.., -I/usr/include); the path of a file: URL; and FILE in @FILE and
// <FILE (curl -d @/etc/passwd, response files). It is deliberately
// wide: a pattern such as ".." or "/etc/" is checked like a path, and so
// refused when it would name a place outside the root.
func PathCandidates(word string) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	switch {
	case strings.HasPrefix(word, "--"):
		if _, v, ok := strings.Cut(word, "="); ok {
			add(v)
		}
	case strings.HasPrefix(word, "-") && len(word) > 1:
		if _, v, ok := strings.Cut(word, "="); ok {
			add(v)
		}
		if len(word) > 2 {
			add(word[2:])
		}
	default:
		add(word)
		if _, v, ok := strings.Cut(word, "="); ok {
			add(v)
		}
	}
	for _, c := range out {
		if rest, ok := strings.CutPrefix(c, "file:"); ok {
			out = append(out, strings.TrimPrefix(rest, "//"))
			break
		}
	}
	// "@FILE" and "<FILE" read a file in curl, gcc, javac ... arguments.
	for _, c := range out {
		if len(c) > 1 && (c[0] == '@' || c[0] == '<') {
			out = append(out, c[1:])
		}
	}
	return out
}
