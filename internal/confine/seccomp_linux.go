package confine

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of every confined thread (see the package doc,
// "The seccomp filter"). It is installed on the confined thread only,
// without SECCOMP_FILTER_FLAG_TSYNC, so mcp-route's other threads stay
// free; what the thread forks and execs inherits it.
//
// Always:
//   - EPERM for the calls that change what a process can see of the
//     system or the kernel itself (sysnums.deny: mount and the new mount
//     API, unshare, setns, chroot, pivot_root, bpf, perf_event_open, the
//     keyring, kexec, modules, open_by_handle_at, userfaultfd, swap,
//     reboot, the clock, acct, quotactl, iopl/ioperm, lookup_dcookie,
//     fanotify_init);
//   - EPERM for clone(2) with a namespace flag (CLONE_NEWUSER and the
//     others): a user namespace gives back every capability inside it;
//   - ENOSYS for clone3(2), whose flags are in memory seccomp cannot
//     read: libc and Go fall back to clone(2), whose flags it can.
//
// With NoNetwork also, with EACCES as Landlock would:
//   - socket(2) of any family but AF_UNIX, AF_NETLINK, AF_INET and
//     AF_INET6, and of AF_INET/AF_INET6 anything but SOCK_STREAM with
//     protocol 0 or IPPROTO_TCP: no packet, raw, UDP (ICMP "ping"
//     included), SCTP or MPTCP socket, no AF_VSOCK to the host;
//   - sendto(2), sendmsg(2) and sendmmsg(2) with MSG_FASTOPEN;
//   - setsockopt(2) IPPROTO_TCP TCP_FASTOPEN_CONNECT;
//
// and ENOSYS for io_uring_setup(2), whose operations seccomp does not see.
// A foreign system call convention (x32 on amd64, a 32-bit binary) kills
// the process: its system call numbers are not the ones checked here.
//
// The arguments are 64 bits in seccomp_data, and the kernel reads these
// as 32-bit ints (clone's flags as an unsigned long whose namespace bits
// are all in the low half): only the low half is compared, so setting
// the high half changes nothing for the filter nor for the kernel.

// seccomp_data offsets (little-endian: an argument's low half comes first).
const (
	offNr   = 0
	offArch = 4
)

func offArgLow(i uint32) uint32 { return 16 + 8*i }

const (
	bpfLd   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K

	tcpFastopenConnect = 30 // TCP_FASTOPEN_CONNECT, include/uapi/linux/tcp.h
	msgFastopen        = unix.MSG_FASTOPEN
	sockTypeMask       = 0xf // SOCK_TYPE_MASK: the type without SOCK_NONBLOCK|SOCK_CLOEXEC

	// cloneNamespaces are the clone(2) flags that make a namespace.
	cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
		unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// errFilterUnsupported: no filter for this architecture.
var errFilterUnsupported = errors.New("no seccomp filter for this architecture (amd64 and arm64 only)")

// sysnums are an architecture's numbers for the filter.
type sysnums struct {
	arch uint32 // AUDIT_ARCH_*
	x32  bool   // x32 calls (nr & 0x40000000) exist and must be refused
	// deny are refused with EPERM.
	deny                                                        []uint32
	clone, clone3                                               uint32
	socket, sendto, sendmsg, sendmmsg, setsockopt, ioUringSetup uint32
}

// asm is a tiny BPF assembler with forward jumps to labels.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fix    []fixup
}

type fixup struct {
	at     int
	jt, jf string // "" means the next instruction
}

func (a *asm) stmt(code uint16, k uint32) { a.prog = append(a.prog, unix.SockFilter{Code: code, K: k}) }

func (a *asm) jump(code uint16, k uint32, jt, jf string) {
	a.fix = append(a.fix, fixup{len(a.prog), jt, jf})
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

func (a *asm) label(name string) { a.labels[name] = len(a.prog) }

func (a *asm) done() ([]unix.SockFilter, error) {
	for _, f := range a.fix {
		off := func(l string) (uint8, error) {
			if l == "" {
				return 0, nil
			}
			to, ok := a.labels[l]
			d := to - f.at - 1
			if !ok || d < 0 || d > 255 {
				return 0, fmt.Errorf("seccomp: bad jump to %q", l)
			}
			return uint8(d), nil
		}
		var err error
		if a.prog[f.at].Jt, err = off(f.jt); err != nil {
			return nil, err
		}
		if a.prog[f.at].Jf, err = off(f.jf); err != nil {
			return nil, err
		}
	}
	return a.prog, nil
}

// buildFilter assembles the filter for n; noNetwork adds the socket
// rules.
func buildFilter(n sysnums, noNetwork bool) ([]unix.SockFilter, error) {
	a := &asm{labels: map[string]int{}}
	a.stmt(bpfLd, offArch)
	a.jump(bpfJeq, n.arch, "", "kill")
	a.stmt(bpfLd, offNr)
	if n.x32 {
		a.jump(bpfJset, 0x40000000, "kill", "")
	}
	for _, nr := range n.deny {
		a.jump(bpfJeq, nr, "eperm", "")
	}
	a.jump(bpfJeq, n.clone3, "enosys", "")
	a.jump(bpfJeq, n.clone, "clone", "")
	if noNetwork {
		a.jump(bpfJeq, n.ioUringSetup, "enosys", "")
		a.jump(bpfJeq, n.socket, "socket", "")
		a.jump(bpfJeq, n.sendto, "fastopen3", "")
		a.jump(bpfJeq, n.sendmmsg, "fastopen3", "")
		a.jump(bpfJeq, n.sendmsg, "fastopen2", "")
		a.jump(bpfJeq, n.setsockopt, "setsockopt", "")
	}
	a.stmt(bpfRet, retAllow)

	// The bodies, then the returns they jump to (BPF jumps go forward).
	a.label("clone")
	a.stmt(bpfLd, offArgLow(0))
	a.jump(bpfJset, cloneNamespaces, "eperm", "allow")

	if noNetwork {
		a.label("socket")
		a.stmt(bpfLd, offArgLow(0)) // family
		a.jump(bpfJeq, unix.AF_UNIX, "allow", "")
		a.jump(bpfJeq, unix.AF_NETLINK, "allow", "")
		a.jump(bpfJeq, unix.AF_INET, "inet", "")
		a.jump(bpfJeq, unix.AF_INET6, "inet", "eacces")
		a.label("inet")
		a.stmt(bpfLd, offArgLow(1)) // type, flags masked off
		a.stmt(bpfAnd, sockTypeMask)
		a.jump(bpfJeq, unix.SOCK_STREAM, "", "eacces")
		a.stmt(bpfLd, offArgLow(2)) // protocol: plain TCP only (not MPTCP)
		a.jump(bpfJeq, 0, "allow", "")
		a.jump(bpfJeq, unix.IPPROTO_TCP, "allow", "eacces")

		a.label("fastopen3") // sendto, sendmmsg: flags are argument 3
		a.stmt(bpfLd, offArgLow(3))
		a.jump(bpfJset, msgFastopen, "eacces", "allow")
		a.label("fastopen2") // sendmsg: argument 2
		a.stmt(bpfLd, offArgLow(2))
		a.jump(bpfJset, msgFastopen, "eacces", "allow")

		a.label("setsockopt")
		a.stmt(bpfLd, offArgLow(1))
		a.jump(bpfJeq, unix.IPPROTO_TCP, "", "allow")
		a.stmt(bpfLd, offArgLow(2))
		a.jump(bpfJeq, tcpFastopenConnect, "eacces", "allow")

		a.label("eacces")
		a.stmt(bpfRet, retEACCES)
	}
	a.label("allow")
	a.stmt(bpfRet, retAllow)
	a.label("eperm")
	a.stmt(bpfRet, retEPERM)
	a.label("enosys")
	a.stmt(bpfRet, retENOSYS)
	a.label("kill")
	a.stmt(bpfRet, retKill)
	return a.done()
}

// installFilter installs the filter on the calling thread, which must
// have PR_SET_NO_NEW_PRIVS set.
func installFilter(noNetwork bool) error {
	n, ok := nativeSysnums()
	if !ok {
		return errFilterUnsupported
	}
	prog, err := buildFilter(n, noNetwork)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// prctl rather than seccomp(2): no flags wanted, and without TSYNC
	// both apply to the calling thread only.
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}
