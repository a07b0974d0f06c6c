package stock

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_find",
			Title: "Find files by name, type, size or age",
			Description: "Walk a directory tree under the root and list the entries that pass every filter given: name (a glob on the entry's own name, e.g. \"*.log\"), type (file, directory, symlink), size bounds in bytes, modification age (modifiedWithin, a duration like \"24h\" or \"30m\"), and maxDepth (1: the directory's own entries). " +
				"Prints one path per line, relative to the root, directories with a trailing /, in name order; the starting directory itself is not listed. " +
				"Does not follow symlinks, skips directories named .git, visits at most 200000 entries and prints at most maxResults paths (default 1000, at most 10000) with a note giving the total. Prints \"[no matches]\" when nothing passed. Refuses paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propDirPath + `,
					"name": {"type": "string", "minLength": 1, "maxLength": 4096,
						"description": "Glob matched against each entry's name (not its path): * ? [abc] {a,b}."},
					"type": {"type": "string", "enum": ["file", "directory", "symlink", "any"], "default": "any",
						"description": "Only entries of this type."},
					"minSize": {"type": "integer", "minimum": 0, "description": "Only entries of at least this many bytes."},
					"maxSize": {"type": "integer", "minimum": 0, "description": "Only entries of at most this many bytes."},
					"modifiedWithin": {"type": "string", "maxLength": 64, "pattern": "^[0-9][0-9.]*(ns|us|µs|ms|s|m|h)([0-9.]+(ns|us|µs|ms|s|m|h))*$",
						"description": "Only entries modified less than this long ago: a Go duration such as \"90m\", \"24h\", \"1h30m\"."},
					"maxDepth": {"type": "integer", "minimum": 1, "maximum": 1000,
						"description": "How deep to descend: 1 lists the directory's own entries only. Default: no limit."},
					"maxResults": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000,
						"description": "Most paths to return."}
				},
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Find files by name, type, size or age"),
		},
		Handler: fsFind,
	})
}

func fsFind(c *tool.Call) error {
	var args struct {
		Path           string `json:"path"`
		Name           string `json:"name"`
		Type           string `json:"type"`
		MinSize        *int64 `json:"minSize"`
		MaxSize        *int64 `json:"maxSize"`
		ModifiedWithin string `json:"modifiedWithin"`
		MaxDepth       int    `json:"maxDepth"`
		MaxResults     int    `json:"maxResults"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if args.Path == "" {
		args.Path = "."
	}
	if args.Name != "" && (len(args.Name) > MaxPatternLen || !doublestar.ValidatePattern(args.Name)) {
		return fmt.Errorf("invalid name glob %q", args.Name)
	}
	var wantType fs.FileMode
	switch args.Type {
	case "", "any":
		args.Type = ""
	case "file":
		wantType = 0
	case "directory":
		wantType = fs.ModeDir
	case "symlink":
		wantType = fs.ModeSymlink
	default:
		return fmt.Errorf("type %q: want file, directory, symlink or any", args.Type)
	}
	var since time.Time
	if args.ModifiedWithin != "" {
		d, err := time.ParseDuration(args.ModifiedWithin)
		if err != nil || d <= 0 {
			return fmt.Errorf("modifiedWithin %q: want a positive duration such as \"24h\"", args.ModifiedWithin)
		}
		since = time.Now().Add(-d)
	}
	if args.MaxDepth < 0 {
		return fmt.Errorf("maxDepth %d: must be at least 1", args.MaxDepth)
	}
	needInfo := args.MinSize != nil || args.MaxSize != nil || !since.IsZero()
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
	w := &walker{c: c, r: r, maxDepth: args.MaxDepth}
	out := newLineBuf(capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit), MaxBytesLimit)
	err = w.walk(base, func(p string, d fs.DirEntry) error {
		if p == base {
			return nil
		}
		if args.Type != "" && d.Type().Type() != wantType {
			return nil
		}
		if args.Name != "" && !doublestar.MatchUnvalidated(args.Name, d.Name()) {
			return nil
		}
		if needInfo {
			// Metadata through the jail, never d.Info (see entryOf).
			info, err := r.Lstat(p)
			if err != nil {
				return nil
			}
			switch {
			case args.MinSize != nil && info.Size() < *args.MinSize,
				args.MaxSize != nil && info.Size() > *args.MaxSize,
				!since.IsZero() && info.ModTime().Before(since):
				return nil
			}
		}
		if d.IsDir() {
			p += "/"
		}
		out.Add(p)
		return nil
	})
	if err != nil {
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
