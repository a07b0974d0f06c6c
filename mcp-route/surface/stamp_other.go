//go:build !linux

package surface

import "os"

func sysStamp(os.FileInfo) string { return "" }
