package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_write", fsWriteTool) }

func fsWriteTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_write",
			Title: "Write a file",
			Description: "Write text to a file under the root, replacing its contents atomically (a temporary file in the same directory, synced, then renamed over the file: a reader or a crash sees the old contents or the new, never a mix). " +
				"Creates the file when missing (mode 0644); an existing file keeps its permission bits; a symlink inside the root is followed. " +
				"overwrite: false refuses an existing file; createDirs: true creates missing parent directories. " +
				"Content is at most 8 MiB. Refuses directories, FIFOs, devices and paths that leave the root. " +
				"A file with more than one hard link is replaced under this name only: its other names (perhaps outside the root) keep the old contents.",
			InputSchema: objectSchema([]string{"path", "content"},
				propPath,
				`"content": {"type": "string", "maxLength": 8388608,
					"description": "The new contents, as text (UTF-8)."}`,
				`"overwrite": {"type": "boolean", "default": true,
					"description": "Replace an existing file (default). false: fail when the file exists."}`,
				`"createDirs": {"type": "boolean", "default": false,
					"description": "Create missing parent directories (mode 0755)."}`,
			),
			Annotations: mutatingHints("Write a file", true, true),
		},
		Handler: rooted(fsWrite),
	}
}

type writeArgs struct {
	Path       string  `json:"path"`
	Content    *string `json:"content"`
	Overwrite  *bool   `json:"overwrite"`
	CreateDirs bool    `json:"createDirs"`
}

func (a *writeArgs) check() error {
	if a.Path == "" || a.Content == nil {
		return fmt.Errorf("invalid arguments: path and content are required")
	}
	return checkContent(*a.Content)
}

func fsWrite(c *tool.Call, r *jail.Root, args *writeArgs) error {
	overwrite := args.Overwrite == nil || *args.Overwrite
	if args.CreateDirs {
		dir, err := parentDir(r, args.Path)
		if err != nil {
			return err
		}
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	existed, err := exists(r, args.Path)
	if err != nil {
		return err
	}
	if existed && !overwrite {
		return errExists(args.Path)
	}
	if !existed && !overwrite {
		// Claim the name exclusively, so that a file created meanwhile is
		// not replaced; the atomic write then fills it.
		f, err := r.OpenFile(args.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return missingParent(err, args)
		}
		f.Close()
	}
	if err := r.WriteFileAtomic(args.Path, []byte(*args.Content), 0o644); err != nil {
		return missingParent(err, args)
	}
	verb := "created"
	if existed {
		verb = "replaced"
	}
	c.Textf("wrote %s to %s (%s)\n", plural(int64(len(*args.Content)), "byte", "bytes"), args.Path, verb)
	return nil
}

// missingParent adds the fix to a write that failed for want of its
// parent directory: the model can call again with createDirs.
func missingParent(err error, args *writeArgs) error {
	if args.CreateDirs || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%w: its parent directory %s does not exist; call fs_write again with \"createDirs\": true to create it", err, path.Dir(args.Path))
}
