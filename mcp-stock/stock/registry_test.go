package stock

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// readRoster is the read part of DESIGN.md's roster, which this file's
// author owns; the full roster is checked once every tool is registered.
var readRoster = []string{
	"fs_read", "fs_list", "fs_glob", "fs_count", "fs_grep", "fs_grep_count",
	"fs_first_match", "fs_find", "fs_stat", "fs_readlink", "fs_realpath", "fs_du",
	"fs_head", "fs_tail", "fs_slice", "fs_hash", "fs_exists", "fs_lines",
}

var mutatingRoster = []string{
	"fs_write", "fs_append", "fs_replace", "fs_chmod", "fs_mkdir", "fs_touch",
	"fs_rmdir", "fs_delete", "fs_copy", "fs_move", "sh_exec",
}

var systemRoster = []string{"env_get", "time_now", "sys_info"}

func TestReadRoster(t *testing.T) {
	for _, name := range readRoster {
		tl, ok := Lookup(name)
		if !ok {
			t.Errorf("%s: not registered", name)
			continue
		}
		if tl.Kind != KindRead {
			t.Errorf("%s: kind %v, want read", name, tl.Kind)
		}
	}
}

// TestRoster checks the whole pack: 32 tools, 21 read-only. It skips while
// the mutating and system tools are still missing from this package.
func TestRoster(t *testing.T) {
	all := Tools(false)
	for _, group := range [][]string{mutatingRoster, systemRoster} {
		for _, name := range group {
			if _, ok := Lookup(name); !ok {
				t.Skipf("%s is not registered yet", name)
			}
		}
	}
	if len(all) != 32 {
		t.Errorf("%d tools, want 32", len(all))
	}
	if n := len(Tools(true)); n != 21 {
		t.Errorf("%d read-only tools, want 21", n)
	}
	for _, name := range mutatingRoster {
		if tl, _ := Lookup(name); tl.Kind != KindMutating {
			t.Errorf("%s: kind %v, want mutating", name, tl.Kind)
		}
	}
	for _, name := range systemRoster {
		if tl, _ := Lookup(name); tl.Kind != KindSystem {
			t.Errorf("%s: kind %v, want system", name, tl.Kind)
		}
	}
}

// TestDefinitions checks every registered definition as mcp-route will,
// and the house rules: schemas closed and bounded, honest annotations, an
// outputSchema exactly when the result mode is json.
func TestDefinitions(t *testing.T) {
	for _, tl := range Tools(false) {
		d := tl.Def
		t.Run(d.Name, func(t *testing.T) {
			mcp := d.MCP()
			if err := codec.ValidateTool(&mcp); err != nil {
				t.Errorf("ValidateTool: %v", err)
			}
			if err := d.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if _, err := codec.CompileSchema(d.InputSchema); err != nil {
				t.Errorf("inputSchema does not compile: %v", err)
			}
			if len(d.OutputSchema) > 0 {
				if _, err := codec.CompileSchema(d.OutputSchema); err != nil {
					t.Errorf("outputSchema does not compile: %v", err)
				}
			}
			if _, err := tool.Describe(d); err != nil {
				t.Errorf("Describe: %v", err)
			}
			var in struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(d.InputSchema, &in); err != nil {
				t.Fatal(err)
			}
			if in.AdditionalProperties == nil || *in.AdditionalProperties {
				t.Errorf("inputSchema: additionalProperties is not false")
			}
			for _, r := range in.Required {
				if _, ok := in.Properties[r]; !ok {
					t.Errorf("inputSchema: required %q is not a property", r)
				}
			}
			for name, raw := range in.Properties {
				var p struct {
					Type        string `json:"type"`
					Description string `json:"description"`
					MaxLength   *int   `json:"maxLength"`
					Pattern     string `json:"pattern"`
					Enum        []any  `json:"enum"`
				}
				if err := json.Unmarshal(raw, &p); err != nil {
					t.Fatal(err)
				}
				if p.Type == "" {
					t.Errorf("argument %s: no type", name)
				}
				if p.Description == "" {
					t.Errorf("argument %s: no description", name)
				}
				if p.Type == "string" && p.MaxLength == nil && p.Enum == nil && p.Pattern == "" {
					t.Errorf("argument %s: a string without maxLength", name)
				}
			}
			for _, arg := range []string{"file", "filename", "dir", "src", "dst", "from", "to"} {
				if _, ok := in.Properties[arg]; ok {
					t.Errorf("argument %q: paths are called path (source and destination for copy and move)", arg)
				}
			}
			a := d.Annotations
			if a == nil || a.ReadOnlyHint == nil {
				t.Fatalf("no readOnlyHint")
			}
			if *a.ReadOnlyHint != tl.ReadOnly() {
				t.Errorf("readOnlyHint %v, but kind %v", *a.ReadOnlyHint, tl.Kind)
			}
			if !tl.ReadOnly() && (a.DestructiveHint == nil || a.IdempotentHint == nil) {
				t.Errorf("a mutating tool states destructiveHint and idempotentHint")
			}
			// Data goes out as structuredContent: result mode json (or a
			// whole mcp result), described by an outputSchema.
			mode := tool.ResultText
			if d.Run != nil && d.Run.Result != "" {
				mode = d.Run.Result
			}
			hasOut := len(d.OutputSchema) > 0
			if mode == tool.ResultJSON && !hasOut {
				t.Errorf("result mode json without an outputSchema")
			}
			if hasOut && mode == tool.ResultText {
				t.Errorf("an outputSchema, but result mode text: no structuredContent")
			}
			if d.Title == "" {
				t.Errorf("no title")
			}
			if !strings.HasSuffix(strings.TrimSpace(d.Description), ".") {
				t.Errorf("description does not end a sentence: %q", d.Description)
			}
		})
	}
}

func TestToolsSorted(t *testing.T) {
	var names []string
	for _, tl := range Tools(false) {
		names = append(names, tl.Def.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("Tools not sorted: %v", names)
	}
	for _, tl := range Tools(true) {
		if !tl.ReadOnly() {
			t.Errorf("Tools(true) holds %s", tl.Def.Name)
		}
	}
}
