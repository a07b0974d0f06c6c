package stock

import (
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_first_match", fsFirstMatchTool) }

func fsFirstMatchTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_first_match",
			Title: "Find the first matching line",
			Description: "Find the first line matching a regular expression in a file, or in the files under a directory taken in name order, and stop there: returns whether one was found and its path (relative to the root), line number and text (cut at 4096 bytes). " +
				searchDoc,
			InputSchema: objectSchema([]string{"pattern"},
				searchProps,
			),
			OutputSchema: objectSchema([]string{"found"},
				`"found": {"type": "boolean"}`,
				`"path": {"type": "string", "description": "File of the match, relative to the root."}`,
				`"line": {"type": "integer", "description": "Line number, from 1."}`,
				`"text": {"type": "string", "description": "The matching line."}`,
				`"complete": {"type": "boolean", "description": "When nothing was found: false if a walk or read limit stopped the search early."}`,
			),
			Annotations: readOnlyHints("Find the first matching line"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsFirstMatch),
	}
}

type firstMatchResult struct {
	Found    bool    `json:"found"`
	Path     string  `json:"path,omitempty"`
	Line     int     `json:"line,omitempty"`
	Text     *string `json:"text,omitempty"`
	Complete *bool   `json:"complete,omitempty"`
}

func fsFirstMatch(c *tool.Call, r *jail.Root, args *searchArgs) error {
	s, err := newSearcher(c, r, args)
	if err != nil {
		return err
	}
	var res firstMatchResult
	err = s.search(args.Path, func(p string, n int, line string) bool {
		res.Found, res.Path, res.Line, res.Text = true, p, n, &line
		return false
	})
	if err != nil {
		return err
	}
	if !res.Found {
		complete := s.complete()
		res.Complete = &complete
	}
	return c.JSON(res)
}
