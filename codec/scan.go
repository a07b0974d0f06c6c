package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A small validating JSON scanner. DecodeFrame only needs the extent of each
// top-level member; encoding/json would scan a frame twice (checkValid, then
// skip) and not check UTF-8, so this single pass does both. FuzzScanJSON
// checks it against json.Valid && utf8.Valid.

// jsMaxDepth matches encoding/json's nesting limit.
const jsMaxDepth = 10000

type jsSyntaxError struct {
	msg string
	off int
}

func (e *jsSyntaxError) Error() string { return fmt.Sprintf("%s at offset %d", e.msg, e.off) }

func jsErrAt(b []byte, i int, what string) *jsSyntaxError {
	if i >= len(b) {
		return &jsSyntaxError{"unexpected end of JSON input", i}
	}
	return &jsSyntaxError{fmt.Sprintf("invalid character %q %s", b[i], what), i}
}

func jsSkipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// jsValid reports whether b is exactly one JSON value (white space around
// allowed) in valid UTF-8.
func jsValid(b []byte) error {
	i := jsSkipWS(b, 0)
	end, err := jsValue(b, i, 0)
	if err != nil {
		return err
	}
	if j := jsSkipWS(b, end); j != len(b) {
		return jsErrAt(b, j, "after top-level value")
	}
	return nil
}

// jsValue checks the value starting at b[i] and returns the index just past it.
func jsValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, jsErrAt(b, i, "")
	}
	switch c := b[i]; {
	case c == '"':
		return jsString(b, i)
	case c == '{':
		return jsObject(b, i, depth+1)
	case c == '[':
		return jsArray(b, i, depth+1)
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

func jsLiteral(b []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return i + k, jsErrAt(b, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

func jsObject(b []byte, i, depth int) (int, error) {
	if depth > jsMaxDepth {
		return i, &jsSyntaxError{"exceeded max depth", i}
	}
	i = jsSkipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, jsErrAt(b, i, "looking for beginning of object key string")
		}
		end, err := jsString(b, i)
		if err != nil {
			return end, err
		}
		i = jsSkipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, jsErrAt(b, i, "after object key")
		}
		i = jsSkipWS(b, i+1)
		if i, err = jsValue(b, i, depth); err != nil {
			return i, err
		}
		i = jsSkipWS(b, i)
		if i >= len(b) {
			return i, jsErrAt(b, i, "")
		}
		switch b[i] {
		case ',':
			i = jsSkipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, jsErrAt(b, i, "after object key:value pair")
		}
	}
}

func jsArray(b []byte, i, depth int) (int, error) {
	if depth > jsMaxDepth {
		return i, &jsSyntaxError{"exceeded max depth", i}
	}
	i = jsSkipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = jsValue(b, i, depth); err != nil {
			return i, err
		}
		i = jsSkipWS(b, i)
		if i >= len(b) {
			return i, jsErrAt(b, i, "")
		}
		switch b[i] {
		case ',':
			i = jsSkipWS(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, jsErrAt(b, i, "after array element")
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

// jsString checks the string starting at b[i] == '"'.
func jsString(b []byte, i int) (int, error) {
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
				return i, &jsSyntaxError{"invalid UTF-8", i}
			}
			i += size
		}
	}
	return i, jsErrAt(b, i, "")
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

// envelope holds the raw values of the JSON-RPC members of an object; nil
// means absent (a present value is never empty). Other members are skipped.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
}

func (e *envelope) set(key string, v []byte) {
	switch key {
	case "jsonrpc":
		e.jsonrpc = v
	case "id":
		e.id = v
	case "method":
		e.method = v
	case "params":
		e.params = v
	case "result":
		e.result = v
	case "error":
		e.error = v
	}
}

// jsTop scans b, which must hold one JSON value with optional white space
// around it, in one pass. For an object it fills env with the JSON-RPC
// members (the last of duplicate keys wins, as in encoding/json); for an
// array, it returns the elements. isObj/isArr say which; other values are
// only checked.
func jsTop(b []byte, env *envelope) (elems [][]byte, isObj, isArr bool, err error) {
	i := jsSkipWS(b, 0)
	if i >= len(b) {
		return nil, false, false, jsErrAt(b, i, "")
	}
	switch b[i] {
	case '{':
		isObj = true
		i = jsSkipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			i++
			break
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return nil, true, false, jsErrAt(b, i, "looking for beginning of object key string")
			}
			kend, err := jsString(b, i)
			if err != nil {
				return nil, true, false, err
			}
			key := b[i:kend]
			i = jsSkipWS(b, kend)
			if i >= len(b) || b[i] != ':' {
				return nil, true, false, jsErrAt(b, i, "after object key")
			}
			i = jsSkipWS(b, i+1)
			vstart := i
			if i, err = jsValue(b, i, 1); err != nil {
				return nil, true, false, err
			}
			if bytes.IndexByte(key, '\\') < 0 {
				env.set(string(key[1:len(key)-1]), b[vstart:i]) // no allocation
			} else {
				env.set(jsKey(key), b[vstart:i])
			}
			i = jsSkipWS(b, i)
			if i >= len(b) {
				return nil, true, false, jsErrAt(b, i, "")
			}
			if b[i] == ',' {
				i = jsSkipWS(b, i+1)
				continue
			}
			if b[i] != '}' {
				return nil, true, false, jsErrAt(b, i, "after object key:value pair")
			}
			i++
			break
		}
	case '[':
		isArr = true
		elems = [][]byte{}
		i = jsSkipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			i++
			break
		}
		for {
			start := i
			if i, err = jsValue(b, i, 1); err != nil {
				return nil, false, true, err
			}
			elems = append(elems, b[start:i])
			i = jsSkipWS(b, i)
			if i >= len(b) {
				return nil, false, true, jsErrAt(b, i, "")
			}
			if b[i] == ',' {
				i = jsSkipWS(b, i+1)
				continue
			}
			if b[i] != ']' {
				return nil, false, true, jsErrAt(b, i, "after array element")
			}
			i++
			break
		}
	default:
		if i, err = jsValue(b, i, 0); err != nil {
			return nil, false, false, err
		}
	}
	if j := jsSkipWS(b, i); j != len(b) {
		return nil, isObj, isArr, jsErrAt(b, j, "after top-level value")
	}
	return elems, isObj, isArr, nil
}

// jsKey returns the text of a scanned (valid) string token.
func jsKey(tok []byte) string {
	inner := tok[1 : len(tok)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(tok, &s)
			return s
		}
	}
	return string(inner)
}
