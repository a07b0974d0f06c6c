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

	"github.com/mcpipe/mcpipe/mcp-route/tool"
)

func init() {
	register(Tool{
		Kind: KindRead,
		Def: tool.Definition{
			Name:  "fs_hash",
			Title: "Hash a file",
			Description: "Compute a cryptographic digest of one file under the root, streaming it (any size; progress is reported for large files): sha256 (default), sha512, sha1 or md5, as lowercase hex, with the file size. " +
				"sha1 and md5 are for matching published checksums only, not for security. Refuses directories, FIFOs, sockets, devices and paths that leave the root.",
			InputSchema: schema(`{
				"type": "object",
				"properties": {
					` + propPath + `,
					"algorithm": {"type": "string", "enum": ["sha256", "sha512", "sha1", "md5"], "default": "sha256",
						"description": "Digest algorithm."}
				},
				"required": ["path"],
				"additionalProperties": false
			}`),
			OutputSchema: schema(`{
				"type": "object",
				"properties": {
					"path": {"type": "string"},
					"algorithm": {"type": "string", "enum": ["sha256", "sha512", "sha1", "md5"]},
					"hash": {"type": "string", "pattern": "^[0-9a-f]+$"},
					"size": {"type": "integer", "description": "Bytes hashed."}
				},
				"required": ["path", "algorithm", "hash", "size"],
				"additionalProperties": false
			}`),
			Annotations: readOnlyHints("Hash a file"),
			Run:         jsonResult(),
		},
		Handler: fsHash,
	})
}

// hashProgressStep is how many bytes fs_hash reads between progress
// reports; a variable so that a test can make it small.
var hashProgressStep int64 = 64 << 20

func fsHash(c *tool.Call) error {
	var args struct {
		Path      string `json:"path"`
		Algorithm string `json:"algorithm"`
	}
	if err := decodeArgs(c, &args); err != nil {
		return err
	}
	var h hash.Hash
	switch args.Algorithm {
	case "", "sha256":
		args.Algorithm, h = "sha256", sha256.New()
	case "sha512":
		h = sha512.New()
	case "sha1":
		h = sha1.New()
	case "md5":
		h = md5.New()
	default:
		return fmt.Errorf("algorithm %q: want sha256, sha512, sha1 or md5", args.Algorithm)
	}
	r, err := openRoot(c)
	if err != nil {
		return err
	}
	defer r.Close()
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
