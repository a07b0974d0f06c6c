package httpserve

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// refuseHandshakes makes ln drop new connection requests (TCP segments
// with SYN and not ACK) while the handshakes already under way complete:
// a socket filter on the listening socket, which the kernel runs on every
// segment for it, the SYN and the handshake's last ACK included. A dropped
// SYN is sent again after 1 s; by then the listener is closed and the
// kernel refuses it, which tells the client that nothing was sent.
func refuseHandshakes(ln net.Listener) error {
	err := errors.New("not a TCP listener")
	withFD(ln, func(fd int) {
		// The filter sees the segment from its TCP header: byte 13 holds
		// the flags (0x02 SYN, 0x10 ACK).
		prog := []unix.SockFilter{
			{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: 13},
			{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0x12},
			{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 1, K: 0x02},
			{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff}, // keep
			{Code: unix.BPF_RET | unix.BPF_K, K: 0},          // drop
		}
		err = unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]})
	})
	return err
}

// acceptQueue returns how many connections wait in ln's accept queue
// (Linux gives a listener's in TCP_INFO's unacked field).
func acceptQueue(ln net.Listener) int {
	n := 0
	withFD(ln, func(fd int) {
		if info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = int(info.Unacked)
		}
	})
	return n
}

func withFD(ln net.Listener, f func(fd int)) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return
	}
	if rc, err := tl.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { f(int(fd)) })
	}
}
