package stock

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// openRoot opens the call's root (MCP_ROOT) as a jail and returns it with
// the function that closes it when the call is done. Every tool that
// touches a file opens it once per call; every path of the call goes
// through it. In a worker the root stays open between calls (rootCache).
func openRoot(c *tool.Call) (*jail.Root, func() error, error) {
	if rc := rootCacheOf(c.Context()); rc != nil {
		r, done, err := rc.open(c.Root())
		if err != nil {
			return nil, nil, fmt.Errorf("opening the root: %w", err)
		}
		return r, done, nil
	}
	r, err := jail.Open(c.Root())
	if err != nil {
		return nil, nil, fmt.Errorf("opening the root: %w", err)
	}
	return r, r.Close, nil
}

// openRegular opens the regular file name for reading and returns it with
// its FileInfo. A directory is refused ("NAME: is a directory"); the jail
// refuses FIFOs, sockets and devices.
func openRegular(r *jail.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &jail.PathError{Path: name, Err: err}
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &jail.PathError{Path: name, Err: syscall.EISDIR}
	}
	return f, fi, nil
}

// openText is openRegular for the tools that return a file's lines: a
// binary file (see looksBinary) is refused too (errBinary).
func openText(r *jail.Root, name string) (*os.File, fs.FileInfo, error) {
	f, fi, err := openRegular(r, name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkText(f, name); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// textFileArgs are the arguments of the tools that return the text of one
// file: its path and the byte cap of the output.
type textFileArgs struct {
	Path     string `json:"path"`
	MaxBytes int    `json:"maxBytes"`
}

// maxBytes is the call's byte cap: maxBytes, or the default, within the
// limit.
func (a *textFileArgs) maxBytes() int { return capInt(a.MaxBytes, DefaultMaxBytes, MaxBytesLimit) }

// eachLine reads src line by line (see lineReader) and calls fn with each
// line's number (from 1), the line as read and its full length (for
// showLine) until fn returns false or src ends. It stops with the call's
// context error when the call is cancelled, and with a read error, which
// names name.
func eachLine(c *tool.Call, src io.Reader, name string, fn func(n int, line []byte, full int) bool) error {
	lr := newLineReader(src)
	for n := 1; ; n++ {
		if err := c.Context().Err(); err != nil {
			return err
		}
		line, full, err := lr.next()
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case !fn(n, line, full):
			return nil
		}
	}
}

// sniffLen is how much of a file the binary check looks at, as git and
// grep do.
const sniffLen = 8000

// looksBinary reports whether head, the start of a file, holds a NUL byte:
// text files do not.
func looksBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), sniffLen)], 0) >= 0
}

// errBinary is the error of a text tool given a binary file.
func errBinary(name string) error {
	return fmt.Errorf("%s: binary file (contains NUL bytes); use fs_slice with encoding base64 or hex, or fs_hash", name)
}

// text makes b fit for a text result: invalid UTF-8 becomes U+FFFD, which
// mcp-route and JSON would otherwise reject or mangle.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// cutUTF8 returns the longest prefix of b of at most n bytes that does not
// end inside a UTF-8 sequence.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	// b[n] is the first byte left out; when it continues a sequence, leave
	// out the sequence's start too (at most UTFMax-1 bytes back).
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8Start(b[n]); i++ {
		n--
	}
	return b[:n]
}

// fileType names the type of a file for people and for JSON.
func fileType(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "file"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSymlink:
		return "symlink"
	case fs.ModeNamedPipe:
		return "fifo"
	case fs.ModeSocket:
		return "socket"
	case fs.ModeDevice:
		return "block-device"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "char-device"
	}
	return "other"
}

// errWalkLimit stops a walk that visited MaxWalk entries.
var errWalkLimit = errors.New("walk limit reached")

// walker walks a tree under a jail with the shared limits: at most MaxWalk
// entries, directories named .git skipped (unless the walk starts inside
// one), unreadable directories noted and skipped, cancellation checked
// between entries.
type walker struct {
	c        *tool.Call
	r        *jail.Root
	maxDepth int  // 0: unlimited; 1: the start's entries only
	keepGit  bool // enter directories named .git

	visited    int
	limitHit   bool
	unreadable []string // directories that could not be read
}

// walk calls fn for every entry below (and including) start, with the path
// relative to the root and the entry. fn returns fs.SkipDir, fs.SkipAll or
// an error as with fs.WalkDir. The error of a start that cannot be walked
// (escapes, does not exist) is returned as is.
func (w *walker) walk(start string, fn func(path string, d fs.DirEntry) error) error {
	startDepth := -1
	err := w.r.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if startDepth < 0 {
			if err != nil {
				return err
			}
			startDepth = depth(path)
		}
		if err != nil {
			// A directory below the start that cannot be read: say so,
			// keep going.
			w.unreadable = append(w.unreadable, path)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if cerr := w.c.Context().Err(); cerr != nil {
			return cerr
		}
		if w.visited++; w.visited > MaxWalk {
			w.limitHit = true
			return errWalkLimit
		}
		rel := depth(path) - startDepth
		if d.IsDir() && rel > 0 && d.Name() == ".git" && !w.keepGit {
			return fs.SkipDir
		}
		if err := fn(path, d); err != nil {
			return err
		}
		if d.IsDir() && w.maxDepth > 0 && rel >= w.maxDepth {
			return fs.SkipDir
		}
		return nil
	})
	if errors.Is(err, errWalkLimit) {
		return nil
	}
	return err
}

// notes returns the walk's notes, one per line: the walk limit and the
// directories it could not read (at most a few named).
func (w *walker) notes() string {
	var b strings.Builder
	if w.limitHit {
		fmt.Fprintf(&b, "[walk stopped after %d entries: narrow the path or pattern]\n", MaxWalk)
	}
	if n := len(w.unreadable); n > 0 {
		shown := w.unreadable[:min(n, 5)]
		fmt.Fprintf(&b, "[%d unreadable directories skipped: %s", n, strings.Join(shown, ", "))
		if n > len(shown) {
			b.WriteString(", ...")
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// dirArgs are the arguments of the tools that list or walk a directory:
// its path (the root by default) and the most results to return.
type dirArgs struct {
	Path       string `json:"path"`
	MaxResults int    `json:"maxResults"`
}

func (a *dirArgs) check() error {
	if a.Path == "" {
		a.Path = "."
	}
	return nil
}

// dirBase resolves dir, the directory a walk starts at as the call named
// it, to its path relative to the root, and refuses anything but a
// directory.
func dirBase(r *jail.Root, dir string) (string, error) {
	base, err := r.ResolveRel(dir)
	if err != nil {
		return "", err
	}
	fi, err := r.Stat(base)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory", dir)
	}
	return base, nil
}

// list walks start and lists the path (relative to the root; a
// directory's with a trailing slash) of every entry match accepts, at most
// maxResults of them (the call's argument, capped), counting the rest.
func (w *walker) list(start string, maxResults int, match func(path string, d fs.DirEntry) bool) (*lineBuf, error) {
	out := newLineBuf(capInt(maxResults, DefaultMaxResults, MaxResultsLimit), MaxBytesLimit)
	err := w.walk(start, func(p string, d fs.DirEntry) error {
		if !match(p, d) {
			return nil
		}
		if d.IsDir() {
			p += "/"
		}
		out.Add(p)
		return nil
	})
	return out, err
}

// writeList writes a list made by list, then its notes: "[no matches]"
// for an empty list, the truncation note (with the total when the walk
// saw everything), and the walk's own notes.
func (w *walker) writeList(c *tool.Call, out *lineBuf) {
	c.Text(out.String())
	if out.Seen() == 0 {
		c.Text("[no matches]\n")
	}
	if note := out.Note("paths", !w.limitHit); note != "" {
		c.Text(note + "\n")
	}
	c.Text(w.notes())
}

// relTo returns p, a path relative to the root, relative to base, a
// directory above it that is also relative to the root.
func relTo(base, p string) string {
	if base == "." {
		return p
	}
	return strings.TrimPrefix(p, base+"/")
}

// depth is the number of components of a slash-separated path relative to
// the root ("." is 0).
func depth(path string) int {
	if path == "." {
		return 0
	}
	return strings.Count(path, "/") + 1
}

// timeString formats a modification time for output: RFC 3339 with
// nanoseconds, in UTC so that output does not depend on the host's zone.
func timeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// readAt reads into buf from f at off, tolerating a short file.
func readAt(f *os.File, buf []byte, off int64) (int, error) {
	n, err := f.ReadAt(buf, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// lineReader reads a file line by line in bounded memory: a line longer
// than MaxLineBytes is kept only up to that length (the rest is read and
// dropped), so a file with no newlines cannot make a tool load it whole.
type lineReader struct {
	br      *bufio.Reader
	keep    []byte
	maxKeep int   // bytes of a line kept
	n       int64 // bytes consumed so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), maxKeep: MaxLineBytes + utf8.UTFMax}
}

// next returns the next line without its newline, cut to maxKeep bytes
// (MaxLineBytes and a little more, unless set), and its full length. It returns io.EOF when no bytes are left; a last
// line without a newline is returned as a line.
func (l *lineReader) next() (line []byte, full int, err error) {
	l.keep = l.keep[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.n += int64(len(chunk))
		full += len(chunk)
		if room := l.maxKeep - len(l.keep); room > 0 {
			l.keep = append(l.keep, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && full == 0:
			return nil, 0, io.EOF
		case err != nil && err != io.EOF:
			return nil, 0, err
		}
		line = l.keep
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			full--
			if len(line) > full { // the kept part includes the newline
				line = line[:full]
			}
		}
		if len(line) > 0 && line[len(line)-1] == '\r' && len(line) == full {
			// Keep CRLF files readable as lines; the \r is not content.
			line, full = line[:len(line)-1], full-1
		}
		return line, full, nil
	}
}

// showLine formats a line read by lineReader for output: valid UTF-8, cut
// to MaxLineBytes with a mark when it was longer.
func showLine(line []byte, full int) string {
	if full <= MaxLineBytes && len(line) == full {
		return text(line)
	}
	return fmt.Sprintf("%s… [line cut: %d bytes]", text(cutUTF8(line, MaxLineBytes)), full)
}

// checkText refuses a binary file: it reads the start of f and seeks back.
func checkText(f *os.File, name string) error {
	head := make([]byte, sniffLen)
	n, err := readAt(f, head, 0)
	if err != nil {
		return &jail.PathError{Path: name, Err: err}
	}
	if looksBinary(head[:n]) {
		return errBinary(name)
	}
	return nil
}

// errNotDir is the condition of a path that goes through a file as if it
// were a directory: for fs_exists, such a path does not exist.
var errNotDir error = syscall.ENOTDIR
