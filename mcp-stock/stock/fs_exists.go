package stock

import (
	"errors"
	"io/fs"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_exists", fsExistsTool) }

func fsExistsTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_exists",
			Title: "Does a path exist",
			Description: "Report whether a path exists under the root, and its type. Symlinks are followed, as with test -e: a dangling symlink does not exist, and the type is that of the target. " +
				"A path that leaves the root (also through a symlink) is refused with an error, not reported as missing.",
			InputSchema: pathOnlySchema,
			OutputSchema: objectSchema([]string{"path", "exists"},
				`"path": {"type": "string"}`,
				`"exists": {"type": "boolean"}`,
				`"type": {"type": "string", "enum": ["file", "directory", "symlink", "fifo", "socket", "block-device", "char-device", "other"],
					"description": "Present when the path exists."}`,
			),
			Annotations: readOnlyHints("Does a path exist"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsExists),
	}
}

func fsExists(c *tool.Call, r *jail.Root, args *pathArgs) error {
	res := struct {
		Path   string `json:"path"`
		Exists bool   `json:"exists"`
		Type   string `json:"type,omitempty"`
	}{Path: args.Path}
	fi, err := r.Stat(args.Path)
	switch {
	case err == nil:
		res.Exists, res.Type = true, fileType(fi.Mode())
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errNotDir):
	default:
		return err
	}
	return c.JSON(res)
}
