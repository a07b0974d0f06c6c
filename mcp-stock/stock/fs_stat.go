package stock

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_stat", fsStatTool) }

func fsStatTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_stat",
			Title: "File metadata",
			Description: "Return the metadata of a file or directory under the root: type, size, permission bits, modification time, and for a symlink its target. " +
				"By default a symlink is described itself, never followed: type symlink and its target as stored, as text, wherever it points (the link is inside the root; nothing is opened through it). follow: true describes what it points to, which must stay inside the root. " +
				"Reads no contents. Refuses paths whose directories leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"follow": {"type": "boolean", "default": false,
					"description": "Describe the target of a symlink instead of the link."}`,
			),
			OutputSchema: objectSchema([]string{"path", "name", "type", "size", "mode", "modeString", "modTime"},
				`"path": {"type": "string", "description": "The path as given."}`,
				`"name": {"type": "string", "description": "The last element of the path."}`,
				`"type": {"type": "string", "enum": ["file", "directory", "symlink", "fifo", "socket", "block-device", "char-device", "other"]}`,
				`"size": {"type": "integer", "description": "Size in bytes."}`,
				`"mode": {"type": "string", "description": "Permission bits in octal, e.g. \"0644\"."}`,
				`"modeString": {"type": "string", "description": "ls -l style mode, e.g. \"-rw-r--r--\", \"drwxr-xr-x\", \"lrwxrwxrwx\"."}`,
				`"modTime": {"type": "string", "format": "date-time", "description": "Modification time, RFC 3339, UTC."}`,
				`"links": {"type": "integer", "description": "Number of hard links."}`,
				`"target": {"type": "string", "description": "For a symlink: its target as stored (text; not followed)."}`,
			),
			Annotations: readOnlyHints("File metadata"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsStat),
	}
}

type statResult struct {
	Path       string `json:"path"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	Size       int64  `json:"size"`
	Mode       string `json:"mode"`
	ModeString string `json:"modeString"`
	ModTime    string `json:"modTime"`
	Links      uint64 `json:"links,omitempty"`
	Target     string `json:"target,omitempty"`
}

type statArgs struct {
	Path   string `json:"path"`
	Follow bool   `json:"follow"`
}

func fsStat(c *tool.Call, r *jail.Root, args *statArgs) error {
	stat := r.Lstat
	if args.Follow {
		stat = r.Stat
	}
	fi, err := stat(args.Path)
	if err != nil {
		return err
	}
	if !args.Follow && fi.Mode().Type() == fs.ModeSymlink {
		// The link itself, as asked: its target as stored, as text, wherever
		// it points; nothing is opened through it.
		res, _ := describe(r, args.Path, fi)
		if res.Target, err = r.LinkTarget(args.Path); err != nil {
			return err
		}
		return c.JSON(res)
	}
	res, err := describe(r, args.Path, fi)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

// describe turns fi, the FileInfo of name, into a statResult: what
// fs_list shows of each entry, and the rest of what fs_stat returns. The
// target of a symlink that leads outside the root is not given (fs_list
// walks a whole tree and shows no name from outside; the error says only
// that it escapes).
func describe(r *jail.Root, name string, fi fs.FileInfo) (statResult, error) {
	res := statResult{
		Path:       name,
		Name:       fi.Name(),
		Type:       fileType(fi.Mode()),
		Size:       fi.Size(),
		Mode:       octalMode(fi.Mode()),
		ModeString: lsMode(fi.Mode()),
		ModTime:    timeString(fi.ModTime()),
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		res.Links = uint64(st.Nlink)
	}
	if fi.Mode().Type() == fs.ModeSymlink {
		t, err := r.Readlink(name)
		switch {
		case err == nil:
			res.Target = t
		case errors.Is(err, jail.ErrEscapes):
			return res, err
		}
		// A dangling link inside the root is described without a target.
	}
	return res, nil
}

// lsMode is m as ls -l writes it: one type letter (- d l p s b c), then
// rwx three times with setuid, setgid and sticky as s/S and t/T. Go's
// FileMode.String differs ("Lrwxrwxrwx", "dtrwxrwxrwx", "Dcrw-rw-rw-").
func lsMode(m fs.FileMode) string {
	b := []byte("----------")
	switch {
	case m&fs.ModeDir != 0:
		b[0] = 'd'
	case m&fs.ModeSymlink != 0:
		b[0] = 'l'
	case m&fs.ModeNamedPipe != 0:
		b[0] = 'p'
	case m&fs.ModeSocket != 0:
		b[0] = 's'
	case m&fs.ModeCharDevice != 0:
		b[0] = 'c'
	case m&fs.ModeDevice != 0:
		b[0] = 'b'
	case m&fs.ModeIrregular != 0:
		b[0] = '?'
	}
	const rwx = "rwxrwxrwx"
	for i := 0; i < 9; i++ {
		if m&(1<<uint(8-i)) != 0 {
			b[1+i] = rwx[i]
		}
	}
	special := func(set bool, at int, lower, upper byte) {
		if !set {
			return
		}
		if b[at] == 'x' {
			b[at] = lower
		} else {
			b[at] = upper
		}
	}
	special(m&fs.ModeSetuid != 0, 3, 's', 'S')
	special(m&fs.ModeSetgid != 0, 6, 's', 'S')
	special(m&fs.ModeSticky != 0, 9, 't', 'T')
	return string(b)
}

// octalMode is the chmod-style octal of m, with setuid, setgid and sticky.
func octalMode(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}
