package shexec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/proc"
)

// gitOverrides are the settings sh_exec gives git as command-line
// configuration (GIT_CONFIG_COUNT/KEY/VALUE), which beats the repository's
// own: each names a program git would run, or lets a hook, a pager or a
// helper run one. diff.external is not among them: git (2.39) runs an
// empty one and fails, so CheckGitRepo refuses a repository that sets it.
var gitOverrides = [][2]string{
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
	{"core.editor", "false"},
	{"core.askPass", "false"},
	{"core.sshCommand", "false"},
	{"sequence.editor", "false"},
	{"credential.helper", ""},
	{"gpg.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.x509.program", "false"},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"submodule.recurse", "false"},
	{"protocol.allow", "never"},
	{"protocol.file.allow", "always"},
	{"protocol.http.allow", "always"},
	{"protocol.https.allow", "always"},
	{"protocol.git.allow", "always"},
	{"protocol.ext.allow", "never"},
}

// gitEnv is what Env adds for git: no system or global configuration,
// the overrides above, no prompts, failing editors, and, except for the
// subcommands that make a repository (clone, init), GIT_DIR and
// GIT_WORK_TREE pinned to the root, so that git works on the repository
// at the root and nowhere else: not one a .git file or core.worktree
// points to, not one above the root, not one nested below it.
// GIT_CEILING_DIRECTORIES stops git from looking above the root for the
// subcommands that look.
func gitEnv(root, sub string) []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=false",
		"SSH_ASKPASS=false",
		"GIT_EDITOR=false",
		"GIT_SEQUENCE_EDITOR=false",
		"GIT_PAGER=cat",
		"GIT_ALLOW_PROTOCOL=file:git:http:https",
		"GIT_NO_REPLACE_OBJECTS=1",
	}
	if root != "" {
		env = append(env, "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Clean(root)))
		if sub != "clone" && sub != "init" {
			env = append(env, "GIT_DIR="+filepath.Join(root, ".git"), "GIT_WORK_TREE="+root)
		}
	}
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(gitOverrides)))
	for i, kv := range gitOverrides {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// CheckGitRepo decides whether git may run args (its arguments, without
// the program name) on the repository at root, before it runs. git is
// the program at gitPath and env the environment it will run with (Env),
// used to have git itself list the configuration. inside checks that a
// path (absolute, or relative to the root) names a place inside the root,
// as the caller checks arguments. It refuses:
//
//   - a .git that is a file (gitdir: the repository lives elsewhere) or a
//     symlink; a symlink among .git's entries or in .git/objects; a
//     .git/commondir (a linked worktree of a repository elsewhere) and
//     object alternates (objects read from another repository);
//   - a root that is not the top of its repository (a .git in a directory
//     above it), except for clone, init and version, since git would read
//     the files of the larger repository, outside the root;
//   - a repository whose configuration (.git/config, .git/config.worktree)
//     has a key of a family that names a program or a file (see
//     gitKeyRisk): filter and merge drivers, diff textconv and command,
//     remote upload and receive packs, pagers, includes, URL rewriting ...;
//     the settings Env overrides cannot reach drivers, which are per name;
//     and a remote or submodule URL (remote.*.url, branch.*.remote ...)
//     that is a local path or file: URL outside the root, or a transport
//     helper (X::);
//   - for clone, a local source repository with the same defects, since
//     git copies objects through its alternates and symlinks.
//
// The check reads the repository when the call is made: a client that
// rewrites .git/config in the moment between the check and git's start
// can still name a driver. Kernel confinement (see the package doc) is the
// wall behind that.
func CheckGitRepo(gitPath, root string, args, env []string, inside func(string) error) error {
	sub := GitSubcommand(args)
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if sub != "clone" && sub != "init" && sub != "version" && sub != "" {
			for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
				if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
					return refusef("git %s: the root is inside the git repository at %s, not its top; sh_exec runs git only on a repository whose top is the root (run git init there, or serve the repository's top as the root), so that git reads nothing outside the root", sub, dir)
				}
				if dir == filepath.Dir(dir) {
					break // no repository: git says so itself
				}
			}
		}
	case err != nil:
		return refusef("git: cannot inspect .git: %v", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return refusef("git: .git is a symlink; sh_exec runs git only on a repository stored in the root's own .git directory")
	case !fi.IsDir():
		return refusef("git: .git is a file (gitdir: a repository stored elsewhere, outside the root); sh_exec runs git only on a repository stored in the root's own .git directory")
	default:
		if err := checkGitDir(gitPath, dotgit, ".git", env, inside); err != nil {
			return err
		}
	}
	if sub == "clone" {
		if src := gitCloneSource(args); src != "" {
			base := ""
			if dirs := ChangeDirs(append([]string{"git"}, args...)); len(dirs) > 0 {
				base = dirs[len(dirs)-1] // git -C DIR clone SRC: SRC is in DIR
			}
			if err := checkCloneSource(gitPath, root, base, src, env, inside); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkGitDir checks the git directory dir (shown to the user as name).
func checkGitDir(gitPath, dir, name string, env []string, inside func(string) error) error {
	for _, d := range []string{dir, filepath.Join(dir, "objects"), filepath.Join(dir, "objects", "pack"), filepath.Join(dir, "objects", "info"), filepath.Join(dir, "refs")} {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				rel, _ := filepath.Rel(dir, filepath.Join(d, e.Name()))
				return refusef("git: %s/%s is a symlink; git would read through it, perhaps outside the root", name, rel)
			}
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return refusef("git: %s/commondir makes this a worktree of a repository stored elsewhere; sh_exec runs git only on a repository stored in the root's own .git directory", name)
	}
	for _, alt := range []string{"alternates", "http-alternates"} {
		file := filepath.Join(dir, "objects", "info", alt)
		if fi, err := os.Lstat(file); err == nil && (!fi.Mode().IsRegular() || fi.Size() > 0) {
			return refusef("git: %s/objects/info/%s reads objects from another repository; sh_exec refuses it, since that repository may lie outside the root", name, alt)
		}
	}
	for _, cfg := range []string{"config", "config.worktree"} {
		file := filepath.Join(dir, cfg)
		fi, err := os.Lstat(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return refusef("git: cannot inspect %s/%s: %v", name, cfg, err)
		case !fi.Mode().IsRegular():
			// A FIFO would hold the check forever; a symlink leads elsewhere.
			return refusef("git: %s/%s is not a regular file", name, cfg)
		}
		entries, err := gitConfig(gitPath, file, env)
		if err != nil {
			return refusef("git: cannot read %s/%s: %v", name, cfg, err)
		}
		for _, kv := range entries {
			if why := gitKeyRisk(kv[0]); why != "" {
				return refusef("git: %s/%s sets %s, which %s; sh_exec refuses to run git on this repository (remove the key, or allow a trusted client a different tool)", name, cfg, kv[0], why)
			}
			if gitURLKey(kv[0]) {
				if err := checkGitURL(kv[1], inside); err != nil {
					return refusef("git: %s/%s sets %s = %s: %v", name, cfg, kv[0], kv[1], err)
				}
			}
		}
	}
	return nil
}

// gitURLKey reports whether key's value is a repository URL or path git
// fetches from or pushes to.
func gitURLKey(key string) bool {
	k := strings.ToLower(key)
	section, _, _ := strings.Cut(k, ".")
	variable := k[strings.LastIndex(k, ".")+1:]
	switch {
	case section == "remote" && (variable == "url" || variable == "pushurl" || variable == "pushdefault"):
		return true
	case section == "branch" && (variable == "remote" || variable == "pushremote"):
		return true
	case section == "submodule" && variable == "url":
		return true
	}
	return false
}

// checkGitURL refuses a repository URL that reads or writes outside the
// root: a local path or file: URL outside it, or a transport helper.
// Network URLs (https://, git://, host:path through ssh, which Env does
// not allow) pass: the network is not the jail's.
func checkGitURL(u string, inside func(string) error) error {
	switch {
	case strings.Contains(u, "::"):
		return errors.New("a transport helper runs a program")
	case strings.Contains(u, "://"):
		p, ok := fileURLPath(u)
		if !ok {
			return nil
		}
		return inside(p)
	}
	if i := strings.IndexByte(u, ':'); i > 0 && !strings.Contains(u[:i], "/") {
		return nil // host:path, ssh, which GIT_ALLOW_PROTOCOL refuses
	}
	return inside(u)
}

// checkCloneSource checks the repository clone copies from, when it is a
// local path or file: URL inside the root (the caller has refused one
// outside).
func checkCloneSource(gitPath, root, base, src string, env []string, inside func(string) error) error {
	p := src
	if strings.Contains(src, "://") {
		fp, ok := fileURLPath(src)
		if !ok {
			return nil
		}
		p = fp
	} else if i := strings.IndexByte(src, ':'); i > 0 && !strings.Contains(src[:i], "/") {
		return nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if err := inside(p); err != nil {
		return refusef("git clone %s: %v", src, err)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	dir := filepath.Join(p, ".git")
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return refusef("git clone %s: its .git is a file or a symlink, a repository stored elsewhere", src)
	case err != nil:
		dir = p // a bare repository, or not one at all: git says so
	}
	return checkGitDir(gitPath, dir, src, env, inside)
}

// gitCloneSource returns the repository operand of git clone in args, or
// "" when there is none.
func gitCloneSource(args []string) string {
	withValue := setOf("-o", "-b", "-u", "-c", "-j", "--origin", "--branch", "--upload-pack",
		"--reference", "--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since",
		"--shallow-exclude", "--config", "--server-option", "--jobs", "--filter", "--template",
		"--bundle-uri", "--ref-format")
	seen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !seen:
			if gitGlobalsWithValue.has(a) {
				i++
			} else if a == "clone" {
				seen = true
			}
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case withValue.has(a):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// gitConfigTimeout bounds the git config run that lists a configuration.
const gitConfigTimeout = 20 * time.Second

// gitConfigMaxOutput bounds the listing: a configuration larger than this is
// refused rather than half read.
const gitConfigMaxOutput = 4 << 20

// gitConfig lists the entries (key, value) of a configuration file, parsed
// by git itself so that no quirk of the syntax reads differently here.
// Listing runs nothing the file names.
func gitConfig(gitPath, file string, env []string) ([][2]string, error) {
	res := proc.Run(context.Background(), proc.Cmd{
		Path:      gitPath,
		Args:      []string{gitPath, "config", "--file", file, "--no-includes", "--list", "-z"},
		Env:       env,
		Dir:       filepath.Dir(file),
		Timeout:   gitConfigTimeout,
		MaxOutput: gitConfigMaxOutput,
	})
	if !res.OK() {
		if msg := strings.TrimSpace(string(res.Stderr)); msg != "" && res.Ending == proc.Exited {
			return nil, errors.New(msg)
		}
		return nil, fmt.Errorf("git config --list: %s", res.Outcome)
	}
	out := res.Stdout
	var entries [][2]string
	for _, e := range strings.Split(string(out), "\x00") {
		if e == "" {
			continue
		}
		k, v, _ := strings.Cut(e, "\n")
		entries = append(entries, [2]string{k, v})
	}
	return entries, nil
}

// gitRiskyVariables are configuration variable names that name a program
// (or a command line) in whatever section they appear: filter.X.clean,
// diff.X.textconv, merge.X.driver, difftool.X.cmd, credential.helper,
// core.fsmonitor ...
var gitRiskyVariables = setOf("command", "cmd", "program", "helper", "textconv", "driver",
	"process", "clean", "smudge", "hookspath", "sshcommand", "askpass", "editor", "pager",
	"fsmonitor", "uploadpack", "receivepack", "vcs", "gitproxy", "alternaterefscommand",
	"packobjectshook", "procreceiverefs", "external", "browser", "path", "proxycommand",
	"worktree", "excludesfile", "attributesfile", "template", "file", "cookiefile",
	"ignorerevsfile", "update", "sendmailcmd")

// gitRiskySections are sections whose every key is refused: includes
// (configuration from another file), filter drivers, per-command pagers
// (pager.log=CMD), credential helpers, the tools that run programs, and
// URL rewriting (url.BASE.insteadOf turns a URL into a local path).
var gitRiskySections = setOf("include", "includeif", "filter", "pager", "credential",
	"sendemail", "difftool", "mergetool", "browser", "web", "man", "gpg", "url")

// gitKeyRisk returns why a repository configuration key (as git config
// --list --name-only prints it: section.subsection.variable) is refused,
// or "".
func gitKeyRisk(key string) string {
	k := strings.ToLower(key)
	section, _, _ := strings.Cut(k, ".")
	variable := k[strings.LastIndex(k, ".")+1:]
	switch {
	case gitRiskySections.has(section):
		return "is in a section whose settings run programs or read other files"
	case gitRiskyVariables.has(variable):
		return "names a program to run or a file to read"
	}
	return ""
}
