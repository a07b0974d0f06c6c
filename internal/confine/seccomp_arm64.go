//go:build linux

package confine

import "golang.org/x/sys/unix"

func nativeNetFilter() []unix.SockFilter {
	return netFilter(unix.AUDIT_ARCH_AARCH64, false, unix.SYS_SOCKET, unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG, unix.SYS_SETSOCKOPT, unix.SYS_IO_URING_SETUP)
}
