package registry

import (
	"fmt"
	"os"
	"syscall"
)

// statExtra adds inode, device and ctime to a file's stamp (see stampOf).
func statExtra(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" ino %d dev %d ctime %d.%09d", st.Ino, st.Dev, st.Ctim.Sec, st.Ctim.Nsec)
}
