package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// Result modes for Run.Result: how mcp-route reads the tool's stdout.
const (
	ResultText = "text" // stdout is one text block (the default)
	ResultJSON = "json" // stdout is one JSON value: structuredContent, and the same as text
	ResultMCP  = "mcp"  // stdout is a whole CallToolResult
)

// Definition is what a tool tells mcp-route about itself: the MCP Tool object
// and the router-only Run settings.
type Definition struct {
	Name        string // required; the MCP tool-name rules apply
	Title       string // optional
	Description string // required: the model reads it to choose the tool

	// InputSchema is the JSON Schema of the arguments object; nil means
	// {"type":"object"} (any arguments).
	InputSchema json.RawMessage
	// OutputSchema, optional, describes structuredContent; mcp-route checks
	// a "json" result against it.
	OutputSchema json.RawMessage

	Annotations *codec.ToolAnnotations // optional; codec.Bool makes the hints
	Icons       []codec.Icon           // optional

	Run *Run // optional; nil leaves every setting to mcp-route's flags
}

// Run holds the router-only settings of a definition, the "run" object; it
// is never sent to a client. Zero fields leave mcp-route's defaults.
type Run struct {
	Timeout   string            `json:"timeout,omitempty"`   // a Go duration, e.g. "30s"
	Result    string            `json:"result,omitempty"`    // ResultText, ResultJSON or ResultMCP
	MaxOutput int64             `json:"maxOutput,omitempty"` // stdout cap in bytes
	Env       map[string]string `json:"env,omitempty"`       // set for this tool
	PassEnv   []string          `json:"passEnv,omitempty"`   // passed on from mcp-route's environment
}

var anyObject = json.RawMessage(`{"type":"object"}`)

// MCP returns the Tool object a client sees, with the default InputSchema
// filled in.
func (d *Definition) MCP() codec.Tool {
	in := d.InputSchema
	if len(in) == 0 {
		in = anyObject
	}
	return codec.Tool{
		Name:         d.Name,
		Title:        d.Title,
		Description:  d.Description,
		InputSchema:  in,
		OutputSchema: d.OutputSchema,
		Annotations:  d.Annotations,
		Icons:        d.Icons,
	}
}

// Validate checks the definition as mcp-route will: the Tool object by
// codec.ValidateTool, and the Run settings.
func (d *Definition) Validate() error {
	t := d.MCP()
	if err := codec.ValidateTool(&t); err != nil {
		return err
	}
	if d.Run == nil {
		return nil
	}
	switch d.Run.Result {
	case "", ResultText, ResultJSON, ResultMCP:
	default:
		return fmt.Errorf("run.result %q: want %q, %q or %q", d.Run.Result, ResultText, ResultJSON, ResultMCP)
	}
	if d.Run.Timeout != "" {
		if v, err := time.ParseDuration(d.Run.Timeout); err != nil || v <= 0 {
			return fmt.Errorf("run.timeout %q: want a positive duration such as \"30s\"", d.Run.Timeout)
		}
	}
	if d.Run.MaxOutput < 0 {
		return fmt.Errorf("run.maxOutput %d: must not be negative", d.Run.MaxOutput)
	}
	return nil
}

// MarshalJSON writes the document --mcp-describe prints: the Tool object
// with "run" added when set.
func (d Definition) MarshalJSON() ([]byte, error) {
	t := d.MCP()
	b, err := marshal(t)
	if err != nil || d.Run == nil {
		return b, err
	}
	r, err := marshal(d.Run)
	if err != nil {
		return nil, err
	}
	// Splice "run" into the object rather than embed codec.Tool in a
	// wrapper struct, which would lose any MarshalJSON codec gives Tool.
	b = bytes.TrimSuffix(b, []byte("}"))
	b = append(b, `,"run":`...)
	b = append(b, r...)
	return append(b, '}'), nil
}

// marshal is json.Marshal without HTML escaping, so descriptions keep their
// <, > and & as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
