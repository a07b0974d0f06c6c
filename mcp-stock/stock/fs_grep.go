package stock

import (
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_grep",
			Title: "Search file contents",
			Description: "Search a file, or every file under a directory, for lines matching a regular expression, and return them as \"path:line:text\" (path relative to the root, line numbers from 1). " +
				searchDoc + " " +
				"At most maxResults matching lines (default 1000, at most 10000) and maxBytes of output (default 262144, at most 1024000), with a note giving the total when cut; lines longer than 4096 bytes are cut and marked. Prints \"[no matches]\" when nothing matched.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {` + searchProps + `,
					"maxResults": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000,
						"description": "Most matching lines to return."},
					"maxBytes": {"type": "integer", "minimum": 1, "maximum": 1024000, "default": 262144,
						"description": "Most bytes of output."}
				},
				"required": ["pattern"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Search file contents"),
		},
		Handler: fsGrep,
	})
}

func fsGrep(c *tool.Call) error {
	var args struct {
		searchArgs
		MaxResults int `json:"maxResults"`
		MaxBytes   int `json:"maxBytes"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := newSearcher(c, r, &args.searchArgs)
	if err != nil {
		return err
	}
	out := newLineBuf(capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit), capInt(args.MaxBytes, DefaultMaxBytes, MaxBytesLimit))
	err = s.search(args.Path, func(p string, n int, line string) bool {
		// Keep counting past the cap, so the note can give the total.
		out.Add(fmt.Sprintf("%s:%d:%s", p, n, line))
		return true
	})
	if err != nil {
		return err
	}
	c.Text(out.String())
	if out.Seen() == 0 {
		c.Text("[no matches]\n")
	}
	if note := out.Note("matching lines", s.complete()); note != "" {
		c.Text(note + "\n")
	}
	c.Text(s.notes())
	return nil
}
