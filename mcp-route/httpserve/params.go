package httpserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// schemas is what a Backend offers for the Mcp-Param-* check.
type schemas interface {
	InputSchema(tool string) json.RawMessage
}

// checkParams compares the Mcp-Param-* headers of a tools/call with its
// arguments (codec.HeaderParams: which arguments, codec.DecodeHeaderValue:
// how their values are written); it returns the mismatch, "" when they
// agree. A schema whose annotations break the rules binds nothing: a
// client leaves such a tool out, so there is nothing to check.
func checkParams(h http.Header, schema json.RawMessage, params json.RawMessage) string {
	bindings := headerParams(schema)
	if len(bindings) == 0 {
		return ""
	}
	arguments := paramRaw(params, "arguments")
	for _, b := range bindings {
		header := codec.HeaderParamPrefix + b.Name
		// Presence, not h.Get's "": an empty string argument has an empty
		// header.
		values, present := h[http.CanonicalHeaderKey(header)]
		got := ""
		if present {
			got = values[0]
		}
		arg, ok := lookupArg(arguments, b.Path)
		if !ok {
			if present {
				return fmt.Sprintf("Header mismatch: %s header present but argument '%s' is absent", header, strings.Join(b.Path, "."))
			}
			continue
		}
		want, ok := primitive(arg)
		if !ok {
			return fmt.Sprintf("Header mismatch: argument '%s' mirrored in %s is not a string, number or boolean", strings.Join(b.Path, "."), header)
		}
		if !present {
			return fmt.Sprintf("Header mismatch: missing required %s header (body value '%s')", header, want)
		}
		dec, err := codec.DecodeHeaderValue(got)
		if err != nil {
			return fmt.Sprintf("Header mismatch: %s header value '%s' is %v", header, got, err)
		}
		if !sameValue(dec, want, arg) {
			return fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value '%s'", header, dec, want)
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

// bindingsOf remembers each schema's x-mcp-header bindings (nil for a
// schema whose annotations break the rules): a tool's schema is the same
// for every call, and reading it was 2% of a call. At most
// maxRememberedSchemas; past that it starts over (tools were reloaded many
// times).
var bindingsOf = struct {
	sync.Mutex
	m map[string][]codec.HeaderParam
}{m: map[string][]codec.HeaderParam{}}

const maxRememberedSchemas = 4096

func headerParams(schema json.RawMessage) []codec.HeaderParam {
	bindingsOf.Lock()
	b, ok := bindingsOf.m[string(schema)]
	bindingsOf.Unlock()
	if ok {
		return b
	}
	b, err := codec.HeaderParams(schema)
	if err != nil {
		b = nil
	}
	bindingsOf.Lock()
	if len(bindingsOf.m) >= maxRememberedSchemas {
		clear(bindingsOf.m)
	}
	bindingsOf.m[string(schema)] = b
	bindingsOf.Unlock()
	return b
}

// paramRaw returns the member key of the params object, matched exactly as
// the core matches it: a struct field would also take "Name" or "NAME"
// (encoding/json folds case), and a body with both "name" and "Name" would
// then be checked against one tool and run another.
func paramRaw(params json.RawMessage, key string) json.RawMessage {
	// The body was validated as it was decoded (codec.DecodeFrame).
	m, _ := codec.Members(params)
	return m[key]
}

// paramString is paramRaw's member when it is a string, else "".
func paramString(params json.RawMessage, key string) string {
	s, _ := codec.StringValue(paramRaw(params, key))
	return s
}
