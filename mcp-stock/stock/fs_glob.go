package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_glob", fsGlobTool) }

func fsGlobTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_glob",
			Title: "Find paths by glob",
			Description: "List the files and directories under a directory whose paths, relative to that directory, match a glob pattern: * and ? within one path element, ** across elements (\"**/*.go\", \"src/**/test_*.py\"), [abc] classes and {a,b} alternatives; * matches names starting with \".\" too. " +
				"Prints one path per line, relative to the root, directories with a trailing /, in name order. " +
				"Walks the tree without following symlinks and skips directories named .git (a pattern naming .git explicitly still reaches it); at most maxResults paths (default 1000, at most 10000) with a note giving the total, and at most 200000 entries visited. Prints \"[no matches]\" when nothing matched. Refuses paths that leave the root.",
			InputSchema: objectSchema([]string{"pattern"},
				`"pattern": {"type": "string", "minLength": 1, "maxLength": 4096,
					"description": "Glob pattern, relative to path, with / as separator."}`,
				propDirPath,
				propMaxResults(DefaultMaxResults, "Most paths to return."),
			),
			Annotations: readOnlyHints("Find paths by glob"),
		},
		Handler: rooted(fsGlob),
	}
}

type globArgs struct {
	dirArgs
	Pattern string `json:"pattern"`

	pattern string // Pattern, without a leading "./"
}

func (a *globArgs) check() error {
	a.dirArgs.check()
	a.pattern = strings.TrimPrefix(a.Pattern, "./")
	if a.pattern == "" || len(a.pattern) > MaxPatternLen || !doublestar.ValidatePattern(a.pattern) {
		return fmt.Errorf("invalid glob pattern %q", a.Pattern)
	}
	if strings.HasPrefix(a.pattern, "/") {
		return fmt.Errorf("glob pattern %q: must be relative to path", a.Pattern)
	}
	return nil
}

func fsGlob(c *tool.Call, r *jail.Root, args *globArgs) error {
	pattern := args.pattern
	base, err := dirBase(r, args.Path)
	if err != nil {
		return err
	}
	// Walk only below the pattern's fixed leading directories, and no
	// deeper than the pattern reaches when it has no **.
	prefix, rest := doublestar.SplitPattern(pattern)
	start := base
	if prefix != "." {
		start = subPath(base, prefix)
	}
	w := &walker{c: c, r: r, keepGit: strings.Contains(pattern, ".git")}
	if !strings.Contains(rest, "**") {
		w.maxDepth = strings.Count(rest, "/") + 1
	}
	out, err := w.list(start, args.MaxResults, func(p string, d fs.DirEntry) bool {
		return p != base && doublestar.MatchUnvalidated(pattern, relTo(base, p))
	})
	switch {
	case errors.Is(err, fs.ErrNotExist) && start != base:
		// The pattern's fixed directory is not there: nothing matches.
	case err != nil:
		return err
	}
	w.writeList(c, out)
	return nil
}
