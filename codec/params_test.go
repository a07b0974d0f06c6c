package codec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

// TestCallToolParamsRules: what a server refuses in tools/call params, in
// JSON's words, and what it takes.
func TestCallToolParamsRules(t *testing.T) {
	for _, c := range []struct{ params, want string }{
		{`{"name":1}`, "params.name: expected a string, got a number"},
		{`{"name":"a","arguments":"x"}`, ""}, // the router says "arguments must be a JSON object"
		{`{"name":"a","_meta":[]}`, "params._meta: expected an object, got an array"},
		{`{"name":"a","_meta":{"progressToken":{"a":1}}}`, "params._meta.progressToken must be a string or an integer, not an object"},
		{`{"name":"a","_meta":{"progressToken":1.5}}`, "params._meta.progressToken must be a string or an integer, not the fractional number 1.5"},
		{`{"name":"a","arguments":{"path":"x\ud800y"}}`, `params.arguments.path: lone surrogate \ud800`},
		{`{"name":"a","arguments":{"p":["ok","\uDFFF"]}}`, `params.arguments.p[1]: lone surrogate \uDFFF`},
		{`{"name":"a","arguments":{"p":"\ud83d"}}`, `params.arguments.p: lone surrogate \ud83d`},
		{`{"name":"a","arguments":{"x\udc00":1}}`, `params.arguments: member name "x\udc00" holds a lone surrogate \udc00`},
		// Fine: a surrogate pair, the character itself, an escaped backslash
		// before "ud800", string and integer tokens.
		{`{"name":"a","arguments":{"p":"\ud83d\ude00","q":"café","r":"\\ud800"}}`, ""},
		{`{"name":"a","_meta":{"progressToken":"t"}}`, ""},
		{`{"name":"a","_meta":{"progressToken":7}}`, ""},
		{`{"name":"a","_meta":{"progressToken":null}}`, ""},
	} {
		var p codec.CallToolParams
		err := json.Unmarshal([]byte(c.params), &p)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.params, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.params, err, c.want)
		case err != nil && strings.Contains(err.Error(), "Go "):
			t.Errorf("%s: Go internals in %q", c.params, err)
		}
	}
	var p codec.CallToolParams
	if err := json.Unmarshal([]byte(`{"name":"fs_write","arguments":{"path":"café"}}`), &p); err != nil || p.Name != "fs_write" || string(p.Arguments) != `{"path":"café"}` {
		t.Errorf("decoded %+v, %v", p, err)
	}
	var lp codec.ListToolsParams
	if err := json.Unmarshal([]byte(`{"cursor":3}`), &lp); err == nil || err.Error() != "params.cursor: expected a string, got a number" {
		t.Errorf("tools/list cursor 3: %v", err)
	}
}

// TestClassifyProgressToken: a request whose progress token the server
// could not echo validly is refused (-32602) in every revision; a
// notification's _meta is free.
func TestClassifyProgressToken(t *testing.T) {
	s := codec.NewSession()
	init, _ := codec.NewRequest(codec.IntID(1), codec.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`))
	if _, err := s.Classify(init); err != nil {
		t.Fatal(err)
	}
	bad, _ := codec.NewRequest(codec.IntID(2), codec.MethodToolsCall, json.RawMessage(`{"name":"x","_meta":{"progressToken":{"k":1}}}`))
	if _, err := s.Classify(bad); err == nil || err.Code != codec.CodeInvalidParams || !strings.Contains(err.Message, "params._meta.progressToken must be a string or an integer, not an object") {
		t.Errorf("object token: %v", err)
	}
	good, _ := codec.NewRequest(codec.IntID(3), codec.MethodToolsCall, json.RawMessage(`{"name":"x","_meta":{"progressToken":"k"}}`))
	if _, err := s.Classify(good); err != nil {
		t.Errorf("string token: %v", err)
	}
	n, _ := codec.NewNotification(codec.MethodCancelled, json.RawMessage(`{"requestId":2,"_meta":{"progressToken":{}}}`))
	if _, err := s.Classify(n); err != nil {
		t.Errorf("notification: %v", err)
	}
	wrongType, _ := codec.NewRequest(codec.IntID(4), codec.MethodToolsList, json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}`))
	if _, err := s.Classify(wrongType); err == nil || !strings.Contains(err.Message, `params._meta["io.modelcontextprotocol/protocolVersion"]: expected a string, got a number`) {
		t.Errorf("protocolVersion 7: %v", err)
	}
}
