//go:build !linux

package worker

import "os"

// readStatm is the portable path: an ordinary ReadAt. Only Linux has
// /proc/PID/statm, so elsewhere statm is nil and the RSS cap is not
// enforced (the package doc says so).
func readStatm(statm *os.File, buf []byte) (int, bool) {
	if statm == nil {
		return 0, false
	}
	n, err := statm.ReadAt(buf, 0)
	if n == 0 && err != nil {
		return 0, false
	}
	return n, true
}
