package args

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

const testSchema = `{
  "type": "object",
  "properties": {
    "path":   {"type": "string"},
    "count":  {"type": "integer"},
    "ratio":  {"type": "number"},
    "force":  {"type": "boolean"},
    "tags":   {"type": "array", "items": {"type": "string"}},
    "opts":   {"type": "object"},
    "maybe":  {"type": ["string", "null"]},
    "mode":   {"enum": ["fast", "slow"]},
    "level":  {"enum": [1, 2, 3]},
    "limit":  {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "ref":    {"$ref": "#/$defs/Num"},
    "free":   {}
  },
  "required": ["path"],
  "additionalProperties": false,
  "$defs": {"Num": {"type": "integer"}}
}`

func TestBuild(t *testing.T) {
	tests := []struct {
		name  string
		words []string
		want  string // compact JSON
	}{
		{"json object", []string{`{"path":"a","count":2}`}, `{"count":2,"path":"a"}`},
		{"string stays string", []string{"path=42"}, `{"path":"42"}`},
		{"integer", []string{"path=a", "count=7"}, `{"count":7,"path":"a"}`},
		{"number", []string{"path=a", "ratio=0.5"}, `{"path":"a","ratio":0.5}`},
		{"integer for number", []string{"path=a", "ratio=2"}, `{"path":"a","ratio":2}`},
		{"boolean", []string{"path=a", "force=true"}, `{"force":true,"path":"a"}`},
		{"array", []string{"path=a", `tags=["x","y"]`}, `{"path":"a","tags":["x","y"]}`},
		{"object", []string{"path=a", `opts={"k":1}`}, `{"opts":{"k":1},"path":"a"}`},
		{"nullable string as string", []string{"path=a", "maybe=hello"}, `{"maybe":"hello","path":"a"}`},
		{"nullable string null", []string{"path=a", "maybe=null"}, `{"maybe":null,"path":"a"}`},
		{"enum of strings", []string{"path=a", "mode=fast"}, `{"mode":"fast","path":"a"}`},
		{"enum of integers", []string{"path=a", "level=2"}, `{"level":2,"path":"a"}`},
		{"anyOf", []string{"path=a", "limit=5"}, `{"limit":5,"path":"a"}`},
		{"ref", []string{"path=a", "ref=9"}, `{"path":"a","ref":9}`},
		{"untyped stays string", []string{"path=a", "free=12"}, `{"free":"12","path":"a"}`},
		{"raw json", []string{"path=a", `free:={"x":[1]}`}, `{"free":{"x":[1]},"path":"a"}`},
		{"raw json string", []string{`path:="12"`}, `{"path":"12"}`},
		{"value with equals", []string{"path=a=b"}, `{"path":"a=b"}`},
		{"empty value", []string{"path="}, `{"path":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build(tt.words, json.RawMessage(testSchema))
			if err != nil {
				t.Fatalf("Build(%q): %v", tt.words, err)
			}
			if string(got) != tt.want {
				t.Errorf("Build(%q) = %s, want %s", tt.words, got, tt.want)
			}
		})
	}
}

func TestBuildRefused(t *testing.T) {
	tests := []struct {
		name       string
		words      []string
		wantSubstr string
		validation bool
	}{
		{"wrong type", []string{"path=a", "count=abc"}, `argument "count"`, true},
		{"unknown key", []string{"path=a", "nope=1"}, `"nope"`, true},
		{"missing required", []string{"count=1"}, `missing required argument "path"`, true},
		{"bad enum", []string{"path=a", "mode=medium"}, `argument "mode"`, true},
		{"no equals", []string{"path"}, `want key=value`, false},
		{"empty key", []string{"=x"}, `empty key`, false},
		{"twice", []string{"path=a", "path=b"}, `given twice`, false},
		{"bad raw json", []string{"path:={"}, `not JSON`, false},
		{"json plus pairs", []string{`{"path":"a"}`, "count=1"}, `not both; a JSON object must be one word, so quote it whole: TOOL '{"path": "a b.txt", "n": 3}'`, false},
		// What a shell or script line leaves of an unquoted object.
		{"json split by a shell", []string{`{path:`, `a}`}, `arguments "{path: a}": give either one JSON object`, false},
		{"json not object", []string{`{"path":`}, `not a JSON object`, false},
		{"json quotes lost", []string{`{path:a}`}, `quote the object whole so its own quotes survive: TOOL '{`, false},
		{"json object invalid", []string{`{"path":1}`}, `argument "path"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.words, json.RawMessage(testSchema))
			if err == nil {
				t.Fatalf("Build(%q) succeeded, want error", tt.words)
			}
			if !strings.Contains(err.Error(), tt.wantSubstr) {
				t.Errorf("Build(%q) error %q, want it to contain %q", tt.words, err, tt.wantSubstr)
			}
			var ve *codec.ValidationError
			if got := errors.As(err, &ve); got != tt.validation {
				t.Errorf("errors.As(ValidationError) = %v, want %v (%v)", got, tt.validation, err)
			}
		})
	}
}

func TestBuildWithoutSchema(t *testing.T) {
	if got, err := Build(nil, nil); err != nil || string(got) != "{}" {
		t.Errorf("Build(nil) = %s, %v; want {}", got, err)
	}
	got, err := Build([]string{"a=1", "b=true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"1","b":"true"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestBrokenSchemaIsNotUsedForChecking(t *testing.T) {
	got, err := Build([]string{"a=1"}, json.RawMessage(`{"type": 12}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"1"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
