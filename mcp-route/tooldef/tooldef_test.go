package tooldef_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/servertest"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
	"github.com/mcpipe/mcpipe/mcp-route/tooldef"
)

// definitions is a table of Go tool definitions; want is "" for one the
// router must serve, else a word the refusal must contain.
var definitions = []struct {
	def  tool.Definition
	want string
}{
	{tool.Definition{Name: "minimal", Description: "d"}, ""},
	{tool.Definition{Name: "full", Title: "Full", Description: "d",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations:  &codec.ToolAnnotations{ReadOnlyHint: codec.Bool(true)},
		Run:          &tool.Run{Timeout: "3s", Result: tool.ResultJSON, MaxOutput: 10, Env: map[string]string{"A": "1"}, PassEnv: []string{"B"}}}, ""},
	{tool.Definition{Name: "zero-run", Description: "d", Run: &tool.Run{}}, ""},
	{tool.Definition{Name: "no-description"}, "description"},
	{tool.Definition{Name: "has space", Description: "d"}, "name"},
	{tool.Definition{Name: "string-input", Description: "d", InputSchema: json.RawMessage(`{"type":"string"}`)}, "inputSchema"},
	{tool.Definition{Name: "uncompilable", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"nope"}}}`)}, "inputSchema"},
	{tool.Definition{Name: "array-output", Description: "d", OutputSchema: json.RawMessage(`{"type":"array"}`)}, "outputSchema"},
	{tool.Definition{Name: "bad-result", Description: "d", Run: &tool.Run{Result: "xml"}}, "run.result"},
	{tool.Definition{Name: "bad-timeout", Description: "d", Run: &tool.Run{Timeout: "soon"}}, "run.timeout"},
	{tool.Definition{Name: "negative-timeout", Description: "d", Run: &tool.Run{Timeout: "-1s"}}, "run.timeout"},
	{tool.Definition{Name: "negative-output", Description: "d", Run: &tool.Run{MaxOutput: -1}}, "run.maxOutput"},
	{tool.Definition{Name: "bad-env", Description: "d", Run: &tool.Run{Env: map[string]string{"A=B": "x"}}}, "run.env"},
	{tool.Definition{Name: "nul-env", Description: "d", Run: &tool.Run{Env: map[string]string{"A\x00": "x"}}}, "run.env"},
	{tool.Definition{Name: "empty-pass", Description: "d", Run: &tool.Run{PassEnv: []string{""}}}, "run.passEnv"},
	{tool.Definition{Name: "worker", Description: "d", Run: &tool.Run{Mode: tooldef.ModeWorker, Workers: 3, Concurrency: 4, Idle: "5s", MaxCalls: 100, MaxRSS: 1 << 20}}, ""},
	{tool.Definition{Name: "exec", Description: "d", Run: &tool.Run{Mode: tooldef.ModeExec}}, ""},
	{tool.Definition{Name: "bad-mode", Description: "d", Run: &tool.Run{Mode: "daemon"}}, "run.mode"},
	{tool.Definition{Name: "negative-workers", Description: "d", Run: &tool.Run{Workers: -1}}, "run.workers"},
	{tool.Definition{Name: "negative-concurrency", Description: "d", Run: &tool.Run{Concurrency: -2}}, "run.concurrency"},
	{tool.Definition{Name: "negative-max-calls", Description: "d", Run: &tool.Run{MaxCalls: -1}}, "run.maxCalls"},
	{tool.Definition{Name: "negative-max-rss", Description: "d", Run: &tool.Run{MaxRSS: -1}}, "run.maxRSS"},
	{tool.Definition{Name: "bad-idle", Description: "d", Run: &tool.Run{Idle: "a while"}}, "run.idle"},
	{tool.Definition{Name: "zero-idle", Description: "d", Run: &tool.Run{Idle: "0s"}}, "run.idle"},
}

// TestValidateAgreesWithTheRouter runs every definition through both sides:
// tool.Definition.Validate in the tool, and a real Registry loading a tool
// whose --mcp-describe prints the definition. One must accept exactly what
// the other serves, and refuse for the same reason.
func TestValidateAgreesWithTheRouter(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range definitions {
		doc, err := tt.def.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", tt.def.Name, err)
		}
		file := strings.ReplaceAll(tt.def.Name, " ", "_")
		script := "#!/bin/sh\n[ \"$1\" = --mcp-describe ] || exit 1\ncat <<'EOF'\n" + string(doc) + "\nEOF\n"
		if err := os.WriteFile(filepath.Join(dir, file), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var log servertest.Log
	reg := registry.New(registry.Options{
		Dirs:        []string{dir},
		DescribeEnv: []string{"PATH=/usr/bin:/bin"},
		Logger:      log.Logger(),
	})
	reg.Reload(context.Background())
	logs := log.Lines()

	for _, tt := range definitions {
		vErr := tt.def.Validate()
		served := reg.Lookup(tt.def.Name) != nil
		switch {
		case tt.want == "" && (vErr != nil || !served):
			t.Errorf("%s: Validate %v, served %v; want accepted and served", tt.def.Name, vErr, served)
		case tt.want != "" && (vErr == nil || served):
			t.Errorf("%s: Validate %v, served %v; want refused and left out", tt.def.Name, vErr, served)
		case tt.want != "" && !strings.Contains(vErr.Error(), tt.want):
			t.Errorf("%s: Validate says %q, want it to name %s", tt.def.Name, vErr, tt.want)
		case tt.want != "" && !logged(logs, vErr.Error()):
			t.Errorf("%s: the router's log does not give Validate's reason %q:\n%s", tt.def.Name, vErr, strings.Join(logs, "\n"))
		}
	}
}

func logged(logs []string, reason string) bool {
	for _, l := range logs {
		if strings.Contains(l, reason) {
			return true
		}
	}
	return false
}

// TestParseDefaultsAndRefusals covers what a Go definition cannot express:
// a document without a name or inputSchema, and a malformed "run".
func TestParseDefaultsAndRefusals(t *testing.T) {
	d, err := tooldef.Parse([]byte(`{"description":"d","outputSchema":null}`), "file")
	if err != nil {
		t.Fatal(err)
	}
	if d.Tool.Name != "file" || string(d.Tool.InputSchema) != `{"type":"object"}` || d.Tool.OutputSchema != nil || d.Output != nil || d.Run.ResultMode() != tooldef.ResultText {
		t.Errorf("defaults: %+v", d)
	}
	if err := d.Input.Validate(json.RawMessage(`{"any":1}`)); err != nil {
		t.Errorf("default inputSchema refused arguments: %v", err)
	}
	for doc, want := range map[string]string{
		`[]`:                               "not a JSON object",
		`{"description":"d","run":"fast"}`: "run:",
		`{"description":"d","run":{"timeout":30}}`: "run:",
		`{"description":"d","name":""}`:            "name is empty",
	} {
		_, err := tooldef.Parse([]byte(doc), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", doc, err, want)
		}
	}
}

// TestRunLimits: run.limitMem, limitPids and limitCpu are read as the
// flags take them, and a bad one is refused naming the member and what is
// wanted: "512" is not taken for 512 MiB.
func TestRunLimits(t *testing.T) {
	d, err := tooldef.Parse([]byte(`{"description":"d","run":{"limitMem":"256MiB","limitPids":64,"limitCpu":"10s"}}`), "x")
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.LimitMemBytes() != 256<<20 || d.Run.LimitPids != 64 || d.Run.LimitCPUDuration() != 10*time.Second {
		t.Errorf("limits: %+v", d.Run)
	}
	for doc, want := range map[string]string{
		`{"description":"d","run":{"limitMem":"512"}}`:     `run.limitMem: "512": want a size such as "512MiB"`,
		`{"description":"d","run":{"limitMem":"lots"}}`:    `run.limitMem: "lots"`,
		`{"description":"d","run":{"limitMem":"1.5G"}}`:    `run.limitMem: "1.5G"`,
		`{"description":"d","run":{"limitPids":-1}}`:       "run.limitPids -1: want a positive number",
		`{"description":"d","run":{"limitCpu":"forever"}}`: `run.limitCpu "forever": want a positive duration`,
		`{"description":"d","run":{"limitCpu":"-1s"}}`:     `run.limitCpu "-1s"`,
	} {
		if _, err := tooldef.Parse([]byte(doc), "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", doc, err, want)
		}
	}
	for s, want := range map[string]int64{"0": 0, "1MiB": 1 << 20, "2G": 2 << 30, "3GB": 3 << 30, "1048576": 1 << 20, "1T": 1 << 40, "4096K": 4 << 20} {
		if got, err := tooldef.ParseSize(s); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "M", "1X", "-1G", "99999999999999999T", "1023K"} {
		if _, err := tooldef.ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) accepted", s)
		}
	}
}
