package confine

// The Landlock access rights and scopes this package asks for: the values
// of the kernel's UAPI (include/uapi/linux/landlock.h), which never change
// once released. They are spelled here, rather than taken from
// golang.org/x/sys/unix, because the policy is planned on every platform
// (Plan, --confine-check) and unix has them on Linux only.
//
// Why not go-landlock: its landlock/syscall package, the one part of it
// with per-thread calls, imports libcap's psx, which makes every binary
// linking it a cgo binary wherever a C compiler is present. Every stock
// tool process links this package (sh_exec confines its programs), and
// the dynamic loader that brings cost each exec about 0.6 ms, 40% more
// than the whole static tool. The calls themselves are five raw
// syscalls (landlock_linux.go).
const (
	accessFSExecute    = 1 << 0
	accessFSWriteFile  = 1 << 1
	accessFSReadFile   = 1 << 2
	accessFSReadDir    = 1 << 3
	accessFSRemoveDir  = 1 << 4
	accessFSRemoveFile = 1 << 5
	accessFSMakeChar   = 1 << 6
	accessFSMakeDir    = 1 << 7
	accessFSMakeReg    = 1 << 8
	accessFSMakeSock   = 1 << 9
	accessFSMakeFifo   = 1 << 10
	accessFSMakeBlock  = 1 << 11
	accessFSMakeSym    = 1 << 12
	accessFSRefer      = 1 << 13 // ABI 2
	accessFSTruncate   = 1 << 14 // ABI 3
	accessFSIoctlDev   = 1 << 15 // ABI 5

	accessNetBindTCP    = 1 << 0 // ABI 4
	accessNetConnectTCP = 1 << 1 // ABI 4

	scopeAbstractUnixSocket = 1 << 0 // ABI 6
	scopeSignal             = 1 << 1 // ABI 6
)
