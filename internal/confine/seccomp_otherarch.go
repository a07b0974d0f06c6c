//go:build linux && !amd64 && !arm64

package confine

// nativeSysnums: none; the thread check then finds the filter missing and
// reports it (and no-network) as not enforced.
func nativeSysnums() (sysnums, bool) { return sysnums{}, false }
