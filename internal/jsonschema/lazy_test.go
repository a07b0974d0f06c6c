package jsonschema

import (
	"strings"
	"testing"
)

// TestMetaschemasCompiledOnFirstUse holds the one change from upstream: no
// draft is compiled by linking the package, a schema compile compiles its own
// draft only, and the lazily compiled metaschema still refuses a bad schema.
func TestMetaschemasCompiledOnFirstUse(t *testing.T) {
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.sch != nil || d.subschemas != nil {
			t.Fatalf("%s compiled (or its subschema list parsed) before any schema was", d)
		}
	}
	// The first compiles race each other, as the registry's describe
	// workers do; go test -race checks the once.
	compile := func(src string) (*Schema, error) {
		c := NewCompiler()
		c.DefaultDraft(Draft2020)
		doc, _ := UnmarshalJSON(strings.NewReader(src))
		if err := c.AddResource("mem:///s.json", doc); err != nil {
			return nil, err
		}
		return c.Compile("mem:///s.json")
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := compile(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatalf("valid schema: %v", err)
		}
	}
	s, err := compile(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	if err != nil {
		t.Fatalf("valid schema: %v", err)
	}
	if Draft2020.sch == nil || len(Draft2020.vocabSch) != len(Draft2020.allVocabs) {
		t.Errorf("Draft2020 not compiled after compiling a 2020-12 schema")
	}
	if Draft4.sch != nil || Draft7.sch != nil {
		t.Errorf("drafts nobody used were compiled")
	}
	inst, _ := UnmarshalJSON(strings.NewReader(`{"n":"x"}`))
	if err := s.Validate(inst); err == nil {
		t.Errorf(`{"n":"x"} passed a schema that wants an integer`)
	}

	if _, err := compile(`{"type":"object","minProperties":"two"}`); err == nil || !strings.Contains(err.Error(), "minProperties") {
		t.Errorf(`"minProperties": "two" compiled (err %v); the metaschema should refuse it`, err)
	}
}
