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
			Name:  "fs_lines",
			Title: "Read a range of lines",
			Description: "Return lines start to end (1-based, inclusive) of a text file under the root, each prefixed with its line number unless numbered is false. " +
				"Reads the file only up to the last line wanted. At most 100000 lines per call (default end: start+1999) and maxBytes of output (default 262144, at most 1024000), with a note when cut; lines longer than 4096 bytes are cut and marked. " +
				"A range past the end of the file says how many lines the file has. " +
				"Refuses directories, binary files, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propPath + `,
					"start": {"type": "integer", "minimum": 1,
						"description": "First line to return (1-based)."},
					"end": {"type": "integer", "minimum": 1,
						"description": "Last line to return (inclusive); default start+1999."},
					"numbered": {"type": "boolean", "default": true,
						"description": "Prefix each line with its number and a tab."},
					"maxBytes": {"type": "integer", "minimum": 1, "maximum": 1024000, "default": 262144,
						"description": "Most bytes of output."}
				},
				"required": ["path", "start"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Read a range of lines"),
		},
		Handler: fsLines,
	})
}

func fsLines(c *tool.Call) error {
	var args struct {
		Path     string `json:"path"`
		Start    int    `json:"start"`
		End      int    `json:"end"`
		Numbered *bool  `json:"numbered"`
		MaxBytes int    `json:"maxBytes"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if args.Start < 1 {
		return fmt.Errorf("start %d: lines are numbered from 1", args.Start)
	}
	end := args.End
	if end == 0 {
		end = args.Start + DefaultMaxLines - 1
	}
	if end < args.Start {
		return fmt.Errorf("end %d is before start %d", end, args.Start)
	}
	numbered := args.Numbered == nil || *args.Numbered
	want := min(end-args.Start+1, MaxLinesLimit)
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
	n := 0 // lines read
	for out.Shown() < want && !out.Full() {
		line, full, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", args.Path, err)
		}
		if err := c.Context().Err(); err != nil {
			return err
		}
		n++
		if n < args.Start {
			continue
		}
		s := showLine(line, full)
		if numbered {
			s = fmt.Sprintf("%6d\t%s", n, s)
		}
		out.Add(s)
	}
	c.Text(out.String())
	switch {
	case out.Full():
		c.Textf("[truncated: %d of %d lines shown (%d-%d), byte cap reached]\n",
			out.Shown(), want, args.Start, args.Start+out.Shown()-1)
	case out.Shown() < end-args.Start+1 && n < end && out.Shown() < want:
		if n < args.Start {
			c.Textf("[the file has %d lines]\n", n)
		} else {
			c.Textf("[end of file at line %d]\n", n)
		}
	case want < end-args.Start+1:
		c.Textf("[truncated: %d of %d lines shown, at most %d per call]\n", want, end-args.Start+1, MaxLinesLimit)
	}
	return nil
}
