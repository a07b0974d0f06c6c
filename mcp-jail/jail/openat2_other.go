//go:build !linux

package jail

import (
	"io/fs"
	"os"
)

func (r *Root) openDirFD(held fs.FileInfo) error { return nil }

// openat2 exists on Linux only; elsewhere os.Root does every open.
func (r *Root) openat2(name, rel string, flag int, perm fs.FileMode) (*os.File, bool, error) {
	return nil, false, nil
}

func (r *Root) resolveFast(rel string) ([]string, bool) { return nil, false }
