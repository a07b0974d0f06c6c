package jail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrIsRoot reports an operation that would remove, rename or replace the
// root directory itself.
var ErrIsRoot = errors.New("operation not permitted on the root")

// rel checks name lexically and returns it as a relative name for os.Root:
// repeated slashes, "." and trailing slashes collapsed, ".." kept so that
// it is resolved after symlinks (it was checked not to climb above the
// root as written). isRoot reports a name that is the root lexically.
func (r *Root) rel(name string) (rel string, isRoot bool, err error) {
	parts, cleaned, err := relParts(name, r.roots)
	if err != nil {
		return "", false, err
	}
	if len(parts) == 0 {
		return ".", true, nil
	}
	return strings.Join(parts, "/"), len(cleaned) == 0, nil
}

// OpenFile opens name under the root with the given flags (os.O_*) and
// permission bits for a new file. The open never blocks and never leaves a
// special file open: it is made with O_NONBLOCK|O_NOCTTY, then anything
// other than a regular file, or a directory opened read-only, is closed and
// refused with ErrNotRegular. Symlinks are followed inside the root only.
// A directory's File lists entries (File.ReadDir) whose Info was taken with
// fstatat relative to its descriptor, never through a path string.
func (r *Root) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return nil, err
	}
	flag |= syscall.O_NONBLOCK | syscall.O_NOCTTY | syscall.O_CLOEXEC
	// A file opened for writing is checked for other hard links before
	// anything is written, so O_TRUNC waits until then.
	writing := flag&(os.O_WRONLY|os.O_RDWR) != 0
	trunc := writing && flag&os.O_TRUNC != 0
	flag &^= os.O_TRUNC
	var f *os.File
	handled := false
	if flag&syscall.O_DIRECTORY == 0 {
		f, handled, err = r.openat2(name, rel, flag, perm)
	}
	if !handled {
		f, err = r.root.OpenFile(rel, flag, perm)
	}
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// A FIFO opened O_WRONLY|O_NONBLOCK with no reader.
			return nil, &PathError{Path: name, Err: ErrNotRegular}
		}
		return nil, wrapOS(name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, wrapOS(name, err)
	}
	switch {
	case fi.Mode().IsRegular():
		if writing {
			if err := onlyLink(name, fi); err != nil {
				f.Close()
				return nil, err
			}
			if trunc {
				if err := f.Truncate(0); err != nil {
					f.Close()
					return nil, wrapOS(name, err)
				}
			}
		}
	case fi.IsDir() && flag&(os.O_WRONLY|os.O_RDWR) == 0:
		if handled {
			// The File of a directory opened with openat2 would list
			// entries whose Info is a lazy lstat of the path string
			// parent/name: not jailed, and not the directory that was
			// read once that is swapped for a symlink. os.Root's Files
			// stat each entry with fstatat on their descriptor, so
			// directories are opened by os.Root (O_DIRECTORY skips
			// openat2).
			f.Close()
			return r.OpenFile(name, flag|syscall.O_DIRECTORY, perm)
		}
	default:
		f.Close()
		return nil, &PathError{Path: name, Err: ErrNotRegular}
	}
	return f, nil
}

// Open opens name for reading; see OpenFile.
func (r *Root) Open(name string) (*os.File, error) {
	return r.OpenFile(name, os.O_RDONLY, 0)
}

// ReadFile reads the regular file name. When max >= 0 it reads at most max
// bytes and reports truncated if the file held more; a negative max reads
// the whole file.
func (r *Root) ReadFile(name string, max int64) (data []byte, truncated bool, err error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, wrapOS(name, err)
	}
	if fi.IsDir() {
		return nil, false, &PathError{Path: name, Err: syscall.EISDIR}
	}
	var src io.Reader = f
	size := fi.Size()
	if max >= 0 {
		src = io.LimitReader(f, max+1)
		size = min(size, max+1)
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, wrapOS(name, err)
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 512)
		}
	}
	if max >= 0 && int64(len(buf)) > max {
		return buf[:max], true, nil
	}
	return buf, false, nil
}

// WriteFileAtomic replaces the contents of the file name with data, so
// that a reader or a crash sees the old contents or the new, never a mix:
// it writes a temporary file in the same directory, syncs it, renames it
// over name and syncs the directory. A symlink at name is followed (inside
// the root) and its target is replaced. An existing file keeps its
// permission bits; a new one gets perm (less the umask). The directory
// must exist. name may not be a directory, the root or a special file.
func (r *Root) WriteFileAtomic(name string, data []byte, perm fs.FileMode) error {
	_, err := r.writeAtomic(name, perm, false, bytes.NewReader(data))
	return err
}

// CopyAtomic writes what src yields into the file name, atomically as
// WriteFileAtomic does, and returns the bytes written. The file gets
// exactly perm, whether it existed or not: it is a copy of something else.
func (r *Root) CopyAtomic(name string, src io.Reader, perm fs.FileMode) (int64, error) {
	return r.writeAtomic(name, perm, true, src)
}

// writeAtomic is WriteFileAtomic and, with isCopy, CopyAtomic.
func (r *Root) writeAtomic(name string, perm fs.FileMode, isCopy bool, src io.Reader) (int64, error) {
	parts, err := r.resolve(name)
	if err != nil {
		return 0, err
	}
	if len(parts) == 0 {
		return 0, &PathError{Path: name, Err: ErrIsRoot}
	}
	dirName := "."
	if len(parts) > 1 {
		dirName = strings.Join(parts[:len(parts)-1], "/")
	}
	base := parts[len(parts)-1]
	dir, err := r.root.OpenRoot(dirName)
	if err != nil {
		return 0, wrapOS(name, err)
	}
	defer dir.Close()
	// Permission bits set after creation are exact (the umask cut them at
	// creation): a copy's always, an existing file's kept bits on a write.
	exact := isCopy
	switch fi, err := dir.Lstat(base); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, wrapOS(name, err)
	case fi.Mode().IsRegular():
		if !isCopy {
			perm, exact = fi.Mode().Perm(), true
		}
	case fi.IsDir():
		return 0, &PathError{Path: name, Err: syscall.EISDIR}
	default:
		return 0, &PathError{Path: name, Err: ErrNotRegular}
	}
	tmp, f, err := createTemp(dir, base, perm)
	if err != nil {
		return 0, wrapOS(name, err)
	}
	var n int64
	err = func() error {
		var err error
		n, err = io.Copy(f, src)
		if err == nil && exact {
			err = f.Chmod(perm)
		}
		if err == nil {
			err = f.Sync()
		}
		return errors.Join(err, f.Close())
	}()
	if err == nil {
		err = dir.Rename(tmp, base)
	}
	if err != nil {
		dir.Remove(tmp)
		return 0, wrapOS(name, err)
	}
	// Make the rename durable; a directory that cannot be synced (some
	// file systems refuse) does not undo a write that happened.
	if d, err := dir.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
	return n, nil
}

// createTemp creates a new, hidden file beside base in dir.
func createTemp(dir *os.Root, base string, perm fs.FileMode) (string, *os.File, error) {
	const maxName = 255 // NAME_MAX
	for try := 0; ; try++ {
		var b [6]byte
		rand.Read(b[:])
		suffix := ".tmp-" + hex.EncodeToString(b[:])
		stem := "." + base
		if len(stem)+len(suffix) > maxName {
			stem = stem[:maxName-len(suffix)]
		}
		name := stem + suffix
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 10 {
			return name, f, err
		}
	}
}

// Lstat returns the FileInfo of name without following a final symlink.
func (r *Root) Lstat(name string) (fs.FileInfo, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(rel)
	return fi, wrapOS(name, err)
}

// Stat returns the FileInfo of name, following symlinks inside the root.
func (r *Root) Stat(name string) (fs.FileInfo, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(rel)
	return fi, wrapOS(name, err)
}

// ReadDir lists the directory name, sorted by file name. Each entry's
// Info was taken while the directory was open, with fstatat(2) relative to
// its descriptor (an lstat: a symlink is described, not followed), so it
// describes the file that was listed under the root even if the directory
// is later swapped for a symlink that leads outside. An entry that
// vanished between the listing and its fstatat is left out.
func (r *Root) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Readdir stats every entry with fstatat on the held descriptor,
	// whatever made the File. f.ReadDir does so only for Files that
	// os.Root opened (OpenFile sees to that today); for any other File it
	// answers Info with a lazy lstat of the path string parent/name,
	// which is not jailed.
	infos, err := f.Readdir(-1)
	entries := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		entries[i] = fs.FileInfoToDirEntry(fi)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, wrapOS(name, err)
}

// Mkdir creates the directory name.
func (r *Root) Mkdir(name string, perm fs.FileMode) error {
	rel, _, err := r.rel(name)
	if err != nil {
		return err
	}
	return wrapOS(name, r.root.Mkdir(rel, perm))
}

// MkdirAll creates the directory name and any missing parents.
func (r *Root) MkdirAll(name string, perm fs.FileMode) error {
	rel, _, err := r.rel(name)
	if err != nil {
		return err
	}
	return wrapOS(name, r.root.MkdirAll(rel, perm))
}

// Remove removes the file or empty directory name (a symlink itself, not
// its target).
func (r *Root) Remove(name string) error {
	rel, isRoot, err := r.rel(name)
	if err != nil {
		return err
	}
	if isRoot {
		return &PathError{Path: name, Err: ErrIsRoot}
	}
	return wrapOS(name, r.root.Remove(rel))
}

// RemoveAll removes name and everything below it; symlinks are removed,
// never followed. A name that does not exist is not an error.
func (r *Root) RemoveAll(name string) error {
	rel, isRoot, err := r.rel(name)
	if err != nil {
		return err
	}
	if isRoot {
		return &PathError{Path: name, Err: ErrIsRoot}
	}
	return wrapOS(name, r.root.RemoveAll(rel))
}

// Rename renames oldname to newname, both under the root. Like rename(2),
// it replaces an existing newname (a file, or an empty directory when
// oldname is one) and moves a symlink, not its target. Errors name oldname.
func (r *Root) Rename(oldname, newname string) error {
	oldRel, oldRoot, err := r.rel(oldname)
	if err != nil {
		return err
	}
	newRel, newRoot, err := r.rel(newname)
	if err != nil {
		return err
	}
	if oldRoot {
		return &PathError{Path: oldname, Err: ErrIsRoot}
	}
	if newRoot {
		return &PathError{Path: newname, Err: ErrIsRoot}
	}
	return wrapOS(oldname, r.root.Rename(oldRel, newRel))
}

// Readlink returns the target of the symlink name, as stored, provided
// that following it stays inside the root; a link that leads out is
// refused with ErrEscapes, so its target is not revealed.
func (r *Root) Readlink(name string) (string, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return "", err
	}
	target, err := r.root.Readlink(rel)
	if err != nil {
		return "", wrapOS(name, err)
	}
	if _, err := r.resolve(name); err != nil {
		return "", err
	}
	return target, nil
}

// LinkTarget returns the target of the symlink name as stored, as text,
// without following it: the directories leading to the link must stay
// inside the root (ErrEscapes otherwise), but the link itself may point
// anywhere, since nothing is opened through it. It describes a link (what
// ls -l shows); to act on where a link leads, use Readlink, which refuses
// a link that leads out.
func (r *Root) LinkTarget(name string) (string, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return "", err
	}
	target, err := r.root.Readlink(rel)
	return target, wrapOS(name, err)
}

// Chmod changes the mode of name, following symlinks inside the root. A
// regular file with more than one hard link is refused (ErrHardLinked).
func (r *Root) Chmod(name string, mode fs.FileMode) error {
	rel, err := r.relOnlyLink(name)
	if err != nil {
		return err
	}
	return wrapOS(name, r.root.Chmod(rel, mode))
}

// Chtimes changes the access and modification times of name; a zero
// time.Time leaves that time unchanged. A regular file with more than one
// hard link is refused (ErrHardLinked).
func (r *Root) Chtimes(name string, atime, mtime time.Time) error {
	rel, err := r.relOnlyLink(name)
	if err != nil {
		return err
	}
	return wrapOS(name, r.root.Chtimes(rel, atime, mtime))
}

// relOnlyLink is rel for a change of a file's metadata in place: a regular
// file with other hard links is refused. The check is a stat just before
// the change, by path: a hard link made in between is not seen (making one
// to a file needs the right to write it, where the kernel protects hard
// links, as Linux does by default).
func (r *Root) relOnlyLink(name string) (string, error) {
	rel, _, err := r.rel(name)
	if err != nil {
		return "", err
	}
	fi, err := r.root.Stat(rel)
	if err != nil {
		return "", wrapOS(name, err)
	}
	return rel, onlyLink(name, fi)
}

// onlyLink refuses a regular file with more than one hard link: one name
// of it may be outside the root, and a change in place would reach it
// there. A hard link is the file itself, not a pointer to it, so which
// name is "the original" cannot be told, nor where the others are without
// searching every file system.
func onlyLink(name string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return nil // a directory's link count counts its subdirectories
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return &PathError{Path: name, Err: &HardLinkError{Links: uint64(st.Nlink)}}
	}
	return nil
}

// WalkDir walks the tree at name like fs.WalkDir: in lexical order, never
// following symlinked directories (they are reported, not entered). The
// paths given to fn are slash-separated and relative to the root ("." is
// the root). name itself is resolved first and may be a symlink.
func (r *Root) WalkDir(name string, fn fs.WalkDirFunc) error {
	parts, err := r.resolve(name)
	if err != nil {
		return err
	}
	start := "."
	if len(parts) > 0 {
		start = strings.Join(parts, "/")
	}
	return fs.WalkDir(r.FS(), start, fn)
}

// FS returns the root as an fs.FS (also fs.StatFS, fs.ReadDirFS and
// fs.ReadLinkFS) for fs.Glob, fs.WalkDir and the like. Its names follow
// fs.ValidPath; its opens refuse special files like OpenFile.
func (r *Root) FS() fs.FS { return rootFS{r} }

type rootFS struct{ r *Root }

func (f rootFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func (f rootFS) Open(name string) (fs.File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	file, err := f.r.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	return f.r.ReadDir(name)
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	return f.r.Stat(name)
}

func (f rootFS) Lstat(name string) (fs.FileInfo, error) {
	if err := f.check("lstat", name); err != nil {
		return nil, err
	}
	return f.r.Lstat(name)
}

func (f rootFS) ReadLink(name string) (string, error) {
	if err := f.check("readlink", name); err != nil {
		return "", err
	}
	return f.r.Readlink(name)
}
