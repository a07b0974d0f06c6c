package stock

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_count", fsCountTool) }

func fsCountTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_count",
			Title: "Count lines, words and bytes",
			Description: "Count the lines, words, characters and bytes of one file under the root, like wc: lines are newline characters (a last line without one counts too), words are runs of non-space characters, characters are UTF-8 code points (an invalid byte counts as one). " +
				"Streams the file, so any size works; also reports the longest line in bytes. Refuses directories (use fs_du), FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: pathOnlySchema,
			OutputSchema: objectSchema([]string{"path", "lines", "words", "chars", "bytes", "longestLine"},
				`"path": {"type": "string"}`,
				`"lines": {"type": "integer"}`,
				`"words": {"type": "integer"}`,
				`"chars": {"type": "integer"}`,
				`"bytes": {"type": "integer"}`,
				`"longestLine": {"type": "integer", "description": "Length of the longest line in bytes, without its newline."}`,
			),
			Annotations: readOnlyHints("Count lines, words and bytes"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsCount),
	}
}

type countResult struct {
	Path        string `json:"path"`
	Lines       int64  `json:"lines"`
	Words       int64  `json:"words"`
	Chars       int64  `json:"chars"`
	Bytes       int64  `json:"bytes"`
	LongestLine int64  `json:"longestLine"`
}

func fsCount(c *tool.Call, r *jail.Root, args *pathArgs) error {
	f, _, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	res := countResult{Path: args.Path}
	buf := make([]byte, 64<<10)
	var carry []byte // an incomplete UTF-8 sequence from the last read
	inWord := false
	var lineLen int64
	for {
		if err := c.Context().Err(); err != nil {
			return err
		}
		n, rerr := f.Read(buf)
		res.Bytes += int64(n)
		data := append(carry, buf[:n]...)
		carry = nil
		for len(data) > 0 {
			ru, size := utf8.DecodeRune(data)
			if ru == utf8.RuneError && size == 1 && !utf8.FullRune(data) && rerr == nil {
				carry = append([]byte(nil), data...)
				break
			}
			data = data[size:]
			res.Chars++
			if ru == '\n' {
				res.Lines++
				res.LongestLine = max(res.LongestLine, lineLen)
				lineLen = 0
			} else {
				lineLen += int64(size)
			}
			space := unicode.IsSpace(ru)
			if !space && !inWord {
				res.Words++
			}
			inWord = !space
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: %w", args.Path, rerr)
		}
	}
	if lineLen > 0 {
		res.Lines++ // a last line without a newline
		res.LongestLine = max(res.LongestLine, lineLen)
	}
	return c.JSON(res)
}
