package stock

import (
	"fmt"
	"io/fs"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_delete", fsDeleteTool) }

func fsDeleteTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_delete",
			Title: "Delete a file or tree",
			Description: "Delete a file, a symlink (the link, never its target) or an empty directory under the root; with recursive: true, a directory and everything below it (symlinks inside are removed, never followed). " +
				"A path that does not exist is an error. Refuses the root itself and paths that leave the root. There is no undo.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"recursive": {"type": "boolean", "default": false,
					"description": "Delete a non-empty directory and all its contents. Default false."}`,
			),
			Annotations: mutatingHints("Delete a file or tree", true, true),
		},
		Handler: rooted(fsDelete),
	}
}

type deleteArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func fsDelete(c *tool.Call, r *jail.Root, args *deleteArgs) error {
	fi, err := r.Lstat(args.Path)
	if err != nil {
		return err
	}
	if rel, err := r.ResolveRel(args.Path); err == nil && rel == "." && fi.IsDir() {
		// The root reached through ".." or a symlink to ".": the jail
		// refuses the lexical root; this names the rest.
		return fmt.Errorf("%s: is the root, which fs_delete never removes", args.Path)
	}
	if !fi.IsDir() {
		if err := r.Remove(args.Path); err != nil {
			return err
		}
		c.Textf("deleted %s %s\n", fileType(fi.Mode()), args.Path)
		return nil
	}
	if !args.Recursive {
		if err := removeEmptyDir(r, args.Path, "set recursive: true to delete it and its contents"); err != nil {
			return err
		}
		c.Textf("deleted directory %s\n", args.Path)
		return nil
	}
	// Count what goes, for the report; the count stops at MaxWalk.
	var n int64
	counted := true
	err = r.WalkDir(args.Path, func(p string, d fs.DirEntry, err error) error {
		if n++; n > MaxWalk {
			counted = false
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		counted = false
	}
	if err := r.RemoveAll(args.Path); err != nil {
		return err
	}
	if counted {
		c.Textf("deleted directory %s and its contents (%s)\n", args.Path, plural(n, "entry", "entries"))
	} else {
		c.Textf("deleted directory %s and its contents\n", args.Path)
	}
	return nil
}
