package stock

import (
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_grep_count", fsGrepCountTool) }

func fsGrepCountTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_grep_count",
			Title: "Count matching lines",
			Description: "Count the lines matching a regular expression in a file, or in every file under a directory: the total, and the count per file for files with at least one match (at most maxResults files listed, default 1000, at most 10000, and about 512 KiB of JSON; truncated says when more matched). " +
				searchDoc,
			InputSchema: objectSchema([]string{"pattern"},
				searchProps,
				propMaxResults(DefaultMaxResults, "Most files to list."),
			),
			OutputSchema: objectSchema([]string{"total", "files", "matchingFiles", "filesSearched", "binarySkipped", "truncated", "complete"},
				`"total": {"type": "integer", "description": "Matching lines in all files searched."}`,
				`"files": {"type": "array", "items": {
					"type": "object",
					"properties": {
						"path": {"type": "string", "description": "Relative to the root."},
						"count": {"type": "integer"}
					},
					"required": ["path", "count"],
					"additionalProperties": false
				}}`,
				`"matchingFiles": {"type": "integer", "description": "Files with at least one match."}`,
				`"filesSearched": {"type": "integer"}`,
				`"binarySkipped": {"type": "integer"}`,
				`"truncated": {"type": "boolean", "description": "Files with matches were left out of files."}`,
				`"complete": {"type": "boolean", "description": "False when a walk or read limit stopped the search early."}`,
			),
			Annotations: readOnlyHints("Count matching lines"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsGrepCount),
	}
}

type fileCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

type grepCountResult struct {
	Total         int         `json:"total"`
	Files         []fileCount `json:"files"`
	MatchingFiles int         `json:"matchingFiles"`
	FilesSearched int         `json:"filesSearched"`
	BinarySkipped int         `json:"binarySkipped"`
	Truncated     bool        `json:"truncated"`
	Complete      bool        `json:"complete"`
}

type grepCountArgs struct {
	searchArgs
	MaxResults int `json:"maxResults"`
}

func fsGrepCount(c *tool.Call, r *jail.Root, args *grepCountArgs) error {
	limit := capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit)
	s, err := newSearcher(c, r, &args.searchArgs)
	if err != nil {
		return err
	}
	res := grepCountResult{Files: []fileCount{}}
	last := ""
	var budget jsonBudget
	err = s.search(args.Path, func(p string, _ int, _ string) bool {
		res.Total++
		if p != last {
			last = p
			res.MatchingFiles++
			// A count has at most 20 digits: budget for the largest.
			if !res.Truncated && len(res.Files) < limit && budget.fits(fileCount{p, 1 << 62}) {
				res.Files = append(res.Files, fileCount{Path: p})
			} else {
				res.Truncated = true
			}
		}
		if n := len(res.Files); n > 0 && res.Files[n-1].Path == p {
			res.Files[n-1].Count++
		}
		return true
	})
	if err != nil {
		return err
	}
	res.FilesSearched, res.BinarySkipped, res.Complete = s.files, s.binary, s.complete()
	return c.JSON(res)
}
