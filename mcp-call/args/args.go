// Package args turns command-line words into the arguments object of a
// tools/call request, coerced by the tool's inputSchema and checked against it
// before anything is sent.
//
// The words are either one JSON object (`'{"path":"a.txt","n":3}'`) or pairs:
//
//	key=value   the value is coerced by the schema of property key:
//	            a property whose type is only "string", or that the schema
//	            does not describe, gets the value as a string; a property
//	            typed integer, number, boolean, null, array or object gets
//	            the value parsed as JSON text when it parses to one of the
//	            allowed types, and the string otherwise (so `n=abc` for an
//	            integer reaches the validator, which names the field).
//	key:=json   the value is raw JSON, used as is (`tags:='["a","b"]'`).
//
// A schema type is read from "type" (a string or a list), from "enum" and
// "const" values, from the members of "anyOf", "oneOf" and "allOf", and
// through local "$ref"s ("#/$defs/X", "#/definitions/X"). When the allowed
// types include "string" and another type, a value that parses as JSON of
// that other type takes it (`x=null` is null for ["string","null"]); write
// `x:='"null"'` for the string.
//
// Build refuses a word that is neither form, an empty or repeated key, a
// JSON object word mixed with pairs, and arguments the inputSchema rejects;
// the error then carries the schema validator's words (`argument "n": got
// string, want integer`, `missing required argument "path"`). A schema that
// does not compile is not used for checking: the server owns its schema.
//
// The package does no I/O and is safe for concurrent use.
package args

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// Error is a problem with the words or with the arguments they make.
type Error struct {
	Msg string
	// Validation is the schema validator's error when the arguments were
	// refused by the inputSchema; nil for a malformed word.
	Validation error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the validation error, if any.
func (e *Error) Unwrap() error { return e.Validation }

// jsonExample shows how to pass a JSON object as one word, in a shell or a
// script line alike.
const jsonExample = `TOOL '{"path": "a b.txt", "n": 3}'`

func errorf(format string, a ...any) *Error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// Build returns the arguments object for words, checked against inputSchema
// (raw JSON; empty means no schema). No words make "{}".
func Build(words []string, inputSchema json.RawMessage) (json.RawMessage, error) {
	obj, err := coerce(words, inputSchema)
	if err != nil {
		return nil, err
	}
	if err := Check(obj, inputSchema); err != nil {
		return nil, err
	}
	return obj, nil
}

// Check validates an arguments object against inputSchema. It returns nil
// when the schema is empty or does not compile.
func Check(arguments, inputSchema json.RawMessage) error {
	if len(bytes.TrimSpace(inputSchema)) == 0 || string(bytes.TrimSpace(inputSchema)) == "null" {
		return nil
	}
	s, err := codec.CompileSchema(inputSchema)
	if err != nil {
		return nil
	}
	if err := s.Validate(arguments); err != nil {
		return &Error{Msg: err.Error(), Validation: err}
	}
	return nil
}

func coerce(words []string, inputSchema json.RawMessage) (json.RawMessage, error) {
	if len(words) == 0 {
		return json.RawMessage("{}"), nil
	}
	if t := strings.TrimSpace(words[0]); strings.HasPrefix(t, "{") {
		if len(words) > 1 {
			return nil, errorf("arguments %q: give either one JSON object or key=value pairs, not both; a JSON object must be one word, so quote it whole: %s", strings.Join(words, " "), jsonExample)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(t), &m); err != nil || m == nil {
			return nil, errorf("arguments %q are not a JSON object: %s; quote the object whole so its own quotes survive: %s", t, jsonErr(err), jsonExample)
		}
		return codec.Marshal(m)
	}
	sch := newSchema(inputSchema)
	out := map[string]json.RawMessage{}
	for _, w := range words {
		key, val, raw, ok := split(w)
		if !ok {
			return nil, errorf("argument %q: want key=value, key:=json or one JSON object (%s)", w, jsonExample)
		}
		if key == "" {
			return nil, errorf("argument %q: empty key", w)
		}
		if _, dup := out[key]; dup {
			return nil, errorf("argument %q given twice", key)
		}
		if raw {
			var v any
			if err := json.Unmarshal([]byte(val), &v); err != nil {
				return nil, errorf("argument %q: value after := is not JSON: %s", key, jsonErr(err))
			}
			b, err := codec.Marshal(json.RawMessage(val))
			if err != nil {
				return nil, errorf("argument %q: %v", key, err)
			}
			out[key] = b
			continue
		}
		out[key] = coerceValue(val, sch.types(key))
	}
	return codec.Marshal(out)
}

// split cuts a word at its first '='; ":=" marks raw JSON.
func split(w string) (key, val string, raw, ok bool) {
	i := strings.IndexByte(w, '=')
	if i < 0 {
		return "", "", false, false
	}
	key, val = w[:i], w[i+1:]
	if strings.HasSuffix(key, ":") {
		return key[:len(key)-1], val, true, true
	}
	return key, val, false, true
}

// coerceValue applies the rule of the package doc to one key=value value.
func coerceValue(val string, types []string) json.RawMessage {
	str, _ := codec.Marshal(val)
	if len(types) == 0 || (len(types) == 1 && types[0] == "string") {
		return str
	}
	var v any
	if err := json.Unmarshal([]byte(val), &v); err != nil {
		return str
	}
	if slices.Contains(types, jsonType(v)) || (jsonType(v) == "integer" && slices.Contains(types, "number")) {
		b, err := codec.Marshal(json.RawMessage(strings.TrimSpace(val)))
		if err == nil {
			return b
		}
	}
	return str
}

// jsonType names the JSON Schema type of a decoded value; a number with no
// fraction is "integer".
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func jsonErr(err error) string {
	if err == nil {
		return "not an object"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", se, se.Offset)
	}
	return err.Error()
}

// schema is a decoded inputSchema, read only for property types.
type schema struct {
	root  map[string]any
	props map[string]any
}

func newSchema(raw json.RawMessage) *schema {
	s := &schema{}
	if err := json.Unmarshal(raw, &s.root); err != nil {
		return s
	}
	if p, ok := s.root["properties"].(map[string]any); ok {
		s.props = p
	}
	return s
}

// types lists the JSON types property key allows; nil when unknown.
func (s *schema) types(key string) []string {
	p, ok := s.props[key]
	if !ok {
		return nil
	}
	var out []string
	s.collect(p, &out, 0)
	slices.Sort(out)
	return slices.Compact(out)
}

// collect gathers types from a subschema, following local $refs and the
// applicators; depth guards $ref cycles.
func (s *schema) collect(node any, out *[]string, depth int) {
	m, ok := node.(map[string]any)
	if !ok || depth > 16 {
		return
	}
	switch t := m["type"].(type) {
	case string:
		*out = append(*out, t)
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				*out = append(*out, str)
			}
		}
	}
	if e, ok := m["enum"].([]any); ok {
		for _, v := range e {
			*out = append(*out, jsonType(v))
		}
	}
	if c, ok := m["const"]; ok {
		*out = append(*out, jsonType(c))
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := m[k].([]any); ok {
			for _, sub := range list {
				s.collect(sub, out, depth+1)
			}
		}
	}
	if ref, ok := m["$ref"].(string); ok {
		s.collect(s.resolve(ref), out, depth+1)
	}
}

// resolve follows a local JSON pointer reference ("#/$defs/X").
func (s *schema) resolve(ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = s.root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}
