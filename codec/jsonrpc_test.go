package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		isStr   bool
		wantKey string
	}{
		{`"a"`, true, true, "sa"},
		{`"\u0061"`, true, true, "sa"},
		{`""`, true, true, "s"},
		{`"héllo ✓"`, true, true, "shéllo ✓"},
		{`"🙂"`, true, true, "s🙂"},
		{`1`, true, false, "n1"},
		{`0`, true, false, "n0"},
		{`-0`, true, false, "n0"},
		{`-17`, true, false, "n-17"},
		{`123456789012345678901234567890`, true, false, "n123456789012345678901234567890"},
		{` 7 `, true, false, "n7"},
		{`1.5`, false, false, ""},
		{`1.0`, false, false, ""},
		{`1e3`, false, false, ""},
		{`1E3`, false, false, ""},
		{`01`, false, false, ""},
		{`-`, false, false, ""},
		{`+1`, false, false, ""},
		{`null`, false, false, ""},
		{`true`, false, false, ""},
		{`false`, false, false, ""},
		{`{}`, false, false, ""},
		{`[]`, false, false, ""},
		{`[1]`, false, false, ""},
		{`"unterminated`, false, false, ""},
		{"\"bad\xffutf8\"", false, false, ""},
		{``, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, err := ParseID([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("ParseID(%s) err = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			if got, want := id.String(), strings.TrimSpace(tt.in); got != want {
				t.Errorf("String() = %s, want byte-for-byte %s", got, want)
			}
			b, _ := json.Marshal(id)
			if string(b) != strings.TrimSpace(tt.in) {
				t.Errorf("MarshalJSON = %s, want %s", b, tt.in)
			}
			if id.IsString() != tt.isStr {
				t.Errorf("IsString = %v", id.IsString())
			}
			if id.Key() != tt.wantKey {
				t.Errorf("Key = %q, want %q", id.Key(), tt.wantKey)
			}
		})
	}
}

func TestIDConstructors(t *testing.T) {
	if s := StringID("a<b>").String(); s != `"a<b>"` {
		t.Errorf("StringID = %s (HTML must not be escaped)", s)
	}
	if s := IntID(-42).String(); s != "-42" {
		t.Errorf("IntID = %s", s)
	}
	if !(ID{}).IsZero() || IntID(0).IsZero() {
		t.Error("IsZero wrong")
	}
	if seen := map[ID]bool{StringID("x"): true}; !seen[StringID("x")] || seen[IntID(0)] {
		t.Error("IDs must be comparable by value")
	}
	var id ID
	if err := json.Unmarshal([]byte(`1.5`), &id); err == nil {
		t.Error("UnmarshalJSON accepted 1.5")
	}
	if StringID("héllo").Value() != "héllo" || IntID(3).Value() != "3" {
		t.Error("Value wrong")
	}
}

// The id of a request must come back byte for byte in the response.
func TestIDEchoedByteForByte(t *testing.T) {
	for _, raw := range []string{`"a"`, `1`, `-0`, `"\u0061"`, `"\ud83d\ude42"`, `"é"`, `99999999999999999999999`, `"a\/b"`} {
		frame := `{"jsonrpc":"2.0","id":` + raw + `,"method":"ping"}`
		msgs, _, err := DecodeFrame([]byte(frame), false)
		if err != nil {
			t.Fatalf("%s: %v", frame, err)
		}
		resp, err := NewResponse(*msgs[0].ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := resp.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"jsonrpc":"2.0","id":` + raw + `,"result":{}}`; string(b) != want {
			t.Errorf("got %s, want %s", b, want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	e := Errorf(CodeInvalidParams, "argument %q missing", "x")
	if !errors.Is(e, ErrInvalidParams) {
		t.Error("errors.Is by code failed")
	}
	if errors.Is(e, ErrInvalidRequest) {
		t.Error("errors.Is matched another code")
	}
	wrapped := fmt.Errorf("line 3: %w", e)
	if !errors.Is(wrapped, ErrInvalidParams) || AsError(wrapped) != e {
		t.Error("wrapped error lost its code")
	}
	if AsError(errors.New("boom")).Code != CodeInternalError {
		t.Error("AsError of plain error is not -32603")
	}
	if AsError(fmt.Errorf("x: %w", ErrFrameTooLarge)).Code != CodeInvalidRequest {
		t.Error("AsError of ErrFrameTooLarge is not -32600")
	}
	for _, s := range []*Error{ErrParse, ErrInvalidRequest, ErrMethodNotFound, ErrInvalidParams, ErrInternal, ErrUnsupportedVersion} {
		if !errors.Is(NewError(s.Code, "x"), s) {
			t.Errorf("%v", s)
		}
	}
}

func TestUnsupportedVersionError(t *testing.T) {
	e := UnsupportedVersionError("1999-01-01", Revisions)
	if e.Code != -32022 {
		t.Fatal(e.Code)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Requested != "1999-01-01" || len(data.Supported) != len(Revisions) {
		t.Errorf("data = %s", e.Data)
	}
}

func TestMessageMarshal(t *testing.T) {
	id := IntID(7)
	sid := StringID("x")
	req, _ := NewRequest(id, "tools/call", map[string]any{"name": "a&b", "arguments": map[string]any{"s": "<tag>"}})
	note, _ := NewNotification(MethodInitialized, nil)
	pnote, _ := NewNotification(MethodProgress, json.RawMessage("{ \"progressToken\" : 1,\n \"progress\": 2 }"))
	resp, _ := NewResponse(sid, json.RawMessage(`{"a" : [1, 2]}`))
	tests := []struct {
		m    *Message
		want string
	}{
		{req, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"s":"<tag>"},"name":"a&b"}}`},
		{note, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{pnote, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`},
		{resp, `{"jsonrpc":"2.0","id":"x","result":{"a":[1,2]}}`},
		{NewErrorResponse(&id, NewError(-32601, "method not found: x")), `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: x"}}`},
		{NewErrorResponse(nil, NewError(-32700, "parse error")), `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`},
		{NewErrorResponse(&sid, UnsupportedVersionError("x", []string{"2026-07-28"})), `{"jsonrpc":"2.0","id":"x","error":{"code":-32022,"message":"unsupported protocol version \"x\"","data":{"supported":["2026-07-28"],"requested":"x"}}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.m)
		if err != nil {
			t.Fatal(err)
		}
		// json.Marshal escapes HTML after MarshalJSON; the Writer does not.
		b2, _ := tt.m.MarshalJSON()
		if string(b2) != tt.want {
			t.Errorf("MarshalJSON:\n got %s\nwant %s", b2, tt.want)
		}
		var back Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("round trip of %s: %v", b, err)
		}
		if back.Method != tt.m.Method || back.IsRequest() != tt.m.IsRequest() || back.IsResponse() != tt.m.IsResponse() {
			t.Errorf("round trip changed %s", b)
		}
	}
	if !req.IsRequest() || req.IsNotification() || req.IsResponse() {
		t.Error("req kind")
	}
	if !note.IsNotification() || note.IsRequest() {
		t.Error("note kind")
	}
	if !resp.IsResponse() {
		t.Error("resp kind")
	}
	bad := &Message{Method: "x", Params: json.RawMessage(`{"a":`)}
	if _, err := bad.MarshalJSON(); err == nil {
		t.Error("marshal of broken params succeeded")
	}
}

func TestMessageValueMarshal(t *testing.T) {
	m, _ := NewNotification("x", nil)
	b, err := Marshal(*m) // a Message value, not a pointer
	if err != nil || string(b) != `{"jsonrpc":"2.0","method":"x"}` {
		t.Errorf("got %s %v", b, err)
	}
}

// TestMarshalDecodedValues: a decoded compact value goes out byte for byte
// (escapes, number spellings, member order), a spaced one compacted, and a
// value assigned after decoding is checked again.
func TestMarshalDecodedValues(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":"\u0031","method":"m","params":{"z":1E2,"a":"\u00e9 x","n":-0}}`: `{"jsonrpc":"2.0","id":"\u0031","method":"m","params":{"z":1E2,"a":"\u00e9 x","n":-0}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params": {"z" : [1, 2],` + "\t" + `"a":" "} }`:   `{"jsonrpc":"2.0","id":1,"method":"m","params":{"z":[1,2],"a":" "}}`,
		`{"result":{"b":true,"a":null},"id":-0,"jsonrpc":"2.0"}`:                                `{"jsonrpc":"2.0","id":-0,"result":{"b":true,"a":null}}`,
		`{"result":{"b" :true},"id":7,"jsonrpc":"2.0"}`:                                         `{"jsonrpc":"2.0","id":7,"result":{"b":true}}`,
	} {
		msgs, _, err := DecodeFrame([]byte(in), false)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := msgs[0].MarshalJSON()
		if err != nil || string(got) != want {
			t.Errorf("MarshalJSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	msgs, _, err := DecodeFrame([]byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`), false)
	if err != nil {
		t.Fatal(err)
	}
	m := msgs[0]
	m.Result = json.RawMessage(`{"a":` + "\n" + `2}`)
	if got, err := m.MarshalJSON(); err != nil || string(got) != `{"jsonrpc":"2.0","id":1,"result":{"a":2}}` {
		t.Errorf("after assigning Result: %s, %v", got, err)
	}
	m.Result = json.RawMessage(`{"a":`)
	if got, err := m.MarshalJSON(); err == nil {
		t.Errorf("after assigning invalid Result: %s, want an error", got)
	}
}
