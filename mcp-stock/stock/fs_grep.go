package stock

import (
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_grep", fsGrepTool) }

func fsGrepTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_grep",
			Title: "Search file contents",
			Description: "Search a file, or every file under a directory, for lines matching a regular expression, and return them as \"path:line:text\" (path relative to the root, line numbers from 1). " +
				"With context N, also the N lines before and after each match, as \"path-line-text\", with \"--\" between groups that are not adjacent. " +
				searchDoc + " " +
				"At most maxResults matching lines (default 1000, at most 10000) and maxBytes of output (default 262144, at most 1024000), with a note giving the total when cut; lines longer than 4096 bytes are cut and marked. Prints \"[no matches]\" when nothing matched.",
			InputSchema: objectSchema([]string{"pattern"},
				searchProps,
				`"context": {"type": "integer", "minimum": 0, "maximum": 20, "default": 0,
					"description": "Lines of context to show before and after each match."}`,
				propMaxResults(DefaultMaxResults, "Most matching lines to return."),
				propMaxBytes("Most bytes of output."),
			),
			Annotations: readOnlyHints("Search file contents"),
		},
		Handler: rooted(fsGrep),
	}
}

type grepArgs struct {
	searchArgs
	Context    int `json:"context"`
	MaxResults int `json:"maxResults"`
	MaxBytes   int `json:"maxBytes"`
}

func (a *grepArgs) check() error {
	if a.Context < 0 || a.Context > 20 {
		return fmt.Errorf("context %d: want 0 to 20 lines", a.Context)
	}
	return nil
}

func fsGrep(c *tool.Call, r *jail.Root, args *grepArgs) error {
	maxMatches := capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit)
	s, err := newSearcher(c, r, &args.searchArgs)
	if err != nil {
		return err
	}
	// Context lines count against the byte cap only; the result cap is
	// on matching lines.
	out := newLineBuf(maxMatches*(2*args.Context+2), capInt(args.MaxBytes, DefaultMaxBytes, MaxBytesLimit))
	matches, shown := 0, 0
	lastPath, lastLine := "", 0
	emit := func(p string, n int, sep byte, line string) bool {
		if args.Context > 0 && lastPath != "" && (p != lastPath || n != lastLine+1) {
			if !out.Add("--") {
				return false
			}
		}
		lastPath, lastLine = p, n
		return out.Add(fmt.Sprintf("%s%c%d%c%s", p, sep, n, sep, line))
	}
	trailing := 0 // context lines still due after the last match shown
	s.context = args.Context
	s.onContext = func(p string, n int, line string) {
		// Lines before a match that will not be shown are left out; the
		// lines after the last match shown are not.
		if (trailing > 0 && p == lastPath && n == lastLine+1) || shown < maxMatches {
			trailing--
			if !out.Full() {
				emit(p, n, '-', line)
			}
		}
	}
	err = s.search(args.Path, func(p string, n int, line string) bool {
		// Keep counting past the caps, so the note can give the total.
		matches++
		if shown < maxMatches && !out.Full() && emit(p, n, ':', line) {
			shown++
			trailing = args.Context
		}
		return true
	})
	if err != nil {
		return err
	}
	c.Text(out.String())
	if matches == 0 {
		c.Text("[no matches]\n")
	}
	if shown < matches {
		total := matches
		if !s.complete() {
			total = -1
		}
		c.Text(truncNote(shown, total, "matching lines") + "\n")
	}
	c.Text(s.notes())
	return nil
}
