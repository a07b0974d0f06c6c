package stock

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_replace", fsReplaceTool) }

func fsReplaceTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_replace",
			Title: "Replace text in a file",
			Description: "Replace an exact piece of text (not a pattern) in a file under the root, and write the file back atomically (temporary file + rename in the same directory), keeping its permission bits. " +
				"By default old must occur exactly once: when it occurs more than once the call is refused, naming the lines, so that a model adds context to make it unique; set all: true to replace every occurrence, or expectedCount to state how many there must be. Text that does not occur is an error. " +
				"Files of at most 8 MiB; binary files (with NUL bytes) are refused, and so are directories, FIFOs, devices and paths that leave the root. " +
				"A file with more than one hard link is replaced under this name only: its other names (perhaps outside the root) keep the old contents.",
			InputSchema: objectSchema([]string{"path", "old", "new"},
				propPath,
				`"old": {"type": "string", "minLength": 1, "maxLength": 1048576,
					"description": "The exact text to find (whitespace and newlines count)."}`,
				`"new": {"type": "string", "maxLength": 8388608,
					"description": "The replacement text; empty deletes old."}`,
				`"all": {"type": "boolean", "default": false,
					"description": "Replace every occurrence. Default false: old must occur exactly once."}`,
				`"expectedCount": {"type": "integer", "minimum": 1, "maximum": 1000000,
					"description": "Refuse unless old occurs exactly this many times; then replace them all."}`,
			),
			Annotations: mutatingHints("Replace text in a file", true, false),
		},
		Handler: rooted(fsReplace),
	}
}

type replaceArgs struct {
	Path          string  `json:"path"`
	Old           string  `json:"old"`
	New           *string `json:"new"`
	All           bool    `json:"all"`
	ExpectedCount int     `json:"expectedCount"`
}

func (a *replaceArgs) check() error {
	if a.Path == "" || a.Old == "" || a.New == nil {
		return fmt.Errorf("invalid arguments: path, a non-empty old and new are required")
	}
	return nil
}

func fsReplace(c *tool.Call, r *jail.Root, args *replaceArgs) error {
	f, _, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	f.Close()
	data, truncated, err := r.ReadFile(args.Path, MaxWriteBytes)
	if err != nil {
		return err
	}
	if truncated {
		return fmt.Errorf("%s: larger than %d bytes, which fs_replace rewrites at most", args.Path, MaxWriteBytes)
	}
	if looksBinary(data) {
		return fmt.Errorf("%s: binary file (contains NUL bytes); fs_replace edits text", args.Path)
	}
	old := []byte(args.Old)
	n := bytes.Count(data, old)
	switch {
	case n == 0:
		return fmt.Errorf("%s: old text not found (it must match exactly, whitespace and newlines included)", args.Path)
	case args.ExpectedCount > 0 && n != args.ExpectedCount:
		return fmt.Errorf("%s: old text occurs %d times, not the expected %d (at lines %s)", args.Path, n, args.ExpectedCount, matchLines(data, old, 20))
	case n > 1 && !args.All && args.ExpectedCount == 0:
		return fmt.Errorf("%s: old text occurs %d times (at lines %s): add surrounding text to make it unique, or set all: true to replace every occurrence", args.Path, n, matchLines(data, old, 20))
	}
	lines := matchLines(data, old, 20)
	out := bytes.ReplaceAll(data, old, []byte(*args.New))
	if len(out) > MaxWriteBytes {
		return fmt.Errorf("%s: the result would be %d bytes, more than %d", args.Path, len(out), MaxWriteBytes)
	}
	if err := r.WriteFileAtomic(args.Path, out, 0o644); err != nil {
		return err
	}
	c.Textf("replaced %s in %s (line %s; %d -> %d bytes)\n", plural(int64(n), "occurrence", "occurrences"), args.Path, lines, len(data), len(out))
	return nil
}

// matchLines lists the 1-based line numbers where old starts in data, at
// most max of them, as "3, 17, 40" (with ", ..." when there are more).
func matchLines(data, old []byte, max int) string {
	var nums []string
	line, off := 1, 0
	for len(nums) <= max {
		i := bytes.Index(data[off:], old)
		if i < 0 {
			break
		}
		line += bytes.Count(data[off:off+i], []byte{'\n'})
		if len(nums) == max {
			nums = append(nums, "...")
			break
		}
		nums = append(nums, fmt.Sprint(line))
		line += bytes.Count(old, []byte{'\n'})
		off += i + len(old)
	}
	return strings.Join(nums, ", ")
}
