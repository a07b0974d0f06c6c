package stock

import (
	"fmt"
	"os"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_append", fsAppendTool) }

func fsAppendTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_append",
			Title: "Append to a file",
			Description: "Append text to the end of a file under the root, in one write to a file opened for appending (O_APPEND): the existing contents are never rewritten, and concurrent appends do not interleave within one call's text. " +
				"Creates the file when missing (mode 0644) unless create is false. No newline is added: end content with \"\\n\" to append whole lines. " +
				"Content is at most 8 MiB. Refuses directories, FIFOs, devices and paths that leave the root, " +
				"and a file with more than one hard link: another name of it may be outside the root, and an append in place would reach it there (fs_write replaces the file under this name only).",
			InputSchema: objectSchema([]string{"path", "content"},
				propPath,
				`"content": {"type": "string", "minLength": 1, "maxLength": 8388608,
					"description": "The text to append (UTF-8)."}`,
				`"create": {"type": "boolean", "default": true,
					"description": "Create the file when it does not exist (default). false: fail instead."}`,
			),
			Annotations: mutatingHints("Append to a file", false, false),
		},
		Handler: rooted(fsAppend),
	}
}

type appendArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Create  *bool  `json:"create"`
}

func (a *appendArgs) check() error {
	if a.Path == "" || a.Content == "" {
		return fmt.Errorf("invalid arguments: path and a non-empty content are required")
	}
	return checkContent(a.Content)
}

func fsAppend(c *tool.Call, r *jail.Root, args *appendArgs) error {
	flag := os.O_WRONLY | os.O_APPEND
	if args.Create == nil || *args.Create {
		flag |= os.O_CREATE
	}
	f, err := r.OpenFile(args.Path, flag, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(args.Content); err != nil {
		return &jail.PathError{Path: args.Path, Err: err}
	}
	if err := f.Sync(); err != nil {
		return &jail.PathError{Path: args.Path, Err: err}
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	c.Textf("appended %s to %s (now %s)\n", plural(int64(len(args.Content)), "byte", "bytes"), args.Path, plural(size, "byte", "bytes"))
	return nil
}
