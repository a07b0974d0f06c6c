package stock

import (
	"fmt"
	"io"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_read", fsReadTool) }

func fsReadTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_read",
			Title: "Read a text file",
			Description: "Read a text file under the root and return its contents. " +
				"Reads at most maxBytes bytes (default 262144, at most 1024000); a longer file is cut at a character boundary and ends with a note like \"[truncated: 262144 of 5000000 bytes shown]\". " +
				"Use fs_lines, fs_head, fs_tail or fs_slice for parts of large files. " +
				"Invalid UTF-8 is shown as U+FFFD. Refuses directories, binary files (NUL bytes in the first 8000 bytes), FIFOs, sockets and devices, and paths that leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				propMaxBytes("Most bytes of the file to return."),
			),
			Annotations: readOnlyHints("Read a text file"),
		},
		Handler: rooted(fsRead),
	}
}

func fsRead(c *tool.Call, r *jail.Root, args *textFileArgs) error {
	maxBytes := args.maxBytes()
	// Not openText: the binary check looks at what is read, so a small
	// maxBytes reads only that much.
	f, fi, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	// One byte more than the cap tells a cut from a file that fits.
	buf, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return fmt.Errorf("%s: %w", args.Path, err)
	}
	if looksBinary(buf) {
		return errBinary(args.Path)
	}
	if len(buf) <= maxBytes {
		c.Text(text(buf))
		return nil
	}
	shown := cutUTF8(buf, maxBytes)
	c.Text(text(shown))
	total := max(fi.Size(), int64(len(buf)))
	if len(shown) > 0 && shown[len(shown)-1] != '\n' {
		c.Text("\n")
	}
	c.Text(truncNote(len(shown), int(total), "bytes") + "\n")
	return nil
}
