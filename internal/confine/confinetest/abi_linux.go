package confinetest

import "golang.org/x/sys/unix"

// kernelABI is landlock_create_ruleset(NULL, 0,
// LANDLOCK_CREATE_RULESET_VERSION): the ABI version, 0 without Landlock.
func kernelABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}
