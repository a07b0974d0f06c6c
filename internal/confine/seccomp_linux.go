package confine

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter that closes, with NoNetwork, the ways past
// Landlock's TCP rules: Landlock checks bind(2) and connect(2) of
// IPPROTO_TCP sockets, and Linux (6.18 at least) lets an MPTCP socket
// (which falls back to plain TCP) and TCP Fast Open (a send that
// connects) through. The filter is installed on the confined thread
// only, without SECCOMP_FILTER_FLAG_TSYNC, so mcp-route's other threads
// stay free; what the thread forks and execs inherits it.
//
// It refuses with EACCES, as Landlock would:
//   - socket(2) with protocol IPPROTO_MPTCP;
//   - sendto(2), sendmsg(2) and sendmmsg(2) with MSG_FASTOPEN;
//   - setsockopt(2) IPPROTO_TCP TCP_FASTOPEN_CONNECT (connect(2) on such
//     a socket is still checked by Landlock; refused anyway, so that no
//     deferred connect is left to a later write);
//
// and with ENOSYS io_uring_setup(2): io_uring's operations (a socket, a
// send with MSG_FASTOPEN) are not seen by seccomp. A foreign system call
// convention (x32 on amd64, a 32-bit binary) kills the process: its
// system call numbers are not the ones checked here.
//
// The arguments are 64 bits in seccomp_data, and the kernel reads these
// as 32-bit ints: only the low half is compared, so setting the high
// half changes nothing for the filter nor for the kernel.

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
	bpfRet  = unix.BPF_RET | unix.BPF_K

	tcpFastopenConnect = 30 // TCP_FASTOPEN_CONNECT, include/uapi/linux/tcp.h
	msgFastopen        = unix.MSG_FASTOPEN
)

// errNetFilterUnsupported: no filter for this architecture.
var errNetFilterUnsupported = errors.New("no seccomp filter for this architecture (amd64 and arm64 only)")

// netFilter builds the program for an architecture: arch is its
// AUDIT_ARCH_*, x32 whether x32 system calls (nr & 0x40000000) must be
// refused, and the system call numbers are the architecture's.
func netFilter(arch uint32, x32 bool, nrSocket, nrSendto, nrSendmsg, nrSendmmsg, nrSetsockopt, nrIOUringSetup uint32) []unix.SockFilter {
	var p []unix.SockFilter
	stmt := func(code uint16, k uint32) { p = append(p, unix.SockFilter{Code: code, K: k}) }
	jump := func(code uint16, k uint32, jt, jf uint8) {
		p = append(p, unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf})
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		eacces = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	stmt(bpfLd, offArch)
	jump(bpfJeq, arch, 1, 0)
	stmt(bpfRet, kill)
	stmt(bpfLd, offNr)
	if x32 {
		jump(bpfJset, 0x40000000, 0, 1)
		stmt(bpfRet, kill)
	}
	// Layout: one test of the number per call, ALLOW, then the body of
	// each call's check in the same order, each ending in returns.
	type check struct {
		nr   uint32
		body []unix.SockFilter
	}
	argTest := func(arg uint32, code uint16, k uint32, ret uint32) []unix.SockFilter {
		return []unix.SockFilter{
			{Code: bpfLd, K: offArgLow(arg)},
			{Code: code, K: k, Jt: 0, Jf: 1},
			{Code: bpfRet, K: ret},
			{Code: bpfRet, K: allow},
		}
	}
	checks := []check{
		{nrSocket, argTest(2, bpfJeq, unix.IPPROTO_MPTCP, eacces)},
		{nrSendto, argTest(3, bpfJset, msgFastopen, eacces)},
		{nrSendmsg, argTest(2, bpfJset, msgFastopen, eacces)},
		{nrSendmmsg, argTest(3, bpfJset, msgFastopen, eacces)},
		{nrSetsockopt, []unix.SockFilter{
			{Code: bpfLd, K: offArgLow(1)},
			{Code: bpfJeq, K: unix.IPPROTO_TCP, Jt: 0, Jf: 3},
			{Code: bpfLd, K: offArgLow(2)},
			{Code: bpfJeq, K: tcpFastopenConnect, Jt: 0, Jf: 1},
			{Code: bpfRet, K: eacces},
			{Code: bpfRet, K: allow},
		}},
		{nrIOUringSetup, []unix.SockFilter{{Code: bpfRet, K: enosys}}},
	}
	// From test i, its body is the later tests, ALLOW and the bodies
	// before it away.
	skip := len(checks)
	for _, c := range checks {
		jump(bpfJeq, c.nr, uint8(skip), 0)
		skip += len(c.body) - 1
	}
	stmt(bpfRet, allow)
	for _, c := range checks {
		p = append(p, c.body...)
	}
	return p
}

// installNetFilter installs the filter on the calling thread, which must
// have PR_SET_NO_NEW_PRIVS set.
func installNetFilter() error {
	prog := nativeNetFilter()
	if prog == nil {
		return errNetFilterUnsupported
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// prctl rather than seccomp(2): no flags wanted, and without TSYNC
	// both apply to the calling thread only.
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_SECCOMP): %w", err)
	}
	return nil
}
