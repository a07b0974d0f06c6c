package stock

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_find", fsFindTool) }

func fsFindTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_find",
			Title: "Find files by name, type, size or age",
			Description: "Walk a directory tree under the root and list the entries that pass every filter given: name (a glob on the entry's own name, e.g. \"*.log\"), type (file, directory, symlink), size bounds in bytes, modification age (modifiedWithin, a duration like \"24h\" or \"30m\"), and maxDepth (1: the directory's own entries). " +
				"Prints one path per line, relative to the root, directories with a trailing /, in name order; the starting directory itself is not listed. " +
				"Does not follow symlinks, skips directories named .git, visits at most 200000 entries and prints at most maxResults paths (default 1000, at most 10000) with a note giving the total. Prints \"[no matches]\" when nothing passed. Refuses paths that leave the root.",
			InputSchema: objectSchema(nil,
				propDirPath,
				`"name": {"type": "string", "minLength": 1, "maxLength": 4096,
					"description": "Glob matched against each entry's name (not its path): * ? [abc] {a,b}."}`,
				`"type": {"type": "string", "enum": ["file", "directory", "symlink", "any"], "default": "any",
					"description": "Only entries of this type."}`,
				`"minSize": {"type": "integer", "minimum": 0, "description": "Only entries of at least this many bytes."}`,
				`"maxSize": {"type": "integer", "minimum": 0, "description": "Only entries of at most this many bytes."}`,
				`"modifiedWithin": {"type": "string", "maxLength": 64, "pattern": "^[0-9][0-9.]*(ns|us|µs|ms|s|m|h)([0-9.]+(ns|us|µs|ms|s|m|h))*$",
					"description": "Only entries modified less than this long ago: a Go duration such as \"90m\", \"24h\", \"1h30m\"."}`,
				`"maxDepth": {"type": "integer", "minimum": 1, "maximum": 1000,
					"description": "How deep to descend: 1 lists the directory's own entries only. Default: no limit."}`,
				propMaxResults(DefaultMaxResults, "Most paths to return."),
			),
			Annotations: readOnlyHints("Find files by name, type, size or age"),
		},
		Handler: rooted(fsFind),
	}
}

type findArgs struct {
	dirArgs
	Name           string `json:"name"`
	Type           string `json:"type"`
	MinSize        *int64 `json:"minSize"`
	MaxSize        *int64 `json:"maxSize"`
	ModifiedWithin string `json:"modifiedWithin"`
	MaxDepth       int    `json:"maxDepth"`

	wantType fs.FileMode // of Type, when not ""
	since    time.Time   // from ModifiedWithin; zero when unset
}

func (a *findArgs) check() error {
	a.dirArgs.check()
	if a.Name != "" && (len(a.Name) > MaxPatternLen || !doublestar.ValidatePattern(a.Name)) {
		return fmt.Errorf("invalid name glob %q", a.Name)
	}
	switch a.Type {
	case "", "any":
		a.Type = ""
	case "file":
		a.wantType = 0
	case "directory":
		a.wantType = fs.ModeDir
	case "symlink":
		a.wantType = fs.ModeSymlink
	default:
		return fmt.Errorf("type %q: want file, directory, symlink or any", a.Type)
	}
	if a.ModifiedWithin != "" {
		d, err := time.ParseDuration(a.ModifiedWithin)
		if err != nil || d <= 0 {
			return fmt.Errorf("modifiedWithin %q: want a positive duration such as \"24h\"", a.ModifiedWithin)
		}
		a.since = time.Now().Add(-d)
	}
	if a.MaxDepth < 0 {
		return fmt.Errorf("maxDepth %d: must be at least 1", a.MaxDepth)
	}
	return nil
}

func fsFind(c *tool.Call, r *jail.Root, args *findArgs) error {
	needInfo := args.MinSize != nil || args.MaxSize != nil || !args.since.IsZero()
	base, err := dirBase(r, args.Path)
	if err != nil {
		return err
	}
	w := &walker{c: c, r: r, maxDepth: args.MaxDepth}
	out, err := w.list(base, args.MaxResults, func(p string, d fs.DirEntry) bool {
		switch {
		case p == base,
			args.Type != "" && d.Type().Type() != args.wantType,
			args.Name != "" && !doublestar.MatchUnvalidated(args.Name, d.Name()):
			return false
		case !needInfo:
			return true
		}
		// A fresh lstat through the jail, as fs_list and fs_du do.
		info, err := r.Lstat(p)
		return err == nil &&
			(args.MinSize == nil || info.Size() >= *args.MinSize) &&
			(args.MaxSize == nil || info.Size() <= *args.MaxSize) &&
			(args.since.IsZero() || !info.ModTime().Before(args.since))
	})
	if err != nil {
		return err
	}
	w.writeList(c, out)
	return nil
}
