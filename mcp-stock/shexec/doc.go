// Package shexec runs one command line for the stock tool sh_exec without
// ever running a shell: it splits the line into words, decides whether the
// words may run, and runs them with a minimal environment, a timeout and an
// output cap.
//
// # Splitting
//
// [Split] splits with go-shellwords (variable and command substitution off)
// and refuses what only a shell would give meaning to instead of passing it
// on as a literal the caller meant otherwise: unquoted ; & | < > ( ) and
// newlines, $NAME, ${...}, $(...) and backquotes outside single quotes,
// unquoted glob characters, a leading unquoted ~ or #. Quoted, they are
// ordinary characters of a word; nothing is ever interpreted.
//
// # Programs
//
// [Allowlist.Check] lets a command run only when its first word is a bare
// program name on the allowlist (MCP_SH_ALLOW, comma-separated; empty
// refuses everything). Some programs are never run even when listed,
// because their arguments are code or another command: shells,
// interpreters (awk, sed, perl, python, m4, cmake ...), wrappers (env,
// xargs, nice, timeout, sudo ...), remote shells, editors and pagers (vi,
// ed, editor, less, man ...). They are recognised under every name a
// distribution gives them: the name is matched lowercased, without a
// cross-compiler triplet, a variant suffix (.static, .distrib, .basic,
// -static ...) and a trailing version (bash5.2, ksh93, guile-3.0,
// python3.12), and by family prefix (vim*, emacs*, python*, perl*, git-*
// helpers ...). [Allowlist.CheckProgram] then judges the file LookPath
// found by what it is: symlinks, and so /etc/alternatives, are resolved
// and the real file's name is matched the same way (editor -> vim.basic is
// refused; a link to busybox or toybox, which run the applet argv[0]
// names, is judged by its own name).
//
// Runners, programs that run the project's own code (make, npm, pnpm,
// yarn, go, cargo, gcc, cc, javac, mvn, gradle, pytest, tox ...: Makefiles,
// package.json scripts, build scripts, tests, compiler wrappers and
// plugins), run only when MCP_SH_ALLOW_RUNNERS names them too: with the
// write tools, a client that can write those files can run any command
// through them, and the operator says so by naming them twice.
//
// # Arguments
//
// For the programs it does run, options that name a program to run are
// refused for every program (--to-command, --use-compress-program, --rsh,
// --upload-pack, --exec, --use-askpass, -exec, -ok, -toolexec ... in every
// abbreviation getopt_long accepts), and so are --files0-from and
// --files-from (names read from a file are names sh_exec never checks).
// Per-program rules (checkArgs has the full list, each with its reason)
// cover git (-c, aliases, config, submodule, --git-dir ...), find (-delete,
// -fprint, -L, -follow, -files0-from), tar (-I, -F, -P, -h, -T, remote
// archives), rsync (-e, -L, -k, -K, remote hosts), zip (-TT; -r without
// -y), unzip (-:), grep (-R), cp, ls, du (-L), tree (-l), rg, fd, ag, ack
// (--follow; fd -x, -X), curl (-K, --config, --proto-default,
// --proto-redir file, --engine, --abstract-unix-socket), wget (-e,
// --execute, --config), make (-E, $(shell)), go (generate, env -w), npm
// (exec), diff (-r and --recursive without --no-dereference), md5sum,
// sha*sum, b2sum, cksum (-c, --check: names from a file), file (-f) and
// gzip (-r with -f, which follows links). A refused letter counts in a short-option cluster as getopt reads
// it: up to the first letter that takes a value, where sh_exec knows which
// do (tar, grep, curl, wget ...), anywhere in the cluster elsewhere. A
// file: URL with curl's glob characters ([1-9], {a,b}) is refused.
//
// The caller also checks each word's [PathCandidates] against the jail
// root, so that an argument naming a place outside the root is refused:
// /etc/passwd, ../x, if=/dev/sda, --directory=/, a value glued to any
// letter of a short-option cluster (-C/, sort -uo/x, ln -st/x), and the
// path of a file: URL in any case, after its host and percent-decoded
// (FILE:///etc, file://localhost/etc, file:///root/%2e%2e/x). This is a
// wide net: a pattern that looks like such a path, or a value glued to
// letters (-Isub/dir, whose /dir is checked), is refused too; pass such a
// value as its own word or start it with ./. When an option moves the
// program to another directory ([ChangeDirs]: git -C, tar -C, make -C), a
// relative argument is checked in that directory as well, so that a
// symlink there cannot lead it out.
//
// Programs that read what a directory operand holds follow the symlinks
// in it, which the path check on the operand never sees: a client makes
// a link to a key with git apply (or ln, tar, unzip), then diff a b
// prints the key. [CheckOperands] refuses diff with a directory operand
// (resolved in the jail) unless --no-dereference is given, which compares
// links as links, and sdiff with one (it has no such option). Programs
// that read only the operands they are given (cat, head, cmp, wc, sort
// ...) need no rule: each operand was resolved inside the root. Between
// that check and the program's open, a concurrent call could swap an
// operand for a link; then only the kernel's confinement stands, which
// grants no secret of the host (no /etc/shadow, no /run, no key of
// mcp-route's: it refuses to start with one in reach).
//
// # git
//
// git runs on the repository at the root and nowhere else: [Env] pins
// GIT_DIR and GIT_WORK_TREE to the root (except for clone and init, which
// make a repository), sets GIT_CEILING_DIRECTORIES, GIT_CONFIG_NOSYSTEM=1
// and GIT_CONFIG_GLOBAL=/dev/null, allows only the file, git, http and
// https transports, and overrides the settings that name a program
// (core.hooksPath=/dev/null, core.fsmonitor, core.pager, core.editor,
// core.sshCommand, core.askPass, credential.helper, gpg.program ...), since
// command-line configuration beats the repository's. Drivers are per name
// (filter.NAME.clean, diff.NAME.textconv, merge.NAME.driver,
// remote.NAME.uploadpack) and cannot be overridden, so [CheckGitRepo]
// reads the repository's configuration with git config --list before git
// runs and refuses the repository when a key names a program or a file:
// any key of the include, includeIf, filter, pager, credential, gpg,
// difftool, mergetool ... sections, and any variable called command, cmd,
// program, helper, textconv, driver, clean, smudge, process, uploadpack,
// receivepack, external, worktree, path, file, template ... in any section.
// Remote URLs in the configuration (remote.*.url, branch.*.remote,
// submodule.*.url) that are local paths or file: URLs outside the root, or
// transport helpers (X::), are refused, and so is the url section
// (insteadOf rewrites a URL into a local path). It also refuses a .git
// that is a file (gitdir: elsewhere) or a symlink, a symlink among .git's
// entries or objects, a .git/commondir or object alternates, and a root
// below the top of a larger repository (git show HEAD:secret would read
// outside the root); for clone, the local source repository is checked the
// same way, since git copies objects through its alternates, and
// --recurse-submodules is refused (submodule URLs come from .gitmodules).
// .gitattributes alone runs nothing: the drivers it names must be defined
// in the configuration.
//
// # Environment
//
// [Env] gives the program PATH (without relative entries and entries inside
// the root), HOME, LANG, LC_ALL, TZ and TMPDIR, and no other variable of
// the tool's. A HOME inside the root becomes /nonexistent, because programs
// read configuration from HOME that can run programs or redirect output
// (curl's .curlrc, wget's .wgetrc with use_askpass and output_document,
// .npmrc, .gitconfig), and the client could write it there. Configuration
// the program reads from the working directory is the runners' business:
// that is what makes them runners.
//
// # What the allowlist guarantees, and what it does not
//
// Without kernel confinement, sh_exec's safety rests on program semantics
// written down here: the allowlist guarantees that the program that starts
// is one the operator listed (by name, resolved to its real file, never a
// shell, interpreter, wrapper or editor under any name, never a runner
// unless acknowledged), that it starts without a shell, with no argument
// naming a place outside the root that sh_exec can see, and without the
// options, URLs and configuration sh_exec knows to make it run another
// program or leave the root. It does not guarantee more than that list
// knows: an option or a configuration file of an allowed program that the
// list misses (a new release's option, a program nobody audited) can still
// run a program or reach outside the root; a copy or hard link of a shell
// under a name of its own is judged by that name; an allowed program that
// follows a symlink it meets while walking a tree, or creates one and
// follows it later, is its own business, and so are the member names and
// symlinks of an archive it extracts (tar -x, unzip); a client that
// rewrites .git/config in the moment between CheckGitRepo and git's start
// wins that race; and a runner runs whatever the project's files say.
// Network access is not limited: curl, wget and git fetch reach any host
// the machine reaches.
//
// # Kernel confinement: the second wall, and MCP_SH_UNCONFINED
//
// Under mcp-route (--confine auto on a kernel with Landlock, or require)
// sh_exec runs confined, and so does every program it starts: the kernel
// refuses the program, and everything it starts, every file outside the
// root and the directories confinement grants (the system's program and
// library directories, the tool directories, a private TMPDIR, the
// operator's --allow-read and --allow-write), for reading and for writing,
// whatever option, configuration or symlink asked for it; /proc is not
// readable; and with --no-network, TCP is refused too. What it does not
// stop: running a file in the root (the root is read-write, execution
// included, so that builds and tests work), which is why runners still
// need MCP_SH_ALLOW_RUNNERS. The rules above stay, so that a refusal comes with a
// reason instead of an EACCES.
//
// [CheckConfined] makes sh_exec refuse every command, with an isError that
// says why, when that wall is not in force (a kernel without Landlock,
// mcp-route --confine off, sh_exec run outside mcp-route), unless the tool's
// environment holds MCP_SH_UNCONFINED=1 (mcp-route --env
// MCP_SH_UNCONFINED=1). The risk of setting it: everything the previous
// section says the allowlist does not guarantee is then open, with the
// full rights of mcp-route's user: an option or configuration file the
// list misses can run any program or read and write any file that user
// can, ~/.ssh included.
//
// # Running
//
// [Run] starts the program found by [LookPath] (PATH entries that are
// relative or inside the root are skipped) with [Env]'s minimal environment,
// stdin from /dev/null, the working directory at the root, in a new process
// group (internal/proc does the supervising), stops the whole group at the
// timeout and on cancellation (SIGTERM, then SIGKILL), kills it when the
// output runs past [MaxDrain], and after the program exits. The first
// MaxOutput bytes of stdout and the last of stderr are kept; the rest is
// counted, not kept.
//
// Everything here is safe for concurrent use; an Allowlist is read-only
// once parsed.
package shexec
