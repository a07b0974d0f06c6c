// Package termsafe renders text from an untrusted peer harmless on a
// terminal, and tells whether a file is one.
//
// A terminal obeys control sequences in what it prints: ANSI escapes that
// move the cursor, clear or rewrite the screen (hiding what came before),
// OSC 52 that writes the clipboard, OSC 8 hyperlinks whose target differs
// from their text, a title change, a bell. Text a server sends (tool
// results, descriptions, error messages, tool names) must not be able to
// do that to the user who reads it.
//
// Writer escapes, visibly and reversibly for a reader:
//   - C0 controls (U+0000–U+001F) other than newline and tab, and DEL
//     (U+007F), as \xHH: ESC is \x1b, BEL \x07, CR \x0d;
//   - C1 controls (U+0080–U+009F, which some terminals take as CSI, OSC ...)
//     as \uHHHH: \u009b;
//   - bytes that are not valid UTF-8 as \xHH (a terminal in an 8-bit mode
//     would take 0x9b as CSI).
//
// Everything else, including a literal backslash, passes unchanged: the
// escapes are for a person reading a terminal, not a format to decode (the
// raw bytes are what a pipe gets). A UTF-8 sequence split across two Write
// calls is escaped as bytes; callers that write whole strings never see
// that.
package termsafe

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Writer writes to W with control characters escaped (see the package doc).
type Writer struct{ W io.Writer }

// Write escapes p and writes it; it returns len(p) when the escaped bytes
// were all written.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := w.W.Write(Escape(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Escape returns p with control characters escaped; p itself when there is
// none.
func Escape(p []byte) []byte {
	if clean(p) {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				out = fmt.Appendf(out, `\x%02x`, c)
			} else {
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, c)
		case r >= 0x80 && r <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+n]...)
		}
		i += n
	}
	return out
}

// clean reports whether p needs no escaping: printable ASCII, newline and
// tab only, or valid UTF-8 without C1 controls.
func clean(p []byte) bool {
	ascii := true
	for _, c := range p {
		if c >= utf8.RuneSelf {
			ascii = false
			continue
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	if ascii {
		return true
	}
	if !utf8.Valid(p) {
		return false
	}
	for _, r := range string(p) {
		if r >= 0x80 && r <= 0x9f {
			return false
		}
	}
	return true
}
