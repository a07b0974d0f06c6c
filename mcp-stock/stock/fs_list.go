package stock

import (
	"io/fs"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_list", fsListTool) }

func fsListTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_list",
			Title: "List a directory",
			Description: "List the entries of one directory under the root (not recursive; use fs_find or fs_glob for trees), sorted by name, each with its type, size, permission bits, modification time and, for a symlink that stays inside the root, its target. " +
				"At most maxResults entries (default 1000, at most 10000) and about 512 KiB of JSON; a longer listing says truncated and gives the total. " +
				"hidden: false leaves out names starting with \".\". Refuses paths that leave the root and paths that are not directories.",
			InputSchema: objectSchema(nil,
				propDirPath,
				`"hidden": {"type": "boolean", "default": true,
					"description": "Include entries whose names start with \".\"."}`,
				propMaxResults(DefaultMaxResults, "Most entries to return."),
			),
			OutputSchema: objectSchema([]string{"path", "entries", "total", "truncated"},
				`"path": {"type": "string", "description": "The directory, relative to the root."}`,
				`"entries": {"type": "array", "items": {
					"type": "object",
					"properties": {
						"name": {"type": "string"},
						"type": {"type": "string", "enum": ["file", "directory", "symlink", "fifo", "socket", "block-device", "char-device", "other"]},
						"size": {"type": "integer"},
						"mode": {"type": "string", "description": "Permission bits in octal."},
						"modTime": {"type": "string", "format": "date-time"},
						"target": {"type": "string", "description": "Symlink target, when it stays inside the root."}
					},
					"required": ["name", "type"],
					"additionalProperties": false
				}}`,
				`"total": {"type": "integer", "description": "Number of entries (after the hidden filter)."}`,
				`"truncated": {"type": "boolean"}`,
			),
			Annotations: readOnlyHints("List a directory"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsList),
	}
}

type listEntry struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Size    *int64 `json:"size,omitempty"`
	Mode    string `json:"mode,omitempty"`
	ModTime string `json:"modTime,omitempty"`
	Target  string `json:"target,omitempty"`
}

type listArgs struct {
	dirArgs
	Hidden *bool `json:"hidden"`
}

func fsList(c *tool.Call, r *jail.Root, args *listArgs) error {
	hidden := args.Hidden == nil || *args.Hidden
	limit := capInt(args.MaxResults, DefaultMaxResults, MaxResultsLimit)
	dir, err := r.ResolveRel(args.Path)
	if err != nil {
		return err
	}
	entries, err := r.ReadDir(dir)
	if err != nil {
		return err
	}
	res := struct {
		Path      string      `json:"path"`
		Entries   []listEntry `json:"entries"`
		Total     int         `json:"total"`
		Truncated bool        `json:"truncated"`
	}{Path: dir, Entries: []listEntry{}}
	var budget jsonBudget
	for _, d := range entries {
		if !hidden && strings.HasPrefix(d.Name(), ".") {
			continue
		}
		res.Total++
		if res.Truncated || len(res.Entries) == limit {
			res.Truncated = true
			continue
		}
		e := entryOf(r, subPath(dir, d.Name()), d)
		if !budget.fits(e) {
			res.Truncated = true
			continue
		}
		res.Entries = append(res.Entries, e)
	}
	return c.JSON(res)
}

// entryOf describes the entry d at path (relative to the root) as fs_stat
// would (see describe), from a fresh lstat through the jail.
func entryOf(r *jail.Root, path string, d fs.DirEntry) listEntry {
	e := listEntry{Name: d.Name(), Type: fileType(d.Type())}
	fi, err := r.Lstat(path)
	if err != nil {
		// Gone since the listing, or unreadable: name and type only.
		return e
	}
	// A link that leads out is still listed, its target unrevealed: the
	// error says only that.
	st, _ := describe(r, path, fi)
	e.Type, e.Size, e.Mode, e.ModTime, e.Target = st.Type, &st.Size, st.Mode, st.ModTime, st.Target
	return e
}

// subPath joins a directory path relative to the root, as the jail
// returned it, and an entry name read from that directory. The result is
// only ever given back to the jail.
func subPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
