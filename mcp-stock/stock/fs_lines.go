package stock

import (
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_lines", fsLinesTool) }

func fsLinesTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_lines",
			Title: "Read a range of lines",
			Description: "Return lines start to end (1-based, inclusive) of a text file under the root, each prefixed with its line number unless numbered is false. " +
				"Reads the file only up to the last line wanted. At most 100000 lines per call (default end: start+1999) and maxBytes of output (default 262144, at most 1024000), with a note when cut; lines longer than 4096 bytes are cut and marked. " +
				"A range past the end of the file says how many lines the file has. " +
				"Refuses directories, binary files, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: objectSchema([]string{"path", "start"},
				propPath,
				`"start": {"type": "integer", "minimum": 1,
					"description": "First line to return (1-based)."}`,
				`"end": {"type": "integer", "minimum": 1,
					"description": "Last line to return (inclusive); default start+1999."}`,
				`"numbered": {"type": "boolean", "default": true,
					"description": "Prefix each line with its number and a tab."}`,
				propMaxBytes("Most bytes of output."),
			),
			Annotations: readOnlyHints("Read a range of lines"),
		},
		Handler: rooted(fsLines),
	}
}

type linesArgs struct {
	textFileArgs
	Start    int   `json:"start"`
	End      int   `json:"end"`
	Numbered *bool `json:"numbered"`
}

func (a *linesArgs) check() error {
	if a.Start < 1 {
		return fmt.Errorf("start %d: lines are numbered from 1", a.Start)
	}
	if a.End == 0 {
		a.End = a.Start + DefaultMaxLines - 1
	}
	if a.End < a.Start {
		return fmt.Errorf("end %d is before start %d", a.End, a.Start)
	}
	return nil
}

func fsLines(c *tool.Call, r *jail.Root, args *linesArgs) error {
	end := args.End
	numbered := args.Numbered == nil || *args.Numbered
	want := min(end-args.Start+1, MaxLinesLimit)
	f, _, err := openText(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	out := newLineBuf(want, args.maxBytes())
	n := 0 // lines read
	err = eachLine(c, f, args.Path, func(i int, line []byte, full int) bool {
		if n = i; n >= args.Start {
			s := showLine(line, full)
			if numbered {
				s = fmt.Sprintf("%6d\t%s", n, s)
			}
			out.Add(s)
		}
		return out.Shown() < want && !out.Full()
	})
	if err != nil {
		return err
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
