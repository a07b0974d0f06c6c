package cmdline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for line, want := range map[string][]string{
		`mcp-route --tools X --readonly`:     {"mcp-route", "--tools", "X", "--readonly"},
		`fs_write path=x 'content=hello;rm'`: {"fs_write", "path=x", "content=hello;rm"},
		`fs_write path=x content="a|b&c"`:    {"fs_write", "path=x", "content=a|b&c"},
		`echo a\;b a\>b`:                     {"echo", "a;b", "a>b"},
		`echo "text=with spaces" x=$HOME`:    {"echo", "text=with spaces", "x=$HOME"},
		`  echo   ''  `:                      {"echo", ""},
		`echo '{"a": 1}'`:                    {"echo", `{"a": 1}`},
	} {
		got, err := Split(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
}

// TestSplitRefusesOperators: what a shell would treat as an operator is an
// error naming it, never a silently shortened command.
func TestSplitRefusesOperators(t *testing.T) {
	for _, tt := range []struct {
		line string
		char rune
		col  int
	}{
		{`fs_write path=x content=hello;rm`, ';', 30},
		{`mcp-route --tools X ; --readonly`, ';', 21},
		{`a | b`, '|', 3},
		{`a & b`, '&', 3},
		{`a <in`, '<', 3},
		{`a >out`, '>', 3},
		{`a 2>err`, '>', 4},
		{`é;x`, ';', 2},
	} {
		_, err := Split(tt.line)
		var e *Error
		if !errors.As(err, &e) || e.Char != tt.char || e.Column != tt.col {
			t.Errorf("Split(%q) = %v; want an Error for %q at column %d", tt.line, err, tt.char, tt.col)
			continue
		}
		for _, want := range []string{"unquoted \"" + string(tt.char) + "\"", tt.line, "quote it"} {
			if !strings.Contains(e.Error(), want) {
				t.Errorf("Split(%q): %q does not say %q", tt.line, e, want)
			}
		}
	}
}

func TestSplitRefusesBrokenLines(t *testing.T) {
	for line, want := range map[string]string{
		`echo 'open`: "quote is not closed",
		`echo "open`: "quote is not closed",
		`echo open\`: "backslash",
		``:           "empty",
		"  \t ":      "empty",
	} {
		if _, err := Split(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Split(%q) = %v, want an error saying %q", line, err, want)
		}
	}
}
