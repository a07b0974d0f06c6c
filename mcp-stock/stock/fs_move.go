package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_move",
			Title: "Move or rename",
			Description: "Move or rename a file, directory or symlink (the link itself) under the root, atomically (rename(2)). " +
				"destination is the full new path, not a directory to move into. An existing destination is refused unless overwrite: true, which replaces a file (a directory is never replaced). " +
				"Refuses moving the root or a directory into itself, moves across file systems, and paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propSource + `,
					` + propDestination + `,
					` + propOverwrite + `
				},
				"required": ["source", "destination"],
				"additionalProperties": false
			}`),
			Annotations: mutatingHints("Move or rename", true, false),
		},
		Handler: fsMove,
	})
}

func fsMove(c *tool.Call) error {
	var args struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
		Overwrite   bool   `json:"overwrite"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	if args.Source == "" || args.Destination == "" {
		return fmt.Errorf("invalid arguments: source and destination are required")
	}
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
	src, err := r.Lstat(args.Source)
	if err != nil {
		return err
	}
	dst, err := r.Lstat(args.Destination)
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	case err != nil:
	case dst.IsDir():
		return fmt.Errorf("%s: is an existing directory; give the full new path (e.g. %s/%s)", args.Destination, strings.TrimSuffix(args.Destination, "/"), path.Base(args.Source))
	case !args.Overwrite:
		return errExists(args.Destination)
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
