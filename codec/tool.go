package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/internal/jsonschema"
	"github.com/mcpipe/mcpipe/internal/jsonschema/kind"
)

// MaxToolNameLen is the longest tool name 2025-11-25 allows.
const MaxToolNameLen = 128

// ValidateToolName checks the 2025-11-25 name rules: 1 to 128 characters, each
// one of A-Z a-z 0-9 _ - .
func ValidateToolName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	if n := utf8.RuneCountInString(name); n > MaxToolNameLen {
		return fmt.Errorf("name is %d characters long, the limit is %d", n, MaxToolNameLen)
	}
	// Characters, not bytes: "café" is refused for its 'é' (the 4th
	// character), not for a byte of it shown as 'Ã'.
	pos := 0
	for i, r := range name {
		pos++
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			continue
		}
		what := fmt.Sprintf("character %q (%U)", r, r)
		if r == utf8.RuneError {
			what = fmt.Sprintf("byte %#x (not UTF-8)", name[i])
		}
		//lint:ignore ST1005 the final "." is one of the allowed characters listed, not punctuation
		return fmt.Errorf("name %q has %s at position %d; allowed: A-Z a-z 0-9 _ - .", name, what, pos)
	}
	return nil
}

// ValidateTool checks a tool definition before it is advertised: the name
// rules of 2025-11-25, a non-blank description, an inputSchema that is a JSON
// Schema object with "type": "object" and compiles as JSON Schema 2020-12, and
// an outputSchema, when present, likewise. The error lists every problem.
func ValidateTool(t *Tool) error {
	if t == nil {
		return errors.New("codec: nil tool")
	}
	var errs []error
	if err := ValidateToolName(t.Name); err != nil {
		errs = append(errs, err)
	}
	if strings.TrimSpace(t.Description) == "" {
		errs = append(errs, errors.New("description is empty"))
	}
	if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
		errs = append(errs, errors.New("inputSchema is missing"))
	} else if err := checkObjectSchema(t.InputSchema); err != nil {
		errs = append(errs, fmt.Errorf("inputSchema: %w", err))
	}
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		if err := checkObjectSchema(t.OutputSchema); err != nil {
			errs = append(errs, fmt.Errorf("outputSchema: %w", err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	prefix := "tool"
	if t.Name != "" {
		prefix = fmt.Sprintf("tool %q", t.Name)
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s: %s", prefix, strings.Join(msgs, "; "))
}

func checkObjectSchema(raw json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return errors.New("not a JSON object")
	}
	typ, ok := top["type"]
	if !ok {
		return errors.New(`missing "type": "object"`)
	}
	if string(bytes.TrimSpace(typ)) != `"object"` {
		return fmt.Errorf(`"type" must be "object", got %s`, truncate(typ, 40))
	}
	_, err := CompileSchema(raw)
	return err
}

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct{ s *jsonschema.Schema }

// refuseLoader refuses every external reference: a tool definition must not
// make the router read files or reach the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q refused: schemas must be self-contained", url)
}

const schemaURL = "mem:///schema.json"

// CompileSchema compiles raw as a JSON Schema (2020-12 unless its $schema says
// otherwise). References outside the document are refused.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("schema must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %s", oneLine(err.Error()))
	}
	return &Schema{s: s}, nil
}

// ValidationError lists what is wrong with an instance. Each problem names the
// offending field.
type ValidationError struct {
	Problems []Problem
}

// Problem is one schema violation. Path is the instance location (object keys
// and array indices); Field is Path rendered for people ("a.b[2]"), "" at the
// root.
type Problem struct {
	Path    []string
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// Validate checks a tool call's arguments (empty means {}). The error, a
// *ValidationError, reads like `argument "count": got string, want integer`
// or `missing required argument "path"`.
func (s *Schema) Validate(instance json.RawMessage) error {
	return s.ValidateAs("argument", instance)
}

// ValidateAs is Validate with another noun for the fields ("field" when
// checking structuredContent against an outputSchema).
func (s *Schema) ValidateAs(noun string, instance json.RawMessage) error {
	if len(bytes.TrimSpace(instance)) == 0 {
		instance = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return &ValidationError{Problems: []Problem{{Message: "not valid JSON: " + err.Error()}}}
	}
	err = s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Problems: []Problem{{Message: err.Error()}}}
	}
	var probs []Problem
	collectProblems(ve, v, noun, &probs)
	if len(probs) == 0 {
		probs = []Problem{{Message: oneLine(ve.Error())}}
	}
	return &ValidationError{Problems: probs}
}

const maxProblems = 8

func collectProblems(ve *jsonschema.ValidationError, root any, noun string, out *[]Problem) {
	if len(*out) >= maxProblems {
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, root, noun, out)
		}
		return
	}
	path := ve.InstanceLocation
	field := renderPath(path, root)
	var msg string
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			p := append(slices.Clone(path), m)
			f := renderPath(p, root)
			*out = append(*out, Problem{Path: p, Field: f, Message: fmt.Sprintf("missing required %s %q", noun, f)})
		}
		return
	case *kind.AdditionalProperties:
		for _, m := range k.Properties {
			p := append(slices.Clone(path), m)
			f := renderPath(p, root)
			*out = append(*out, Problem{Path: p, Field: f, Message: fmt.Sprintf("unexpected %s %q", noun, f)})
		}
		return
	case *kind.FalseSchema:
		msg = "not allowed"
	default:
		msg = ve.ErrorKind.String()
	}
	if field == "" {
		*out = append(*out, Problem{Path: path, Message: fmt.Sprintf("%ss: %s", noun, msg)})
		return
	}
	*out = append(*out, Problem{Path: path, Field: field, Message: fmt.Sprintf("%s %q: %s", noun, field, msg)})
}

// renderPath joins an instance location as a.b[2], looking at the instance to
// tell array indices from keys that look like numbers.
func renderPath(path []string, root any) string {
	var b strings.Builder
	cur := root
	for _, tok := range path {
		switch c := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(c) {
				cur = c[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = c[tok]
		default:
			cur = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.Join(strings.Fields(s), " ")
}
