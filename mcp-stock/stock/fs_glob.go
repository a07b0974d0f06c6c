package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_glob",
			Title: "Find paths by glob",
			Description: "List the files and directories under a directory whose paths, relative to that directory, match a glob pattern: * and ? within one path element, ** across elements (\"**/*.go\", \"src/**/test_*.py\"), [abc] classes and {a,b} alternatives; * matches names starting with \".\" too. " +
				"Prints one path per line, relative to the root, directories with a trailing /, in name order. " +
				"Walks the tree without following symlinks and skips directories named .git (a pattern naming .git explicitly still reaches it); at most maxResults paths (default 1000, at most 10000) with a note giving the total, and at most 200000 entries visited. Prints \"[no matches]\" when nothing matched. Refuses paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					"pattern": {"type": "string", "minLength": 1, "maxLength": 4096,
						"description": "Glob pattern, relative to path, with / as separator."},
					` + propDirPath + `,
					"maxResults": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000,
						"description": "Most paths to return."}
				},
				"required": ["pattern"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Find paths by glob"),
		},
		Handler: fsGlob,
	})
}

func fsGlob(c *tool.Call) error {
	var args struct {
		Pattern    string `json:"pattern"`
		Path       string `json:"path"`
		MaxResults int    `json:"maxResults"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if args.Path == "" {
		args.Path = "."
	}
	pattern := strings.TrimPrefix(args.Pattern, "./")
	if pattern == "" || len(pattern) > MaxPatternLen || !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("invalid glob pattern %q", args.Pattern)
	}
	if strings.HasPrefix(pattern, "/") {
		return fmt.Errorf("glob pattern %q: must be relative to path", args.Pattern)
	}
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
	base, err := r.ResolveRel(args.Path)
	if err != nil {
		return err
	}
	fi, err := r.Stat(base)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", args.Path)
	}
	// Walk only below the pattern's fixed leading directories, and no
	// deeper than the pattern reaches when it has no **.
	prefix, rest := doublestar.SplitPattern(pattern)
	start := base
	if prefix != "." {
		start = subPath(base, prefix)
	}
	w := &walker{c: c, r: r}
	if !strings.Contains(rest, "**") {
		w.maxDepth = strings.Count(rest, "/") + 1
	}
	explicitGit := strings.Contains(pattern, ".git")
	w.keepGit = explicitGit
	out := newLineBuf(capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit), MaxBytesLimit)
	err = w.walk(start, func(p string, d fs.DirEntry) error {
		rel := p
		if base != "." {
			rel = strings.TrimPrefix(p, base+"/")
		}
		if p == base || !doublestar.MatchUnvalidated(pattern, rel) {
			return nil
		}
		if d.IsDir() {
			p += "/"
		}
		out.Add(p)
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist) && start != base:
		// The pattern's fixed directory is not there: nothing matches.
	case err != nil:
		return err
	}
	c.Text(out.String())
	if out.Seen() == 0 {
		c.Text("[no matches]\n")
	}
	if note := out.Note("paths", !w.limitHit); note != "" {
		c.Text(note + "\n")
	}
	c.Text(w.notes())
	return nil
}
