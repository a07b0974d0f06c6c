package confine

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Capabilities are per-thread credentials, like the Landlock domain:
// dropped on the confined thread, they are dropped for every process it
// starts and for nothing else of ours. The bounding set goes first
// (PR_CAPBSET_DROP needs CAP_SETPCAP in the effective set), then the
// ambient set, then effective, permitted and inheritable (capset).
// With the bounding set, inheritable and permitted empty (and
// no_new_privs), exec grants nothing, not even to uid 0.

// lastCap is the highest capability the kernel knows.
func lastCap() int {
	last := 40 // CAP_CHECKPOINT_RESTORE, Linux 5.9
	for {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(last+1), 0, 0, 0); err != nil {
			return last
		}
		last++
	}
}

// dropCapabilities empties every capability set of the calling thread.
// A thread that may not drop the bounding set (no CAP_SETPCAP: not root)
// keeps it; the check reports what is left.
func dropCapabilities() error {
	var errs []error
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			if !errors.Is(err, unix.EPERM) {
				errs = append(errs, fmt.Errorf("PR_CAPBSET_DROP %d: %w", c, err))
			}
			break // EPERM: not allowed to drop any
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		errs = append(errs, fmt.Errorf("PR_CAP_AMBIENT_CLEAR_ALL: %w", err))
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		errs = append(errs, fmt.Errorf("capset: %w", err))
	}
	return errors.Join(errs...)
}

// capsLeft says which capability sets of the calling thread are not
// empty: "" when none is.
func capsLeft() (effective, bounding string, err error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return "", "", fmt.Errorf("capget: %w", err)
	}
	var left []string
	for i, d := range data {
		if d.Effective != 0 {
			left = append(left, fmt.Sprintf("effective[%d]=%#x", i, d.Effective))
		}
		if d.Permitted != 0 {
			left = append(left, fmt.Sprintf("permitted[%d]=%#x", i, d.Permitted))
		}
		if d.Inheritable != 0 {
			left = append(left, fmt.Sprintf("inheritable[%d]=%#x", i, d.Inheritable))
		}
	}
	last := lastCap()
	var bnd uint64
	for c := 0; c <= last && c < 64; c++ {
		if r, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); r == 1 {
			bnd |= 1 << c
		}
		if r, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); r == 1 {
			left = append(left, fmt.Sprintf("ambient %d", c))
		}
	}
	if len(left) > 0 {
		effective = fmt.Sprint(left)
	}
	if bnd != 0 {
		bounding = fmt.Sprintf("%#x", bnd)
	}
	return effective, bounding, nil
}
