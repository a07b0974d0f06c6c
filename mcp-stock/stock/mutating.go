package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

// Helpers of the mutating tools (fs_write ... fs_move).

// MaxWriteBytes bounds the content one fs_write or fs_append call carries,
// and the size of a file fs_replace rewrites: a call is one JSON-RPC frame
// (16 MiB by default), and fs_replace holds the file in memory.
const MaxWriteBytes = 8 << 20

// Shared argument snippets of the mutating tools.
const (
	propSource = `"source": {"type": "string", "minLength": 1, "maxLength": 4095,
		"description": "Existing file or directory, relative to the root (an absolute path must lie inside the root). Paths that leave the root are refused."}`
	propDestination = `"destination": {"type": "string", "minLength": 1, "maxLength": 4095,
		"description": "New path, relative to the root, including the new name (not just a directory to put it in). Paths that leave the root are refused."}`
	propOverwrite = `"overwrite": {"type": "boolean", "default": false,
		"description": "Replace the destination when it exists (a file; a directory is never replaced). Default false: an existing destination is an error."}`
)

// checkContent refuses content larger than one call may write.
func checkContent(content string) error {
	if len(content) > MaxWriteBytes {
		return fmt.Errorf("content is %d bytes, more than the %d a call may write", len(content), MaxWriteBytes)
	}
	return nil
}

// transferArgs are the arguments fs_copy and fs_move share.
type transferArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Overwrite   bool   `json:"overwrite"`
}

func (a *transferArgs) check() error {
	if a.Source == "" || a.Destination == "" {
		return fmt.Errorf("invalid arguments: source and destination are required")
	}
	return nil
}

// preflight checks a copy or a move before anything changes and returns
// the source's FileInfo and whether the destination exists. The source
// must exist. The destination may not be an existing directory: the error
// suggests the full path instead (what is the copy's "path of the copy"
// or the move's "new path"). Any other existing destination needs
// overwrite. follow says whether symlinks are followed: a copy copies what
// a link names, a move moves the link; a dangling symlink at the
// destination exists all the same.
func (a *transferArgs) preflight(r *jail.Root, follow bool, what string) (src fs.FileInfo, dstExists bool, err error) {
	stat := r.Lstat
	if follow {
		stat = r.Stat
	}
	if src, err = stat(a.Source); err != nil {
		return nil, false, err
	}
	dst, err := stat(a.Destination)
	dstExists = err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, false, err
	case err != nil && follow:
		if dstExists, err = exists(r, a.Destination); err != nil {
			return nil, false, err
		}
	}
	switch {
	case dstExists && dst != nil && dst.IsDir():
		return nil, false, fmt.Errorf("%s: is an existing directory; give the full %s (e.g. %s/%s)", a.Destination, what, strings.TrimSuffix(a.Destination, "/"), path.Base(a.Source))
	case dstExists && !a.Overwrite:
		return nil, false, errExists(a.Destination)
	}
	return src, dstExists, nil
}

// parentDir returns the directory that name, resolved under r with its
// symlinks followed, is created in, relative to the root ("." for the
// root). It is how fs_write's createDirs and fs_copy's temporary files know
// where they are, ".." and symlinks included.
func parentDir(r *jail.Root, name string) (string, error) {
	rel, err := r.ResolveRel(name)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", &jail.PathError{Path: name, Err: jail.ErrIsRoot}
	}
	return path.Dir(rel), nil
}

// exists reports whether name exists (without following a final symlink:
// a dangling link exists).
func exists(r *jail.Root, name string) (bool, error) {
	_, err := r.Lstat(name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// errExists is the refusal of a destination that exists when the call did
// not ask to overwrite it.
func errExists(name string) error {
	return fmt.Errorf("%s: already exists (set overwrite: true to replace it)", name)
}

// copyFile copies the regular file src to dst, both under r, atomically
// (jail's CopyAtomic: a hidden temporary file beside dst, synced and renamed
// over it), so dst is never seen half-written. The copy gets src's
// permission bits. It returns the bytes copied.
func copyFile(r *jail.Root, src, dst string) (int64, error) {
	in, fi, err := openRegular(r, src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	return r.CopyAtomic(dst, in, fi.Mode().Perm())
}

// removeEmptyDir removes the empty directory name. A directory with
// entries is refused with "NAME: directory not empty (HINT)", hint saying
// how to remove it all the same.
func removeEmptyDir(r *jail.Root, name, hint string) error {
	err := r.Remove(name)
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("%s: directory not empty (%s)", name, hint)
	}
	return err
}

// plural returns "1 file" or "3 files".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// inside reports whether the relative path p is dir or lies below it.
func inside(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}
