package codec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestHeaderValueRoundTrip(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"a b":                "a b",
		"ünï":                "=?base64?w7xuw68=?=",
	} {
		got := EncodeHeaderValue(in)
		if got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
		if back, err := DecodeHeaderValue(got); err != nil || back != in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", got, back, err, in)
		}
	}
	for _, bad := range []string{"=?base64?!!!?=", "=?base64?aGk="} {
		if _, err := DecodeHeaderValue(bad); !errors.Is(err, ErrHeaderEncoding) {
			t.Errorf("DecodeHeaderValue(%q): %v, want ErrHeaderEncoding", bad, err)
		}
	}
}

func TestHeaderParams(t *testing.T) {
	got, err := HeaderParams(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`))
	if err != nil || len(got) != 2 || got[0].Name != "N" || strings.Join(got[0].Path, ".") != "opts.n" || got[1].Name != "Region" {
		t.Fatalf("HeaderParams = %+v, %v", got, err)
	}
	for schema, want := range map[string]string{
		`{"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`: "appears twice",
		`{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`:                                          "want string, integer or boolean",
		`{"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`:                                        "not an HTTP header name token",
		`{"anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`:                              "not on a property reached through properties alone",
	} {
		if _, err := HeaderParams(json.RawMessage(schema)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("HeaderParams(%s): %v, want an error with %q", schema, err, want)
		}
	}
}

func TestCheckSessionVersionHeader(t *testing.T) {
	for _, c := range []struct {
		header, session string
		ok              bool
		want            string
	}{
		{"2025-11-25", "2025-11-25", true, ""},
		{"2025-03-26", "2025-11-25", true, ""}, // supported, not the negotiated one
		{"2025-06-18", "2025-03-26", true, ""},
		{"", "2025-03-26", true, ""}, // that revision did not define the header
		{"", "2025-06-18", false, "missing Mcp-Protocol-Version header"},
		{"2024-11-05", "2025-11-25", false, "no Streamable HTTP sessions"},
		{"2026-07-28", "2025-11-25", false, "no Streamable HTTP sessions"},
		{"2025-01-01", "2025-11-25", false, "unsupported protocol version"},
		{"2025-11-25, 2025-06-18", "2025-11-25", false, "unsupported protocol version"},
	} {
		err := CheckSessionVersionHeader(c.header, c.session)
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckSessionVersionHeader(%q, %q) = %v, want ok=%v %q", c.header, c.session, err, c.ok, c.want)
		}
	}
}
