package stock

import (
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_realpath", fsRealpathTool) }

func fsRealpathTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_realpath",
			Title: "Resolve a path",
			Description: "Resolve a path under the root: \".\" and \"..\" collapsed and existing symlinks followed. " +
				"Returns the resolved path relative to the root (\".\" for the root itself), the absolute path, and whether it exists; a path whose last parts do not exist yet resolves too. " +
				"Refuses a path that leaves the root, also through a symlink.",
			InputSchema: pathOnlySchema,
			OutputSchema: objectSchema([]string{"path", "relative", "absolute", "exists"},
				`"path": {"type": "string", "description": "The path as given."}`,
				`"relative": {"type": "string", "description": "The resolved path, relative to the root."}`,
				`"absolute": {"type": "string", "description": "The resolved absolute path."}`,
				`"exists": {"type": "boolean"}`,
			),
			Annotations: readOnlyHints("Resolve a path"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsRealpath),
	}
}

func fsRealpath(c *tool.Call, r *jail.Root, args *pathArgs) error {
	abs, err := r.Resolve(args.Path)
	if err != nil {
		return err
	}
	rel := r.Rel(abs)
	_, lerr := r.Lstat(rel)
	return c.JSON(struct {
		Path     string `json:"path"`
		Relative string `json:"relative"`
		Absolute string `json:"absolute"`
		Exists   bool   `json:"exists"`
	}{args.Path, rel, abs, lerr == nil})
}
