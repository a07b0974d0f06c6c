package stock

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_copy", fsCopyTool) }

func fsCopyTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_copy",
			Title: "Copy a file or tree",
			Description: "Copy a file under the root to a new path under the root; each file is written atomically (temporary file + rename beside the destination) with the source's permission bits. " +
				"destination is the full path of the copy, not a directory to copy into. An existing destination is refused unless overwrite: true (a file only; a directory is never replaced). " +
				"recursive: true copies a directory tree into a destination that must not exist; symlinks and special files inside it are skipped and listed, and at most 200000 entries are copied. " +
				"Refuses copying a directory into itself, FIFOs and devices, and paths that leave the root.",
			InputSchema: objectSchema([]string{"source", "destination"},
				propSource,
				propDestination,
				propOverwrite,
				`"recursive": {"type": "boolean", "default": false,
					"description": "Copy a directory and everything below it. Default false: source must be a file."}`,
			),
			Annotations: mutatingHints("Copy a file or tree", true, true),
		},
		Handler: rooted(fsCopy),
	}
}

type copyArgs struct {
	transferArgs
	Recursive bool `json:"recursive"`
}

func fsCopy(c *tool.Call, r *jail.Root, args *copyArgs) error {
	src, dstExists, err := args.preflight(r, true, "path of the copy")
	if err != nil {
		return err
	}
	if !src.IsDir() {
		if !src.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", args.Source)
		}
		n, err := copyFile(r, args.Source, args.Destination)
		if err != nil {
			return err
		}
		c.Textf("copied %s to %s (%s)\n", args.Source, args.Destination, plural(n, "byte", "bytes"))
		return nil
	}
	if !args.Recursive {
		return fmt.Errorf("%s: is a directory (set recursive: true to copy the tree)", args.Source)
	}
	if dstExists {
		return fmt.Errorf("%s: already exists; a directory is copied to a new path only", args.Destination)
	}
	srcRel, err := r.ResolveRel(args.Source)
	if err != nil {
		return err
	}
	dstRel, err := r.ResolveRel(args.Destination)
	if err != nil {
		return err
	}
	if inside(dstRel, srcRel) {
		return fmt.Errorf("%s: is inside %s; a directory cannot be copied into itself", args.Destination, args.Source)
	}
	var files, dirs, bytes int64
	var skipped []string
	visited := 0
	err = r.WalkDir(srcRel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := c.Context().Err(); cerr != nil {
			return cerr
		}
		if visited++; visited > MaxWalk {
			return fmt.Errorf("%s: more than %d entries; copy smaller parts", args.Source, MaxWalk)
		}
		if visited%500 == 0 {
			c.Progress(float64(visited), 0, "copying "+p)
		}
		target := dstRel
		if p != srcRel {
			target = dstRel + strings.TrimPrefix(p, srcRel)
			if srcRel == "." {
				target = dstRel + "/" + p
			}
		}
		switch {
		case d.IsDir():
			if err := r.Mkdir(target, 0o755); err != nil {
				return err
			}
			if fi, err := d.Info(); err == nil {
				r.Chmod(target, fi.Mode().Perm())
			}
			dirs++
		case d.Type().IsRegular():
			n, err := copyFile(r, p, target)
			if err != nil {
				return err
			}
			files++
			bytes += n
		default:
			skipped = append(skipped, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("copying %s to %s stopped (%s, %s copied so far): %w", args.Source, args.Destination, plural(files, "file", "files"), plural(dirs, "directory", "directories"), err)
	}
	c.Textf("copied %s to %s: %s, %s, %s\n", args.Source, args.Destination, plural(files, "file", "files"), plural(dirs, "directory", "directories"), plural(bytes, "byte", "bytes"))
	if len(skipped) > 0 {
		shown := skipped[:min(len(skipped), 20)]
		c.Textf("skipped %s (symlinks and special files are not copied): %s", plural(int64(len(skipped)), "entry", "entries"), strings.Join(shown, ", "))
		if len(skipped) > len(shown) {
			c.Text(", ...")
		}
		c.Text("\n")
	}
	return nil
}
