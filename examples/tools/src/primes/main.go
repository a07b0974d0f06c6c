// Command primes is an example mcp-route tool in Go, built on package
// mcp-route/tool: it counts the primes below a bound, reports progress while
// it sieves, and returns a structured ("json") result checked against its
// outputSchema. The definition lives in the code; mcp-route reads it with
// `primes --mcp-describe`.
//
// Build it outside the source tree and serve it with the other examples:
//
//	go build -o "$OUT/primes" ./examples/tools/src/primes
//	mcp-route --tools "examples/tools:$OUT" --root "$(mktemp -d)"
package main

import (
	"encoding/json"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

// maxBelow bounds the sieve's memory (one byte per number).
const maxBelow = 100_000_000

var definition = tool.Definition{
	Name:        "primes",
	Title:       "Primes",
	Description: "Count the prime numbers below a bound and give the largest one.",
	InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"below": {"type": "integer", "minimum": 2, "maximum": 100000000, "description": "The exclusive upper bound."}
		},
		"required": ["below"],
		"additionalProperties": false
	}`),
	OutputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"count": {"type": "integer", "description": "How many primes are below the bound."},
			"largest": {"type": "integer", "description": "The largest of them (0 when there is none)."}
		},
		"required": ["count", "largest"]
	}`),
	Annotations: &codec.ToolAnnotations{
		ReadOnlyHint:   codec.Bool(true),
		IdempotentHint: codec.Bool(true),
		OpenWorldHint:  codec.Bool(false),
	},
	Run: &tool.Run{Result: tool.ResultJSON, Timeout: "20s"},
}

type result struct {
	Count   int `json:"count"`
	Largest int `json:"largest"`
}

func main() { tool.Main(definition, primes) }

func primes(c *tool.Call) error {
	var args struct {
		Below int `json:"below"`
	}
	if err := c.Args(&args); err != nil {
		return err
	}
	if args.Below < 2 || args.Below > maxBelow {
		return tool.Errorf("below must be between 2 and %d, got %d", maxBelow, args.Below)
	}
	composite := make([]bool, args.Below)
	var r result
	const reports = 10
	step := max(args.Below/reports, 1)
	for n := 2; n < args.Below; n++ {
		if n%step == 0 {
			c.Progress(float64(n), float64(args.Below), "sieving")
		}
		if composite[n] {
			continue
		}
		r.Count++
		r.Largest = n
		for m := n * n; m < args.Below; m += n {
			composite[m] = true
		}
	}
	return c.JSON(r)
}
