package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// noOpenat2 is set once openat2 turns out to be missing (Linux < 5.6, or a
// seccomp filter that answers ENOSYS); os.Root then does every open. Tests
// set it to run everything through the fallback as well.
var noOpenat2 atomic.Bool

// Root is an open directory that names are resolved under. Create it with
// Open; it is safe for concurrent use.
type Root struct {
	path  string     // absolute, symlinks evaluated
	given string     // absolute, clean, as given to Open
	roots [][]string // path and given, split, for absolute names
	root  *os.Root
	// The same directory again, for openat2 (Linux); nil where unused.
	dir     *os.File
	dirConn syscall.RawConn
}

// Open opens the directory dir as a Root. dir may be relative (to the
// working directory) and may pass through symlinks; the Root's Path is its
// absolute, symlink-free form.
func Open(dir string) (*Root, error) {
	given, err := absRoot(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, wrapOS(dir, err)
	}
	osr, err := os.OpenRoot(real)
	if err != nil {
		return nil, wrapOS(dir, err)
	}
	r := &Root{path: real, given: given, root: osr}
	r.roots = [][]string{splitName(real)}
	if given != real {
		r.roots = append(r.roots, splitName(given))
	}
	// The path string is only used for display and for absolute names;
	// still, it must name the directory the handle holds.
	held, err1 := osr.Stat(".")
	named, err2 := os.Stat(real)
	if err := errors.Join(err1, err2); err != nil {
		osr.Close()
		return nil, wrapOS(dir, err)
	}
	if !os.SameFile(held, named) {
		osr.Close()
		return nil, &PathError{Path: dir, Err: errors.New("root changed while it was opened")}
	}
	if err := r.openDirFD(held); err != nil {
		osr.Close()
		return nil, wrapOS(dir, err)
	}
	return r, nil
}

// Close releases the Root's descriptors. Methods called after Close fail.
func (r *Root) Close() error {
	err := r.root.Close()
	if r.dir != nil {
		err = errors.Join(err, r.dir.Close())
	}
	return err
}

// Path returns the root's absolute path with its symlinks evaluated.
func (r *Root) Path() string { return r.path }

// Rel returns abs relative to the root ("." for the root itself) when abs
// lies lexically inside it, else abs unchanged. It is for display.
func (r *Root) Rel(abs string) string {
	for _, root := range []string{r.path, r.given} {
		if abs == root {
			return "."
		}
		if root == "/" {
			if strings.HasPrefix(abs, "/") {
				return abs[1:]
			}
			continue
		}
		if strings.HasPrefix(abs, root+"/") {
			return abs[len(root)+1:]
		}
	}
	return abs
}

// ResolveLexical is the package-level ResolveLexical with this root's
// path; it does not touch the file system.
func (r *Root) ResolveLexical(name string) (string, error) {
	_, cleaned, err := relParts(name, r.roots)
	if err != nil {
		return "", err
	}
	return join(r.path, cleaned), nil
}

// Resolve returns the absolute path name leads to, with every existing
// symlink followed. Components that do not exist (yet) are kept as
// written, so a path to be created resolves too; nothing can exist below a
// missing component or a regular file, so the rest is resolved lexically.
// It fails with ErrEscapes when name, or a symlink on its way, leads
// outside the root, and with the OS error when a directory on the way
// cannot be read.
func (r *Root) Resolve(name string) (string, error) {
	parts, err := r.resolve(name)
	if err != nil {
		return "", err
	}
	return join(r.path, parts), nil
}

// ResolveRel is Resolve, relative to the root ("." for the root itself).
func (r *Root) ResolveRel(name string) (string, error) {
	parts, err := r.resolve(name)
	if err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return ".", nil
	}
	return strings.Join(parts, "/"), nil
}

func (r *Root) resolve(name string) ([]string, error) {
	parts, _, err := relParts(name, r.roots)
	if err != nil {
		return nil, err
	}
	if len(parts) > 0 {
		if resolved, ok := r.resolveFast(strings.Join(parts, "/")); ok {
			return resolved, nil
		}
	}
	return r.walk(name, parts)
}

// walk resolves parts physically, one component at a time, holding a
// handle on every directory it passes so that each lookup is relative to
// the directory just checked. done lists the resolved components; dirs[k]
// is the handle of done[:k]. While len(dirs) <= len(done), done ends in a
// component that does not exist or is not a directory, and the rest is
// resolved lexically.
func (r *Root) walk(name string, parts []string) ([]string, error) {
	done := make([]string, 0, len(parts))
	dirs := []*os.Root{r.root}
	defer func() {
		for _, d := range dirs[1:] {
			d.Close()
		}
	}()
	links, retries := 0, 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		if p == ".." {
			if len(done) == 0 {
				return nil, escapes(name, errors.New(`".." climbs above the root`))
			}
			done = done[:len(done)-1]
			if len(dirs) > len(done)+1 {
				dirs[len(dirs)-1].Close()
				dirs = dirs[:len(dirs)-1]
			}
			continue
		}
		if len(dirs) <= len(done) {
			done = append(done, p)
			continue
		}
		cur := dirs[len(dirs)-1]
		fi, err := cur.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			done = append(done, p)
			continue
		case err != nil:
			return nil, wrapOS(name, err)
		}
		switch fi.Mode().Type() {
		case fs.ModeSymlink:
			links++
			if links > MaxSymlinks {
				return nil, &PathError{Path: name, Err: syscall.ELOOP}
			}
			target, err := cur.Readlink(p)
			if err != nil {
				if changed(err) && retries < MaxSymlinks {
					// p stopped being a symlink after Lstat: look again.
					retries++
					links--
					parts = append([]string{p}, parts...)
					continue
				}
				return nil, wrapOS(name, err)
			}
			link := strings.Join(append(done[:len(done):len(done)], p), "/")
			if target == "" || strings.IndexByte(target, 0) >= 0 {
				return nil, &PathError{Path: name, Err: syscall.ENOENT}
			}
			if target[0] == '/' {
				return nil, escapes(name, fmt.Errorf("symlink %s points to absolute %s", link, target))
			}
			parts = append(splitName(target), parts...)
		case fs.ModeDir:
			sub, err := cur.OpenRoot(p)
			var held fs.FileInfo
			if err == nil {
				held, err = sub.Stat(".")
				if err == nil && !os.SameFile(fi, held) {
					err = syscall.EAGAIN
				}
				if err != nil {
					sub.Close()
				}
			}
			if err != nil {
				if retries < MaxSymlinks {
					// p was replaced between Lstat and OpenRoot (perhaps
					// by a symlink, which OpenRoot followed, or refused,
					// or saw as a loop when it changed back before its
					// readlink): look again. Lasting errors come back.
					retries++
					parts = append([]string{p}, parts...)
					continue
				}
				return nil, wrapOS(name, err)
			}
			done = append(done, p)
			dirs = append(dirs, sub)
		default:
			done = append(done, p)
		}
	}
	return done, nil
}

// changed reports an error that means a component changed type or vanished
// between two system calls, so that looking at it again makes sense.
func changed(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(wrapOS("", err), ErrEscapes)
}
