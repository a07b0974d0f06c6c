package codec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanJSON holds the scanner's validating mode to encoding/json and
// utf8, and compactInto (which copies a value without white space instead of
// compacting it) to json.Compact.
func FuzzScanJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,-0.5e+3,"\u00e9\n",true,false,null,{}]}`))
	f.Add([]byte(` {"a" : [1, 2]} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := jsValid(data) == nil
		want := json.Valid(data) && utf8.Valid(data)
		if got != want {
			t.Fatalf("jsValid(%q) = %v, json.Valid && utf8.Valid = %v", data, got, want)
		}
		var c bytes.Buffer
		err := compactInto(&c, data)
		if (err == nil) != want {
			t.Fatalf("compactInto(%q) error %v, want valid %v", data, err, want)
		}
		if err != nil {
			return
		}
		var w bytes.Buffer
		if err := json.Compact(&w, data); err != nil {
			t.Fatalf("json.Compact(%q): %v", data, err)
		}
		if !bytes.Equal(c.Bytes(), w.Bytes()) {
			t.Fatalf("compactInto(%q) = %q, json.Compact = %q", data, c.Bytes(), w.Bytes())
		}
	})
}

// FuzzScanMembers holds the object split the checks use (trusted mode) and
// the one DecodeFrame uses (validating mode) to encoding/json: on any valid
// object both give encoding/json's members, and on any input neither panics
// nor reads out of bounds.
func FuzzScanMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x\"}","b":[1,{"c":"]"}],"d":null}`,
		`{"\u0061":true,"a\\":false}`, `{"a":{"b":{"c":[[[]]]}}}`, `{"a":-1.5e3 , "b" : "é✓"}`,
		`{"a":1,"a":2}`, `{"a"`, `{"a":}`, `[1,2]`, `"x"`, `{"a":"\`, `{"a":[1,2}`, `{"a":"\\\\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := scanMembers(b)
		var env envelope
		_, isObj, _, _, verr := jsTop(b, &env)
		valid := json.Valid(b) && utf8.Valid(b)
		if (verr == nil) != valid {
			t.Fatalf("jsTop(%q) error %v, want valid %v", b, verr, valid)
		}
		if !json.Valid(b) {
			return // only: no panic
		}
		// Valid JSON from here, but maybe not valid UTF-8, which DecodeFrame
		// refuses before any check runs and encoding/json turns into U+FFFD:
		// keys and values are compared only for valid UTF-8.
		isObject := b[len(b)-len(bytes.TrimLeft(b, " \t\r\n"))] == '{'
		if ok != isObject || (valid && isObj != isObject) {
			t.Fatalf("scanMembers(%q) ok %v, jsTop object %v; want %v", b, ok, isObj, isObject)
		}
		if !ok || !valid {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
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
		for k, raw := range map[string][]byte{"jsonrpc": env.jsonrpc, "id": env.id, "method": env.method, "params": env.params, "result": env.result, "error": env.error} {
			if w, present := want[k]; present != (raw != nil) || present && !bytes.Equal(raw, got[k]) {
				t.Fatalf("jsTop(%q) member %q = %q, want %q", b, k, raw, w)
			}
		}
	})
}

// FuzzScanElements: the same for arrays.
func FuzzScanElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1, "a,]", {"b":[2]}, null, true]`, `[`, `[1,]`, `[[],[[]]]`, `["\\", "\""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := scanElements(b)
		var env envelope
		elems, _, isArr, _, verr := jsTop(b, &env)
		if !json.Valid(b) {
			return // only: no panic
		}
		isArray := b[len(b)-len(bytes.TrimLeft(b, " \t\r\n"))] == '['
		if ok != isArray {
			t.Fatalf("scanElements(%q) ok %v, want %v", b, ok, isArray)
		}
		if !ok {
			return
		}
		var want []json.RawMessage
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("scanElements(%q) = %d elements, want %d", b, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("scanElements(%q)[%d] = %s, want %s", b, i, got[i], want[i])
			}
		}
		if utf8.Valid(b) {
			if verr != nil || !isArr || len(elems) != len(want) {
				t.Fatalf("jsTop(%q) = %d elements, array %v, error %v; want %d", b, len(elems), isArr, verr, len(want))
			}
		}
	})
}

// TestCompactIntoCopies: a value without white space outside its strings is
// copied byte for byte (escapes, number spellings and member order kept);
// one with white space is compacted.
func TestCompactIntoCopies(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"a":"\u0061 x","n":-0,"e":1E+2}`:  `{"b":1,"a":"\u0061 x","n":-0,"e":1E+2}`,
		` {"b" : [1 , 2],` + "\n\t" + `"a":" "} `: `{"b":[1,2],"a":" "}`,
		`"a b"`: `"a b"`,
	} {
		var b bytes.Buffer
		if err := compactInto(&b, []byte(in)); err != nil || b.String() != want {
			t.Errorf("compactInto(%s) = %s, %v; want %s", in, b.String(), err, want)
		}
	}
	for _, in := range []string{`{"a":1`, "\"\xff\"", `{"a":1} x`, ``} {
		var b bytes.Buffer
		if err := compactInto(&b, []byte(in)); err == nil {
			t.Errorf("compactInto(%q) = %s, want an error", in, b.String())
		}
	}
}

// BenchmarkScan compares the two modes on the results a filter checks: a
// 64 KB text result and a 30-tool list.
func BenchmarkScan(b *testing.B) {
	big := strings.Repeat("The quick brown fox jumps over the lazy dog. \"quoted\" <tag> é\n", 1024)
	text, err := DecorateResult(Rev20260728, testServer, TextResult(big))
	if err != nil {
		b.Fatal(err)
	}
	stream := benchStream(b)
	for _, mode := range []struct {
		name string
		scan func([]byte) bool
	}{
		{"validating", func(r []byte) bool { return jsValid(r) == nil }},
		{"trusted", func(r []byte) bool { _, ok := scanMembers(r); return ok }},
	} {
		b.Run(mode.name+"/text", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if !mode.scan(text) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(mode.name+"/stream", func(b *testing.B) {
			lines := bytes.Split(bytes.TrimSpace(stream), []byte{'\n'})
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				for _, l := range lines {
					if !mode.scan(l) {
						b.Fatal("invalid")
					}
				}
			}
		})
	}
}
