package shexec

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// runOptions are long options that make a program run a command named in
// their value (or, for a few, run one by default), and the two that read
// the names of the files to work on from a file, names sh_exec cannot
// check against the root (--files0-from of sort, wc, du; --files-from of
// tar and rsync). They are refused for every program, spelled --NAME, --NAME=VALUE or as any abbreviation
// getopt_long and git's parse-options would accept (--upload-p=cmd).
var runOptions = []string{
	"to-command", "use-compress-program", "compress-program", "rsh-command", "rsh",
	"rsync-path", "upload-pack", "receive-pack", "exec", "exec-path", "execdir",
	"checkpoint-action", "info-script", "new-volume-script", "rmt-command",
	"eval", "toolexec", "vettool", "extcmd", "pager", "editor", "shell", "command",
	"interpreter", "unzip-command", "diff-program", "proxy-command",
	"open-files-in-pager", "ssh-command", "gpg-program", "use-askpass", "askpass",
	"exec-batch", "pre", "hostname-bin", "files0-from", "files-from",
}

// runFlags are single-dash long options with the same effect (find's
// -exec family, the go tool's -toolexec, -exec and -vettool), refused for
// every program, as -NAME or -NAME=VALUE.
var runFlags = []string{"exec", "execdir", "ok", "okdir", "toolexec", "vettool", "files0-from", "engine"}

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

// gitSubmoduleUpdaters are the subcommands whose --recurse-submodules
// clones or updates submodules.
var gitSubmoduleUpdaters = setOf("clone", "pull", "fetch", "checkout", "switch", "reset", "restore", "read-tree", "push", "merge", "rebase", "cherry-pick", "revert", "am")

// gitGlobalsWithValue are git's global options that take the next word as
// their value.
var gitGlobalsWithValue = setOf("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds", "--attr-source")

func setOf(names ...string) set { return names }

// set is a short list of names. A slice, not a map: the package's sets are
// then built without allocating when a tool process starts, and each holds
// a few dozen names at most.
type set []string

func (s set) has(name string) bool { return slices.Contains(s, name) }

// checkArgs refuses arguments that turn prog into a runner of other
// programs, or make it read or write outside the root in ways the path
// check on each word cannot see: the options in runOptions and runFlags for
// every program, a file: URL with glob characters (curl expands [1-9] and
// {a,b} itself), and per program:
//
//   - git: -c and clone's -c/--config except for the keys in
//     gitSafeConfig (configuration can name programs: alias.x=!cmd,
//     core.sshCommand, core.fsmonitor ...), --config-env, --exec-path,
//     --git-dir, --work-tree and --bare (sh_exec pins git to the
//     repository at the root), --help (runs man), a subcommand that is
//     not in the built-in list above, git grep -O, rebase -x, clone -u
//     and --template, and the ext:: and fd:: transports. The repository
//     itself is checked by CheckGitRepo.
//   - find: -delete, -fprint, -fprint0, -fprintf, -fls (find stays a
//     search; -exec and -ok are refused for everyone), -L and -follow
//     (they walk through symlinks out of the root; -H follows only the
//     starting points, which the path check has resolved), -files0-from.
//   - tar: -I and -F (compress program, info script), -P (absolute names
//     on extraction), -h (follows symlinks out of the root), -T (names
//     from a file), also in short-option clusters and the old-style first
//     word, and archive names with ":" (a remote archive through rsh).
//   - rsync: -e (remote shell), -L, -k, -K and --copy-unsafe-links
//     (follow symlinks out of the root), and any word with ":" (a remote
//     host, reached through ssh).
//   - zip: -TT (the test command); recursion (-r, -R) without -y, since
//     zip follows symlinks out of the root unless -y stores them as links.
//   - unzip: -: (keeps ../ in member names).
//   - grep: -R (follows symlinks out of the root; -r does not).
//   - cp: -L (the same); ls, du, chown, chgrp: -L; tree: -l; rg, fd: -L
//     and --follow (fd: -x and -X run a command); ag: -f, --follow; ack:
//     --follow.
//   - curl: [ ] { } in any word unless -g (--globoff) is given (curl
//     expands them in URLs and upload names, even in the scheme:
//     {fi,x}le:///etc/passwd), -K (a config file: its options are not
//     checked),
//     --abstract-unix-socket (a socket outside the file system), --engine
//     (loads a shared library), --proto-default (localhost/etc/passwd
//     becomes a file: URL), --proto-redir with file or all (a server's
//     redirect to a file: URL) and --variable NAME@FILE or %ENV (reads a
//     file sh_exec does not see as one, or the environment), --url @FILE
//     (URLs from a file). --libcurl
//     only writes C source to a file whose name is checked, so it stays.
//   - wget: -e (runs a .wgetrc command: use_askpass, output_document ...)
//     and --config (the same from a file).
//   - make: -E and any word with "$" or a backquote (functions such as
//     $(shell ...) in variable assignments), and SHELL=.
//   - go: env -w (persistent GOFLAGS such as -toolexec) and generate.
//   - npm, pnpm, yarn: exec, x, dlx, explore.
//
// Short-option clusters are checked for the letter anywhere in the
// cluster, so a value glued to an option (-cfh.tar) can be refused for a
// letter in the value: pass the value as its own word.
func checkArgs(prog string, args []string) error {
	for _, a := range args {
		if err := checkRunOption(a); err != nil {
			return err
		}
		if err := checkFileURL(a); err != nil {
			return err
		}
	}
	// refuseShort refuses a short option in a cluster; refuseLong a long
	// option or any abbreviation of it.
	refuseShort := func(letters, why string) error {
		for _, a := range args {
			if cluster(a) && strings.ContainsAny(shortOptions(a, valueLetters()[prog]), letters) {
				return refusef("%s %s: %s", prog, a, why)
			}
		}
		return nil
	}
	refuseLong := func(why string, names ...string) error {
		for _, a := range args {
			for _, n := range names {
				if longIs(a, n) {
					return refusef("%s %s (--%s): %s", prog, a, n, why)
				}
			}
		}
		return nil
	}
	const follows = "follows symlinks, and so walks out of the root through a link that points out"
	switch prog {
	case "git":
		return checkGit(args)
	case "find":
		for _, a := range args {
			switch strings.SplitN(a, "=", 2)[0] {
			case "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return refusef("find %s: sh_exec keeps find a search (use fs_delete, fs_write)", a)
			case "-L", "-follow":
				return refusef("find %s: %s (-H, which follows only the starting points, is allowed)", a, follows)
			}
		}
	case "tar":
		for i, a := range args {
			if i == 0 && !strings.HasPrefix(a, "-") && strings.ContainsAny(a, "IFPhT") {
				return refusef("tar %s: I and F run a program, P writes absolute names, h follows symlinks, T reads names from a file", a)
			}
			if strings.Contains(a, ":") {
				return refusef("tar %q: a name with \":\" is a remote archive, reached through a remote shell", a)
			}
		}
		if err := refuseShort("IF", "-I and -F run a program"); err != nil {
			return err
		}
		if err := refuseShort("P", "-P extracts to absolute names, outside the root"); err != nil {
			return err
		}
		if err := refuseShort("h", "-h "+follows); err != nil {
			return err
		}
		if err := refuseShort("T", "-T reads the names to archive from a file, which sh_exec cannot check"); err != nil {
			return err
		}
		if err := refuseLong("extracts to absolute names, outside the root", "absolute-names"); err != nil {
			return err
		}
		return refuseLong(follows, "dereference")
	case "rsync":
		for _, a := range args {
			if strings.Contains(a, ":") {
				return refusef("rsync %q: a name with \":\" is a remote host, reached through a remote shell", a)
			}
		}
		if err := refuseShort("e", "-e runs a remote shell"); err != nil {
			return err
		}
		if err := refuseShort("LkK", follows); err != nil {
			return err
		}
		return refuseLong(follows, "copy-links", "copy-dirlinks", "copy-unsafe-links", "keep-dirlinks")
	case "zip":
		recursive, links := false, false
		for _, a := range args {
			switch {
			case cluster(a) && strings.Contains(a[1:], "TT"):
				return refusef("zip %s: runs a command", a)
			case a == "--recurse-paths" || cluster(a) && strings.ContainsAny(a[1:], "rR"):
				recursive = true
			}
			if a == "--symlinks" || cluster(a) && strings.Contains(a[1:], "y") {
				links = true
			}
		}
		if recursive && !links {
			return refusef("zip -r without -y %s: add -y to store symlinks as links", follows)
		}
	case "unzip":
		for _, a := range args {
			if cluster(a) && strings.Contains(a[1:], ":") {
				return refusef("unzip %s: keeps ../ in member names, which extracts outside the root", a)
			}
		}
	case "grep", "egrep", "fgrep", "rgrep":
		if prog == "rgrep" {
			return refusef("rgrep is grep -R, which %s: use grep -r", follows)
		}
		if err := refuseShort("R", follows+" (use -r)"); err != nil {
			return err
		}
		return refuseLong(follows+" (use -r)", "dereference-recursive")
	case "tree":
		return refuseShort("l", follows)
	case "rg", "ag", "ack", "fd", "fdfind":
		letter := "L"
		if prog == "ag" {
			letter = "f"
		}
		if prog == "ack" {
			letter = ""
		}
		if prog == "fd" || prog == "fdfind" {
			if err := refuseShort("xX", "-x and -X run a command for each result"); err != nil {
				return err
			}
		}
		if letter != "" {
			if err := refuseShort(letter, follows); err != nil {
				return err
			}
		}
		return refuseLong(follows, "follow")
	case "diff":
		// diff compares the files of two directories (with -r, of
		// their subdirectories too) through the symlinks among them: a
		// link the client made with git apply or ln, pointing out of
		// the root, is read and shown. Only the operands are checked
		// against the root; --no-dereference compares links as links.
		if !hasLong(args, "no-dereference") {
			if err := refuseShort("r", "-r compares directories and "+follows+" (add --no-dereference, which compares links as links)"); err != nil {
				return err
			}
			if err := refuseLong(follows+" (add --no-dereference, which compares links as links)", "recursive"); err != nil {
				return err
			}
		}
	case "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "shasum", "cksum":
		if err := refuseShort("c", "-c reads the names of the files to check from a file, which sh_exec cannot check against the root"); err != nil {
			return err
		}
		return refuseLong("reads the names of the files to check from a file, which sh_exec cannot check against the root", "check")
	case "file":
		return refuseShort("f", "-f reads the names of the files from a file, which sh_exec cannot check against the root")
	case "gzip", "gunzip", "pigz", "unpigz":
		recursive := hasLong(args, "recursive")
		force := hasLong(args, "force")
		for _, a := range args {
			if cluster(a) {
				recursive = recursive || strings.Contains(a[1:], "r")
				force = force || strings.Contains(a[1:], "f")
			}
		}
		if recursive && force {
			return refusef("%s -r with -f %s (without -f it skips links)", prog, follows)
		}
	case "cp", "ls", "du", "chown", "chgrp":
		if err := refuseShort("L", follows); err != nil {
			return err
		}
		return refuseLong(follows, "dereference")
	case "curl":
		globoff := false
		for _, a := range args {
			globoff = globoff || longIs(a, "globoff") || cluster(a) && strings.Contains(shortOptions(a, valueLetters()["curl"]), "g")
		}
		for _, a := range args {
			if !globoff && strings.ContainsAny(a, "[]{}") {
				return refusef("curl %q: curl expands [...] and {...} in URLs and upload names into names sh_exec never sees ({fi,x}le:///etc/passwd); add -g (--globoff) to pass them literally", a)
			}
		}
		if err := refuseShort("K", "-K reads options from a file, which sh_exec does not check"); err != nil {
			return err
		}
		if err := refuseLong("reads options from a file, which sh_exec does not check", "config"); err != nil {
			return err
		}
		if err := refuseLong("loads an OpenSSL engine, code from a shared library", "engine"); err != nil {
			return err
		}
		if err := refuseLong("makes a URL without a scheme a file: URL (localhost/etc/passwd), whose path sh_exec does not see", "proto-default"); err != nil {
			return err
		}
		for i, a := range args {
			if longIs(a, "url") && len(a) <= len("--url") || strings.HasPrefix(a, "--url=") {
				v, ok := strings.CutPrefix(a, "--url=")
				if !ok && i+1 < len(args) {
					v = args[i+1]
				}
				if strings.HasPrefix(v, "@") {
					return refusef("curl %s %s: reads URLs from a file, which sh_exec does not check", a, v)
				}
			}
			if longIs(a, "proto-redir") {
				v, ok := strings.CutPrefix(a, "--proto-redir=")
				if !ok && i+1 < len(args) {
					v = args[i+1]
				}
				if l := strings.ToLower(v); strings.Contains(l, "file") || strings.Contains(l, "all") {
					return refusef("curl %s %s: lets a server redirect curl to a file: URL, a local file sh_exec never sees", a, v)
				}
			}
		}
		for i, a := range args {
			if longIs(a, "variable") {
				v, ok := strings.CutPrefix(a, "--variable=")
				if !ok && i+1 < len(args) {
					v = args[i+1]
				}
				if strings.ContainsAny(v, "@%") {
					return refusef("curl %s %s: reads a variable from a file or the environment, which sh_exec does not check", a, v)
				}
			}
		}
		return refuseLong("connects to a socket outside the file system's jail", "abstract-unix-socket")
	case "wget":
		if err := refuseShort("e", "-e runs a .wgetrc command (use_askpass, output_document ...)"); err != nil {
			return err
		}
		return refuseLong("runs .wgetrc commands (use_askpass, output_document ...)", "execute", "config")
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

// hasLong reports whether args hold the long option --name, as written
// or abbreviated.
func hasLong(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if longIs(a, name) {
			return true
		}
	}
	return false
}

// CheckOperands refuses, for the programs that read what a directory
// operand holds without recursing (diff DIR DIR compares the files with
// the same names, sdiff DIR FILE reads DIR/FILE), a directory operand
// that would be read through its symlinks: diff without
// --no-dereference, sdiff always (it has no such option). isDir says
// whether a word names a directory, resolved in the jail as the program
// will see it. The path check has already refused operands outside the
// root.
func CheckOperands(argv []string, isDir func(string) bool) error {
	if len(argv) == 0 {
		return nil
	}
	prog, args := argv[0], argv[1:]
	if prog != "diff" && prog != "sdiff" {
		return nil
	}
	if prog == "diff" && hasLong(args, "no-dereference") {
		return nil
	}
	operands := false
	for i, a := range args {
		if a == "--" {
			operands = true
			continue
		}
		if !operands && strings.HasPrefix(a, "-") && a != "-" {
			v, ok := "", false
			for _, o := range []string{"from-file", "to-file"} {
				if longIs(a, o) {
					_, v, ok = strings.Cut(a, "=")
					if !ok && i+1 < len(args) {
						v, ok = args[i+1], true
					}
				}
			}
			if !ok || !isDir(v) {
				continue
			}
			a = v
		}
		if isDir(a) {
			if prog == "sdiff" {
				return refusef("sdiff %s: a directory operand is read through its symlinks, which may point out of the root; name the files", a)
			}
			return refusef("diff %s: comparing directories follows the symlinks in them, which may point out of the root; add --no-dereference, which compares links as links", a)
		}
	}
	return nil
}

// valueLetters are, per program, the short options that take a value: in
// a cluster, the rest of the word after one of them is its value, not more
// options (tar -vCdir, grep -eR). Built on first use: most calls never
// look.
var valueLetters = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"tar":   "bCfFgHIKLNTVX",
		"rsync": "BefMT",
		"grep":  "ABCdDefm", "egrep": "ABCdDefm", "fgrep": "ABCdDefm",
		"cp":   "St",
		"ls":   "ITw",
		"du":   "BdtX",
		"curl": "AbcCdDeEFHKmoOPQrtTuUwxXyYz",
		"wget": "aABDeiIlOoPQRtTUwX",
		"diff": "CDFIUWxX",
		"file": "eFmP",
	}
})

// shortOptions returns the option letters of cluster a (-xvf): its
// letters up to and including the first that takes a value (one of
// values), or up to the first character that is not a letter or digit.
func shortOptions(a, values string) string {
	for i := 1; i < len(a); i++ {
		if !optionLetter(a[i]) {
			return a[1:i]
		}
		if strings.IndexByte(values, a[i]) >= 0 {
			return a[1 : i+1]
		}
	}
	return a[1:]
}

// longIs reports whether word a is the long option --name (with or
// without =VALUE) or an abbreviation of it, as getopt_long accepts.
func longIs(a, name string) bool {
	if !strings.HasPrefix(a, "--") {
		return false
	}
	typed, _, _ := strings.Cut(a[2:], "=")
	return len(typed) >= 2 && strings.HasPrefix(name, typed)
}

// checkFileURL refuses a file: URL (in any case) with glob characters:
// curl expands FILE:///proc/[1-999]/environ and {a,b} into names the path
// check never saw.
func checkFileURL(a string) error {
	i := strings.Index(strings.ToLower(a), "file:")
	if i >= 0 && strings.ContainsAny(a[i:], "[]{}") {
		return refusef("%q: a file: URL with [ ] { } is a pattern curl expands into other names; name each file", a)
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
				if strings.HasPrefix(o, "files") {
					return refusef("option %s (--%s) reads the names of files from a file, which sh_exec cannot check against the root", a, o)
				}
				return refusef("option %s (--%s) can run another program", a, o)
			}
		}
	case strings.HasPrefix(a, "-") && len(a) > 1:
		name := strings.SplitN(a[1:], "=", 2)[0]
		for _, o := range runFlags {
			if name == o {
				if strings.HasPrefix(o, "files") {
					return refusef("option %s reads the names of files from a file, which sh_exec cannot check against the root", a)
				}
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
	if !gitSafeConfig.has(strings.ToLower(key)) {
		return refusef("git %s %s: configuration on the command line can name programs to run (alias.x=!cmd, core.pager ...); the keys sh_exec accepts are user.name, user.email, init.defaultBranch, core.quotePath, color.ui, advice.detachedHead, log.showSignature, commit.gpgSign and tag.gpgSign", opt, kv)
	}
	return nil
}

// ChangeDirs returns the directories argv's program works in besides the
// root, when an option moves it (git -C, tar -C and --directory, make -C
// and --directory): each as named and joined to the ones before it, since
// -C is cumulative. The caller checks relative arguments against each
// too, so that a symlink under such a directory cannot lead a path that
// looked inside the root out of it.
func ChangeDirs(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	switch argv[0] {
	case "git", "tar", "make", "gmake":
	default:
		return nil
	}
	var dirs []string
	cur := ""
	add := func(d string) {
		if d == "" {
			return
		}
		dirs = append(dirs, d)
		if cur == "" || filepath.IsAbs(d) {
			cur = d
		} else {
			cur = filepath.Join(cur, d)
		}
		dirs = append(dirs, cur)
	}
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "--directory":
			if i+1 < len(args) {
				add(args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--directory="):
			add(strings.TrimPrefix(a, "--directory="))
		case argv[0] != "git" && cluster(a):
			opts := shortOptions(a, valueLetters()[argv[0]]+"C")
			if strings.HasSuffix(opts, "C") {
				v := a[1+len(opts):]
				if v == "" && i+1 < len(args) {
					v = args[i+1]
					i++
				}
				add(v)
			}
		}
	}
	return dirs
}

// GitSubcommand returns the git subcommand in args (git's arguments,
// without the program name): the first word that is not a global option or
// its value; "" for none (git --version).
func GitSubcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case gitGlobalsWithValue.has(a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
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
		case name == "--git-dir" || name == "--work-tree" || a == "--bare":
			return refusef("git %s: sh_exec runs git on the repository at the root only (it pins GIT_DIR and GIT_WORK_TREE there)", a)
		case a == "--help":
			return refusef("git --help runs man or a browser: use -h for a command's usage")
		case gitGlobalsWithValue.has(a):
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
	if !gitCommands.has(sub) {
		return refusef("git %s: not a git command sh_exec runs (aliases from a repository's configuration can run a shell)", sub)
	}
	rest := args[i+1:]
	for _, a := range rest {
		if a == "--help" {
			return refusef("git %s --help runs man or a browser: use -h for the usage", sub)
		}
		if gitSubmoduleUpdaters.has(sub) && (longIs(a, "recurse-submodules") || sub == "clone" && longIs(a, "recursive")) {
			return refusef("git %s %s: submodules are cloned from the URLs .gitmodules names, which sh_exec cannot check", sub, a)
		}
	}
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
// if=/etc/passwd, make DIR=..); in a short-option cluster, what follows
// each option letter, since any letter may be the one that takes the rest
// of the word as its value (-C.., -I/usr/include, sort -uo/x: both o/x and
// /x); the path of a file: URL in any case, after its host (FILE:///etc,
// file://localhost/etc), and that path percent-decoded; and FILE in @FILE
// and <FILE (curl -d @/etc/passwd, response files). It is deliberately
// wide: a pattern such as ".." or "/etc/" is checked like a path, and so
// refused when it would name a place outside the root; so is a value glued
// to letters (-Isub/dir yields /dir): write such a value as its own word,
// or start it with ./ (-I./sub/dir).
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
		for i := 2; i < len(word) && optionLetter(word[i-1]); i++ {
			add(word[i:])
		}
	default:
		add(word)
		if _, v, ok := strings.Cut(word, "="); ok {
			add(v)
		}
	}
	for _, c := range out {
		if p, ok := fileURLPath(c); ok {
			add(p)
			if d, err := url.PathUnescape(p); err == nil && d != p {
				add(d)
			}
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

// optionLetter reports whether c can be a short option's letter.
func optionLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// fileURLPath returns the path of a file: URL, matching the scheme in any
// case as URL parsers do, and skipping the host of file://HOST/PATH (curl
// and git accept localhost there).
func fileURLPath(s string) (string, bool) {
	if len(s) < 5 || !strings.EqualFold(s[:5], "file:") {
		return "", false
	}
	rest := s[5:]
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		if i := strings.IndexByte(after, '/'); i >= 0 {
			return after[i:], true
		}
		return "/", true // file://host: the host's root
	}
	return rest, true
}
