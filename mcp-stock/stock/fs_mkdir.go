package stock

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_mkdir", fsMkdirTool) }

func fsMkdirTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_mkdir",
			Title: "Create a directory",
			Description: "Create a directory under the root (mode 0755). With parents (the default) missing parent directories are created too and an existing directory is not an error, like mkdir -p; parents: false creates one directory and fails if it exists or its parent is missing. " +
				"Refuses paths that leave the root, and a path where a file exists.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"parents": {"type": "boolean", "default": true,
					"description": "Create missing parents and accept an existing directory (mkdir -p). Default true."}`,
			),
			Annotations: mutatingHints("Create a directory", false, true),
		},
		Handler: rooted(fsMkdir),
	}
}

type mkdirArgs struct {
	Path    string `json:"path"`
	Parents *bool  `json:"parents"`
}

func fsMkdir(c *tool.Call, r *jail.Root, args *mkdirArgs) error {
	if args.Parents != nil && !*args.Parents {
		if err := r.Mkdir(args.Path, 0o755); err != nil {
			return err
		}
		c.Textf("created directory %s\n", args.Path)
		return nil
	}
	fi, err := r.Stat(args.Path)
	switch {
	case err == nil && fi.IsDir():
		c.Textf("directory %s already exists\n", args.Path)
		return nil
	case err == nil:
		return fmt.Errorf("%s: exists and is not a directory", args.Path)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := r.MkdirAll(args.Path, 0o755); err != nil {
		return err
	}
	c.Textf("created directory %s\n", args.Path)
	return nil
}
