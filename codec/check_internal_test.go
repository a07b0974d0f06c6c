package codec

import (
	"encoding/json"
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
