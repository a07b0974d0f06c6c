// Package cmdline splits a command line into words as a POSIX shell would,
// without running one. It is how mcp-call reads $MCP_SERVER and script lines,
// and how any mcpipe binary that takes a command as one string should read
// it.
//
// Split understands white space between words, 'single quotes', "double
// quotes" and backslash escapes. It expands nothing: $VAR, ~, globs and
// `backticks` stay as written, since no shell runs.
//
// Refused, with an *Error naming the character and where it is:
//   - an unquoted ; | & < or > (a shell would end the command there, pipe it
//     or redirect it; silently dropping the rest of the line would run a
//     different command than the one written). Quote or escape it to pass
//     it as text: 'a;b' or a\;b.
//   - an unterminated quote or a trailing backslash;
//   - a line with no words.
package cmdline

import (
	"fmt"
	"strings"

	"github.com/mattn/go-shellwords"
)

// operators are the characters a shell treats as control or redirection
// operators; shellwords stops splitting at the first unquoted one.
const operators = ";|&<>"

// Error is a line Split refuses.
type Error struct {
	Line   string // the line as given
	Char   rune   // the operator found, or 0
	Column int    // 1-based, in characters; 0 when not about one place
	Msg    string // what is wrong and what is expected
}

func (e *Error) Error() string { return e.Msg }

// Split returns the words of line. See the package doc for what it refuses.
func Split(line string) ([]string, error) {
	p := shellwords.NewParser()
	words, err := p.Parse(line)
	if err != nil {
		return nil, &Error{Line: line, Msg: fmt.Sprintf("cannot split %q: a quote is not closed, or the line ends in a backslash", line)}
	}
	if p.Position >= 0 {
		return nil, operatorError(line, p.Position)
	}
	if len(words) == 0 {
		return nil, &Error{Line: line, Msg: "no command: the line is empty"}
	}
	return words, nil
}

// operatorError finds the operator at or after rune index pos (shellwords
// reports the start of a "2>" redirection at its digit).
func operatorError(line string, pos int) *Error {
	runes := []rune(line)
	col := min(pos, len(runes))
	for col < len(runes) && !strings.ContainsRune(operators, runes[col]) {
		col++
	}
	var c rune = '?'
	if col < len(runes) {
		c = runes[col]
	}
	return &Error{
		Line:   line,
		Char:   c,
		Column: col + 1,
		Msg: fmt.Sprintf("unquoted %q at column %d of %q: no shell runs, so ; | & < > cannot chain, pipe or redirect; quote it ('a%cb') or escape it (a\\%cb) to pass it as text",
			string(c), col+1, line, c, c),
	}
}
