package httpserve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// paramPrefix starts the headers that mirror tools/call arguments whose
// inputSchema property carries "x-mcp-header": NAME (Mcp-Param-NAME).
const paramPrefix = "Mcp-Param-"

// base64Wrap marks a header value that is base64 (non-ASCII or padded
// with white space in the body): =?base64?...?=.
const base64Open, base64Close = "=?base64?", "?="

// schemas is what a Backend offers for the Mcp-Param-* check.
type schemas interface {
	InputSchema(tool string) json.RawMessage
}

// paramBinding is one argument mirrored into a header.
type paramBinding struct {
	path   []string // property names from the arguments object down
	header string
}

// paramBindings lists the x-mcp-header annotations of an input schema,
// nested objects included.
func paramBindings(schema json.RawMessage, prefix []string, out []paramBinding) []paramBinding {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, prop := range s.Properties {
		var p struct {
			Header string `json:"x-mcp-header"`
		}
		json.Unmarshal(prop, &p)
		path := append(append([]string(nil), prefix...), name)
		if p.Header != "" {
			out = append(out, paramBinding{path, p.Header})
		}
		out = paramBindings(prop, path, out)
	}
	return out
}

// checkParams compares the Mcp-Param-* headers of a tools/call with its
// arguments; it returns the mismatch, "" when they agree.
func checkParams(h http.Header, schema json.RawMessage, params json.RawMessage) string {
	bindings := paramBindings(schema, nil, nil)
	if len(bindings) == 0 {
		return ""
	}
	arguments := paramRaw(params, "arguments")
	for _, b := range bindings {
		header := paramPrefix + b.header
		// Presence, not h.Get's "": an empty string argument has an empty
		// header.
		values, present := h[http.CanonicalHeaderKey(header)]
		got := ""
		if present {
			got = values[0]
		}
		arg, ok := lookupArg(arguments, b.path)
		if !ok {
			if present {
				return fmt.Sprintf("Header mismatch: %s header present but argument '%s' is absent", header, strings.Join(b.path, "."))
			}
			continue
		}
		want, ok := primitive(arg)
		if !ok {
			return fmt.Sprintf("Header mismatch: argument '%s' mirrored in %s is not a string, number or boolean", strings.Join(b.path, "."), header)
		}
		if !present {
			return fmt.Sprintf("Header mismatch: missing required %s header (body value '%s')", header, want)
		}
		if inner, ok := strings.CutPrefix(got, base64Open); ok {
			inner, ok = strings.CutSuffix(inner, base64Close)
			dec, err := base64.StdEncoding.DecodeString(inner)
			if !ok || err != nil {
				return fmt.Sprintf("Header mismatch: %s header value '%s' is not valid =?base64?...?= text", header, got)
			}
			got = string(dec)
		}
		if !sameValue(got, want, arg) {
			return fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value '%s'", header, got, want)
		}
	}
	return ""
}

func lookupArg(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, name := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return nil, false
		}
		v, ok := m[name]
		if !ok {
			return nil, false
		}
		cur = v
	}
	if bytes.Equal(bytes.TrimSpace(cur), []byte("null")) {
		return nil, false
	}
	return cur, true
}

// primitive renders a string, number or boolean argument as its header
// text.
func primitive(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strings.TrimSpace(string(raw)), true
	}
	return "", false
}

// sameValue compares a header with the body's value: numbers by value
// (1.0 and 1 agree), the rest as text.
func sameValue(header, want string, raw json.RawMessage) bool {
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		h, err := strconv.ParseFloat(header, 64)
		return err == nil && h == n
	}
	return header == want
}

// paramRaw returns the member key of the params object, matched exactly as
// the core matches it: a struct field would also take "Name" or "NAME"
// (encoding/json folds case), and a body with both "name" and "Name" would
// then be checked against one tool and run another.
func paramRaw(params json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return nil
	}
	return m[key]
}

// paramString is paramRaw's member when it is a string, else "".
func paramString(params json.RawMessage, key string) string {
	var s string
	json.Unmarshal(paramRaw(params, key), &s)
	return s
}
