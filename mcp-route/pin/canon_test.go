package pin

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"
)

func canon(t *testing.T, in string) string {
	t.Helper()
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatalf("parseJSON(%s): %v", in, err)
	}
	return string(canonical(nil, v))
}

// Encodings of one value: one canonical form.
func TestCanonicalSameValueSameText(t *testing.T) {
	for _, group := range [][]string{
		{`{"a":1,"b":[true,null]}`, "{ \"b\" : [ true , null ] ,\n\t\"a\" : 1 }", `{"\u0062":[true,null],"a":1.0}`},
		{`"é/"`, `"\u00e9\/"`, `"\u00E9/"`},
		{`"😀"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`},
		{`"<&>\u2028"`, "\"<&>\u2028\""},
		{`1`, `1.0`, `10e-1`, `1E0`, `0.1e1`, `1e+0`, `100e-2`, `0.00001e5`},
		{`0`, `-0`, `0.0`, `0e5`, `-0.0e-3`},
		{`-1.5`, `-15e-1`, `-0.15E+1`},
		{`1e400`, `10e399`, `0.1e401`},
		{`123456789012345678901234567890`, `1.23456789012345678901234567890e29`},
	} {
		want := canon(t, group[0])
		for _, in := range group[1:] {
			if got := canon(t, in); got != want {
				t.Errorf("canonical(%s) = %s, want %s as for %s", in, got, want, group[0])
			}
		}
	}
}

// Different values: different canonical forms, where a float64 or
// encoding/json would make them one.
func TestCanonicalDifferentValuesDifferentText(t *testing.T) {
	for _, pair := range [][2]string{
		{`9007199254740993`, `9007199254740992`},
		{`0.1`, `0.10000000000000001`},
		{`1e400`, `1e401`},
		{`1e-400`, `0`},
		{`-1`, `1`},
		{`"a"`, `"a "`},
		{`"\u0000"`, `""`},
		{`{"a":1}`, `{"a":"1"}`},
		{`[1,2]`, `[2,1]`},
		{`{"a":{"b":1}}`, `{"a":{"b":1},"c":null}`},
	} {
		if a, b := canon(t, pair[0]), canon(t, pair[1]); a == b {
			t.Errorf("%s and %s both canonicalize to %s", pair[0], pair[1], a)
		}
	}
}

func TestCanonicalNumberText(t *testing.T) {
	for in, want := range map[string]string{
		`1.50`:                      `1.5`,
		`-0.000001`:                 `-0.000001`,
		`1e-7`:                      `1e-7`,
		`12.5e-8`:                   `1.25e-7`,
		`1e20`:                      `100000000000000000000`,
		`1e21`:                      `1e+21`,
		`1e22`:                      `1e+22`,
		`123e20`:                    `1.23e+22`,
		`42`:                        `42`,
		`3.14159`:                   `3.14159`,
		`1000000000000000000000e-2`: `10000000000000000000`,
	} {
		if got := canon(t, in); got != want {
			t.Errorf("canonical(%s) = %s, want %s", in, got, want)
		}
	}
}

// JSON that parsers read differently, or not at all, is refused, and the
// error says what and where.
func TestParseRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"object","type":"string"}`: `offset 17: duplicate key "type"`,
		`{"a":1,"\u0061":2}`:                `duplicate key "a"`,
		`{"a":{"x":1,"x":1}}`:               `duplicate key "x"`,
		`"\ud800"`:                          `lone surrogate \ud800`,
		`"\ud800\u0041"`:                    `lone surrogate \ud800`,
		`"\udc00"`:                          `lone surrogate \udc00`,
		"\"\xff\"":                          `byte 0xff in a string is not UTF-8`,
		"\"a\nb\"":                          `control character 0xa in a string`,
		`{"a":1} x`:                         `data after the JSON value`,
		`{"a":1,}`:                          `want a string key`,
		`[1,]`:                              `unexpected ']'`,
		`01`:                                `leading zero`,
		`NaN`:                               `unexpected 'N'`,
		`1.`:                                `want a digit after '.'`,
		`1e`:                                `want a digit in a number's exponent`,
		`1e99999999999999`:                  `exponent out of range`,
		`"\x"`:                              `unknown escape \x`,
		`"\u12zz"`:                          `bad \u escape`,
		``:                                  `unexpected end of JSON`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1): `nested deeper than 256`,
	} {
		_, err := parseJSON([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseJSON(%q) = %v, want an error with %q", in, err, want)
		}
	}
	// The harmless counterparts parse.
	for _, in := range []string{
		`{"type":"object","Type":"string"}`,
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
		`"\ud83d\ude00"`, `1e999999`, `0`, `-0.5`,
	} {
		if _, err := parseJSON([]byte(in)); err != nil {
			t.Errorf("parseJSON(%q): %v", in, err)
		}
	}
}

// The file's form escapes what a terminal hides, and reads back as the
// same value.
func TestPrettyRoundTrip(t *testing.T) {
	in := `{"d":"ok\u202eevil\u200b\u2028 tab\t \"q\" é 😀 \u0007","n":[1.50,{"z":null,"a":false}],"e":{},"f":[]}`
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	p := pretty(nil, v)
	for _, want := range []string{`\u202e`, `\u200b`, `\u2028`, `\t`, `\"q\"`, `é 😀`, `\u0007`, "\n  \"e\": {},\n"} {
		if !strings.Contains(string(p), want) {
			t.Errorf("pretty output lacks %q:\n%s", want, p)
		}
	}
	if strings.ContainsRune(string(p), '\u202e') {
		t.Errorf("pretty output has a raw U+202E:\n%s", p)
	}
	back, err := parseJSON(p)
	if err != nil {
		t.Fatalf("pretty output does not parse: %v\n%s", err, p)
	}
	if a, b := string(canonical(nil, v)), string(canonical(nil, back)); a != b {
		t.Errorf("round trip changed the value:\n%s\n%s", a, b)
	}
}

// FuzzCanonical: what the parser takes is JSON; it refuses valid JSON only
// for the documented reasons; the canonical form is a fixed point, and the
// file's form reads back as the same value.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"]}`, `{"a":1,"a":2}`, `"\ud800"`, `"\ud83d\ude00"`,
		`-0.0e-0`, `1e400`, `123.456e-7`, `[[[]]]`, `{"\u0000":"\u202e"}`, "\"\xff\"",
		`9007199254740993`, `0.000123000`, `-120.5000`, `{"k":{"k":{"k":[1,2,{"z":"é"}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := parseJSON(in)
		if err != nil {
			if json.Valid(in) && utf8.Valid(in) {
				msg := err.Error()
				if !strings.Contains(msg, "duplicate key") && !strings.Contains(msg, "surrogate") &&
					!strings.Contains(msg, "nested deeper") && !strings.Contains(msg, "exponent out of range") {
					t.Fatalf("valid JSON %q refused: %v", in, err)
				}
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("parseJSON took %q, which is not JSON", in)
		}
		c := canonical(nil, v)
		if n, ok := v.(number); ok && !bytes.ContainsAny(in, "eE") && !strings.ContainsAny(string(n), "eE") {
			// The same value, exactly (exponents left out: big.Rat would
			// expand 1e999999999).
			a, _ := new(big.Rat).SetString(string(bytes.TrimSpace(in)))
			b, _ := new(big.Rat).SetString(string(n))
			if a == nil || b == nil || a.Cmp(b) != 0 {
				t.Fatalf("number %q canonicalized to %q, another value", in, n)
			}
		}
		if !json.Valid(c) {
			t.Fatalf("canonical form of %q is not JSON: %q", in, c)
		}
		again, err := parseJSON(c)
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", c, err)
		}
		if c2 := canonical(nil, again); !bytes.Equal(c, c2) {
			t.Fatalf("canonical form not a fixed point: %q then %q", c, c2)
		}
		p := pretty(nil, v)
		back, err := parseJSON(p)
		if err != nil {
			t.Fatalf("pretty form %q does not parse: %v", p, err)
		}
		if c3 := canonical(nil, back); !bytes.Equal(c, c3) {
			t.Fatalf("pretty form changed the value: %q then %q", c, c3)
		}
	})
}
