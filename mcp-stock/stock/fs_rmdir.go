package stock

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:        "fs_rmdir",
			Title:       "Remove an empty directory",
			Description: "Remove an empty directory under the root, like rmdir. A directory with anything in it is refused (use fs_delete with recursive: true to remove a tree); so are files, symlinks (the link is not a directory), the root itself and paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propPath + `
				},
				"required": ["path"],
				"additionalProperties": false
			}`),
			Annotations: mutatingHints("Remove an empty directory", true, true),
		},
		Handler: fsRmdir,
	})
}

func fsRmdir(c *tool.Call) error {
	var args struct {
		Path string `json:"path"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Lstat(args.Path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory (fs_rmdir removes empty directories; use fs_delete for files)", args.Path)
	}
	if err := r.Remove(args.Path); err != nil {
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("%s: directory not empty (use fs_delete with recursive: true to remove it and its contents)", args.Path)
		}
		return err
	}
	c.Textf("removed directory %s\n", args.Path)
	return nil
}
