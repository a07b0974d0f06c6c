package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The package's one JSON scanner. It walks a value once and, on the way,
// hands out the raw members of an object or elements of an array:
//   - DecodeFrame validates a frame with it, UTF-8 included (encoding/json
//     accepts invalid UTF-8 and replaces it), and takes the JSON-RPC members
//     from the same pass (jsTop); encoding/json would scan twice;
//   - compaction learns from it whether a value has any white space to
//     remove (compactInto);
//   - the MCP checks split objects and arrays with it (scanMembers,
//     scanElements) in trusted mode: they walk values DecodeFrame has
//     already validated, so strings are skipped to their closing quote with
//     bytes.IndexByte (vectorised) instead of being checked byte by byte,
//     which on a large tool result is most of the work. On invalid input the
//     trusted mode still never panics or reads out of bounds; it may then
//     accept what the validating mode refuses.
//
// FuzzScanJSON holds the validating mode to json.Valid && utf8.Valid (and
// compactInto to json.Compact); FuzzScanMembers and FuzzScanElements hold
// both modes to encoding/json's split of objects and arrays.

// jsMaxDepth matches encoding/json's nesting limit.
const jsMaxDepth = 10000

type scanner struct {
	b       []byte
	trusted bool // b is known to be valid JSON: do not check strings
	// wsEnd is the index just past the last run of white space skipped
	// (outside strings), 0 if none: a value b[i:j] has white space in it
	// exactly when wsEnd > i once it is scanned.
	wsEnd int

	// dups makes object look for a member name that appears twice in one
	// object, at any depth (DecodeFrame's pass; see findDup). dup is then
	// non-empty: the path of the first one when track is set too (jsTop
	// scans again with track only when there is a duplicate, so the common
	// case does not pay for paths).
	dups  bool
	track bool
	dup   string
	keys  [][]byte   // member names of the objects being scanned, innermost last, unescaped
	path  []pathElem // where the scan is, when track
}

// keysPool holds scanner.keys stacks for jsTop, which runs once per frame.
var keysPool = sync.Pool{New: func() any { k := make([][]byte, 0, 64); return &k }}

// pathElem is one step of scanner.path: a member name or an array index.
type pathElem struct {
	name []byte
	idx  int
}

// dupLinearMax is how many names an object may have before findDup keeps
// them in a map rather than comparing each new one with all the others.
const dupLinearMax = 16

// findDup records name as the next member of the object whose names start
// at s.keys[base], and a duplicate in s.dup. seen is that object's map of
// names once it has more than dupLinearMax.
func (s *scanner) findDup(base int, name []byte, seen *map[string]struct{}) {
	names := s.keys[base:]
	dup := false
	switch {
	case *seen != nil:
		_, dup = (*seen)[string(name)]
		(*seen)[string(name)] = struct{}{}
	case len(names) >= dupLinearMax:
		m := make(map[string]struct{}, 2*len(names))
		for _, n := range names {
			m[string(n)] = struct{}{}
		}
		_, dup = m[string(name)]
		m[string(name)] = struct{}{}
		*seen = m
	default:
		for _, n := range names {
			if bytes.Equal(n, name) {
				dup = true
				break
			}
		}
	}
	s.keys = append(s.keys, name)
	if dup && s.dup == "" && !s.track {
		s.dup = "?"
	} else if dup && s.dup == "" {
		var b strings.Builder
		for _, p := range s.path {
			if p.name == nil {
				b.WriteString("[" + strconv.Itoa(p.idx) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(p.name)
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(name)
		s.dup = b.String()
	}
}

type jsSyntaxError struct {
	msg   string
	off   int
	depth bool // the nesting limit, not bad JSON
}

func (e *jsSyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func jsErrAt(b []byte, i int, what string) *jsSyntaxError {
	if i >= len(b) {
		return &jsSyntaxError{msg: "unexpected end of JSON input", off: i}
	}
	return &jsSyntaxError{msg: fmt.Sprintf("invalid character %q %s", b[i], what), off: i}
}

// ws returns the index of the first byte at or after i that is not white
// space.
func (s *scanner) ws(i int) int {
	j := i
	for j < len(s.b) {
		switch s.b[j] {
		case ' ', '\t', '\n', '\r':
			j++
			continue
		}
		break
	}
	if j != i {
		s.wsEnd = j
	}
	return j
}

// whole checks that b is exactly one JSON value, white space around allowed.
func (s *scanner) whole() error {
	end, err := s.value(s.ws(0), 0)
	if err != nil {
		return err
	}
	if j := s.ws(end); j != len(s.b) {
		return jsErrAt(s.b, j, "after top-level value")
	}
	return nil
}

// value scans the value starting at b[i], inside depth containers, and
// returns the index just past it.
func (s *scanner) value(i, depth int) (int, error) {
	b := s.b
	if i >= len(b) {
		return i, jsErrAt(b, i, "")
	}
	switch c := b[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i, depth+1, nil)
	case c == '[':
		return s.array(i, depth+1, nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return jsNumber(b, i)
	case c == 't':
		return jsLiteral(b, i, "true")
	case c == 'f':
		return jsLiteral(b, i, "false")
	case c == 'n':
		return jsLiteral(b, i, "null")
	}
	return i, jsErrAt(b, i, "looking for beginning of value")
}

// object scans the object starting at b[i] == '{', the depth-th container
// from the top, and calls member (unless nil) with each key token (quotes
// included) and the extent of its value, b[start:end], in order.
func (s *scanner) object(i, depth int, member func(key []byte, start, end int)) (int, error) {
	b := s.b
	if depth > jsMaxDepth {
		return i, &jsSyntaxError{msg: "exceeded max depth", off: i, depth: true}
	}
	i = s.ws(i + 1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	base := len(s.keys)
	var seen map[string]struct{}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, jsErrAt(b, i, "looking for beginning of object key string")
		}
		kend, err := s.str(i)
		if err != nil {
			return kend, err
		}
		key := b[i:kend]
		i = s.ws(kend)
		if i >= len(b) || b[i] != ':' {
			return i, jsErrAt(b, i, "after object key")
		}
		i = s.ws(i + 1)
		vstart := i
		if s.dups {
			name := key[1 : len(key)-1]
			if bytes.IndexByte(name, '\\') >= 0 {
				v, _ := stringValue(key)
				name = []byte(v)
			}
			s.findDup(base, name, &seen)
			if s.track {
				s.path = append(s.path, pathElem{name: name})
			}
		}
		if i, err = s.value(i, depth); err != nil {
			return i, err
		}
		if s.track {
			s.path = s.path[:len(s.path)-1]
		}
		if member != nil {
			member(key, vstart, i)
		}
		var done bool
		if i, done, err = s.next(i, '}', "after object key:value pair"); done || err != nil {
			if s.dups {
				s.keys = s.keys[:base]
			}
			return i, err
		}
	}
}

// next scans what follows a member or an element: a comma and the white
// space after it (the index of the next one), or the closing byte (the
// index past it, and done).
func (s *scanner) next(i int, closer byte, what string) (next int, done bool, err error) {
	i = s.ws(i)
	switch {
	case i >= len(s.b):
		return i, false, jsErrAt(s.b, i, "")
	case s.b[i] == ',':
		return s.ws(i + 1), false, nil
	case s.b[i] == closer:
		return i + 1, true, nil
	}
	return i, false, jsErrAt(s.b, i, what)
}

// array scans the array starting at b[i] == '[', the depth-th container
// from the top, and calls elem (unless nil) with each element, in order.
func (s *scanner) array(i, depth int, elem func(val []byte)) (int, error) {
	b := s.b
	if depth > jsMaxDepth {
		return i, &jsSyntaxError{msg: "exceeded max depth", off: i, depth: true}
	}
	i = s.ws(i + 1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		start := i
		var err error
		if s.track {
			s.path = append(s.path, pathElem{idx: n})
		}
		if i, err = s.value(i, depth); err != nil {
			return i, err
		}
		if s.track {
			s.path = s.path[:len(s.path)-1]
		}
		if elem != nil {
			elem(b[start:i])
		}
		var done bool
		if i, done, err = s.next(i, ']', "after array element"); done || err != nil {
			return i, err
		}
	}
}

// jsPlain marks the bytes a string holds as themselves: printable ASCII
// except '"' and '\\'.
var jsPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func jsIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str scans the string starting at b[i] == '"'.
func (s *scanner) str(i int) (int, error) {
	b := s.b
	if s.trusted {
		// The closing quote is the first one not escaped: find quotes with
		// IndexByte and count the backslashes before each (the opening
		// quote stops the count).
		for start := i; ; {
			j := bytes.IndexByte(b[i+1:], '"')
			if j < 0 {
				return len(b), jsErrAt(b, len(b), "")
			}
			i += 1 + j
			n := 0
			for k := i - 1; k > start && b[k] == '\\'; k-- {
				n++
			}
			if n%2 == 0 {
				return i + 1, nil
			}
		}
	}
	i++
	for i < len(b) {
		// Fast path: the run of plain ASCII that makes up most text.
		for i < len(b) && jsPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return i + 1, jsErrAt(b, i+1, "")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(b) || !jsIsHex(b[i+k]) {
						return i + k, jsErrAt(b, i+k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, jsErrAt(b, i+1, "in string escape code")
			}
		case c < 0x20:
			return i, jsErrAt(b, i, "in string literal")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, &jsSyntaxError{msg: "invalid UTF-8", off: i}
			}
			i += size
		}
	}
	return i, jsErrAt(b, i, "")
}

func jsLiteral(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return i + k, jsErrAt(b, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

func jsNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, jsErrAt(b, i, "in numeric literal")
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, jsErrAt(b, i, "in numeric literal")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, jsErrAt(b, i, "after decimal point in numeric literal")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, jsErrAt(b, i, "in exponent of numeric literal")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, nil
}

// jsValid reports whether b is exactly one JSON value (white space around
// allowed) in valid UTF-8.
func jsValid(b []byte) error {
	s := scanner{b: b}
	return s.whole()
}

// jsValidString reports whether b is exactly one JSON string token in valid
// UTF-8.
func jsValidString(b []byte) bool {
	if len(b) == 0 || b[0] != '"' {
		return false
	}
	s := scanner{b: b}
	end, err := s.str(0)
	return err == nil && end == len(b)
}

// compactInto appends raw to b without insignificant white space, after
// checking that it is one JSON value in valid UTF-8. A value without white
// space outside its strings (what Marshal writes, and what most peers send)
// is copied as it is: json.Compact would scan it a second time, byte by byte
// through a state machine, to change nothing, and that was most of
// mcp-frame's time. Member order and every byte of every string and number
// (ids included) stay as they were.
func compactInto(b *bytes.Buffer, raw []byte) error {
	s := scanner{b: raw}
	if err := s.whole(); err != nil {
		return err
	}
	if s.wsEnd == 0 {
		b.Write(raw)
		return nil
	}
	return json.Compact(b, raw)
}

// envelope holds the raw values of the JSON-RPC members of an object; nil
// means absent (a present value is never empty). Other members are skipped.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
	// paramsCompact and resultCompact: that value has no white space
	// outside its strings.
	paramsCompact, resultCompact bool
}

func (e *envelope) set(key string, v []byte, compact bool) {
	switch key {
	case "jsonrpc":
		e.jsonrpc = v
	case "id":
		e.id = v
	case "method":
		e.method = v
	case "params":
		e.params, e.paramsCompact = v, compact
	case "result":
		e.result, e.resultCompact = v, compact
	case "error":
		e.error = v
	}
}

// jsTop validates b, which must hold one JSON value with optional white
// space around it, in one pass. For an object it fills env with the JSON-RPC
// members (the last of duplicate keys wins, as in encoding/json); for an
// array, it returns the elements. isObj/isArr say which; other values are
// only checked. dup is the path of the first member name that appears twice
// in one object, at any depth ("id", "params.name", "[1].id" in a batch), ""
// if none.
func jsTop(b []byte, env *envelope) (elems [][]byte, isObj, isArr bool, dup string, err error) {
	s := scanner{b: b, dups: true}
	kp := keysPool.Get().(*[][]byte)
	s.keys = (*kp)[:0]
	defer func() {
		clear(s.keys[:cap(s.keys)]) // no frame kept alive by the pool
		*kp = s.keys[:0]
		keysPool.Put(kp)
	}()
	i := s.ws(0)
	if i >= len(b) {
		return nil, false, false, "", jsErrAt(b, i, "")
	}
	var end int
	switch b[i] {
	case '{':
		isObj = true
		end, err = s.object(i, 1, func(key []byte, start, end int) {
			compact := s.wsEnd <= start
			if bytes.IndexByte(key, '\\') < 0 {
				env.set(string(key[1:len(key)-1]), b[start:end], compact) // no allocation
			} else {
				k, _ := stringValue(key)
				env.set(k, b[start:end], compact)
			}
		})
	case '[':
		isArr = true
		elems = [][]byte{}
		end, err = s.array(i, 1, func(val []byte) { elems = append(elems, val) })
	default:
		end, err = s.value(i, 0)
	}
	if err == nil {
		if j := s.ws(end); j != len(b) {
			err = jsErrAt(b, j, "after top-level value")
		}
	}
	if err != nil {
		return nil, isObj, isArr, "", err
	}
	if s.dup != "" {
		again := scanner{b: b, dups: true, track: true}
		_ = again.whole()
		return elems, isObj, isArr, again.dup, nil
	}
	return elems, isObj, isArr, "", nil
}

// scanMembers splits a JSON object that DecodeFrame has validated into its
// members (trusted mode; see the top of this file). ok is false for anything
// but one object.
func scanMembers(raw []byte) (map[string]json.RawMessage, bool) {
	s := scanner{b: raw, trusted: true}
	i := s.ws(0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	ok := true
	end, err := s.object(i, 1, func(key []byte, start, end int) {
		k, kok := stringValue(key)
		ok = ok && kok
		m[k] = raw[start:end]
	})
	if err != nil || !ok || s.ws(end) != len(raw) {
		return nil, false
	}
	return m, true
}

// Members splits a JSON object into its members without a second
// validating pass: raw must come from a frame DecodeFrame accepted (a
// Message's Params or Result, or a value in one), which is valid JSON. ok
// is false for anything but one object. Given invalid JSON it never
// panics, but may accept what a validating decoder refuses. A name given
// twice keeps its last value, as encoding/json does. The values share
// raw's memory.
func Members(raw json.RawMessage) (members map[string]json.RawMessage, ok bool) {
	return scanMembers(raw)
}

// scanElements splits a JSON array that DecodeFrame has validated into its
// elements (trusted mode). ok is false for anything but one array.
func scanElements(raw []byte) ([]json.RawMessage, bool) {
	s := scanner{b: raw, trusted: true}
	i := s.ws(0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	var out []json.RawMessage
	end, err := s.array(i, 1, func(val []byte) { out = append(out, val) })
	if err != nil || s.ws(end) != len(raw) {
		return nil, false
	}
	return out, true
}

// StringValue decodes a JSON string, as a member Members split off; ok is
// false for anything but a string.
func StringValue(raw json.RawMessage) (string, bool) { return stringValue(raw) }

// stringValue decodes a JSON string token (white space around allowed).
func stringValue(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
