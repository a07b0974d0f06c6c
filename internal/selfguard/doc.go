// Package selfguard keeps a server's own secrets out of reach of the child
// processes it runs as the same user: after Apply, a child cannot read the
// server's environment through /proc/PID/environ, nor its memory through
// /proc/PID/mem.
//
// Apply does two things, on Linux:
//
//   - prctl(PR_SET_DUMPABLE, 0). The kernel then treats the process like a
//     set-uid one: its /proc/PID files belong to root, and a process of the
//     same user without CAP_SYS_PTRACE may neither open /proc/PID/mem nor
//     read /proc/PID/environ, maps or fd, nor ptrace it or dump its core.
//     Children get the normal setting back when they exec.
//   - It overwrites with NUL bytes the block the kernel shows as
//     /proc/PID/environ (env_start to env_end of /proc/self/stat, written
//     through /proc/self/mem), so even root, who passes the ptrace check,
//     reads only zeros there. The Go runtime copied every variable at
//     start-up, so os.Getenv, os.LookupEnv and os.Environ are unchanged, and
//     so is what a child is given. os.Args is not touched: the runtime did
//     not copy it, and /proc/PID/cmdline is world-readable anyway.
//
// What remains: root (or anyone with CAP_SYS_PTRACE) can still read the
// process's memory, where the Go runtime's copy of the environment lives, and
// can ptrace it. Only confinement of the children (Landlock, a user
// namespace, another uid) takes that away. The command line is not guarded:
// every local user can read /proc/PID/cmdline.
//
// Apply fails, and leaves whatever it already did in place, when prctl fails
// or /proc is not mounted; the caller decides whether to go on. It is safe to
// call more than once. Elsewhere than Linux, Apply does nothing and returns
// nil: there is no /proc to guard.
package selfguard
