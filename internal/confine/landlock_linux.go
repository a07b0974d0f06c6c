package confine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The Landlock system calls, on the calling thread only (see landlock.go
// for why not through go-landlock).

// rulesetAttr is struct landlock_ruleset_attr up to its scoped member
// (ABI 6). A kernel that knows fewer members accepts the larger struct as
// long as the members it does not know are zero, which Plan ensures.
type rulesetAttr struct {
	handledAccessFS  uint64
	handledAccessNet uint64
	scoped           uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which the kernel
// packs: 12 bytes, read from the start of this one.
type pathBeneathAttr struct {
	allowedAccess uint64
	parentFd      int32
}

const (
	createRulesetVersion = 1 << 0
	createRulesetErrata  = 1 << 1
	rulePathBeneath      = 1
)

func landlockCreateRuleset(attr *rulesetAttr, flags uintptr) (int, error) {
	var p, size uintptr
	if attr != nil {
		p, size = uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, p, size, flags)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// landlockVersion asks the kernel its ABI version (or, with
// createRulesetErrata, the errata it has fixed).
func landlockVersion(flag uintptr) (int, error) { return landlockCreateRuleset(nil, flag) }

func landlockAddPathBeneathRule(rulesetFd int, attr *pathBeneathAttr) error {
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rulesetFd), rulePathBeneath, uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// landlockRestrictSelf enforces the ruleset on the calling thread alone.
func landlockRestrictSelf(rulesetFd int) error {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rulesetFd), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
