package tool

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/tooldef"
)

// Result modes for Run.Result: how mcp-route reads the tool's stdout.
const (
	ResultText = tooldef.ResultText // stdout is one text block (the default)
	ResultJSON = tooldef.ResultJSON // stdout is one JSON value: structuredContent, and the same as text
	ResultMCP  = tooldef.ResultMCP  // stdout is a whole CallToolResult
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
// is never sent to a client. Zero fields leave mcp-route's defaults. Its
// fields and rules are package tooldef's, which the router uses too.
type Run = tooldef.Run

// MCP returns the Tool object a client sees, with the default InputSchema
// filled in.
func (d *Definition) MCP() codec.Tool {
	in := d.InputSchema
	if len(in) == 0 {
		in = tooldef.AnyObject
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

// Validate checks the definition exactly as mcp-route will: it parses the
// document --mcp-describe prints with tooldef.Parse, the router's own
// parser, so a definition that passes is one the router serves, and one the
// router would leave out fails here with the same reason.
func (d *Definition) Validate() error {
	doc, err := d.MarshalJSON()
	if err != nil {
		return fmt.Errorf("definition does not marshal to JSON: %v", err)
	}
	_, err = tooldef.Parse(doc, "")
	return err
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
