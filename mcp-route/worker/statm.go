package worker

import (
	"bytes"
	"os"
)

// residentBytes reads a process's resident set size from its open
// /proc/PID/statm (see readStatm for how), false where it cannot.
func residentBytes(statm *os.File) (int64, bool) {
	var buf [128]byte
	n, ok := readStatm(statm, buf[:])
	if !ok {
		return 0, false
	}
	// "size resident shared ...": the second field, in pages.
	b := buf[:n]
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return 0, false
	}
	b = b[i+1:]
	if j := bytes.IndexAny(b, " \n"); j >= 0 {
		b = b[:j]
	}
	var pages int64
	for _, c := range b {
		if c < '0' || c > '9' || pages > 1<<40 {
			return 0, false
		}
		pages = pages*10 + int64(c-'0')
	}
	if len(b) == 0 {
		return 0, false
	}
	return pages * int64(pageSize), true
}
