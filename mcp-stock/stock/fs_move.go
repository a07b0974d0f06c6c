package stock

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_move", fsMoveTool) }

func fsMoveTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_move",
			Title: "Move or rename",
			Description: "Move or rename a file, directory or symlink (the link itself) under the root, atomically (rename(2)). " +
				"destination is the full new path, not a directory to move into. An existing destination is refused unless overwrite: true, which replaces a file (a directory is never replaced). " +
				"Refuses moving the root or a directory into itself, moves across file systems, and paths that leave the root.",
			InputSchema: objectSchema([]string{"source", "destination"},
				propSource,
				propDestination,
				propOverwrite,
			),
			Annotations: mutatingHints("Move or rename", true, false),
		},
		Handler: rooted(fsMove),
	}
}

func fsMove(c *tool.Call, r *jail.Root, args *transferArgs) error {
	src, _, err := args.preflight(r, false, "new path")
	if err != nil {
		return err
	}
	if src.IsDir() {
		srcRel, err := r.ResolveRel(args.Source)
		if err != nil {
			return err
		}
		if dir, err := parentDir(r, args.Destination); err == nil && inside(dir, srcRel) {
			return fmt.Errorf("%s: is inside %s; a directory cannot be moved into itself", args.Destination, args.Source)
		}
	}
	if err := r.Rename(args.Source, args.Destination); err != nil {
		if errors.Is(err, syscall.EXDEV) {
			return fmt.Errorf("%s: the destination is on another file system; use fs_copy then fs_delete", args.Source)
		}
		return err
	}
	c.Textf("moved %s to %s\n", args.Source, args.Destination)
	return nil
}
