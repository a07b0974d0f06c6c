package stock

import (
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_rmdir", fsRmdirTool) }

func fsRmdirTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:        "fs_rmdir",
			Title:       "Remove an empty directory",
			Description: "Remove an empty directory under the root, like rmdir. A directory with anything in it is refused (use fs_delete with recursive: true to remove a tree); so are files, symlinks (the link is not a directory), the root itself and paths that leave the root.",
			InputSchema: pathOnlySchema,
			Annotations: mutatingHints("Remove an empty directory", true, true),
		},
		Handler: rooted(fsRmdir),
	}
}

func fsRmdir(c *tool.Call, r *jail.Root, args *pathArgs) error {
	fi, err := r.Lstat(args.Path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory (fs_rmdir removes empty directories; use fs_delete for files)", args.Path)
	}
	if err := removeEmptyDir(r, args.Path, "use fs_delete with recursive: true to remove it and its contents"); err != nil {
		return err
	}
	c.Textf("removed directory %s\n", args.Path)
	return nil
}
