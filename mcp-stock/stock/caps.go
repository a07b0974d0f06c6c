package stock

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Output caps. Every tool's output is bounded; a tool that cuts its output
// says so in a note (text) or with "truncated": true (JSON). A caller can
// lower a cap through the tool's arguments, and raise it up to the hard
// limit, never beyond.
const (
	// DefaultMaxBytes bounds the text a tool returns when the call sets no
	// maxBytes; MaxBytesLimit is the most a call may ask for. Both stay
	// under mcp-route's default output cap (1 MiB) with room for notes.
	DefaultMaxBytes = 256 << 10
	MaxBytesLimit   = 1000 << 10

	// DefaultMaxLines and MaxLinesLimit bound line-oriented output
	// (fs_head, fs_tail, fs_slice, fs_lines, fs_read).
	DefaultMaxLines = 2000
	MaxLinesLimit   = 100000

	// DefaultMaxResults and MaxResultsLimit bound lists of entries and
	// matches (fs_list, fs_glob, fs_find, fs_grep ...).
	DefaultMaxResults = 1000
	MaxResultsLimit   = 10000

	// MaxWalk bounds how many directory entries one call may visit, so a
	// walk of a huge tree ends; a walk cut short says so.
	MaxWalk = 200000

	// MaxLineBytes is the longest line a line-oriented tool shows in
	// full; longer lines are cut and marked.
	MaxLineBytes = 4096

	// MaxJSONBytes bounds the JSON document of a "json" result. mcp-route
	// caps a tool's stdout (1 MiB by default) and sends the document twice
	// (as structuredContent and as text), so lists stop growing, and say
	// truncated, when their encoding would pass this.
	MaxJSONBytes = 512 << 10
)

// jsonBudget tracks the encoded size of the items of a JSON list against
// MaxJSONBytes (less room for the rest of the document).
type jsonBudget struct{ used int }

// fits reports whether v still fits, and counts it if it does.
func (b *jsonBudget) fits(v any) bool {
	enc, err := json.Marshal(v)
	if err != nil {
		return false
	}
	if b.used+len(enc)+1 > MaxJSONBytes-4096 {
		return false
	}
	b.used += len(enc) + 1
	return true
}

// truncNote is the note a tool appends when it cut its output:
// "[truncated: 1000 of 52311 lines shown]", or, when the total is unknown
// (total < 0), "[truncated: first 1000 lines shown]".
func truncNote(shown, total int, unit string) string {
	if total < 0 {
		return fmt.Sprintf("[truncated: first %d %s shown]", shown, unit)
	}
	return fmt.Sprintf("[truncated: %d of %d %s shown]", shown, total, unit)
}

// capInt returns v, or def when v is zero, clamped to [1, max]. The input
// schemas already bound v; the clamp guards a tool run by hand.
func capInt(v, def, max int) int {
	switch {
	case v == 0:
		return def
	case v < 1:
		return 1
	case v > max:
		return max
	}
	return v
}

// lineBuf collects output lines under a line cap and a byte cap. Lines
// offered after the buffer is full are counted but not kept, so the note
// can say how many there were. The zero value is not usable: use
// newLineBuf.
type lineBuf struct {
	maxLines, maxBytes int

	b     strings.Builder
	shown int // lines kept
	seen  int // lines offered
	full  bool
}

func newLineBuf(maxLines, maxBytes int) *lineBuf {
	return &lineBuf{maxLines: maxLines, maxBytes: maxBytes}
}

// Add offers one line (without its newline; already cut to length, see
// showLine) and reports whether it was kept.
func (l *lineBuf) Add(line string) bool {
	l.seen++
	if l.full {
		return false
	}
	if l.shown >= l.maxLines || l.b.Len()+len(line)+1 > l.maxBytes {
		l.full = true
		return false
	}
	l.b.WriteString(line)
	l.b.WriteByte('\n')
	l.shown++
	return true
}

// Full reports whether a line was refused; a caller that does not need a
// total may stop reading.
func (l *lineBuf) Full() bool { return l.full }

// String returns the kept lines, each ending in a newline.
func (l *lineBuf) String() string { return l.b.String() }

// Shown and Seen are the numbers of lines kept and offered.
func (l *lineBuf) Shown() int { return l.shown }
func (l *lineBuf) Seen() int  { return l.seen }

// Note is the truncation note for unit ("lines", "matches" ...), with the
// total when the caller offered every line (complete) and "first N"
// otherwise; "" when nothing was cut.
func (l *lineBuf) Note(unit string, complete bool) string {
	if !l.full {
		return ""
	}
	total := l.seen
	if !complete {
		total = -1
	}
	return truncNote(l.shown, total, unit)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
