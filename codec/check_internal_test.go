package codec

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzScanMembers holds the light scanner the checks use against
// encoding/json: on any valid JSON object both split it into the same
// members, and on any input the scanner neither panics nor reads out of
// bounds.
func FuzzScanMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x\"}","b":[1,{"c":"]"}],"d":null}`,
		`{"\u0061":true,"a\\":false}`, `{"a":{"b":{"c":[[[]]]}}}`, `{"a":-1.5e3 , "b" : "é✓"}`,
		`{"a":1,"a":2}`, `{"a"`, `{"a":}`, `[1,2]`, `"x"`, `{"a":"\`, `{"a":[1,2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := scanMembers(b)
		if !json.Valid(b) || !utf8.Valid(b) {
			// Only: no panic. (DecodeFrame refuses invalid UTF-8 before any
			// check runs; encoding/json would turn it into U+FFFD.)
			return
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil || want == nil {
			if ok && len(b) > 0 {
				// Not an object to encoding/json (e.g. null): the scanner must not
				// call it one either.
				if trimmed := skipSpace(b, 0); trimmed < len(b) && b[trimmed] != '{' {
					t.Fatalf("scanMembers(%q) accepted a non-object", b)
				}
			}
			return
		}
		if !ok {
			t.Fatalf("scanMembers(%q) failed on a valid object", b)
		}
		if len(got) != len(want) {
			t.Fatalf("scanMembers(%q) = %d members, want %d", b, len(got), len(want))
		}
		for k, v := range want {
			var a, c any
			_ = json.Unmarshal(v, &a)
			if json.Unmarshal(got[k], &c) != nil || !reflect.DeepEqual(a, c) {
				t.Fatalf("scanMembers(%q)[%q] = %s, want %s", b, k, got[k], v)
			}
		}
	})
}

func FuzzScanElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1, "a,]", {"b":[2]}, null, true]`, `[`, `[1,]`, `[[],[[]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := scanElements(b)
		var want []json.RawMessage
		if !json.Valid(b) || json.Unmarshal(b, &want) != nil || want == nil {
			return
		}
		if !ok || len(got) != len(want) {
			t.Fatalf("scanElements(%q) = %d elements (ok %v), want %d", b, len(got), ok, len(want))
		}
	})
}

func TestKindOf(t *testing.T) {
	for raw, want := range map[string]jtype{
		`"s"`: kString, `1`: kInt | kNumber, `-0`: kInt | kNumber, `1.0`: kInt | kNumber, `1e3`: kInt | kNumber,
		`1.5`: kNumber, `true`: kBool, `null`: kNull, `{}`: kObject, `[]`: kArray, ``: 0,
	} {
		if got := kindOf(json.RawMessage(raw)); got != want {
			t.Errorf("kindOf(%s) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzCheckMessage: whatever DecodeFrame accepts, CheckMessage,
// DeclaredRevision and GuessResultMethod neither panic nor hang, for every
// revision and direction.
func FuzzCheckMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"u","text":"t"}}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"resultType":"complete"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1","icons":[{}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","data":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource"},"argument":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, _, _ := DecodeFrame(b, true)
		for _, m := range msgs {
			for _, rev := range Revisions {
				for _, d := range []Direction{FromAny, FromClient, FromServer} {
					method := GuessResultMethod(m)
					_ = CheckMessage(rev, d, m, method)
					_ = CheckMessage(rev, d, m, "")
				}
			}
			DeclaredRevision(m, "")
			DeclaredRevision(m, MethodInitialize)
		}
	})
}
