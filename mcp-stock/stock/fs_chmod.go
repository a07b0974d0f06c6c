package stock

import (
	"fmt"
	"io/fs"
	"strconv"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_chmod", fsChmodTool) }

func fsChmodTool() Tool {
	return Tool{
		Kind: KindMutating,
		Def: tool.Definition{
			Name:  "fs_chmod",
			Title: "Change permissions",
			Description: "Set the permission bits of a file or directory under the root to an octal mode such as \"644\" or \"0755\" (a symlink inside the root is followed; its target's mode changes). " +
				"Only the nine rwx bits: setuid, setgid and sticky bits are refused, and so are paths that leave the root and a file with more than one hard link (another name of it may be outside the root, and the mode is the file's, under every name). Reports the old and new mode.",
			InputSchema: objectSchema([]string{"path", "mode"},
				propPath,
				`"mode": {"type": "string", "pattern": "^0?[0-7]{3}$",
					"description": "Permission bits in octal: three digits, optionally with a leading 0, e.g. \"644\", \"0755\"."}`,
			),
			Annotations: mutatingHints("Change permissions", false, true),
		},
		Handler: rooted(fsChmod),
	}
}

type chmodArgs struct {
	Path string `json:"path"`
	Mode string `json:"mode"`

	bits uint64 // Mode, parsed
}

func (a *chmodArgs) check() error {
	m, err := strconv.ParseUint(a.Mode, 8, 32)
	if err != nil || len(a.Mode) < 3 || len(a.Mode) > 4 || m > 0o777 || (len(a.Mode) == 4 && a.Mode[0] != '0') {
		return fmt.Errorf("mode %q: want three octal digits such as \"644\" (setuid, setgid and sticky bits are refused)", a.Mode)
	}
	a.bits = m
	return nil
}

func fsChmod(c *tool.Call, r *jail.Root, args *chmodArgs) error {
	m := args.bits
	fi, err := r.Stat(args.Path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return fmt.Errorf("%s: not a regular file or directory", args.Path)
	}
	if err := r.Chmod(args.Path, fs.FileMode(m)); err != nil {
		return err
	}
	c.Textf("mode of %s: %04o -> %04o\n", args.Path, fi.Mode().Perm(), m)
	return nil
}
