//go:build linux

package confine

import "golang.org/x/sys/unix"

// arm64 has no iopl, ioperm nor legacy umount.
func nativeSysnums() (sysnums, bool) {
	return sysnums{
		arch: unix.AUDIT_ARCH_AARCH64,
		deny: []uint32{
			unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
			unix.SYS_FSPICK, unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
			unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_CHROOT, unix.SYS_PIVOT_ROOT,
			unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
			unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
			unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
			unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
			unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_USERFAULTFD,
			unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
			unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
			unix.SYS_ACCT, unix.SYS_QUOTACTL,
			unix.SYS_LOOKUP_DCOOKIE, unix.SYS_FANOTIFY_INIT,
		},
		clone: unix.SYS_CLONE, clone3: unix.SYS_CLONE3,
		socket: unix.SYS_SOCKET, sendto: unix.SYS_SENDTO, sendmsg: unix.SYS_SENDMSG,
		sendmmsg: unix.SYS_SENDMMSG, setsockopt: unix.SYS_SETSOCKOPT, ioUringSetup: unix.SYS_IO_URING_SETUP,
	}, true
}
