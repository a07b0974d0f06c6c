package stock

import (
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_head", fsHeadTool) }

func fsHeadTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_head",
			Title: "First lines of a file",
			Description: "Return the first lines of a text file under the root (default 10, at most 100000), reading only as much of the file as needed. " +
				"Output is bounded by maxBytes (default 262144, at most 1024000) with a note when cut; lines longer than 4096 bytes are cut and marked. " +
				"Refuses directories, binary files, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				propLines("How many lines to return from the start."),
				propMaxBytes("Most bytes of output."),
			),
			Annotations: readOnlyHints("First lines of a file"),
		},
		Handler: rooted(fsHead),
	}
}

// endLinesArgs are the arguments of fs_head and fs_tail.
type endLinesArgs struct {
	textFileArgs
	Lines int `json:"lines"`
}

// want is how many lines the call asks for: lines, by default 10.
func (a *endLinesArgs) want() int { return capInt(a.Lines, defaultEndLines, MaxLinesLimit) }

// defaultEndLines is how many lines fs_head and fs_tail return by default.
const defaultEndLines = 10

func fsHead(c *tool.Call, r *jail.Root, args *endLinesArgs) error {
	want := args.want()
	f, _, err := openText(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	out := newLineBuf(want, args.maxBytes())
	err = eachLine(c, f, args.Path, func(_ int, line []byte, full int) bool {
		out.Add(showLine(line, full))
		return out.Shown() < want && !out.Full()
	})
	if err != nil {
		return err
	}
	c.Text(out.String())
	if out.Full() {
		c.Text(fmt.Sprintf("[truncated: %d of %d lines shown, byte cap reached]\n", out.Shown(), want))
	}
	return nil
}
