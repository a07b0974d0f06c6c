package codec

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

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
// DeclaredRevision, GuessResultMethod and GuessAnyResultMethod neither panic nor hang, for every
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
				_ = CheckMessage(rev, FromAny, m, GuessAnyResultMethod(rev, m))
			}
			DeclaredRevision(m, "")
			DeclaredRevision(m, MethodInitialize)
		}
	})
}

// FuzzScanElementMembers: the one-pass split of an array and its object
// elements says exactly what scanElements and objectMembers of each element
// say, on any input (the checks call it on validated JSON only, but it must
// agree, and not panic, whatever it gets).
func FuzzScanElementMembers(f *testing.F) {
	for _, s := range []string{`[]`, ` [ ] `, `[1, "a,]", {"b":[2]}, null, true]`, `[`, `[1,]`, `[[],[[]]]`,
		`[{"type":"text","text":"a \"q\" \\"},{"a":1,"a":2}]`, `[{"\ud800":1}]`, `[{}] x`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := scanElementMembers(b)
		want, wok := scanElements(b)
		if ok != wok || len(got) != len(want) {
			t.Fatalf("scanElementMembers(%q): %d elements, ok %v; scanElements: %d, %v", b, len(got), ok, len(want), wok)
		}
		for i, el := range got {
			if !bytes.Equal(el.raw, want[i]) {
				t.Fatalf("scanElementMembers(%q)[%d] = %s, want %s", b, i, el.raw, want[i])
			}
			m, e := objectMembers(want[i])
			if kindOf(want[i]) != kObject {
				e = "" // not an object: no members, and no message kept
			}
			eq := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
			if el.objErr != e || (m == nil) != (el.obj == nil) || !maps.EqualFunc(m, el.obj, eq) {
				t.Fatalf("scanElementMembers(%q)[%d] = %v, %q; objectMembers: %v, %q", b, i, el.obj, el.objErr, m, e)
			}
		}
	})
}
