package pin

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The canonical form is what a digest is taken of, so that two encodings
// of one definition get one digest and two different definitions never
// do. The upstream writes the JSON, so the parser is strict where JSON
// parsers disagree, and exact where encoding/json would round:
//
//   - A duplicate key in an object is refused: parsers keep the first or
//     the last, so {"type":"string","type":"object"} would mean one schema
//     to the digest and another to the client. Keys are compared after
//     their escapes are decoded ("a" and "\u0061" are the same key).
//   - A string must be valid UTF-8 and its \u escapes whole surrogate
//     pairs: encoding/json turns a lone surrogate and a bad byte into
//     U+FFFD, so two different inputs would read the same.
//   - A number is kept exact, never as a float64 (where 9007199254740993
//     reads as 9007199254740992): its decimal digits and exponent are
//     normalized, so 1, 1.0, 10e-1 and 1E0 are one number and -0 is 0,
//     but any two different values stay different.
//   - Objects are written with their keys in byte order, with no
//     whitespace; strings escape only '"', '\\' and U+0000 to U+001F, so
//     the form does not depend on Unicode tables that change between Go
//     releases.
//
// Nesting deeper than maxDepth is refused (a parser's stack is the
// attacker's to fill otherwise).

const maxDepth = 256

// number is a JSON number in canonical text.
type number string

// A syntaxError is where a JSON text broke the rules, as a byte offset.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.offset, e.msg) }

type parser struct {
	b     []byte
	i     int
	depth int
}

// parseJSON parses one JSON value, alone in b but for whitespace, into
// nil, bool, string, number, []any and map[string]any.
func parseJSON(b []byte) (any, error) {
	p := &parser{b: b}
	p.space()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.b) {
		return nil, p.fail("data after the JSON value")
	}
	return v, nil
}

// clipKey quotes an object key for an error message: the upstream wrote
// it, so it is clipped (a key can be megabytes) and in ASCII.
func clipKey(key string) string {
	if r := []rune(key); len(r) > 40 {
		return strconv.QuoteToASCII(string(r[:40])) + "…"
	}
	return strconv.QuoteToASCII(key)
}

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{offset: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, error) {
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end of JSON")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.fail("unexpected %q", rune(c))
	}
}

func (p *parser) literal(word string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(word)) {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) enter() error {
	if p.depth++; p.depth > maxDepth {
		return p.fail("nested deeper than %d", maxDepth)
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	obj := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return obj, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.fail("want a string key")
		}
		at := p.i
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, &syntaxError{offset: at, msg: fmt.Sprintf("duplicate key %s", clipKey(key))}
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.fail("want ':' after key %s", clipKey(key))
		}
		p.i++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj[key] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of JSON in an object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return obj, nil
		default:
			return nil, p.fail("want ',' or '}' in an object")
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	arr := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end of JSON in an array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return arr, nil
		default:
			return nil, p.fail("want ',' or ']' in an array")
		}
	}
}

func (p *parser) string() (string, error) {
	p.i++ // "
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return "", p.fail("unexpected end of JSON in a string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return sb.String(), nil
		case c == '\\':
			if err := p.escape(&sb); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.fail("control character %#x in a string (escape it)", c)
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", p.fail("byte %#x in a string is not UTF-8", c)
			}
			sb.Write(p.b[p.i : p.i+n])
			p.i += n
		}
	}
}

// escape decodes the escape at p.i into sb.
func (p *parser) escape(sb *strings.Builder) error {
	if p.i+1 >= len(p.b) {
		return p.fail("unexpected end of JSON in an escape")
	}
	c := p.b[p.i+1]
	short := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
	if d, ok := short[c]; ok {
		sb.WriteByte(d)
		p.i += 2
		return nil
	}
	if c != 'u' {
		return p.fail("unknown escape \\%c", c)
	}
	r, err := p.hex4(p.i + 2)
	if err != nil {
		return err
	}
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00:
		// A high surrogate: the low one must follow as \uDC00-\uDFFF.
		if p.i+12 > len(p.b) || p.b[p.i+6] != '\\' || p.b[p.i+7] != 'u' {
			return p.fail("lone surrogate \\u%04x", r)
		}
		lo, err := p.hex4(p.i + 8)
		if err != nil {
			return err
		}
		if lo < 0xdc00 || lo > 0xdfff {
			return p.fail("lone surrogate \\u%04x", r)
		}
		sb.WriteRune(utf16.DecodeRune(r, lo))
		p.i += 12
	case utf16.IsSurrogate(r):
		return p.fail("lone surrogate \\u%04x", r)
	default:
		sb.WriteRune(r)
		p.i += 6
	}
	return nil
}

func (p *parser) hex4(at int) (rune, error) {
	if at+4 > len(p.b) {
		return 0, p.fail("unexpected end of JSON in a \\u escape")
	}
	v, err := strconv.ParseUint(string(p.b[at:at+4]), 16, 32)
	if err != nil {
		return 0, p.fail("bad \\u escape %q", p.b[at:at+4])
	}
	return rune(v), nil
}

// maxExponent bounds a number's exponent, far beyond any float, so that
// exponent arithmetic cannot overflow.
const maxExponent = 1 << 40

func (p *parser) number() (any, error) {
	start := p.i
	digitsAt := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	neg := false
	if p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	intAt := p.i
	n := digitsAt()
	if n == 0 {
		return nil, p.fail("want a digit in a number")
	}
	if n > 1 && p.b[intAt] == '0' {
		return nil, &syntaxError{offset: intAt, msg: "leading zero in a number"}
	}
	intPart := string(p.b[intAt:p.i])
	frac := ""
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		at := p.i
		if digitsAt() == 0 {
			return nil, p.fail("want a digit after '.' in a number")
		}
		frac = string(p.b[at:p.i])
	}
	exp := int64(0)
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		expNeg := false
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			expNeg = p.b[p.i] == '-'
			p.i++
		}
		at := p.i
		if digitsAt() == 0 {
			return nil, p.fail("want a digit in a number's exponent")
		}
		for _, d := range p.b[at:p.i] {
			if exp = exp*10 + int64(d-'0'); exp > maxExponent {
				return nil, &syntaxError{offset: start, msg: "number's exponent out of range"}
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	return canonicalNumber(neg, intPart+frac, exp-int64(len(frac))), nil
}

// canonicalNumber writes ±digits×10^exp with no leading or trailing zero
// digits: plainly up to 21 integer digits or 6 leading fraction zeros
// (as JavaScript prints numbers), else as d.ddde±N. Which form is used
// depends only on the value, and each form tells its digits and exponent
// back, so equal values get one text and different values different ones.
func canonicalNumber(neg bool, digits string, exp int64) number {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = trimmed
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	n := int64(len(digits))
	point := n + exp // digits before the decimal point
	switch {
	case exp >= 0 && point <= 21:
		sb.WriteString(digits)
		sb.WriteString(strings.Repeat("0", int(exp)))
	case exp < 0 && point > 0:
		sb.WriteString(digits[:point])
		sb.WriteByte('.')
		sb.WriteString(digits[point:])
	case exp < 0 && point > -6:
		sb.WriteString("0.")
		sb.WriteString(strings.Repeat("0", int(-point)))
		sb.WriteString(digits)
	default:
		sb.WriteString(digits[:1])
		if n > 1 {
			sb.WriteByte('.')
			sb.WriteString(digits[1:])
		}
		sb.WriteByte('e')
		if point-1 >= 0 {
			sb.WriteByte('+')
		}
		sb.WriteString(strconv.FormatInt(point-1, 10))
	}
	return number(sb.String())
}

// canonical appends v's canonical JSON to b.
func canonical(b []byte, v any) []byte {
	return encode(b, v, false, escapeCanonical, "")
}

// pretty appends v as the pin file writes it: indented by two spaces, keys
// in byte order, and, beyond the canonical escapes, every character that
// is not graphic (format characters such as U+202E or U+200B, line
// separators, unassigned code points) escaped, so that a review of the
// file sees what a terminal would hide. Parsing it gives v back.
func pretty(b []byte, v any) []byte {
	return encode(b, v, true, escapeHidden, "")
}

// How much a string escapes beyond '"', '\\' and U+0000 to U+001F.
type escaping int

const (
	escapeCanonical escaping = iota // nothing more
	escapeHidden                    // what is not graphic
	escapeASCII                     // all but printable ASCII
)

// encode appends v; when indented, ind is the indentation of v's line.
func encode(b []byte, v any, indented bool, esc escaping, ind string) []byte {
	newline := func(b []byte, ind string) []byte {
		if !indented {
			return b
		}
		return append(append(b, '\n'), ind...)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case number:
		return append(b, v...)
	case string:
		return quote(b, v, esc)
	case []any:
		if len(v) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, ind+"  ")
			b = encode(b, e, indented, esc, ind+"  ")
		}
		return append(newline(b, ind), ']')
	case map[string]any:
		if len(v) == 0 {
			return append(b, "{}"...)
		}
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(v)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, ind+"  ")
			b = quote(b, k, esc)
			b = append(b, ':')
			if indented {
				b = append(b, ' ')
			}
			b = encode(b, v[k], indented, esc, ind+"  ")
		}
		return append(newline(b, ind), '}')
	}
	panic(fmt.Sprintf("pin: cannot encode %T", v))
}

// quote appends s as a JSON string, escaped as esc says.
func quote(b []byte, s string, esc escaping) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20,
			esc == escapeHidden && !unicode.IsGraphic(r),
			esc == escapeASCII && r >= 0x7f:
			b = appendUEscape(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// appendUEscape appends r as \uXXXX, or a surrogate pair of them.
func appendUEscape(b []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Appendf(b, "\\u%04x\\u%04x", hi, lo)
	}
	return fmt.Appendf(b, "\\u%04x", r)
}
