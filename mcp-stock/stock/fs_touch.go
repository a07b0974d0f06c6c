package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_touch", fsTouchTool) }

func fsTouchTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_touch",
			Title: "Touch a file",
			Description: "Set the modification and access times of a file or directory under the root to now (or to time, RFC 3339), creating an empty file (mode 0644) when nothing exists there, like touch. " +
				"Never changes contents. A symlink inside the root is followed. Refuses FIFOs, devices, paths that leave the root and an existing file with more than one hard link (another name of it may be outside the root; its times are the file's, under every name).",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"time": {"type": "string", "format": "date-time", "maxLength": 64,
					"description": "The time to set, RFC 3339 (e.g. \"2024-05-01T12:00:00Z\"). Default: now."}`,
			),
			Annotations: mutatingHints("Touch a file", false, true),
		},
		Handler: rooted(fsTouch),
	}
}

type touchArgs struct {
	Path string `json:"path"`
	Time string `json:"time"`

	t time.Time // Time, parsed, or now
}

func (a *touchArgs) check() error {
	a.t = time.Now()
	if a.Time != "" {
		var err error
		if a.t, err = time.Parse(time.RFC3339Nano, a.Time); err != nil {
			return fmt.Errorf("time %q: want RFC 3339, e.g. 2024-05-01T12:00:00Z", a.Time)
		}
	}
	return nil
}

func fsTouch(c *tool.Call, r *jail.Root, args *touchArgs) error {
	t := args.t
	created := false
	fi, err := r.Stat(args.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := r.OpenFile(args.Path, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		created = true
	case err != nil:
		return err
	case !fi.Mode().IsRegular() && !fi.IsDir():
		return fmt.Errorf("%s: not a regular file or directory", args.Path)
	}
	if err := r.Chtimes(args.Path, t, t); err != nil {
		return err
	}
	if created {
		c.Textf("created %s (empty), time %s\n", args.Path, timeString(t))
	} else {
		c.Textf("set the time of %s to %s\n", args.Path, timeString(t))
	}
	return nil
}
