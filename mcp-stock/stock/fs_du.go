package stock

import (
	"io/fs"
	"sort"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_du", fsDuTool) }

func fsDuTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_du",
			Title: "Disk usage",
			Description: "Measure the disk usage of a file or directory tree under the root: total apparent size in bytes (of files and symlinks), space allocated on disk (directories included), and the numbers of files, directories, symlinks and other entries. " +
				"For a directory, also the usage of each immediate child, largest first (at most maxResults children, default 100, at most 10000, and about 512 KiB of JSON). " +
				"Hard-linked files count once; symlinks are counted, not followed; .git directories are included. Visits at most 200000 entries (complete is false when the limit cut the walk). Refuses paths that leave the root.",
			InputSchema: objectSchema(nil,
				propDirPath,
				propMaxResults(duDefaultChildren, "Most children to list."),
			),
			OutputSchema: schema(`{
				"type": "object",
				"properties": {
					"path": {"type": "string", "description": "Relative to the root."},
					` + usageProps + `,
					"children": {"type": "array", "description": "Immediate children of a directory, largest first.", "items": {
						"type": "object",
						"properties": {
							"name": {"type": "string"},
							` + usageProps + `
						},
						"required": ["name", "bytes", "diskBytes", "files", "dirs", "symlinks", "other"],
						"additionalProperties": false
					}},
					"childrenTruncated": {"type": "boolean"},
					"complete": {"type": "boolean", "description": "False when the walk limit cut the walk short."}
				},
				"required": ["path", "bytes", "diskBytes", "files", "dirs", "symlinks", "other", "complete"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Disk usage"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsDu),
	}
}

// duDefaultChildren is how many children fs_du lists by default.
const duDefaultChildren = 100

// usageProps are the output-schema properties of a usage.
const usageProps = `
	"bytes": {"type": "integer", "description": "Apparent size: the sum of the sizes of files and symlinks (directories not included)."},
	"diskBytes": {"type": "integer", "description": "Space allocated on disk."},
	"files": {"type": "integer"},
	"dirs": {"type": "integer"},
	"symlinks": {"type": "integer"},
	"other": {"type": "integer"}`

type usage struct {
	Bytes     int64 `json:"bytes"`
	DiskBytes int64 `json:"diskBytes"`
	Files     int   `json:"files"`
	Dirs      int   `json:"dirs"`
	Symlinks  int   `json:"symlinks"`
	Other     int   `json:"other"`
}

func (u *usage) add(fi fs.FileInfo, counted bool) {
	switch fi.Mode().Type() {
	case 0:
		u.Files++
	case fs.ModeDir:
		u.Dirs++
	case fs.ModeSymlink:
		u.Symlinks++
	default:
		u.Other++
	}
	if counted {
		return
	}
	if !fi.IsDir() {
		// A directory's own size is file-system bookkeeping, not content;
		// it shows in diskBytes.
		u.Bytes += fi.Size()
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		u.DiskBytes += st.Blocks * 512
	} else {
		u.DiskBytes += fi.Size()
	}
}

type childUsage struct {
	Name string `json:"name"`
	usage
}

func fsDu(c *tool.Call, r *jail.Root, args *dirArgs) error {
	limit := capInt(args.MaxResults, duDefaultChildren, MaxResultsLimit)
	base, err := r.ResolveRel(args.Path)
	if err != nil {
		return err
	}
	var total usage
	children := map[string]*usage{}
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	w := &walker{c: c, r: r, keepGit: true}
	err = w.walk(base, func(p string, d fs.DirEntry) error {
		// A fresh lstat through the jail, as fs_list and fs_find do.
		fi, err := r.Lstat(p)
		if err != nil {
			return nil // gone since the directory was read
		}
		counted := false
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 && !fi.IsDir() {
			k := inode{uint64(st.Dev), st.Ino}
			counted = seen[k]
			seen[k] = true
		}
		total.add(fi, counted)
		if p != base {
			name, _, _ := strings.Cut(relTo(base, p), "/")
			u := children[name]
			if u == nil {
				u = &usage{}
				children[name] = u
			}
			u.add(fi, counted)
		}
		return nil
	})
	if err != nil {
		return err
	}
	res := struct {
		Path string `json:"path"`
		usage
		Children          []childUsage `json:"children,omitempty"`
		ChildrenTruncated bool         `json:"childrenTruncated,omitempty"`
		Complete          bool         `json:"complete"`
	}{Path: base, usage: total, Complete: !w.limitHit}
	for name, u := range children {
		res.Children = append(res.Children, childUsage{name, *u})
	}
	sort.Slice(res.Children, func(i, j int) bool {
		a, b := res.Children[i], res.Children[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Name < b.Name
	})
	if len(res.Children) > limit {
		res.Children, res.ChildrenTruncated = res.Children[:limit], true
	}
	var budget jsonBudget
	for i, ch := range res.Children {
		if !budget.fits(ch) {
			res.Children, res.ChildrenTruncated = res.Children[:i], true
			break
		}
	}
	return c.JSON(res)
}
