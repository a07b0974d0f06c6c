package codec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCallToolResultHelpers(t *testing.T) {
	raw := `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"b"},{"type":"resource_link","uri":"file:///x","name":"x"}],"isError":true}`
	var r CallToolResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if got := r.Text(); got != "a\nb" {
		t.Errorf("Text = %q", got)
	}
	if got := r.TextBlocks(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("TextBlocks = %q", got)
	}
	if got := r.ContentTypes(); !reflect.DeepEqual(got, []string{"text", "image", "text", "resource_link"}) {
		t.Errorf("ContentTypes = %q", got)
	}
	if got := r.ErrorMessage(); got != "a\nb" {
		t.Errorf("ErrorMessage = %q", got)
	}
	r.IsError = false
	if r.ErrorMessage() != "" {
		t.Error("ErrorMessage of a success")
	}
	e := CallToolResult{IsError: true, Content: []Content{ImageContent("AA==", "image/png")}}
	if e.ErrorMessage() == "" {
		t.Error("an error result without text needs a message")
	}
	if ErrorResult("x").Text() != "x" || !ErrorResult("x").IsError || TextResult("y").Text() != "y" {
		t.Error("constructors")
	}
}

func TestContentMarshal(t *testing.T) {
	tests := []struct {
		c    Content
		want string
	}{
		{TextContent(""), `{"type":"text","text":""}`},
		{TextContent("<a&b>"), `{"type":"text","text":"<a&b>"}`},
		{ImageContent("AA==", "image/png"), `{"type":"image","data":"AA==","mimeType":"image/png"}`},
		{ResourceLinkContent("file:///x", "x"), `{"type":"resource_link","uri":"file:///x","name":"x"}`},
		{EmbeddedTextResource("file:///x", "text/plain", ""), `{"type":"resource","resource":{"uri":"file:///x","mimeType":"text/plain","text":""}}`},
	}
	for _, tt := range tests {
		b, err := Marshal(tt.c)
		if err != nil || string(b) != tt.want {
			t.Errorf("got %s %v, want %s", b, err, tt.want)
		}
	}
}

func TestDecorateResult(t *testing.T) {
	ttl := int64(5)
	list := ListToolsResult{Tools: []Tool{}, TTLMs: &ttl, CacheScope: CacheScopePublic}
	modern, err := DecorateResult(Rev20260728, testServer, list)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpipe-test","version":"0.0.1"}},"cacheScope":"public","resultType":"complete","tools":[],"ttlMs":5}`
	if string(modern) != want {
		t.Errorf("modern:\n got %s\nwant %s", modern, want)
	}
	legacy, err := DecorateResult(Rev20250618, testServer, list)
	if err != nil {
		t.Fatal(err)
	}
	if string(legacy) != `{"tools":[]}` {
		t.Errorf("legacy: %s", legacy)
	}
	// An existing _meta is kept, and an explicit resultType wins.
	got, err := DecorateResult(Rev20260728, testServer, json.RawMessage(`{"resultType":"input_required","_meta":{"x.y/z":1}}`))
	if err != nil || !strings.Contains(string(got), `"resultType":"input_required"`) || !strings.Contains(string(got), `"x.y/z":1`) || !strings.Contains(string(got), MetaServerInfo) {
		t.Errorf("got %s %v", got, err)
	}
	if got, _ := DecorateResult(Rev20260728, Implementation{}, nil); string(got) != `{"resultType":"complete"}` {
		t.Errorf("no server info: %s", got)
	}
	if _, err := DecorateResult(Rev20260728, testServer, []int{1}); err == nil {
		t.Error("array result accepted")
	}
	if _, err := DecorateResult(Rev20260728, testServer, json.RawMessage(`{"_meta":3}`)); err == nil {
		t.Error("non-object _meta accepted")
	}
}

func TestToolFor(t *testing.T) {
	full := Tool{Name: "x", Title: "X", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &ToolAnnotations{ReadOnlyHint: Bool(true)}, Icons: []Icon{{Src: "https://x/i.png"}}, Meta: map[string]any{"a": 1}}
	old := ToolFor(Rev20241105, full)
	if old.Title != "" || old.OutputSchema != nil || old.Annotations != nil || old.Icons != nil || old.Meta != nil || old.Name != "x" {
		t.Errorf("2024-11-05: %+v", old)
	}
	if got := ToolFor(Rev20250326, full); got.Annotations == nil || got.Title != "" {
		t.Errorf("2025-03-26: %+v", got)
	}
	if got := ToolFor(Rev20250618, full); got.Title != "X" || got.OutputSchema == nil || got.Icons != nil {
		t.Errorf("2025-06-18: %+v", got)
	}
	if got := ToolFor(Rev20260728, full); !reflect.DeepEqual(got, full) {
		t.Errorf("2026-07-28 changed the tool")
	}
}

func TestCallToolResultFor(t *testing.T) {
	r := &CallToolResult{Content: []Content{TextContent("a"), AudioContent("AAAA", "audio/wav"), ResourceLinkContent("file:///x", "x")}}
	old := CallToolResultFor(Rev20241105, r)
	if got := old.ContentTypes(); !reflect.DeepEqual(got, []string{"text", "text", "text"}) {
		t.Errorf("2024-11-05: %v", got)
	}
	if !strings.Contains(old.Text(), "file:///x") {
		t.Errorf("the link was lost: %q", old.Text())
	}
	if got := CallToolResultFor(Rev20250326, r).ContentTypes(); !reflect.DeepEqual(got, []string{"text", "audio", "text"}) {
		t.Errorf("2025-03-26: %v", got)
	}
	if got := CallToolResultFor(Rev20260728, r).ContentTypes(); !reflect.DeepEqual(got, []string{"text", "audio", "resource_link"}) {
		t.Errorf("2026-07-28: %v", got)
	}
	if r.Content[1].Type != ContentAudio {
		t.Error("CallToolResultFor modified its argument")
	}
}

func TestCallToolParamsProgressToken(t *testing.T) {
	var p CallToolParams
	_ = json.Unmarshal([]byte(`{"name":"x","_meta":{"progressToken":"abc"}}`), &p)
	if tok, ok := p.ProgressToken(); !ok || string(tok) != `"abc"` {
		t.Errorf("token %s %v", tok, ok)
	}
	p = CallToolParams{}
	if _, ok := p.ProgressToken(); ok {
		t.Error("token without _meta")
	}
	_ = json.Unmarshal([]byte(`{"name":"x","_meta":{"progressToken":null}}`), &p)
	if _, ok := p.ProgressToken(); ok {
		t.Error("null token")
	}
}

func TestZeroValuesMarshalValid(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{CallToolResult{}, `{"content":[]}`},
		{ListToolsResult{}, `{"tools":[]}`},
		{DiscoverResult{}, `{"supportedVersions":[],"capabilities":{},"ttlMs":0,"cacheScope":""}`},
		{InitializeParams{}, `{"protocolVersion":"","capabilities":{},"clientInfo":{"name":"","version":""}}`},
		{&CallToolResult{IsError: true}, `{"content":[],"isError":true}`},
	}
	for _, tt := range tests {
		b, err := Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("%T: got %s %v, want %s", tt.v, b, err, tt.want)
		}
	}
	var r CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"x"}],"isError":true}`), &r); err != nil || !r.IsError || r.Text() != "x" {
		t.Errorf("unmarshal after custom MarshalJSON: %+v %v", r, err)
	}
}

// TestDecorateResultEmptyResultType: a result built without a resultType
// (a struct whose field is "", a raw "" or null) gets "complete", as if the
// member were missing; a set one is kept; legacy revisions drop it.
func TestDecorateResultEmptyResultType(t *testing.T) {
	disc := DiscoverResult{SupportedVersions: Revisions, TTLMs: 0, CacheScope: CacheScopePublic}
	cases := []any{
		disc,
		struct {
			ResultType string    `json:"resultType"` // no omitempty: marshals as ""
			Content    []Content `json:"content"`
		}{Content: []Content{TextContent("x")}},
		json.RawMessage(`{"resultType":"","content":[]}`),
		json.RawMessage(`{"resultType":null,"content":[]}`),
	}
	for _, c := range cases {
		got, err := DecorateResult(Rev20260728, testServer, c)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if !strings.Contains(string(got), `"resultType":"complete"`) {
			t.Errorf("%T: %s, want resultType complete", c, got)
		}
		legacy, err := DecorateResult(Rev20251125, testServer, c)
		if err != nil || strings.Contains(string(legacy), "resultType") {
			t.Errorf("%T legacy: %s %v", c, legacy, err)
		}
	}
	disc.ResultType = ResultTypeInputRequired
	if got, _ := DecorateResult(Rev20260728, testServer, disc); !strings.Contains(string(got), `"resultType":"input_required"`) {
		t.Errorf("a set resultType was replaced: %s", got)
	}
	// The decorated discover result holds to the schema, and so does the
	// message it goes out in.
	m, err := NewResultFor(Rev20260728, testServer, IntID(1), DiscoverResult{SupportedVersions: Revisions, CacheScope: CacheScopePublic})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckMessage(Rev20260728, FromServer, m, MethodDiscover); err != nil {
		t.Errorf("decorated DiscoverResult: %v", err)
	}
}

// TestDecorateResultFastPath: the splicing fast path writes the very bytes
// the decode/re-encode path writes, or the same error, for every revision
// era and with and without server info; and it is taken for the results a
// server writes all day (a CallToolResult, a list, objects with or without
// _meta and resultType), so the comparison is not with itself.
func TestDecorateResultFastPath(t *testing.T) {
	ttl := int64(5)
	icons := Implementation{Name: "iconic", Version: "1", Icons: []Icon{{Src: "https://x/i.png"}}}
	many := map[string]int{}
	for i := range fastMembers + 1 {
		many[string(rune('a'+i))] = i
	}
	cases := []struct {
		name   string
		result any
		fast   bool // decorateFast takes it (for every era and server info)
	}{
		{"nil", nil, true},
		{"empty", json.RawMessage(`{}`), true},
		{"call result", TextResult("hello <&> \u2028 world"), true},
		{"error result", ErrorResult("boom"), true},
		{"structured", &CallToolResult{Content: []Content{TextContent(`{"a":1}`)}, StructuredContent: json.RawMessage(`{"a":1,"b":{"c":[1,2,{"d":"}"}]}}`)}, true},
		{"list", ListToolsResult{Tools: []Tool{{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}}, TTLMs: &ttl, CacheScope: CacheScopePublic}, true},
		{"sorted already", json.RawMessage(`{"a":1,"b":2}`), true},
		{"unsorted", json.RawMessage(`{"z":1,"a":{"y":2,"b":3}}`), true},
		{"resultType set", json.RawMessage(`{"resultType":"input_required","x":1}`), true},
		{"resultType empty", json.RawMessage(`{"resultType":"","x":1}`), true},
		{"resultType null", json.RawMessage(`{"resultType":null,"x":1}`), true},
		{"resultType other", json.RawMessage(`{"resultType":5}`), true},
		{"ttl and scope", json.RawMessage(`{"ttlMs":3,"cacheScope":"public","tools":[]}`), true},
		{"_meta", json.RawMessage(`{"_meta":{"x.y/z":1,"a":[]},"content":[]}`), true},
		{"_meta empty", json.RawMessage(`{"_meta":{},"content":[]}`), true},
		{"_meta null", json.RawMessage(`{"_meta":null}`), true},
		{"_meta with server info", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"other"},"b":1,"a":2}}`), true},
		{"odd white space", json.RawMessage(" {\n\t\"b\" : [ 1 , 2 ] ,\r\n \"a\":{ \"c\" : \"x y\" } ,\"resultType\" : null }  "), true},
		{"strings that look like members", json.RawMessage(`{"text":"\"resultType\":\"x\",\"_meta\":{}","n":"\\"}`), true},
		{"nested resultType", json.RawMessage(`{"a":{"resultType":"","ttlMs":1,"_meta":3}}`), true},
		{"numbers and literals", json.RawMessage(`{"a":-1.5e+3,"b":true,"c":false,"d":null,"e":0}`), true},
		{"unicode values", json.RawMessage(`{"a":"h\u00e9llo \u2028","b":"日本"}`), true},
		// The slow path for these: the same bytes or the same error.
		{"escaped name", json.RawMessage(`{"\u005fmeta":{"a":1},"x":1}`), false},
		{"escaped resultType", json.RawMessage(`{"result\u0054ype":""}`), false},
		{"unicode name", json.RawMessage(`{"é":1,"a\u2028":2}`), false},
		{"raw U+2028 name", json.RawMessage("{\"a\u2028\":2}"), false},
		{"duplicate name", json.RawMessage(`{"a":1,"a":2}`), false},
		{"duplicate resultType", json.RawMessage(`{"resultType":"x","resultType":""}`), false},
		{"duplicate in _meta", json.RawMessage(`{"_meta":{"a":1,"a":2}}`), false},
		{"escaped name in _meta", json.RawMessage(`{"_meta":{"io.modelcontextprotocol\/serverInfo":1}}`), false},
		{"many members", many, false},
		{"_meta number", json.RawMessage(`{"_meta":3}`), false},
		{"_meta string", json.RawMessage(`{"_meta":"x"}`), false},
		{"_meta array", json.RawMessage(`{"_meta":[]}`), false},
		{"array", []int{1}, false},
		{"raw array", json.RawMessage(`[{"a":1}]`), false},
		{"string", "x", false},
		{"number", json.RawMessage(`3`), false},
		{"null", json.RawMessage(`null`), false},
	}
	for _, c := range cases {
		for _, rev := range []string{Rev20260728, Rev20251125, Rev20250618, Rev20241105} {
			for _, si := range []Implementation{testServer, {}, icons} {
				got, err := DecorateResult(rev, si, c.result)
				raw, merr := marshalParams(c.result)
				if merr != nil {
					t.Fatalf("%s: %v", c.name, merr)
				}
				if raw == nil {
					raw = json.RawMessage("{}")
				}
				want, werr := decorateSlow(rev, si, raw)
				if string(got) != string(want) || (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Errorf("%s, %s, server %q:\n got %s %v\nwant %s %v", c.name, rev, si.Name, got, err, want, werr)
				}
				_, fast := decorateFast(rev, si, raw)
				// A bad _meta only matters with server info; the rest is
				// fast (or not) whatever the era.
				if c.fast && !fast {
					t.Errorf("%s, %s, server %q: not the fast path", c.name, rev, si.Name)
				}
			}
		}
	}
}

// BenchmarkDecorateResult: a tool call's result, decorated for a legacy and
// a modern request.
func BenchmarkDecorateResult(b *testing.B) {
	r := &CallToolResult{Content: []Content{TextContent("hello from the benchmark root\n")}}
	for _, rev := range []string{Rev20250618, Rev20260728} {
		b.Run(rev, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecorateResult(rev, testServer, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
