package stock

import (
	"bytes"
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_tail", fsTailTool) }

func fsTailTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_tail",
			Title: "Last lines of a file",
			Description: "Return the last lines of a text file under the root (default 10, at most 100000). " +
				"Reads backwards from the end, so only the tail of a large file is read. " +
				"Output is bounded by maxBytes (default 262144, at most 1024000): when the requested lines do not fit, the last lines that fit are shown after a note. Lines longer than 4096 bytes are cut and marked. " +
				"Refuses directories, binary files, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				propLines("How many lines to return from the end."),
				propMaxBytes("Most bytes of the file to read from the end."),
			),
			Annotations: readOnlyHints("Last lines of a file"),
		},
		Handler: rooted(fsTail),
	}
}

// tailChunk is how much fs_tail reads per step backwards.
const tailChunk = 64 << 10

func fsTail(c *tool.Call, r *jail.Root, args *endLinesArgs) error {
	want, maxBytes := args.want(), int64(args.maxBytes())
	f, fi, err := openText(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	end := fi.Size()
	// A final newline ends the last line; it does not start another, so
	// the walk back starts before it.
	finalNL := false
	if end > 0 {
		var last [1]byte
		if n, _ := readAt(f, last[:], end-1); n == 1 && last[0] == '\n' {
			end--
			finalNL = true
		}
	}
	// Step back from end until want newlines are behind the start, the
	// file's start is reached, or maxBytes are covered.
	start, newlines := end, 0
	var buf []byte
	for start > 0 && newlines < want && end-start < maxBytes {
		n := min(int64(tailChunk), start, maxBytes-(end-start))
		chunk := make([]byte, n)
		if _, err := readAt(f, chunk, start-n); err != nil {
			return fmt.Errorf("%s: %w", args.Path, err)
		}
		start -= n
		// Count newlines from the back of this chunk; stop at the one
		// that starts the wanted lines.
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' {
				continue
			}
			if newlines++; newlines == want {
				start += int64(i) + 1
				chunk = chunk[i+1:]
				break
			}
		}
		buf = append(chunk, buf...)
	}
	cut := newlines < want && start > 0 // maxBytes stopped the walk back
	if cut {
		// Start at a line boundary: drop the partial first line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	if finalNL {
		buf = append(buf, '\n')
	}
	var lines []string
	err = eachLine(c, bytes.NewReader(buf), args.Path, func(_ int, line []byte, full int) bool {
		lines = append(lines, showLine(line, full))
		return true
	})
	if err != nil {
		return err
	}
	if cut {
		c.Textf("[truncated: last %d of %d lines shown, byte cap reached]\n", len(lines), want)
	}
	for _, l := range lines {
		c.Text(l + "\n")
	}
	return nil
}
