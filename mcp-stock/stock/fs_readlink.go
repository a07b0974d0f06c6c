package stock

import (
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_readlink",
			Title: "Read a symlink",
			Description: "Return the target of a symbolic link under the root, as stored in the link (not resolved; use fs_realpath for that). " +
				"Refuses a path that is not a symlink, and a symlink that leads outside the root (its target is not revealed).",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propPath + `
				},
				"required": ["path"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Read a symlink"),
		},
		Handler: fsReadlink,
	})
}

func fsReadlink(c *tool.Call) error {
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
	target, err := r.Readlink(args.Path)
	if err != nil {
		return err
	}
	c.Text(target + "\n")
	return nil
}
