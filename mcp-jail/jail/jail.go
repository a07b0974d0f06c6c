// Package jail resolves and opens paths under a root directory so that no
// path can reach outside it. It is the one place in mcpipe where a path a
// client sent becomes a file: mcp-jail prints what it resolves, and every
// stock tool opens, reads, writes, lists, stats, renames and deletes through a
// [Root].
//
// # Names
//
// A name is resolved under the root as follows.
//
//   - A relative name anchors at the root. An absolute name is accepted only
//     when it lies inside the root, spelled with the root's path as given to
//     [Open] or as resolved (its symlinks evaluated); it is then treated as
//     relative to the root. Any other absolute name escapes.
//   - Empty components (repeated slashes), "." components and trailing
//     slashes collapse.
//   - ".." is resolved; a name whose ".." would climb above the root escapes.
//     It is refused, never clamped to the root. The check is made on the name
//     as written and again after symbolic links are followed, so "a/../../x"
//     escapes even if a is a symbolic link to a deep directory.
//   - Symbolic links inside the root are followed, and their targets must
//     stay inside too. An absolute symlink target escapes even when it names a
//     place inside the root (as with openat2's RESOLVE_BENEATH and os.Root): a
//     target that depends on where the root is mounted is not trusted. /proc
//     "magic links" are never followed. At most [MaxSymlinks] links are
//     followed per name.
//   - A name with a NUL byte, an empty name and a name longer than
//     [MaxPathLen] bytes are invalid ([ErrInvalidPath]).
//
// # Check is use
//
// Operations never check a path string and then open it. They run relative
// to a directory handle held open on the root (Go's [os.Root]; on Linux,
// opens go through openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS,
// with os.Root as the fallback where openat2 is missing), so a directory
// swapped for a symlink between a check and a use cannot lead outside.
// [Root.Resolve] and [ResolveLexical] return path strings for display and
// for filters such as mcp-jail; a string is only as good as the moment it
// was made, so code that acts on files uses the operations. Listings
// ([Root.ReadDir], [Root.WalkDir], File.ReadDir of a directory the Root
// opened) stat every entry with fstatat(2) relative to the directory's
// descriptor while it is open, so an entry's Info describes the file that
// was listed, never what a path string names later.
//
// [Filter] is mcp-jail's streaming loop over either of them.
//
// # Special files
//
// Opening never blocks and never reads a device: files are opened with
// O_NONBLOCK|O_NOCTTY and checked with fstat, and anything that is not a
// regular file (or, for read-only opens, a directory) is closed again and
// refused with [ErrNotRegular]. FIFOs, sockets and device nodes are refused;
// a symlink to /dev/zero is refused earlier, as an escape. The open(2) of a
// device node inside the root does happen before the check; O_NOCTTY keeps
// a terminal from becoming the controlling one. [Root.WriteFileAtomic] and
// [Root.CopyAtomic] (temporary file, sync, rename) never replace a special
// file.
//
// # Hard links
//
// A hard link is the file itself, not a pointer to it: a hard link inside
// the root to a file outside cannot be told from a file of the root, and is
// read like one. Changes in place are refused for a regular file with more
// than one link ([ErrHardLinked], a [*HardLinkError] naming the count):
// [Root.OpenFile] for writing (checked with fstat on the open file, before
// O_TRUNC is applied), [Root.Chmod] and [Root.Chtimes] (a stat just before
// the change). Which link is "the original", and where the others are,
// cannot be told without searching every file system, and whether the stock
// tools made a link is not recorded anywhere that survives them, so every
// file with other links is refused, not only those with a name outside.
// [Root.WriteFileAtomic] and [Root.CopyAtomic] replace the name with a new
// file (rename), which leaves the other links, and the file they name,
// unchanged: they are allowed. Directories are not concerned (their link
// count counts subdirectories; they cannot be hard-linked).
//
// # Platforms
//
// Unix. On Linux 5.6 and later, opens of files (directories are opened by
// os.Root, whose Files list entries safely) and [Root.Resolve] of an
// existing path use openat2; on older kernels, under a seccomp filter that refuses
// it, and elsewhere, os.Root and the package's own walker (lstat, readlink
// and open of one component at a time, relative to held directory handles)
// do the same job with the same answers.
//
// # Errors
//
// Every error an operation returns is a *[PathError] whose Path is the name
// as the caller gave it. Its message is "NAME: reason", for example
// "../x: path escapes root"; errors.Is matches [ErrEscapes],
// [ErrInvalidPath], [ErrNotRegular] or the OS condition (fs.ErrNotExist,
// fs.ErrPermission, ...).
//
// # Concurrency
//
// A Root is safe for concurrent use by multiple goroutines. Close it when
// done; methods called after Close fail.
package jail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	// MaxPathLen is the longest name accepted, in bytes: PATH_MAX (4096)
	// less the terminating NUL the kernel counts.
	MaxPathLen = 4095

	// MaxSymlinks is how many symbolic links one name may pass through
	// where this package or os.Root follows them: os.Root's limit. Where
	// the kernel resolves a name in one openat2 call (opens, and Resolve
	// of an existing path, on Linux) its own limit, 40, applies instead.
	MaxSymlinks = 8
)

var (
	// ErrEscapes reports a name that leads outside the root.
	ErrEscapes = errors.New("path escapes root")
	// ErrInvalidPath reports a name that is empty, contains a NUL byte or
	// is longer than MaxPathLen.
	ErrInvalidPath = errors.New("invalid path")
	// ErrNotRegular reports an open of a FIFO, socket, device or other
	// special file, which could block or leak.
	ErrNotRegular = errors.New("not a regular file")
	// ErrHardLinked reports a change in place (a write, a chmod, new
	// times) to a regular file with more than one hard link: another
	// name of the file may be outside the root. The error is a
	// *HardLinkError that says how many links.
	ErrHardLinked = errors.New("the file has other hard links")
)

// HardLinkError is the Err of a *PathError for a file refused with
// ErrHardLinked.
type HardLinkError struct{ Links uint64 }

func (e *HardLinkError) Error() string {
	return fmt.Sprintf("has %d hard links: changing it in place would change it under every name, and another name may be outside the root (replace the file instead: write a new one and rename it over)", e.Links)
}

// Is makes errors.Is(err, ErrHardLinked) true.
func (e *HardLinkError) Is(target error) bool { return target == ErrHardLinked }

// PathError records a refused or failed name.
type PathError struct {
	// Path is the name as the caller gave it.
	Path string
	// Err is the reason: ErrEscapes, an error wrapping ErrInvalidPath,
	// ErrNotRegular, or an OS error such as syscall.ENOENT.
	Err error
	// Cause, when set, says why a name escapes (for example which symlink
	// pointed out). It is not part of the message, which stays
	// "NAME: path escapes root", but errors.Is and errors.As see it.
	Cause error
}

func (e *PathError) Error() string {
	if e.Path == "" {
		// ": invalid path: empty" would read as a glitch.
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns Err and, when set, Cause.
func (e *PathError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func escapes(name string, cause error) error {
	return &PathError{Path: name, Err: ErrEscapes, Cause: cause}
}

func invalid(name, why string) error {
	return &PathError{Path: name, Err: fmt.Errorf("%w: %s", ErrInvalidPath, why)}
}

// wrapOS turns an error from the os package into a *PathError for name,
// keeping the OS condition (the errno) and mapping os.Root's own escape
// error to ErrEscapes.
func wrapOS(name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		if pe.Path == name {
			return pe
		}
		return &PathError{Path: name, Err: pe.Err, Cause: pe.Cause}
	}
	inner := err
	var fpe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &fpe):
		inner = fpe.Err
	case errors.As(err, &le):
		inner = le.Err
	}
	// os.Root reports an escape with an unexported error value; its text
	// is the only handle on it.
	if inner.Error() == "path escapes from parent" {
		return escapes(name, err)
	}
	return &PathError{Path: name, Err: inner}
}

// checkName rejects names no file system would take.
func checkName(name string) error {
	switch {
	case name == "":
		return invalid(name, "empty")
	case strings.IndexByte(name, 0) >= 0:
		return invalid(name, "contains a NUL byte")
	case len(name) > MaxPathLen:
		return invalid(name, fmt.Sprintf("longer than %d bytes", MaxPathLen))
	}
	return nil
}

// splitName splits a slash-separated name into components, dropping empty
// and "." components (so repeated and trailing slashes collapse).
func splitName(name string) []string {
	parts := make([]string, 0, strings.Count(name, "/")+1)
	for name != "" {
		i := strings.IndexByte(name, '/')
		var part string
		if i < 0 {
			part, name = name, ""
		} else {
			part, name = name[:i], name[i+1:]
		}
		if part != "" && part != "." {
			parts = append(parts, part)
		}
	}
	return parts
}

// relParts turns name into components relative to a root whose absolute,
// clean path, split by splitName, is one of roots. It applies the lexical rules: an absolute
// name must pass through a root; ".." may not climb above the root. The
// returned components keep their ".." so that the caller can resolve them
// physically; cleaned is the lexically cleaned relative path.
func relParts(name string, roots [][]string) (parts []string, cleaned []string, err error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	parts = splitName(name)
	if name[0] == '/' {
		parts, err = stripRoot(name, parts, roots)
		if err != nil {
			return nil, nil, err
		}
	}
	cleaned = make([]string, 0, len(parts))
	for _, p := range parts {
		if p != ".." {
			cleaned = append(cleaned, p)
			continue
		}
		if len(cleaned) == 0 {
			return nil, nil, escapes(name, errors.New(`".." climbs above the root`))
		}
		cleaned = cleaned[:len(cleaned)-1]
	}
	return parts, cleaned, nil
}

// stripRoot finds the first point at which the absolute name, cleaned
// lexically as it goes, equals one of roots, and returns the components
// after that point. Components before the root may use ".."; those after
// it are checked by the caller.
func stripRoot(name string, parts []string, roots [][]string) ([]string, error) {
	var stack []string
	for i := 0; ; i++ {
		for _, r := range roots {
			if sameParts(stack, r) {
				return parts[i:], nil
			}
		}
		if i == len(parts) {
			return nil, escapes(name, errors.New("absolute path outside the root"))
		}
		switch p := parts[i]; p {
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		default:
			stack = append(stack, p)
		}
	}
}

func sameParts(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// join puts an absolute root and relative components together.
func join(root string, parts []string) string {
	if len(parts) == 0 {
		return root
	}
	rel := strings.Join(parts, "/")
	if root == "/" {
		return "/" + rel
	}
	return root + "/" + rel
}

// ResolveLexical resolves name under root without touching the file
// system: symlinks are not followed, ".." removes the previous component.
// root is made absolute (against the working directory) and cleaned. The
// result is an absolute, clean path inside root, or a *PathError wrapping
// ErrEscapes or ErrInvalidPath.
func ResolveLexical(root, name string) (string, error) {
	abs, err := absRoot(root)
	if err != nil {
		return "", err
	}
	_, cleaned, err := relParts(name, [][]string{splitName(abs)})
	if err != nil {
		return "", err
	}
	return join(abs, cleaned), nil
}

func absRoot(root string) (string, error) {
	if root == "" {
		return "", invalid(root, "empty root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", wrapOS(root, err)
	}
	return abs, nil
}
