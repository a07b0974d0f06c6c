package shexec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-shellwords"
)

// MaxCommandLen is the longest command line Split accepts, in bytes.
const MaxCommandLen = 8192

// ErrRefused is wrapped by every error that refuses a command: one that
// would need a shell, names a program not on the allowlist, or carries an
// argument that could run another program or leave the root.
var ErrRefused = errors.New("refused")

func refusef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Split splits a command line into words as sh would quote them (go-
// shellwords, with variable and command substitution off), and refuses what
// only a shell would give meaning to, so that nothing is silently passed on
// as a literal the caller meant to be interpreted:
//
//   - unquoted operators: ; & | < > ( ) and newlines (one command only, no
//     pipes, lists, redirections or subshells);
//   - outside single quotes: backticks and $ followed by a name, a digit,
//     one of {(?#@*!$- (no variable or command substitution);
//   - unquoted glob characters * ? [ (no file name expansion: quote them to
//     pass them to the program, as with find -name '*.go');
//   - an unquoted ~ or # at the start of a word (no tilde expansion, no
//     comments);
//   - NUL bytes, an empty line and a line longer than MaxCommandLen.
//
// Quoted (or backslash-escaped outside quotes) these characters are ordinary
// characters of a word. Quoting follows go-shellwords: '...' is literal;
// inside "..." and outside quotes a backslash escapes the next character
// (\t and \n unquoted or double-quoted give a tab and a newline).
func Split(line string) ([]string, error) {
	switch {
	case strings.TrimSpace(line) == "":
		return nil, refusef("empty command")
	case len(line) > MaxCommandLen:
		return nil, refusef("command longer than %d bytes", MaxCommandLen)
	case strings.IndexByte(line, 0) >= 0:
		return nil, refusef("command contains a NUL byte")
	}
	if err := scan(line); err != nil {
		return nil, err
	}
	p := shellwords.NewParser()
	p.ParseEnv = false
	p.ParseBacktick = false
	p.ParseComment = false
	words, err := p.Parse(line)
	if err != nil {
		return nil, refusef("cannot split the command line: %v", err)
	}
	if p.Position >= 0 {
		// scan refuses every operator that stops the parser; this is the
		// backstop should the two ever disagree.
		return nil, refusef("shell operator at byte %d: sh_exec runs one command, without a shell", p.Position)
	}
	if len(words) == 0 {
		return nil, refusef("empty command")
	}
	return words, nil
}

// scan walks line with go-shellwords' quoting rules and refuses the first
// character a shell would interpret.
func scan(line string) error {
	var single, double, escaped bool
	wordStart := true
	for i := 0; i < len(line); i++ {
		c := line[i]
		start := wordStart
		wordStart = false
		if escaped {
			escaped = false
			continue
		}
		if single {
			if c == '\'' {
				single = false
			}
			continue
		}
		switch c {
		case '\\':
			escaped = true
			continue
		case '`':
			return refusef("backquote at byte %d: no command substitution (sh_exec runs no shell)", i)
		case '$':
			if i+1 < len(line) && expands(line[i+1]) {
				return refusef("%q at byte %d: no variable or command substitution (sh_exec runs no shell); put it in single quotes to pass it literally", line[i:i+2], i)
			}
			continue
		}
		if double {
			if c == '"' {
				double = false
			}
			continue
		}
		switch c {
		case '\'':
			single = true
		case '"':
			double = true
		case ' ', '\t':
			wordStart = true
		case '\n', '\r':
			return refusef("newline at byte %d: sh_exec runs one command", i)
		case ';', '&', '|', '<', '>', '(', ')':
			return refusef("%q at byte %d: no pipes, lists, redirections or subshells (sh_exec runs one command, without a shell); quote it to pass it literally", c, i)
		case '*', '?', '[':
			return refusef("%q at byte %d: no file name expansion (sh_exec runs no shell); quote it to pass it literally, or use fs_glob", c, i)
		case '~', '#':
			if start {
				what := "no tilde expansion"
				if c == '#' {
					what = "no comments"
				}
				return refusef("%q at byte %d: %s (sh_exec runs no shell); quote it to pass it literally", c, i, what)
			}
		}
	}
	if single || double || escaped {
		return refusef("unterminated quote or trailing backslash")
	}
	return nil
}

// expands reports whether sh would expand "$" followed by c.
func expands(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("_{(?#@*!$-", c) >= 0
}
