package stock

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() { register("fs_hash", fsHashTool) }

func fsHashTool() Tool {
	return Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_hash",
			Title: "Hash a file",
			Description: "Compute a cryptographic digest of one file under the root, streaming it (any size; progress is reported for large files): sha256 (default), sha512, sha1 or md5, as lowercase hex, with the file size. " +
				"sha1 and md5 are for matching published checksums only, not for security. Refuses directories, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: objectSchema([]string{"path"},
				propPath,
				`"algorithm": {"type": "string", "enum": ["sha256", "sha512", "sha1", "md5"], "default": "sha256",
					"description": "Digest algorithm."}`,
			),
			OutputSchema: objectSchema([]string{"path", "algorithm", "hash", "size"},
				`"path": {"type": "string"}`,
				`"algorithm": {"type": "string", "enum": ["sha256", "sha512", "sha1", "md5"]}`,
				`"hash": {"type": "string", "pattern": "^[0-9a-f]+$"}`,
				`"size": {"type": "integer", "description": "Bytes hashed."}`,
			),
			Annotations: readOnlyHints("Hash a file"),
			Run:         jsonResult(),
		},
		Handler: rooted(fsHash),
	}
}

// hashProgressStep is how many bytes fs_hash reads between progress
// reports; a variable so that a test can make it small.
var hashProgressStep int64 = 64 << 20

// hashes are fs_hash's algorithms by name.
var hashes = map[string]func() hash.Hash{
	"sha256": sha256.New,
	"sha512": sha512.New,
	"sha1":   sha1.New,
	"md5":    md5.New,
}

type hashArgs struct {
	Path      string `json:"path"`
	Algorithm string `json:"algorithm"`
}

func (a *hashArgs) check() error {
	if a.Algorithm == "" {
		a.Algorithm = "sha256"
	}
	if hashes[a.Algorithm] == nil {
		return fmt.Errorf("algorithm %q: want sha256, sha512, sha1 or md5", a.Algorithm)
	}
	return nil
}

func fsHash(c *tool.Call, r *jail.Root, args *hashArgs) error {
	h := hashes[args.Algorithm]()
	f, fi, err := openRegular(r, args.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	var size int64
	for {
		if err := c.Context().Err(); err != nil {
			return err
		}
		n, err := io.CopyN(h, f, hashProgressStep)
		size += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", args.Path, err)
		}
		c.Progress(float64(size), float64(fi.Size()), "hashing")
	}
	return c.JSON(struct {
		Path      string `json:"path"`
		Algorithm string `json:"algorithm"`
		Hash      string `json:"hash"`
		Size      int64  `json:"size"`
	}{args.Path, args.Algorithm, hex.EncodeToString(h.Sum(nil)), size})
}
