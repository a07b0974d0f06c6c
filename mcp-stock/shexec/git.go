package shexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// used to have git itself list the configuration's keys. It refuses:
//
//   - a .git that is a file (gitdir: the repository lives elsewhere) or a
//     symlink, and a .git directory with a commondir file (a linked
//     worktree of a repository elsewhere) or object alternates (objects
//     read from another repository);
//   - a root that is not the top of its repository (a .git in a directory
//     above it), except for clone, init and version, since git would read
//     the files of the larger repository, outside the root;
//   - a repository whose configuration (.git/config, .git/config.worktree)
//     has a key of a family that names a program or a file (see
//     gitKeyRisk): filter and merge drivers, diff textconv and command,
//     remote upload and receive packs, pagers, includes ...; the settings
//     Env overrides cannot reach drivers, which are per name.
//
// The check reads the configuration when the call is made: a client that
// rewrites .git/config in the moment between the check and git's start
// can still name a driver. Kernel confinement (see the package doc) is the
// wall behind that.
func CheckGitRepo(gitPath, root string, args []string, env []string) error {
	sub := GitSubcommand(args)
	dotgit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if sub == "clone" || sub == "init" || sub == "version" || sub == "" {
			return nil
		}
		for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
			if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
				return refusef("git %s: the root is inside the git repository at %s, not its top; sh_exec runs git only on a repository whose top is the root (run git init there, or serve the repository's top as the root), so that git reads nothing outside the root", sub, dir)
			}
			if dir == filepath.Dir(dir) {
				return nil // no repository: git says so itself
			}
		}
	case err != nil:
		return refusef("git: cannot inspect .git: %v", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return refusef("git: .git is a symlink; sh_exec runs git only on a repository stored in the root's own .git directory")
	case !fi.IsDir():
		return refusef("git: .git is a file (gitdir: a repository stored elsewhere, outside the root); sh_exec runs git only on a repository stored in the root's own .git directory")
	}
	if _, err := os.Lstat(filepath.Join(dotgit, "commondir")); err == nil {
		return refusef("git: .git/commondir makes this a worktree of a repository stored elsewhere; sh_exec runs git only on a repository stored in the root's own .git directory")
	}
	if b, err := os.ReadFile(filepath.Join(dotgit, "objects", "info", "alternates")); err == nil && strings.TrimSpace(string(b)) != "" {
		return refusef("git: .git/objects/info/alternates reads objects from another repository; sh_exec refuses it, since that repository may lie outside the root")
	}
	for _, name := range []string{"config", "config.worktree"} {
		file := filepath.Join(dotgit, name)
		if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		keys, err := gitConfigKeys(gitPath, file, env)
		if err != nil {
			return refusef("git: cannot read .git/%s: %v", name, err)
		}
		for _, k := range keys {
			if why := gitKeyRisk(k); why != "" {
				return refusef("git: .git/%s sets %s, which %s; sh_exec refuses to run git on this repository (remove the key with fs_edit, or allow a trusted client a different tool)", name, k, why)
			}
		}
	}
	return nil
}

// gitConfigKeys lists the keys of a configuration file, parsed by git
// itself so that no quirk of the syntax reads differently here. Listing
// runs nothing the file names.
func gitConfigKeys(gitPath, file string, env []string) ([]string, error) {
	cmd := exec.Command(gitPath, "config", "--file", file, "--no-includes", "--list", "--name-only", "-z")
	cmd.Env = env
	cmd.Dir = filepath.Dir(file)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return nil, errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, err
	}
	return strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 }), nil
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
// (pager.log=CMD), credential helpers, and the tools that run programs.
var gitRiskySections = setOf("include", "includeif", "filter", "pager", "credential",
	"sendemail", "difftool", "mergetool", "browser", "web", "man", "gpg")

// gitKeyRisk returns why a repository configuration key (as git config
// --list --name-only prints it: section.subsection.variable) is refused,
// or "".
func gitKeyRisk(key string) string {
	k := strings.ToLower(key)
	section, _, _ := strings.Cut(k, ".")
	variable := k[strings.LastIndex(k, ".")+1:]
	switch {
	case gitRiskySections[section]:
		return "is in a section whose settings run programs or read other files"
	case gitRiskyVariables[variable]:
		return "names a program to run or a file to read"
	}
	return ""
}
