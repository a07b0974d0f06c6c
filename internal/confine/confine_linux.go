package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ABI returns the Landlock ABI version of the running kernel: 0 when the
// kernel has no Landlock or it is disabled.
func ABI() int {
	v, err := landlockVersion(createRulesetVersion)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

func errata() int {
	e, err := landlockVersion(createRulesetErrata)
	if err != nil || e < 0 {
		return 0
	}
	return e
}

// InForce reports whether this process is confined by Landlock as far as
// can be observed: opening "/" as a directory is refused with EACCES. No
// policy of this package opens "/", and nothing else refuses root that.
func InForce() bool {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return false
	}
	return errors.Is(err, unix.EACCES)
}

// restrictThread applies pl to the calling OS thread, which must be
// locked (runtime.LockOSThread) and never unlocked afterwards.
func restrictThread(pl *plan) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if pl.filter {
		// Not fatal: the thread check then finds the calls open and
		// reports the filter (and no-network) as not enforced, with this.
		pl.filterErr = installFilter(pl.handledNet != 0)
	}
	attr := rulesetAttr{handledAccessFS: pl.handledFS, handledAccessNet: pl.handledNet, scoped: pl.scoped}
	rfd, err := landlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("confine: landlock_create_ruleset (ABI %d): %w", pl.report.ABI, err)
	}
	defer unix.Close(rfd)
	for i, rl := range pl.report.Rules {
		fd, err := unix.Open(rl.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("confine: rule %s %s: %w", rl.Access, rl.Path, err)
		}
		err = landlockAddPathBeneathRule(rfd, &pathBeneathAttr{allowedAccess: pl.masks[i], parentFd: int32(fd)})
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("confine: landlock_add_rule %s %s: %w", rl.Access, rl.Path, err)
		}
	}
	// Per thread on purpose (no LANDLOCK_RESTRICT_SELF_TSYNC, no psx):
	// only this thread, and what it forks, enters the domain.
	if err := landlockRestrictSelf(rfd); err != nil {
		return fmt.Errorf("confine: landlock_restrict_self: %w", err)
	}
	return nil
}

// witness holds what the effect checks need, set up before the thread is
// restricted: a private directory outside the policy with a file in it,
// and listening sockets to connect to.
type witness struct {
	dir, secret  string // "" when no place outside the policy was found
	tcp          int    // listening 127.0.0.1 socket, -1 if none
	tcpAddr      unix.SockaddrInet4
	abstract     int // listening abstract unix socket, -1 if none
	abstractName string
}

// outsideDir makes a private directory that no rule of pl covers, with a
// file in it, or returns "" when every candidate place is covered.
func outsideDir(pl *plan) (dir, secret string) {
	for _, base := range []string{os.TempDir(), "/var/tmp", "/dev/shm", "/tmp"} {
		d, err := os.MkdirTemp(base, "confine-witness-")
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(d); err == nil && !pl.covered(real, accessFSReadFile) && !pl.covered(real, accessFSMakeReg) {
			f := filepath.Join(real, "secret")
			if os.WriteFile(f, []byte("witness\n"), 0o600) == nil {
				return real, f
			}
		}
		os.RemoveAll(d)
	}
	return "", ""
}

func newWitness(pl *plan) *witness {
	w := &witness{tcp: -1, abstract: -1}
	w.dir, w.secret = outsideDir(pl)
	if pl.handledNet != 0 {
		if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
			if unix.Bind(fd, sa) == nil && unix.Listen(fd, 4) == nil {
				if got, err := unix.Getsockname(fd); err == nil {
					w.tcp, w.tcpAddr = fd, *got.(*unix.SockaddrInet4)
				}
			}
			if w.tcp < 0 {
				unix.Close(fd)
			}
		}
	}
	if pl.scoped&scopeAbstractUnixSocket != 0 {
		if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			name := fmt.Sprintf("@mcpipe-confine-witness-%d-%d", os.Getpid(), time.Now().UnixNano())
			if unix.Bind(fd, &unix.SockaddrUnix{Name: name}) == nil && unix.Listen(fd, 4) == nil {
				w.abstract, w.abstractName = fd, name
			} else {
				unix.Close(fd)
			}
		}
	}
	return w
}

// close undoes newWitness; it must run on a thread outside the domain.
func (w *witness) close() {
	if w.dir != "" {
		os.RemoveAll(w.dir)
	}
	if w.tcp >= 0 {
		unix.Close(w.tcp)
	}
	if w.abstract >= 0 {
		unix.Close(w.abstract)
	}
}

// check proves, on the restricted thread, that the domain is in force:
// what the policy denies is refused, what it allows opens. It returns
// the report with the protections it could not see taken out.
func (w *witness) check(pl *plan) (Report, error) {
	r := pl.report
	refused := func(what string, err error, want unix.Errno) error {
		if err == nil {
			return fmt.Errorf("confine: %s was not refused after landlock_restrict_self: the rules are not in force", what)
		}
		if !errors.Is(err, want) {
			return fmt.Errorf("confine: %s failed with %v, not %v: the rules' effect could not be seen", what, err, want)
		}
		return nil
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	if err := refused(`opening "/"`, err, unix.EACCES); err != nil {
		return r, err
	}
	if w.dir != "" {
		fd, err := unix.Open(w.secret, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		if err := refused("reading "+w.secret+" (outside the policy)", err, unix.EACCES); err != nil {
			return r, err
		}
		fd, err = unix.Open(filepath.Join(w.dir, "new"), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		if err := refused("creating a file in "+w.dir+" (outside the policy)", err, unix.EACCES); err != nil {
			return r, err
		}
	}
	for i, rl := range r.Rules {
		if pl.masks[i]&accessFSReadFile == 0 && pl.masks[i]&accessFSReadDir == 0 {
			continue
		}
		flags := unix.O_RDONLY | unix.O_CLOEXEC
		if !rl.File {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Open(rl.Path, flags|unix.O_NONBLOCK, 0)
		if err == nil {
			unix.Close(fd)
		} else if errors.Is(err, unix.EACCES) {
			return r, fmt.Errorf("confine: %s %s is allowed by the policy but opening it was refused: %v", rl.Access, rl.Path, err)
		}
	}
	// Capabilities last: the rules above are opened as mcp-route's
	// user could, with its capabilities (root reads others' 0700
	// directories by CAP_DAC_READ_SEARCH), as the policy meant.
	if pl.dropCaps {
		r = checkCaps(r, dropCapabilities())
	}
	if pl.filter {
		r = checkFilter(r, pl.handledNet != 0, pl.filterErr)
	}
	if pl.handledNet != 0 {
		if w.tcp < 0 {
			r.NoNetwork = false
			r.Missing = append(r.Missing, "no-network could not be verified (no loopback listener could be made)")
		} else if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return r, fmt.Errorf("confine: socket for the no-network check: %w", err)
		} else {
			addr := w.tcpAddr
			err := unix.Connect(fd, &addr)
			unix.Close(fd)
			if err := refused(fmt.Sprintf("a TCP connect to 127.0.0.1:%d", addr.Port), err, unix.EACCES); err != nil {
				return r, err
			}
			if doors := tcpSideDoors(addr); len(doors) > 0 {
				why := ""
				if pl.filterErr != nil {
					why = " (the seccomp filter that refuses them: " + pl.filterErr.Error() + ")"
				}
				r.NoNetwork = false
				r.Missing = append(r.Missing, "no-network: this kernel lets "+strings.Join(doors, " and ")+" reach a TCP port past Landlock's TCP rules"+why)
			}
		}
	}
	if pl.scoped&scopeSignal != 0 {
		target := 1
		if os.Getpid() == 1 {
			target = os.Getppid()
		}
		if target <= 0 {
			r.ScopedSignals = false
			r.Limits = append(r.Limits, "signal scoping could not be verified (no process outside to test against)")
		} else if err := refused(fmt.Sprintf("kill(%d, 0) (a process outside the domain)", target), unix.Kill(target, 0), unix.EPERM); err != nil {
			return r, err
		}
	}
	if pl.scoped&scopeAbstractUnixSocket != 0 {
		if w.abstract < 0 {
			r.ScopedAbstractSockets = false
			r.Limits = append(r.Limits, "abstract socket scoping could not be verified")
		} else if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return r, fmt.Errorf("confine: socket for the abstract socket check: %w", err)
		} else {
			err := unix.Connect(fd, &unix.SockaddrUnix{Name: w.abstractName})
			unix.Close(fd)
			if err := refused("connecting to abstract socket "+w.abstractName+" (made outside the domain)", err, unix.EPERM); err != nil {
				return r, err
			}
		}
	}
	r.Verified = true
	return r, nil
}

// checkCaps sees, on the thread, that dropCapabilities (which returned
// dropErr) left no capability in the effective, permitted, inheritable
// and ambient sets: r.NoCapabilities, or a Missing entry. A bounding
// set that could not be dropped (not root) is a Limit: with the others
// empty and no_new_privs, exec grants none of it.
func checkCaps(r Report, dropErr error) Report {
	left, bounding, err := capsLeft()
	switch {
	case err != nil:
		r.Missing = append(r.Missing, "capabilities could not be checked: "+err.Error())
	case left != "":
		why := ""
		if dropErr != nil {
			why = " (" + dropErr.Error() + ")"
		}
		r.Missing = append(r.Missing, "capabilities: still held after dropping them: "+left+why)
	default:
		r.NoCapabilities = true
		if bounding != "" {
			r.Limits = append(r.Limits, "capability bounding set "+bounding+" kept (not privileged to drop it); with no capability held and no_new_privs, exec grants none of it")
		}
	}
	return r
}

// checkFilter sees, on the thread, that the seccomp filter is in force:
// unshare(CLONE_NEWUSER) is refused with EPERM (a thread of a
// multi-threaded process gets EINVAL from the kernel itself), clone3
// with ENOSYS (EINVAL or EFAULT otherwise); with noNetwork, a packet
// socket and a UDP socket with EACCES while an AF_UNIX socket opens.
func checkFilter(r Report, noNetwork bool, installErr error) Report {
	var bad []string
	if err := unix.Unshare(unix.CLONE_NEWUSER); !errors.Is(err, unix.EPERM) {
		bad = append(bad, fmt.Sprintf("unshare(CLONE_NEWUSER) gave %v, not EPERM", err))
	}
	if _, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0); e != unix.ENOSYS {
		bad = append(bad, fmt.Sprintf("clone3 gave %v, not ENOSYS", e))
	}
	if noNetwork {
		for _, s := range []struct {
			what                  string
			family, typ, protocol int
		}{
			{"a packet socket", unix.AF_PACKET, unix.SOCK_RAW, 0},
			{"a raw IPv4 socket", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP},
			{"a UDP socket", unix.AF_INET, unix.SOCK_DGRAM, 0},
			{"a UDP6 socket", unix.AF_INET6, unix.SOCK_DGRAM, 0},
		} {
			fd, err := unix.Socket(s.family, s.typ|unix.SOCK_CLOEXEC, s.protocol)
			if err == nil {
				unix.Close(fd)
			}
			if !errors.Is(err, unix.EACCES) {
				bad = append(bad, fmt.Sprintf("%s gave %v, not EACCES", s.what, err))
			}
		}
		if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			bad = append(bad, "an AF_UNIX socket was refused: "+err.Error())
		} else {
			unix.Close(fd)
		}
	}
	if len(bad) == 0 {
		r.Seccomp = true
		return r
	}
	why := ""
	if installErr != nil {
		why = " (" + installErr.Error() + ")"
	}
	r.Missing = append(r.Missing, "system call filter not in force: "+strings.Join(bad, "; ")+why)
	if noNetwork {
		r.NoNetwork = false
	}
	return r
}

// tcpSideDoors tries, from a thread whose TCP connect is refused, the
// ways of reaching a TCP port that some kernels do not check: an MPTCP
// socket (its protocol is not IPPROTO_TCP, and it falls back to plain TCP
// against a plain listener), TCP Fast Open (sendto with MSG_FASTOPEN
// connects without connect(2)) and io_uring (whose socket and send
// operations seccomp does not see). It names those that got through; a
// way the kernel does not offer (MPTCP, TFO or io_uring turned off) does
// not count. With the seccomp filter of NoNetwork in place, none does.
func tcpSideDoors(addr unix.SockaddrInet4) []string {
	var doors []string
	var params [120]byte // struct io_uring_params, zeroed
	if fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0); errno == 0 {
		doors = append(doors, "io_uring")
		unix.Close(int(fd))
	}
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP); err == nil {
		if err := unix.Connect(fd, &addr); err == nil || errors.Is(err, unix.EINPROGRESS) {
			doors = append(doors, "MPTCP sockets")
		}
		unix.Close(fd)
	}
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0); err == nil {
		if err := unix.Sendto(fd, []byte{0}, unix.MSG_FASTOPEN, &addr); err == nil || errors.Is(err, unix.EINPROGRESS) {
			doors = append(doors, "TCP Fast Open (sendto MSG_FASTOPEN)")
		}
		unix.Close(fd)
	}
	return doors
}

// ErrUnsupported is returned (wrapped) when the kernel cannot confine.
var ErrUnsupported = errors.New("confine: Landlock is not available on this kernel")

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("confine: spawner closed")

// Spawner starts processes inside one Landlock domain; see the package
// doc. Its methods are safe for concurrent use; starts are serialized.
type Spawner struct {
	policy Policy
	report Report
	reqs   chan spawnReq
	quit   chan struct{}
	once   sync.Once
}

type spawnReq struct {
	cmd    *exec.Cmd
	around func(start func() error) error // nil: none
	done   chan error
}

func (r spawnReq) start() error {
	if r.around == nil {
		return r.cmd.Start()
	}
	return r.around(r.cmd.Start)
}

// readyPlan builds the plan for p on this kernel, or says why it cannot.
func readyPlan(p Policy) (*plan, error) {
	abi := ABI()
	if abi == 0 {
		return nil, fmt.Errorf("%w (Linux 5.13 or later with landlock in the lsm= list)", ErrUnsupported)
	}
	pl, err := p.plan(abi, errata())
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	if p.Root != "" && !pl.root {
		why := "root " + p.Root + ": not found"
		for _, sk := range pl.report.Skipped {
			if strings.HasPrefix(sk, "root ") {
				why = sk
			}
		}
		return nil, errors.New("confine: " + why)
	}
	return pl, nil
}

// goOffLeader runs f in a new goroutine locked, for good, to an OS thread
// that is not the thread group leader (the main thread). kill(2) of our
// pid is checked by Landlock against the leader's domain: a spawner on
// the leader would let its children signal the whole process. A locked
// thread runs only its own goroutine, so while we hold the leader the
// replacement lands elsewhere; then the leader is given back, untouched.
func goOffLeader(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			return
		}
		started := make(chan struct{})
		goOffLeader(func() {
			close(started)
			f()
		})
		<-started
		runtime.UnlockOSThread()
	}()
}

// NewSpawner locks a dedicated OS thread, applies p to it and checks the
// effect there (see the package doc). The error says exactly what failed;
// then nothing was confined and the thread is gone.
func NewSpawner(p Policy) (*Spawner, error) {
	pl, err := readyPlan(p)
	if err != nil {
		return nil, err
	}
	w := newWitness(pl)
	defer w.close()
	s := &Spawner{policy: p, reqs: make(chan spawnReq), quit: make(chan struct{})}
	type result struct {
		r   Report
		err error
	}
	ready := make(chan result, 1)
	goOffLeader(func() {
		// Never unlocked: when this goroutine returns, the runtime ends
		// the thread instead of reusing it unconfined-looking elsewhere.
		if err := restrictThread(pl); err != nil {
			ready <- result{err: err}
			return
		}
		r, err := w.check(pl)
		ready <- result{r, err}
		if err != nil {
			return
		}
		for {
			select {
			case req := <-s.reqs:
				req.done <- req.start()
			case <-s.quit:
				return
			}
		}
	})
	res := <-ready
	if res.err != nil {
		return nil, res.err
	}
	s.report = res.r
	return s, nil
}

// NewNestedSpawner makes a Spawner whose thread enters a new domain nested
// in the caller's, adding no rule: its children keep the caller's file and
// network access (less the making of device nodes), but from a deeper
// domain, so they cannot ptrace the caller nor its other children and,
// from ABI 6, cannot signal them nor connect to their abstract sockets.
// It is for a confined process that runs programs it does not trust
// (sh_exec): the programs cannot read its memory, which holds its whole
// environment and every call it serves. The caller need not be confined.
// Unlike NewSpawner's, the effect is not checked on the thread (a thread
// may always signal its own process); the report is not Verified.
func NewNestedSpawner() (*Spawner, error) {
	abi := ABI()
	if abi <= 0 {
		return nil, ErrUnsupported
	}
	pl := &plan{handledFS: fsMakeDevice}
	pl.report.ABI = abi
	if abi >= 6 && errata()&errScopeFix != 0 {
		pl.scoped = scopeSignal | scopeAbstractUnixSocket
		pl.report.ScopedSignals, pl.report.ScopedAbstractSockets = true, true
	}
	s := &Spawner{reqs: make(chan spawnReq), quit: make(chan struct{})}
	ready := make(chan error, 1)
	goOffLeader(func() {
		if err := restrictThread(pl); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for {
			select {
			case req := <-s.reqs:
				req.done <- req.start()
			case <-s.quit:
				return
			}
		}
	})
	if err := <-ready; err != nil {
		return nil, err
	}
	s.report = pl.report
	return s, nil
}

// Start calls cmd.Start on the confined thread, so the process (and all
// it starts) is in the domain. It returns cmd.Start's error, or ErrClosed.
func (s *Spawner) Start(cmd *exec.Cmd) error { return s.StartWith(cmd, nil) }

// StartWith is Start with around (when not nil) called on the confined
// thread with the function that starts cmd: for what must be done on the
// forking thread itself, such as entering a cgroup v1 hierarchy's cgroup
// for the fork (proc.ForkHook). around runs confined: it may use only
// what it opened before.
func (s *Spawner) StartWith(cmd *exec.Cmd, around func(start func() error) error) error {
	req := spawnReq{cmd: cmd, around: around, done: make(chan error, 1)}
	select {
	case s.reqs <- req:
		return <-req.done
	case <-s.quit:
		return ErrClosed
	}
}

// Report is what the spawner enforces, as verified by NewSpawner.
func (s *Spawner) Report() Report { return s.report }

// Policy is the policy the spawner was made with.
func (s *Spawner) Policy() Policy { return s.policy }

// Close ends the confined thread. Processes already started go on, in
// the domain; those started with SysProcAttr.Pdeathsig get their signal
// now, since the kernel ties it to the thread that forked them.
func (s *Spawner) Close() { s.once.Do(func() { close(s.quit) }) }

// probeScript is run by Probe's shell with $1 a file outside the policy
// (or ""), $2 a path to create beside it, $3 the root. Each failure has
// its own status.
// A failed redirection of the special builtin ":" would end a POSIX
// shell, hence the subshells.
const probeScript = `if (: < /) 2>/dev/null; then exit 10; fi
if [ -n "$1" ]; then
	if (: < "$1") 2>/dev/null; then exit 11; fi
	if (: > "$2") 2>/dev/null; then exit 12; fi
fi
(: < "$3") || exit 13
exit 0
`

// Probe starts a real child through s and checks that it is refused
// outside the policy (opening "/", reading a file Probe made in a private
// directory outside the policy, creating a file there) and allowed
// inside (opening Root). The child is a POSIX shell running a script of
// redirections only, so the check needs no helper program and no
// executable outside the system directories: probeExe is that shell, ""
// meaning /bin/sh.
func Probe(s *Spawner, probeExe string) error {
	if probeExe == "" {
		probeExe = "/bin/sh"
	}
	root := s.policy.Root
	if root == "" {
		root = "/usr"
	}
	pl, err := readyPlan(s.policy)
	if err != nil {
		return err
	}
	dir, secret := outsideDir(pl)
	created := ""
	if dir != "" {
		defer os.RemoveAll(dir)
		created = filepath.Join(dir, "created")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, probeExe, "-c", probeScript, "confine-probe", secret, created, root)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := s.Start(cmd); err != nil {
		return fmt.Errorf("confine: probe: starting %s: %w", probeExe, err)
	}
	err = cmd.Wait()
	if created != "" {
		if _, serr := os.Lstat(created); serr == nil {
			return fmt.Errorf("confine: probe: a confined child created %s, outside the policy", created)
		}
	}
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch code {
	case 0:
		return nil
	case 10:
		return errors.New(`confine: probe: a confined child opened "/": it is not confined`)
	case 11:
		return fmt.Errorf("confine: probe: a confined child read %s, outside the policy", secret)
	case 12:
		return fmt.Errorf("confine: probe: a confined child created %s, outside the policy", created)
	case 13:
		return fmt.Errorf("confine: probe: a confined child could not open the root %s: %s", root, strings.TrimSpace(stderr.String()))
	default:
		return fmt.Errorf("confine: probe: %s: %v %s", probeExe, err, strings.TrimSpace(stderr.String()))
	}
}

// Exec confines the calling process's next program: on a locked thread
// it applies p (plus argv[0]'s executable, found by LookPath in p.Root,
// as a read+exec file when no rule covers it), checks the effect, changes to
// p.Root and execs argv with env there, so the program and all it starts
// are in the domain. When the checked confinement leaves out something
// p asks (the Report is not Complete, e.g. no-network on a kernel whose
// ways past the TCP rules could not be closed), partial decides: nil or
// false refuses with an *IncompleteError, true execs confined in part.
// It returns only on error, with nothing exec'd: an *ExecError when the
// confinement held and execve itself failed.
func Exec(p Policy, argv []string, env []string, partial func(Report) bool) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("confine: no command to exec")
	}
	path, err := LookPath(p.Root, argv[0], env)
	if err != nil {
		return err
	}
	pl, err := readyPlan(p)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && !pl.covered(real, accessFSExecute) {
		p.ReadExec = append(append([]string(nil), p.ReadExec...), real)
		if pl, err = readyPlan(p); err != nil {
			return err
		}
	}
	w := newWitness(pl)
	ready, execNow, failed := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see NewSpawner
		err := restrictThread(pl)
		if err == nil {
			var r Report
			if r, err = w.check(pl); err == nil && !r.Complete() && (partial == nil || !partial(r)) {
				err = &IncompleteError{Missing: r.Missing}
			}
		}
		ready <- err
		if err != nil {
			return
		}
		<-execNow
		if p.Root != "" {
			if err := unix.Chdir(p.Root); err != nil {
				failed <- fmt.Errorf("confine: chdir %s: %w", p.Root, err)
				return
			}
		}
		// execve from this thread: the new program's only thread is
		// this one, with its domain.
		failed <- &ExecError{Path: path, Err: syscall.Exec(path, argv, env)}
	}()
	err = <-ready
	w.close() // from an unconfined thread: the witness is outside the policy
	if err != nil {
		return err
	}
	close(execNow)
	return <-failed
}
