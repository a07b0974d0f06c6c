package stock

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// Limits of the content searches (fs_grep, fs_grep_count, fs_first_match).
const (
	// MaxScanBytes bounds how many bytes one search reads in all; a search
	// that reaches it stops and says so.
	MaxScanBytes = 1 << 30
	// MaxMatchLine is how much of one line a search matches against; the
	// rest of a longer line is not searched.
	MaxMatchLine = 1 << 20
	// MaxPatternLen bounds a regular expression or glob argument.
	MaxPatternLen = 4096
)

// searchProps are the input-schema properties the content searches share.
const searchProps = `
	"pattern": {"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "Regular expression (Go RE2 syntax: no backreferences or lookaround; matching time is linear, never catastrophic), matched against each line. With literal: true, a plain string."},
	"path": {"type": "string", "minLength": 1, "maxLength": 4095, "default": ".",
		"description": "File or directory to search, relative to the root (default: the root). A directory is searched recursively."},
	"include": {"type": "string", "minLength": 1, "maxLength": 4096,
		"description": "Only search files matching this glob (** allowed): against the file name, or, when it contains a slash, against the path relative to path. Example: \"*.go\" or \"src/**/*.ts\"."},
	"ignoreCase": {"type": "boolean", "default": false, "description": "Match without regard to case."},
	"literal": {"type": "boolean", "default": false, "description": "Treat pattern as a plain string, not a regular expression."}`

// searchDoc is the part of the search tools' descriptions about what is
// searched.
const searchDoc = "Searches line by line with Go's RE2 regular expressions (linear time). " +
	"In a directory it walks the tree in name order without following symlinks, skips directories named .git, binary files (NUL bytes in the first 8000 bytes), FIFOs, sockets and devices, and stops after 200000 entries or 1 GiB read, with a note. " +
	"Lines are matched up to their first 1 MiB. Refuses paths that leave the root."

type searchArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Include    string `json:"include"`
	IgnoreCase bool   `json:"ignoreCase"`
	Literal    bool   `json:"literal"`
}

// searcher runs one content search.
type searcher struct {
	walker
	re      *regexp.Regexp
	include string

	// context is how many lines around each match go to onContext.
	context   int
	onContext func(path string, n int, line string)

	single        bool  // searching one file named by the caller
	files, binary int   // files searched; binary files skipped
	scanned       int64 // bytes read
	scanLimitHit  bool
	skipped       []string // files that could not be read
}

// newSearcher checks the shared arguments and compiles the pattern.
func newSearcher(c *tool.Call, r *jail.Root, a *searchArgs) (*searcher, error) {
	if a.Path == "" {
		a.Path = "."
	}
	if len(a.Pattern) > MaxPatternLen {
		return nil, fmt.Errorf("pattern longer than %d bytes", MaxPatternLen)
	}
	if a.Pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	expr := a.Pattern
	if a.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if a.Include != "" && (len(a.Include) > MaxPatternLen || !doublestar.ValidatePattern(a.Include)) {
		return nil, fmt.Errorf("invalid include glob %q", a.Include)
	}
	return &searcher{walker: walker{c: c, r: r}, re: re, include: a.Include}, nil
}

// errStop ends a search early; it is not an error of the search.
var errStop = errors.New("stop")

// search calls fn for every matching line under start (a file or a
// directory), with the file's path relative to the root, the line number
// and the line as it should be shown. fn returns false to stop the search.
func (s *searcher) search(start string, fn func(path string, n int, line string) bool) error {
	fi, err := s.r.Stat(start)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		// One file, named by the caller: search it whatever include says.
		rel, err := s.r.ResolveRel(start)
		if err != nil {
			return err
		}
		s.single = true
		err = s.file(rel, fn)
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	base, err := s.r.ResolveRel(start)
	if err != nil {
		return err
	}
	err = s.walk(base, func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() || !s.included(base, p) {
			return nil
		}
		return s.file(p, fn)
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// included reports whether the file p (relative to the root) passes the
// include glob; base is the directory searched.
func (s *searcher) included(base, p string) bool {
	if s.include == "" {
		return true
	}
	if !strings.Contains(s.include, "/") {
		return doublestar.MatchUnvalidated(s.include, path.Base(p))
	}
	return doublestar.MatchUnvalidated(s.include, relTo(base, p))
}

// file searches one file. A file that cannot be opened or read is noted
// and skipped, unless the search was for that file alone (then the error
// is the caller's).
func (s *searcher) file(p string, fn func(path string, n int, line string) bool) error {
	if s.scanned >= MaxScanBytes {
		s.scanLimitHit = true
		return errStop
	}
	f, err := s.r.Open(p)
	if err != nil {
		if s.single {
			return err
		}
		s.skipped = append(s.skipped, p)
		return nil
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := readAt(f, head, 0)
	if err != nil {
		if s.single {
			return &jail.PathError{Path: p, Err: err}
		}
		s.skipped = append(s.skipped, p)
		return nil
	}
	if looksBinary(head[:n]) {
		if s.single {
			return errBinary(p)
		}
		s.binary++
		return nil
	}
	s.files++
	lr := newLineReader(io.LimitReader(f, MaxScanBytes-s.scanned))
	lr.maxKeep = MaxMatchLine
	defer func() { s.scanned += lr.n }()
	type numbered struct {
		n    int
		text string
	}
	var before []numbered // the last s.context lines not yet shown
	after := 0            // lines still to show after the last match
	for lineNo := 1; ; lineNo++ {
		line, full, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.skipped = append(s.skipped, p)
			return nil
		}
		if lineNo%4096 == 0 {
			if err := s.c.Context().Err(); err != nil {
				return err
			}
		}
		if s.re.Match(line) {
			for _, b := range before {
				s.onContext(p, b.n, b.text)
			}
			before = before[:0]
			if !fn(p, lineNo, showLine(line, full)) {
				return errStop
			}
			after = s.context
			continue
		}
		switch {
		case s.context == 0:
		case after > 0:
			s.onContext(p, lineNo, showLine(line, full))
			after--
		default:
			if len(before) == s.context {
				copy(before, before[1:])
				before = before[:len(before)-1]
			}
			before = append(before, numbered{lineNo, showLine(line, full)})
		}
	}
	if s.scanned+lr.n >= MaxScanBytes {
		s.scanLimitHit = true
		return errStop
	}
	return nil
}

// complete reports whether the search saw everything it was asked to.
func (s *searcher) complete() bool { return !s.limitHit && !s.scanLimitHit }

// notes are the search's notes, one per line: limits reached, files
// skipped.
func (s *searcher) notes() string {
	var b strings.Builder
	b.WriteString(s.walker.notes())
	if s.scanLimitHit {
		fmt.Fprintf(&b, "[search stopped after reading %d bytes: narrow the path or include]\n", MaxScanBytes)
	}
	if s.binary > 0 {
		fmt.Fprintf(&b, "[%d binary files skipped]\n", s.binary)
	}
	if n := len(s.skipped); n > 0 {
		fmt.Fprintf(&b, "[%d unreadable files skipped: %s", n, strings.Join(s.skipped[:min(n, 5)], ", "))
		if n > 5 {
			b.WriteString(", ...")
		}
		b.WriteString("]\n")
	}
	return b.String()
}
