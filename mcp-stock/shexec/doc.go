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
// # Policy
//
// [Allowlist.Check] lets a command run only when its first word is a bare
// program name on the allowlist (MCP_SH_ALLOW, comma-separated; empty
// refuses everything). Some programs are never run even when listed, because
// their arguments are code or another command: shells, interpreters (awk,
// sed, perl, python ...), wrappers (env, xargs, nice, timeout, sudo ...),
// remote shells, editors and pagers. For the programs it does run, options
// that name a program to run are refused for every program (--to-command,
// --use-compress-program, --rsh, --upload-pack, --exec, -exec, -ok,
// -toolexec ... in every abbreviation getopt_long accepts), and per-program
// rules cover git (-c, aliases, config, submodule ...), find (-delete,
// -fprint), tar (-I, -F, remote archives), rsync (-e, remote hosts), zip
// (-TT), make (-E, $(shell)), go (generate, env -w) and npm (exec). The full
// lists are in the source, each with its reason.
//
// The caller also checks each word's [PathCandidates] against the jail
// root, so that an argument naming a place outside the root (/etc/passwd,
// ../x, -C/, if=/dev/sda) is refused; this is a wide net, so a pattern
// argument that looks like such a path is refused too.
//
// # Limits of the guard
//
// The guard is on the command line. An allowed program still does what it
// does with the files it reads: git follows the repository's configuration
// (diff.external, filter and textconv drivers), make runs a Makefile, go
// test and npm test run code from the tree. With the write tools enabled, a
// client that can write those files can run commands through such a
// program: allow it only for clients trusted that far. Arguments that the
// program reads as paths are checked against the root, but the program
// itself is not jailed: a symlink it creates or follows later is its own
// business.
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
