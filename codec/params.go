package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf16"
)

// This file decodes the params a server acts on (tools/call, tools/list)
// and holds the rules a receiver applies before it acts:
//   - a request's _meta.progressToken is a string or an integer (the schemas'
//     ProgressToken in every revision: JSONRPCRequest until 2025-06-18,
//     RequestParams from 2025-11-25), because a server echoes it in
//     notifications/progress, whose schema allows nothing else;
//   - a tools/call request's params hold no lone surrogate escape ("\ud800"
//     not followed by a low surrogate, or a low one alone). RFC 8259's
//     grammar admits them (so DecodeFrame, a framing check, lets them
//     through and mcp-frame passes them on byte for byte), but they encode
//     no Unicode character: decoding one into a string (Go, and most JSON
//     libraries) silently turns it into U+FFFD, so a tool would act on a
//     name the client never sent (fs_write creating "x\uFFFDy" for
//     "x\ud800y"). I-JSON (RFC 7493 §2.1) forbids them; a server refuses them
//     before any tool sees the arguments, never alters them;
//   - json errors never reach a peer in Go's words ("cannot unmarshal number
//     into Go struct field CallToolParams.name of type string"), but as the
//     member and the JSON types: "params.name: expected a string, got a
//     number".

// progressTokenProblem returns why raw is not a valid progress token, or "".
// An integer is what JSON Schema calls one: 1 and 1.0, not 1.5.
func progressTokenProblem(raw json.RawMessage) string {
	k := kindOf(raw)
	if k&kID != 0 {
		return ""
	}
	got := jsonKind(bytes.TrimSpace(raw))
	if k == kNumber {
		got = "the fractional number " + clipRaw(bytes.TrimSpace(raw))
	}
	return fmt.Sprintf("params._meta.%s must be a string or an integer, not %s", MetaProgressToken, got)
}

// UnmarshalJSON decodes tools/call params and applies the receiver's rules
// (see the top of params.go): a progress token that is a string or an
// integer, no lone surrogate escape anywhere in the params, and errors that
// name the member and the JSON types expected, e.g. "params.name: expected
// a string, got a number". Member names match exactly (encoding/json would
// take "Name" for "name"; no MCP peer sends it, and a checker upstream would
// not see it as the name).
func (p *CallToolParams) UnmarshalJSON(b []byte) error {
	// encoding/json has checked b before calling: split it without a second
	// validating pass (a server does this for every call).
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil // as encoding/json does for a struct
	}
	m, ok := scanMembers(b)
	if !ok {
		return fmt.Errorf("params: expected an object, got %s", jsonKind(b))
	}
	var q CallToolParams
	if raw, ok := m["name"]; ok && string(raw) != "null" {
		if q.Name, ok = stringValue(raw); !ok {
			return fmt.Errorf("params.name: expected a string, got %s", jsonKind(raw))
		}
	}
	if raw, ok := m["arguments"]; ok {
		q.Arguments = bytes.Clone(raw)
	}
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		meta, ok := scanMembers(raw)
		if !ok {
			return fmt.Errorf("params._meta: expected an object, got %s", jsonKind(raw))
		}
		q.Meta = make(map[string]json.RawMessage, len(meta))
		for k, v := range meta {
			q.Meta[k] = bytes.Clone(v)
		}
	}
	if t, ok := q.Meta[MetaProgressToken]; ok && string(t) != "null" {
		if e := progressTokenProblem(t); e != "" {
			return errors.New(e)
		}
	}
	if err := CheckUnicodeEscapes(b, "params"); err != nil {
		return err
	}
	*p = q
	return nil
}

// UnmarshalJSON decodes tools/list params; errors name the member and the
// JSON types expected, e.g. "params.cursor: expected a string, got a
// number".
func (p *ListToolsParams) UnmarshalJSON(b []byte) error {
	type plain ListToolsParams
	var q plain
	if err := json.Unmarshal(b, &q); err != nil {
		return paramsError(err)
	}
	*p = ListToolsParams(q)
	return nil
}

// paramsError rewrites a json error about params in JSON's words.
func paramsError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := "params"
		if te.Field != "" {
			path += "." + te.Field
		}
		return fmt.Errorf("%s: expected %s, got %s", path, jsonTypeOf(te.Type), gotValue(te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("params: not valid JSON: %s at offset %d", se.Error(), se.Offset)
	}
	return fmt.Errorf("params: %s", err.Error())
}

// jsonTypeOf names the JSON type a Go type decodes from.
func jsonTypeOf(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "another type"
}

// gotValue turns UnmarshalTypeError.Value ("number", "string", "number
// 1.5", "bool", "array", "object") into words.
func gotValue(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case v == "array", v == "object":
		return "an " + v
	case v == "string", v == "number":
		return "a " + v
	case len(v) > 7 && v[:7] == "number ":
		return "the number " + v[7:] // out of range for the type
	}
	return v
}

// CheckUnicodeEscapes reports the first string (a member name or a value)
// in the JSON value raw holding a lone surrogate escape: a \uD800–\uDBFF not
// followed by a \uDC00–\uDFFF escape, or a \uDC00–\uDFFF not preceded by one.
// Such a string encodes no Unicode text (see the top of params.go). The
// error names the member by its path under name, e.g. `params.arguments.path:
// lone surrogate \ud800 (not a Unicode character; send the character itself
// or a valid surrogate pair)`. raw must be valid JSON (DecodeFrame's).
func CheckUnicodeEscapes(raw []byte, name string) error {
	if !hasSurrogateEscape(raw) {
		return nil // the common case: one pass of IndexByte
	}
	var bad string
	var walk func(v []byte, path string) bool
	walk = func(v []byte, path string) bool {
		v = bytes.TrimSpace(v)
		if len(v) == 0 {
			return false
		}
		switch v[0] {
		case '"':
			if esc, ok := loneSurrogate(v); ok {
				bad = fmt.Sprintf("%s: lone surrogate %s (not a Unicode character; send the character itself or a valid surrogate pair)", path, esc)
				return true
			}
		case '{':
			s := scanner{b: v, trusted: true}
			found := false
			s.object(0, 1, func(key []byte, start, end int) {
				if found {
					return
				}
				k, _ := stringValue(key)
				if esc, ok := loneSurrogate(key); ok {
					bad = fmt.Sprintf("%s: member name %s holds a lone surrogate %s (not a Unicode character)", path, clipRaw(key), esc)
					found = true
					return
				}
				found = walk(v[start:end], path+"."+k)
			})
			return found
		case '[':
			elems, _ := scanElements(v)
			for i, e := range elems {
				if walk(e, path+"["+strconv.Itoa(i)+"]") {
					return true
				}
			}
		}
		return false
	}
	if walk(raw, name) {
		return errors.New(bad)
	}
	return nil
}

// hasSurrogateEscape tells whether raw holds any \uD800–\uDFFF escape.
func hasSurrogateEscape(raw []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return false
		}
		i += j
		if i+2 < len(raw) && raw[i+1] == 'u' && (raw[i+2] == 'd' || raw[i+2] == 'D') &&
			i+3 < len(raw) && hexVal(raw[i+3]) >= 8 {
			return true
		}
		if i+1 < len(raw) && raw[i+1] == '\\' {
			i += 2 // an escaped backslash: the next one starts afresh
			continue
		}
		i++
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// loneSurrogate returns the first lone surrogate escape in the JSON string
// token tok, as written.
func loneSurrogate(tok []byte) (string, bool) {
	esc := func(i int) (rune, bool) {
		if i+6 > len(tok) || tok[i] != '\\' || tok[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(tok[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 1; i < len(tok)-1; i++ {
		if tok[i] != '\\' {
			continue
		}
		r, ok := esc(i)
		if !ok {
			i++ // a two-byte escape such as \\ or \"
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if r2, ok := esc(i + 6); ok && utf16.DecodeRune(r, r2) != 0xFFFD {
				i += 11
				continue
			}
			return string(tok[i : i+6]), true
		case r >= 0xDC00 && r <= 0xDFFF:
			return string(tok[i : i+6]), true
		}
		i += 5
	}
	return "", false
}
