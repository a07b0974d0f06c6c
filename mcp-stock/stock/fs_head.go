package stock

import (
	"fmt"
	"io"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_head",
			Title: "First lines of a file",
			Description: "Return the first lines of a text file under the root (default 10, at most 100000), reading only as much of the file as needed. " +
				"Output is bounded by maxBytes (default 262144, at most 1024000) with a note when cut; lines longer than 4096 bytes are cut and marked. " +
				"Refuses directories, binary files, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propPath + `,
					"lines": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 10,
						"description": "How many lines to return from the start."},
					"maxBytes": {"type": "integer", "minimum": 1, "maximum": 1024000, "default": 262144,
						"description": "Most bytes of output."}
				},
				"required": ["path"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("First lines of a file"),
		},
		Handler: fsHead,
	})
}

func fsHead(c *tool.Call) error {
	var args struct {
		Path     string `json:"path"`
		Lines    int    `json:"lines"`
		MaxBytes int    `json:"maxBytes"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	want := capInt(args.Lines, 10, MaxLinesLimit)
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
	f, _, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkText(f, args.Path); err != nil {
		return err
	}
	out := newLineBuf(want, capInt(args.MaxBytes, DefaultMaxBytes, MaxBytesLimit))
	lr := newLineReader(f)
	for out.Shown() < want && !out.Full() {
		line, full, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", args.Path, err)
		}
		out.Add(showLine(line, full))
	}
	c.Text(out.String())
	if out.Full() {
		c.Text(fmt.Sprintf("[truncated: %d of %d lines shown, byte cap reached]\n", out.Shown(), want))
	}
	return nil
}
