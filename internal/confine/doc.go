// Package confine confines processes with Landlock, the Linux security
// module that lets an unprivileged process restrict itself: a Policy
// names the directories a process may read, execute and write, and the
// kernel refuses everything else, for the process and all it starts.
//
// # The policy
//
// Read and execute: the system directories (SystemReadExec: /usr /bin
// /sbin /lib* /opt where present), Policy.ReadExec, Policy.AllowExec and
// the Grants that ask for it. Read only: the files of /etc programs need
// (SystemRead: the loader's cache, passwd, group, nsswitch.conf, hosts,
// resolv.conf, localtime, the public certificates, the runtimes'
// system configuration ...), the machine's global files of /proc
// (ProcRead: cpuinfo, meminfo, loadavg, stat, uptime, version, a few
// sysctls), Policy.AllowRead and the read-only Grants. Read and write:
// Policy.Root (read only with ReadOnlyRoot), Policy.TempDir and
// Policy.AllowWrite. Devices (read, write and, from ABI 5, ioctl):
// /dev/null /dev/zero /dev/urandom /dev/random; not /dev/tty, through
// which a process could type commands (TIOCSTI) into the terminal of
// whoever started it. Read-write places allow everything but making
// device nodes (mknod of a character or block device): root could
// otherwise make one for the disk or /dev/kmsg in the root and open it
// there, since Landlock checks a device's path, not the device.
// Everything else is denied: the home directory, /tmp, /run, the rest of
// /etc and of /proc, and /sys.
//
// # No secret in reach
//
// /etc is not granted whole: it holds password hashes (/etc/shadow), sudo
// rules, TLS private keys (/etc/ssl/private) and SSH host keys, and a
// Landlock rule on a directory grants everything below it. SystemRead
// lists what programs read, file by file where the directory also holds
// secrets (/etc/ssl/certs, not /etc/ssl). The places of Never (those
// secrets, and the credentials services keep under /etc: /etc/credstore,
// /etc/wireguard, /etc/letsencrypt, kubeconfig and the like) are never
// granted: a policy path at, below or above one of them (--allow-read
// /etc, a root of /etc, a symlink to /etc/ssl) is refused with a
// *NeverError, since Landlock cannot grant a directory less a part of
// it. A curated entry that resolves to one of them is skipped.
//
// /proc: without a private pid namespace a tool would see every process
// of the host. Only the files of ProcRead open, each as a file rule: no
// /proc/<pid>, no /proc/self, so a confined tool, even one running as
// root, cannot read /proc/<pid>/environ or mem of mcp-route or of
// another tool. Programs that read their own /proc/self (ps, some
// runtimes' self-inspection) are refused; Report.Detail says so. A
// private pid namespace with a /proc of its own is not used: mounting
// that /proc takes code in the child between fork and exec, which Go's
// fork/exec cannot run and the confined thread (seccomp, no
// capabilities) may not, so it would take an init exec'd per start
// (figures in mcp-route's README).
// Landlock itself refuses ptrace of processes outside the domain. From
// ABI 6 the domain is also scoped: no signals to processes outside it,
// no connect to abstract Unix sockets made outside it. With NoNetwork
// (ABI 4) TCP bind and connect are denied, and the seccomp filter
// (below) refuses UDP, raw, packet and the other sockets but Unix and
// netlink ones, MPTCP and TCP Fast Open; pathname Unix sockets and a TCP
// listen(2) without bind(2) (the kernel picks the port: inbound only)
// are not covered.
//
// # Execute only where nothing confined writes
//
// AllowExec (mcp-route and mcp-jail --exec --allow-exec) and the Grants
// with AccessReadExec (a tool's interpreter and its installation) must lie
// outside Root and every AllowWrite, by the path as given and as
// resolved: a client could write a program there and run it. Check
// refuses one with a *WritableExecError; InWritable lets a caller that
// derives grants leave such a path out instead. Check runs first in Plan,
// NewSpawner and Exec, and callers run it at start-up so that a bad flag
// fails with one error whatever the kernel.
//
// # Capabilities
//
// Capabilities are per-thread credentials, like the domain: the confined
// thread drops every one (the bounding set with PR_CAPBSET_DROP for each,
// the ambient set, then effective, permitted and inheritable by capset),
// so the tools of a root mcp-route hold none and exec grants them none
// (with no_new_privs and empty sets, not even to uid 0), while
// mcp-route's other threads keep theirs. The file modes then apply to a
// root tool as to any process of uid 0 without CAP_DAC_OVERRIDE. A
// thread not allowed to drop the bounding set (not root) keeps it, a
// Report.Limits entry: it holds no capability and exec grants none. A
// capability still held after the drop is Missing.
//
// # The seccomp filter
//
// Every confined thread also gets a seccomp filter, after
// PR_SET_NO_NEW_PRIVS and before landlock_restrict_self, for that thread
// only (no SECCOMP_FILTER_FLAG_TSYNC) and inherited by what it forks and
// execs. It refuses with EPERM the calls that reach into the system
// rather than the tool's own files: mount, umount2 and the new mount API
// (fsopen, fsmount, move_mount, open_tree, ...), unshare, setns, chroot,
// pivot_root, bpf, perf_event_open, keyctl, add_key, request_key,
// kexec_load, kexec_file_load, init_module, finit_module, delete_module,
// open_by_handle_at, userfaultfd, swapon, swapoff, reboot,
// settimeofday, clock_settime, clock_adjtime, acct, quotactl, iopl,
// ioperm, lookup_dcookie and fanotify_init; clone(2) with any namespace
// flag (a user namespace gives every capability back inside it); and
// with ENOSYS clone3(2), whose flags are in memory seccomp cannot read,
// so that glibc and Go fall back to clone(2). Most of these need a
// capability anyway; the filter is what holds for a non-root mcp-route
// on a kernel with unprivileged user namespaces, and the kernel code
// behind them is not reached at all. ptrace(2) and process_vm_writev(2)
// stay: debuggers and strace are ordinary tools, and Landlock already
// refuses them against any process outside the tool's domain. A process
// that makes a system call of another convention (x32 on amd64, 32-bit)
// is killed: its numbers are not the ones checked.
//
// With NoNetwork the filter also closes what Landlock's TCP rules
// (bind(2) and connect(2) of IPPROTO_TCP sockets) do not see. It refuses
// with EACCES, as Landlock would: socket(2) of every family but AF_UNIX,
// AF_NETLINK, AF_INET and AF_INET6, and of AF_INET/AF_INET6 anything but
// SOCK_STREAM with protocol 0 or IPPROTO_TCP (so no packet, raw, UDP,
// ICMP, SCTP, MPTCP or AF_VSOCK socket; MPTCP falls back to plain TCP
// past the rules on Linux 6.18 at least); sendto, sendmsg and sendmmsg
// with MSG_FASTOPEN and setsockopt IPPROTO_TCP TCP_FASTOPEN_CONNECT (TCP
// Fast Open connects without connect(2)); and with ENOSYS io_uring_setup,
// since io_uring's socket and send operations are not seen by seccomp (a
// program that uses io_uring falls back or fails). A TCP listen(2)
// without bind(2) (the kernel picks the port: inbound only) is not
// covered. The arguments are compared as the kernel reads them, 32-bit
// ints. There is a filter for amd64 and arm64 only; elsewhere, or when it
// cannot be installed, the check below finds the calls open and the
// filter (and NoNetwork) is Missing, so --confine require refuses there.
//
// Each path is resolved (symlinks followed) when the rules are built and
// the rule attaches to what it resolved to; a symlink inside Root that
// points out leads to a denied place. A path that does not exist gets
// no rule and is listed in Report.Skipped. A rule on a file carries file
// rights only. A place named more than once (the root also a tool
// directory or an AllowWrite, the same tool directory twice) gets one
// rule with the union of the rights, labelled by the widest, whose
// Source lists every reason ("root+tool"); a read-only root that is also
// a tool directory is read and execute, one that is also AllowWrite is
// read-write. A policy that would open "/" is refused: nothing could
// then be shown to be denied.
//
// Rights follow the kernel's ABI: only those it knows are handled
// (truncate from ABI 3, ioctl on devices from ABI 5, ...). Report.Missing
// lists what the policy asks that the kernel cannot enforce, such as
// NoNetwork before ABI 4 or truncate before ABI 3; Report.Complete is
// false then. Scoping needs the kernel's fix of Landlock erratum 2
// (signals between threads of one process), since without it the
// confined thread of ours could not signal the rest of our own process.
//
// # Per thread: confining children, not ourselves
//
// A Landlock domain belongs to a thread's credentials, and fork copies
// the calling thread's. mcp-route must confine every tool it starts
// without confining itself and without an extra exec per call, so a
// Spawner applies the rules to one thread only: a dedicated goroutine
// calls runtime.LockOSThread (and never unlocks, so when it ends the
// runtime ends the thread rather than reuse it), sets PR_SET_NO_NEW_PRIVS
// on that thread, builds the ruleset and calls landlock_restrict_self
// for that thread alone. Spawner.Start then runs exec.Cmd.Start on that
// thread (requests go over a channel), and the forked child inherits its
// domain. The other threads of the process are untouched. Go does not
// clone the confined thread into new runtime threads: when the current M
// is locked by LockOSThread (m.lockedExt), runtime.newm asks its template
// thread to create new Ms, so a thread started while ours runs does not
// inherit its credentials. LockOSThread starts that template thread
// first, before our thread is restricted, so it is clean too.
//
// go-landlock's high-level API (landlock.V5.RestrictPaths and friends)
// is process-wide: it applies the rules to all threads (psx, or
// LANDLOCK_RESTRICT_SELF_TSYNC), which would confine mcp-route itself.
// Its syscall package has the per-thread calls, but it imports libcap's
// psx, which turns every binary linking it into a cgo binary wherever a C
// compiler is present: a stock tool's exec then paid the dynamic loader,
// about 0.6 ms (40% of the tool). So this package makes the five
// per-thread system calls itself (landlock_linux.go, through
// golang.org/x/sys/unix), with the UAPI's constants (landlock.go), and
// keeps the ABI handling here.
//
// # Fail closed: the effect is tested, not the return value
//
// landlock_restrict_self returning 0 proves little (a domain applied to
// the wrong thread returns 0 too). NewSpawner and Exec check on the
// confined thread itself, before anything is started, that opening "/"
// is refused with EACCES, that a file in a private directory made
// outside the policy cannot be read nor a file created there, that every
// readable rule opens, and, when asked, that a TCP connect to a loopback
// listener, kill(2) of a process outside and a connect to an abstract
// socket made outside are refused. It sees the capabilities gone
// (capget, PR_CAPBSET_READ, PR_CAP_AMBIENT_IS_SET) and the filter in
// force (unshare(CLONE_NEWUSER) refused with EPERM where the kernel gives
// a threaded process EINVAL, clone3 with ENOSYS; with NoNetwork packet,
// raw and UDP sockets refused, an AF_UNIX one allowed). With NoNetwork it
// also tries the ways past Landlock's TCP rules (an MPTCP connect, TCP
// Fast Open's sendto, io_uring_setup): one that gets through makes
// no-network Missing, so the Report is not Complete. Probe then
// starts a real child through the Spawner and checks the same from the
// child. A Report says
// Verified only after seeing it; a protection that could not be tested is
// reported as not enforced.
//
// # Limits
//
// All processes of one Spawner share one domain: they may signal and,
// with the privilege, ptrace each other, though not the process that made
// the Spawner. NewNestedSpawner gives a process that runs untrusted
// programs a domain nested in its own for them: they cannot ptrace nor
// (ABI 6) signal it or anything else outside the nest. Landlock does not restrict what is already open: file
// descriptors passed to a child (stdin, stdout) stay usable. chdir, stat
// and access(2) are not restricted, so a confined process can see that a
// path exists.
//
// # Denials explained
//
// Explain reads a confined program's failure (a tool call's outcome and
// stderr, an upstream's stderr) for a path the rules refused and the
// file's own mode allows, and names the narrowest flag that grants it,
// never one Check would refuse (see explain.go). mcp-route's tool calls
// and its upstreams' start failures both use it.
//
// # Exec
//
// Exec is for mcp-jail --exec: the same checks on a locked thread, then
// chdir to Root and execve from that thread, so the new program (whose
// only thread it is) runs in the domain. A check that finds the policy
// not enforced in full refuses the exec (*IncompleteError) unless the
// caller's partial function accepts it.
//
// InForce lets a program confined this way see it: opening "/" is
// refused. sh_exec refuses to run without it.
//
// On systems other than Linux, ABI is 0, InForce false, and everything
// that would confine returns ErrUnsupported.
package confine
