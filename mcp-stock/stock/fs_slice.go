package stock

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_slice", fsSliceTool) }

func fsSliceTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_slice",
			Title: "Read a byte range of a file",
			Description: "Read length bytes (default 4096, at most 1024000) of a file under the root, starting at byte offset (0-based), without reading the rest of the file. " +
				"Works on binary files: encoding \"text\" (default; invalid UTF-8 becomes U+FFFD), \"base64\" or \"hex\". " +
				"Returns the data with the number of bytes returned (length), the file size and whether the end of the file was reached; an offset past the end returns no data. " +
				"The encoded data is kept under about 512 KiB, so a large length may return fewer bytes (about 256 KiB in hex): continue at offset+length. " +
				"Refuses directories, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"offset": {"type": "integer", "minimum": 0, "default": 0,
					"description": "Byte offset to start at (0-based)."}`,
				`"length": {"type": "integer", "minimum": 1, "maximum": 1024000, "default": 4096,
					"description": "How many bytes to read."}`,
				`"encoding": {"type": "string", "enum": ["text", "base64", "hex"], "default": "text",
					"description": "How to return the bytes."}`,
			),
			OutputSchema: objectSchema([]string{"path", "offset", "length", "size", "eof", "encoding", "data"},
				`"path": {"type": "string"}`,
				`"offset": {"type": "integer", "description": "Offset of the first byte returned."}`,
				`"length": {"type": "integer", "description": "Number of bytes returned."}`,
				`"size": {"type": "integer", "description": "Size of the file in bytes."}`,
				`"eof": {"type": "boolean", "description": "Whether the slice reaches the end of the file."}`,
				`"encoding": {"type": "string", "enum": ["text", "base64", "hex"]}`,
				`"data": {"type": "string"}`,
			),
			Annotations: readOnlyHints("Read a byte range of a file"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsSlice),
	}
}

type sliceResult struct {
	Path     string `json:"path"`
	Offset   int64  `json:"offset"`
	Length   int    `json:"length"`
	Size     int64  `json:"size"`
	EOF      bool   `json:"eof"`
	Encoding string `json:"encoding"`
	Data     string `json:"data"`
}

type sliceArgs struct {
	Path     string `json:"path"`
	Offset   int64  `json:"offset"`
	Length   int    `json:"length"`
	Encoding string `json:"encoding"`
}

func (a *sliceArgs) check() error {
	if a.Offset < 0 {
		return fmt.Errorf("offset %d: must not be negative", a.Offset)
	}
	switch a.Encoding {
	case "":
		a.Encoding = "text"
	case "text", "base64", "hex":
	default:
		return fmt.Errorf("encoding %q: want text, base64 or hex", a.Encoding)
	}
	return nil
}

func fsSlice(c *tool.Call, r *jail.Root, args *sliceArgs) error {
	length, enc := capInt(args.Length, 4096, MaxBytesLimit), args.Encoding
	f, fi, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := fi.Size()
	var buf []byte
	if args.Offset < size {
		buf = make([]byte, min(int64(length), size-args.Offset))
		n, err := readAt(f, buf, args.Offset)
		if err != nil {
			return fmt.Errorf("%s: %w", args.Path, err)
		}
		buf = buf[:n]
	}
	// Shorten the slice until its encoding fits the JSON budget: hex
	// doubles the bytes, base64 adds a third, and JSON escapes control
	// characters in text up to six times.
	var data string
	for {
		data = encodeSlice(enc, buf)
		n, err := json.Marshal(data)
		if err != nil {
			return err
		}
		if len(n) <= MaxJSONBytes-1024 {
			break
		}
		keep := int(int64(len(buf)) * int64(MaxJSONBytes-1024) / int64(len(n)) * 9 / 10)
		if enc == "text" {
			buf = cutUTF8(buf, keep)
		} else {
			buf = buf[:keep]
		}
	}
	return c.JSON(sliceResult{
		Path:     args.Path,
		Offset:   args.Offset,
		Length:   len(buf),
		Size:     size,
		EOF:      args.Offset+int64(len(buf)) >= size,
		Encoding: enc,
		Data:     data,
	})
}

func encodeSlice(enc string, buf []byte) string {
	switch enc {
	case "base64":
		return base64.StdEncoding.EncodeToString(buf)
	case "hex":
		return hex.EncodeToString(buf)
	}
	return text(buf)
}
