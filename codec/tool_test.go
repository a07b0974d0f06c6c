package codec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateToolName(t *testing.T) {
	ok := []string{"a", "fs_read", "get-weather", "tool.v2", "A_b-C.9", strings.Repeat("x", 128)}
	bad := []string{"", " ", "with space", "slash/name", "é", "emoji🙂", "colon:x", strings.Repeat("x", 129), "tab\t", "comma,"}
	for _, n := range ok {
		if err := ValidateToolName(n); err != nil {
			t.Errorf("%q: %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateToolName(n); err == nil {
			t.Errorf("%q accepted", n)
		}
	}
	// The message names the character the user wrote, not a byte of it.
	for name, want := range map[string]string{
		"café":                   `name "café" has character 'é' (U+00E9) at position 4; allowed: A-Z a-z 0-9 _ - .`,
		"a🙂b":                    `name "a🙂b" has character '🙂' (U+1F642) at position 2`,
		"x\xffy":                 `name "x\xffy" has byte 0xff (not UTF-8) at position 2`,
		strings.Repeat("é", 130): "name is 130 characters long",
	} {
		if err := ValidateToolName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", name, err, want)
		}
	}
}

func TestValidateTool(t *testing.T) {
	obj := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	tests := []struct {
		name string
		tool Tool
		want string // substring of the error; "" = valid
	}{
		{"valid", Tool{Name: "fs_read", Description: "Read a file", InputSchema: obj}, ""},
		{"valid with output", Tool{Name: "x", Description: "d", InputSchema: obj, OutputSchema: json.RawMessage(`{"type":"object"}`)}, ""},
		{"valid with defs", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","$defs":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`)}, ""},
		{"valid draft-07", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`)}, ""},
		{"bad name", Tool{Name: "bad name", Description: "d", InputSchema: obj}, "character ' '"},
		{"long name", Tool{Name: strings.Repeat("n", 129), Description: "d", InputSchema: obj}, "limit is 128"},
		{"no description", Tool{Name: "x", InputSchema: obj}, "description is empty"},
		{"blank description", Tool{Name: "x", Description: " \n", InputSchema: obj}, "description is empty"},
		{"no input schema", Tool{Name: "x", Description: "d"}, "inputSchema is missing"},
		{"null input schema", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`null`)}, "inputSchema is missing"},
		{"input not object", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`[]`)}, "inputSchema: not a JSON object"},
		{"input bool schema", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`true`)}, "inputSchema: not a JSON object"},
		{"input no type", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"properties":{}}`)}, `missing "type": "object"`},
		{"input wrong type", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"string"}`)}, `"type" must be "object"`},
		{"input type array", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":["object","null"]}`)}, `"type" must be "object"`},
		{"input does not compile", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"strnig"}}}`)}, "invalid schema"},
		{"input bad minimum", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","minProperties":"3"}`)}, "invalid schema"},
		{"input remote ref", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`)}, "refused"},
		{"input file ref", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`)}, "refused"},
		{"input dangling ref", Tool{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`)}, "invalid schema"},
		{"output wrong type", Tool{Name: "x", Description: "d", InputSchema: obj, OutputSchema: json.RawMessage(`{"type":"array"}`)}, "outputSchema"},
		{"several problems", Tool{Name: "", InputSchema: json.RawMessage(`{}`)}, "name is empty; description is empty; inputSchema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateTool(&tt.tool)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
	if ValidateTool(nil) == nil {
		t.Error("nil tool accepted")
	}
}

func TestSchemaValidateNamesField(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"path": {"type": "string"},
			"count": {"type": "integer", "minimum": 1},
			"mode": {"enum": ["r", "w"]},
			"opts": {"type": "object", "properties": {"depth": {"type": "integer"}}, "required": ["depth"]},
			"tags": {"type": "array", "items": {"type": "string"}}
		},
		"required": ["path"],
		"additionalProperties": false
	}`)
	s, err := CompileSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args string
		want []string // substrings, all required; nil = valid
	}{
		{`{"path":"a"}`, nil},
		{`{"path":"a","count":3,"mode":"r","opts":{"depth":1},"tags":["x"]}`, nil},
		{``, []string{`missing required argument "path"`}},
		{`{}`, []string{`missing required argument "path"`}},
		{`{"path":"a","count":"3"}`, []string{`argument "count": got string, want integer`}},
		{`{"path":"a","count":1.5}`, []string{`argument "count": got number, want integer`}},
		{`{"path":"a","count":0}`, []string{`argument "count":`, "minimum"}},
		{`{"path":"a","mode":"x"}`, []string{`argument "mode":`}},
		{`{"path":"a","opts":{}}`, []string{`missing required argument "opts.depth"`}},
		{`{"path":"a","opts":{"depth":"1"}}`, []string{`argument "opts.depth": got string, want integer`}},
		{`{"path":"a","tags":["x",2]}`, []string{`argument "tags[1]": got number, want string`}},
		{`{"path":"a","extra":1}`, []string{`unexpected argument "extra"`}},
		{`{"path":1,"count":"x"}`, []string{`argument "path"`, `argument "count"`}},
		{`[]`, []string{`arguments: got array, want object`}},
		{`{"path":`, []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		err := s.Validate(json.RawMessage(tt.args))
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.args, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tt.args)
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) == 0 {
			t.Errorf("%s: error %T is not a *ValidationError", tt.args, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", tt.args, err, w)
			}
		}
	}
	err = s.ValidateAs("field", json.RawMessage(`{"path":2}`))
	if err == nil || !strings.Contains(err.Error(), `field "path"`) {
		t.Errorf("ValidateAs: %v", err)
	}
}

func TestCompileSchemaRefusesNonObjects(t *testing.T) {
	for _, s := range []string{`1`, `"x"`, `[]`, `null`, `{`} {
		if _, err := CompileSchema(json.RawMessage(s)); err == nil {
			t.Errorf("%s compiled", s)
		}
	}
}

// TestSchemaLimitsPrintAsJSONNumbers: a limit in a message reads as the
// schema wrote it, not in a locale's notation ("1.024 × 10⁰⁶", "4,095").
func TestSchemaLimitsPrintAsJSONNumbers(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{
		"type": "object",
		"properties": {
			"size": {"type": "integer", "minimum": 0.5, "maximum": 1024000},
			"ratio": {"multipleOf": 0.1, "exclusiveMaximum": 1e300},
			"name": {"type": "string", "maxLength": 4095},
			"tags": {"type": "array", "minItems": 1200}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, want string }{
		{`{"size":2000000}`, `argument "size": maximum: got 2000000, want 1024000`},
		{`{"size":0}`, `argument "size": minimum: got 0, want 0.5`},
		{`{"ratio":0.15}`, `argument "ratio": multipleOf: got 0.15, want 0.1`},
		{`{"ratio":2e300}`, `argument "ratio": exclusiveMaximum: got 2e+300, want 1e+300`},
		{`{"name":"` + strings.Repeat("a", 5000) + `"}`, `argument "name": maxLength: got 5000, want 4095`},
		{`{"tags":[]}`, `argument "tags": minItems: got 0, want 1200`},
	}
	for _, tt := range tests {
		err := s.Validate(json.RawMessage(tt.args))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%.40s: got %v, want %s", tt.args, err, tt.want)
		}
	}
	if err := s.Validate(json.RawMessage(`{"size":1024000,"ratio":0.3,"name":"ok","tags":[]}`)); err == nil || strings.Contains(err.Error(), "size") || strings.Contains(err.Error(), "ratio") {
		t.Errorf("values within the limits: %v", err)
	}
}
