//go:build linux

package surface

import (
	"os"
	"syscall"
)

// sysStamp adds the inode and ctime: a file replaced by rename, or
// rewritten within one mtime tick, still counts as changed.
func sysStamp(st os.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmtStamp(uint64(s.Ino), int64(s.Ctim.Sec)*1e9+int64(s.Ctim.Nsec))
	}
	return ""
}
