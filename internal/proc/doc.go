// Package proc supervises child processes: it starts each one in a new
// process group and makes sure that when it ends, nothing of its group
// outlives it. It is the one place in mcpipe that starts, signals and
// reaps processes; mcp-route's runner, mcp-call's server process and
// mcp-stock's sh_exec are thin layers over it.
//
// # Run: one process to completion
//
// Run starts Cmd.Path in its own process group (Setpgid) with exactly
// Cmd.Env (nil is an empty environment, not ours), Cmd.Dir, and these
// descriptors:
//
//   - stdin: Cmd.Stdin, then EOF (nil: /dev/null). A process that never
//     reads it or closes it early is fine: EPIPE on our side is ignored.
//   - stdout: the first Cmd.MaxOutput bytes are kept. With Cmd.ReadLimit
//     zero, one byte more kills the group (SIGKILL) and the outcome is
//     OutputExceeded; with a ReadLimit, bytes past MaxOutput are counted
//     (Result.StdoutTotal) and the kill comes past ReadLimit.
//   - stderr: the last Cmd.MaxStderr bytes are kept, so memory stays
//     bounded however much is written; with a ReadLimit, passing it also
//     kills.
//   - fd 3, only when Cmd.Progress is set: a pipe whose lines go to
//     Progress. It is always drained. fd 4, only when Cmd.Answers is
//     set too: that file (the read end of the caller's answer pipe).
//
// The group gets SIGTERM when Cmd.Timeout passes (TimedOut) or the
// context is done (Canceled), and SIGKILL Cmd.Grace later if the leader
// is still alive. When the leader exits, the pipes get Cmd.Drain to reach
// EOF; then the rest of the group is killed (SIGKILL) unconditionally, so
// a background child that still holds stdout cannot hold the call open
// and nothing left in the group outlives it. That kill happens BEFORE the
// leader is reaped: the exited leader is still a zombie (waitid with
// WNOWAIT), so its pid, the group id, cannot have been reused by an
// unrelated process. A process that left the group (setsid) and still
// holds a pipe does not hold Run either: our ends are closed another
// Drain later. Run returns once the leader is reaped and every
// descriptor it opened is closed.
//
// # Outcomes
//
// Result.Outcome says how it ended, as an Ending (Exited, Signaled,
// TimedOut, OutputExceeded, Canceled, NotStarted) plus the exit status or
// signal. Callers decide on the Ending, never on text; Outcome.String is
// the single wording every caller shows: "exit status 3", "killed by
// SIGSEGV", "timed out after 30s", "output exceeded 1048576 bytes",
// "canceled", "cannot start: ...". What this package did wins over what
// the process did: a process that exits 0 on our SIGTERM after its
// timeout has TimedOut.
//
// # Start: a long-lived process
//
// Start is for children that live across many requests (MCP servers
// mcp-call talks to, upstream servers and persistent tool workers): a
// Process with stdin and stdout pipes for the caller, Done/Wait/Outcome,
// a stderr tail (and Cmd.StderrTo for a live copy), and Stop(grace),
// which closes stdin, waits grace, then does the same SIGTERM → grace →
// SIGKILL ladder on the group (Terminate skips the first wait). When its
// leader exits, the rest of its group is killed at once, with no Drain
// (a server's leader is the server; nothing left in its group has
// anything to say), and before the leader is reaped, as with Run. So a
// child that still holds stdout cannot hide the death: the reader sees
// EOF, and Done and the Outcome ("killed by SIGKILL") come, within
// milliseconds of the exit.
//
// # Seams: launchers, the fork–exec gap, spawners
//
// Cmd.Launcher puts a program in front of the argv (Launcher, then Path,
// then Args[1:]); that program confines itself and execs the rest (as
// mcp-jail --exec does), so the confinement covers the process and
// everything it starts, at the cost of one more exec per start.
// Cmd.Prepare gets the *exec.Cmd just before it starts, to set what the
// kernel applies between fork and exec (SysProcAttr: credentials,
// namespaces, a cgroup fd); it must keep Setpgid. Cmd.Spawn replaces
// cmd.Start itself: a confine.Spawner starts the child on its
// Landlock-confined thread, so the child is confined from its first
// instruction at no extra exec. Start-time tracking and the subreaper's
// sweep work the same whichever thread starts the child.
//
// # Daemons: the subreaper
//
// A process that calls setsid and whose parent exits leaves the group
// and is reparented: normally to init, where it outlives the call and
// the supervisor. Subreap makes the calling process a child subreaper
// (Linux PR_SET_CHILD_SUBREAPER), so such processes are reparented to it
// instead, whichever of its descendants left them: a tool, or the child
// of a worker or server started with Start. After every Run, when a
// Process ends, and whenever the program calls Sweep (mcp-route does
// after every call on a worker), the sweep kills (SIGKILL) every child of
// ours that is a stray, with all its descendants, and reaps it. A stray
// is a child this package did not start that is not in the group of a
// Run in progress (that Run kills its group when it ends). The group of
// a Start child does not shelter it: that group lives as long as the
// server or worker, so a process that joined it (setpgid) and lost its
// parent would live as long. A worker's or server's own children are not
// ours (their parent is the worker) and are left alone; they die with
// its group. A program that uses Subreap calls Sweep once more at
// shutdown.
//
// The cost does not grow with the host: our children are listed from
// /proc/self/task/*/children and a stray's descendants from
// /proc/PID/task/*/children (CONFIG_PROC_CHILDREN); only a kernel without
// those files falls back to reading /proc/*/stat for every process. The
// sweep first looks without a lock, and where the kernel hands every
// orphan to the subreaper's first live thread (Linux 3.19 and later:
// our leader, which lives as long as we do) it reads that thread's list
// only: a stray can be nowhere else, and what our other threads forked is
// tracked. When every child it sees is known (nothing escaped, the
// common case) it returns, so it does not hold up starts; only when it
// sees a stray does it take the start lock exclusively, so that a child
// being started (tracked under the shared lock) is not taken for one,
// and look again, through every thread's list. Children are not found with waitid(P_ALL), which would
// steal the status of a child os/exec waits for. A process that escaped
// and whose parent has not exited yet when the call ends is found by the
// next sweep. A program that starts children any other way must not use
// Subreap: a sweep would kill them.
//
// # Limits
//
// Cmd.Limits bound the process tree: a Run's process and all it starts,
// or a Start'ed process and all it starts over its life. Memory and Pids
// use cgroups, where a directory can be made below our own cgroup
// (mcpipe/PID-N there, one per tree): a cgroup v1 memory or pids
// hierarchy where one is mounted, else the controller in the cgroup v2
// (unified) hierarchy. A controller is bound to one hierarchy at a time,
// so a hybrid host may have pids on v2 and memory on v1; a tree then has
// a cgroup in each.
//
// v1: the thread that forks enters the tree's cgroups for the fork and
// returns to ours after it (v1 places threads one by one, and fork
// copies the forking thread's), so the child is in them from its first
// instruction.
//
// v2 places whole processes, so a forking thread cannot carry the child
// in. The child is born in its cgroup by clone3(CLONE_INTO_CGROUP)
// (SysProcAttr.UseCgroupFD) where clone3 works on the forking thread.
// Where it does not (a Spawn, which forks on its own thread: a confined
// one answers clone3 with ENOSYS, since seccomp cannot read its flags;
// a container's seccomp profile may too), the child gets PTRACE_TRACEME
// (SysProcAttr.Ptrace), the forking thread waits for its stop right
// after exec, writes it into the cgroup's cgroup.procs and detaches: it
// runs no instruction of the new program outside the cgroup (what the
// exec itself allocated is charged to ours). This needs ptrace to be
// allowed to the child (confine's filter does; Yama's ptrace_scope 3
// does not, and every start then fails), and a set-user-ID program
// started so gets no privilege from it (as under confine's
// no_new_privs anyway). v2 is set up once: the
// controllers must be in our cgroup's cgroup.controllers; they are
// enabled in its cgroup.subtree_control and in mcpipe's. A cgroup that
// hands controllers down may hold no process (the root cgroup excepted),
// so unless we are in the root, this process moves itself into
// OWN/mcpipe-route first, and only when OWN holds no other process
// (another's processes are never moved) and OWN is delegated to us: a
// trusted.delegate or user.delegate xattr (systemd's Delegate=yes, also
// for a user's units with systemd 251 and later), or the root of our
// cgroup namespace (a container's). Owning a cgroup is not taken for
// delegation: systemd's user manager owns all of a user's cgroups and
// rearranges those it was not asked to delegate. Otherwise, or where the cgroup file system
// is read-only (containers, Bazel's sandbox: a probe directory is made
// at set-up), v2 is not used and the fallbacks below apply. v2 trees get
// memory.max with memory.swap.max 0 (so swap does not add to the limit)
// and pids.max; memory.events oom_kill and pids.events max tell a limit
// hit; cgroup.kill (Linux 5.14) ends what is left.
//
// A Spawn that forks on another thread must wrap the fork with
// ForkHook(cmd) there; the child's cgroups are checked after the start,
// and a child outside them is killed and the start fails (NotStarted).
// Without a memory controller Memory is RLIMIT_DATA per process; without
// a pids controller there is no process limit (RLIMIT_NPROC counts every
// process of the uid and is never enforced for root). CPU is RLIMIT_CPU
// per process. Rlimits are set with prlimit right after the start: what
// the process forks before that escapes them. LimitSupport says what
// applies on this machine, and why a cgroup is not used.
//
// When the tree ends (Run: after the leader is reaped; Start: when the
// process has ended), every process still in the tree's cgroups is
// killed, one that left the group (setsid) included; then the Outcome is
// LimitExceeded when, over the tree's life, the memory controller killed
// (oom_kill), the pids controller refused a fork, or RLIMIT_CPU ended
// the leader, unless this package ended it first (timeout, cancel,
// output). The emptied cgroups are kept for the next tree with the same
// limits (at most 16 pairs, each with the event counts it had, so that a
// limit an earlier tree hit is not reported for the next; not one still
// charged with more than 1/64 of its memory limit), since making and
// removing a memory cgroup per tree was most of what the limits cost;
// the others are removed once empty. A kept pair keeps its directories
// and event files open, so that the end of a tree reads them with a few
// system calls, not a path walk each. ReleaseLimits removes the kept ones: a program that
// uses Limits calls it at exit (the next process removes those of one
// that is gone). A cgroup setup that fails is
// NotStarted: limits asked for are never silently dropped, though a
// missing hierarchy falls back as above.
//
// # What is refused
//
// An empty Path (NotStarted), and a Prepare that clears Setpgid. Nothing
// else: what may run, with which environment, is the caller's decision.
//
// # Platforms
//
// Linux has every guarantee above. macOS and the BSDs build and run the
// same code with documented fallbacks: there is no waitid WNOWAIT
// here, so the leader is reaped when it exits and the group is killed
// after that (a pid reused in between by a process that makes itself a
// group leader could get the signal; the window is the Drain); and there
// is no subreaper (Subreap returns ErrNoSubreaper, Sweep does nothing),
// so a daemon that left its group escapes. Process.StdinConsumed is
// known only on Linux (FIONREAD on a pipe). Cmd.Limits are Linux's too
// (cgroups, prlimit): elsewhere they are not enforced, and LimitSupport
// says so (a process is started as without them rather than refused).
//
// All functions and methods are safe for concurrent use; every limit is
// a Cmd field, so runs with different limits do not interfere.
package proc
