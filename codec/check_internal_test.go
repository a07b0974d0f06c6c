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

// FuzzScanMembersSplit: the one-pass split of a result and the members it
// looks into says exactly what scanMembers and splitValue of each say.
func FuzzScanMembersSplit(f *testing.F) {
	for _, s := range []string{`{}`, ` { } `, `{"content":[{"type":"text","text":"a \"q\""}],"isError":false}`,
		`{"tools":[{"name":"x","inputSchema":{"type":"object"}}],"tools":"dup"}`, `{"content":{"a":1}}`, `{"content":[1,[2]]} x`,
		`{"\ud800":[1]}`, `{"content":[{"\ud800":1}]}`, `[1]`, `{"a":`} {
		f.Add([]byte(s))
	}
	fields := []field{req("content", kArray).with(ruleEach(ruleContentBlock)), req("tools", kArray, rules().toolFields...), req("\ufffd", kAny, opt("a", kInt)), opt("isError", kBool)}
	split := func(name string) bool { return lookIn(fields, name) }
	eq := func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }
	f.Fuzz(func(t *testing.T, b []byte) {
		m, preList, ok := scanMembersSplit(b, fields)
		pre := map[string]value{}
		for _, p := range preList {
			if _, dup := pre[p.name]; dup {
				t.Fatalf("scanMembersSplit(%q): %q split twice", b, p.name)
			}
			pre[p.name] = p.v
		}
		want, wok := scanMembers(b)
		if ok != wok || !maps.EqualFunc(m, want, eq) {
			t.Fatalf("scanMembersSplit(%q) = %v, %v; scanMembers: %v, %v", b, m, ok, want, wok)
		}
		for k, raw := range want {
			v, got := pre[k]
			kind := kindOf(raw)
			if got != (split(k) && kind&(kObject|kArray) != 0) {
				t.Fatalf("scanMembersSplit(%q): member %q split %v", b, k, got)
			}
			if !got {
				continue
			}
			w := splitValue(raw, kind)
			if !bytes.Equal(v.raw, w.raw) || v.objErr != w.objErr || v.arrOK != w.arrOK || !maps.EqualFunc(v.obj, w.obj, eq) || len(v.elems) != len(w.elems) {
				t.Fatalf("scanMembersSplit(%q)[%q] = %+v, splitValue: %+v", b, k, v, w)
			}
			for i := range w.elems {
				if !bytes.Equal(v.elems[i].raw, w.elems[i].raw) || v.elems[i].objErr != w.elems[i].objErr || !maps.EqualFunc(v.elems[i].obj, w.elems[i].obj, eq) {
					t.Fatalf("scanMembersSplit(%q)[%q][%d] = %+v, splitValue: %+v", b, k, i, v.elems[i], w.elems[i])
				}
			}
		}
		if len(pre) > len(want) {
			t.Fatalf("scanMembersSplit(%q): %d split, %d members", b, len(pre), len(want))
		}
	})
}
