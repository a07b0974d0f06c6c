package stock

import (
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_readlink", fsReadlinkTool) }

func fsReadlinkTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_readlink",
			Title: "Read a symlink",
			Description: "Return the target of a symbolic link under the root, as stored in the link (not resolved; use fs_realpath for that). " +
				"Refuses a path that is not a symlink, and a symlink that leads outside the root (its target is not revealed).",
			InputSchema: pathOnlySchema,
			Annotations: readOnlyHints("Read a symlink"),
		},
		Handler: rooted(fsReadlink),
	}
}

func fsReadlink(c *tool.Call, r *jail.Root, args *pathArgs) error {
	target, err := r.Readlink(args.Path)
	if err != nil {
		return err
	}
	c.Text(target + "\n")
	return nil
}
