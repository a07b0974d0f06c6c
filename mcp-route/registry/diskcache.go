package registry

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The describe cache keeps what `NAME --mcp-describe` printed across
// mcp-route runs, so that a host starting a server per connection does not
// run every tool once more before the first tools/list.
//
// One file per executable path (and describe environment and directory),
// so the cache grows with the number of tools ever described, not with the
// number of times they changed. It holds the executable's stamp when it was
// described: size, mode, mtime, and on Linux inode, device and ctime,
// following symlinks. An entry is used only when the stamp is still the
// same, so a rebuilt, edited, replaced or re-linked tool is described again.
// What the stamp cannot see is a describe output that depends on something
// else (a file the tool reads, a program it calls): such a tool should ship
// a sidecar, or the cache be turned off.
//
// Only definitions that parsed and validated are kept (a failing tool is
// described, and logged, again at every start), and not when the
// executable's mtime is less than racyWindow old: on a file system with
// coarse timestamps, a write right after the stat could leave the stamp
// unchanged.
//
// Entries not used for pruneAfter (a tool deleted, a temporary directory
// gone) are removed when a Registry opens the cache; a used entry's mtime
// is refreshed at most once a day, so a plain start writes nothing.
//
// The directory is created 0700 and refused when it is not owned by the
// effective user or is writable by group or others: a definition's "run"
// object decides which variables reach the tool, and its annotations
// whether --readonly serves it, so the cache is as trusted as the tool
// directories.
//
// Nothing a tool can write is trusted (DESIGN.md, "Trust"), so the cache
// is never used when it lies under the tools' root (Options.Root, e.g.
// `--root ~` with the default ~/.cache/mcpipe/describe), --readonly or
// not: a client could rewrite fs_write's entry to claim readOnlyHint, or
// give env_get a run.passEnv of a host secret, for a later session to
// serve. That is logged once and mcp-route runs without the cache.
//
// Entries are also authenticated, for the sessions that do use the cache:
// each carries an HMAC-SHA256 of its path, salt, stamp and definition,
// keyed by the file "key" in the cache directory (32 random bytes, 0600,
// created by the first mcp-route that needs it). An entry whose MAC does
// not verify is ignored, logged, and the tool described again; one written
// under another key (see below) is ignored silently, as a stale one.
//
// The key is only as secret as its directory: a session whose root holds
// the cache, and so does not use it, has tools that could read the key and
// forge entries for the next session. Such a session therefore revokes the
// key, removing the file when it opens the cache and again when it closes
// (Registry.Close): entries signed with it, or with a key its tools made
// up, no longer verify, and the next session starts a new key (every tool
// described once more). What this cannot stop: a session started while the
// revoking one runs, a revoking session killed with SIGKILL (no removal at
// exit), and a tool process that escapes its process group and outlives
// the session. Keep the cache out of every root (--describe-cache DIR, or
// XDG_CACHE_HOME) when the root must be as wide as $HOME.
type diskCache struct {
	dir   string
	salt  string // the describe environment and directory
	key   []byte // HMAC key of the entries
	keyID string // names the key in each entry, so that a revoked one is told from tampering
	log   *slog.Logger

	mu         sync.Mutex
	warnedOnce bool
}

const (
	racyWindow = 3 * time.Second
	pruneAfter = 30 * 24 * time.Hour
	touchAfter = 24 * time.Hour
)

// cacheEntry is one file of the cache.
type cacheEntry struct {
	Path  string `json:"path"`
	Salt  string `json:"salt"`
	Stamp string `json:"stamp"`
	Def   []byte `json:"def"` // base64 in the file: kept byte for byte
	KeyID string `json:"keyId"`
	MAC   string `json:"mac"` // hex HMAC-SHA256 of the fields above
}

// keyFile is the name of the HMAC key in the cache directory.
const keyFile = "key"

const keySize = 32

// errUnderRoot is openDiskCache's error for a cache the tools can write.
var errUnderRoot = errors.New("under the root")

// openDiskCache prepares dir (creating it) for use as the describe cache.
// A dir under one of roots (the tools' root, "" for none, and the
// --allow-write places) is refused with an error wrapping errUnderRoot,
// and its key revoked.
func openDiskCache(dir string, env []string, describeDir string, roots []string, logger *slog.Logger) (*diskCache, error) {
	for _, root := range roots {
		if root == "" {
			continue
		}
		real, err := realRoot(root)
		if err != nil {
			return nil, fmt.Errorf("root %s: %v", root, err)
		}
		at, err := throughRoot(dir, real)
		if err != nil {
			return nil, err
		}
		if at != "" {
			revokeKey(dir)
			return nil, fmt.Errorf("%s is %w %s, where tools can write: a client could forge tool definitions; its key is revoked; set --describe-cache (or XDG_CACHE_HOME) to a directory outside the root", dir, errUnderRoot, root)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s: writable by group or others (mode %v)", dir, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s: owned by uid %d, not by us", dir, st.Uid)
	}
	key, err := loadKey(dir)
	if err != nil {
		return nil, err
	}
	prune(dir)
	h := sha256.New()
	fmt.Fprintf(h, "dir %q\n", describeDir)
	for _, kv := range env {
		fmt.Fprintf(h, "env %q\n", kv)
	}
	id := sha256.Sum256(append([]byte("mcpipe describe cache key id\x00"), key...))
	return &diskCache{dir: dir, salt: hex.EncodeToString(h.Sum(nil)), key: key, keyID: hex.EncodeToString(id[:8]), log: logger}, nil
}

// loadKey reads the cache's HMAC key, creating it when there is none. Two
// mcp-route processes creating it at once agree on one: the file is
// linked into place, which fails when it exists.
func loadKey(dir string) ([]byte, error) {
	name := filepath.Join(dir, keyFile)
	for range 3 {
		key, err := os.ReadFile(name)
		if err == nil {
			if len(key) != keySize {
				return nil, fmt.Errorf("%s: %d bytes, want a %d-byte key (remove it to get a new one)", name, len(key), keySize)
			}
			return key, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		key = make([]byte, keySize)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		tmp, err := os.CreateTemp(dir, ".tmp-key-*") // 0600
		if err != nil {
			return nil, err
		}
		_, err = tmp.Write(key)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Link(tmp.Name(), name)
		}
		os.Remove(tmp.Name())
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		// Another process made one first: read it.
	}
	return nil, fmt.Errorf("%s: could not be created nor read", name)
}

// revokeKey removes the key of the cache at dir, if any: entries signed
// with it no longer verify.
func revokeKey(dir string) {
	os.Remove(filepath.Join(dir, keyFile))
}

// Close ends the Registry's use of the describe cache. When the cache lay
// under the root, its key is revoked once more: the tools, now stopped,
// could have read it, or written one of their own, to sign entries.
func (r *Registry) Close() {
	if r.revoke != "" {
		revokeKey(r.revoke)
	}
}

// mac authenticates an entry: every field that decides what is served.
func (c *diskCache) mac(e *cacheEntry) string {
	m := hmac.New(sha256.New, c.key)
	for _, f := range []string{"mcpipe describe cache v1", e.Path, e.Salt, e.Stamp, string(e.Def), e.KeyID} {
		fmt.Fprintf(m, "%d:%s\n", len(f), f)
	}
	return hex.EncodeToString(m.Sum(nil))
}

func (c *diskCache) file(path string) string {
	sum := sha256.Sum256([]byte(c.salt + "\x00" + path))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:16])+".json")
}

// get returns the cached definition of the executable at path when it was
// described with the same stamp.
func (c *diskCache) get(path, stamp string) ([]byte, bool) {
	f, err := os.Open(c.file(path))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	// base64 makes the definition 4/3 larger; the rest is small.
	data, err := io.ReadAll(io.LimitReader(f, 2*MaxDefinition))
	if err != nil {
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.Path != path || e.Salt != c.salt || e.Stamp != stamp || len(e.Def) == 0 {
		return nil, false
	}
	if e.KeyID != c.keyID {
		return nil, false // written under a revoked key, or by an older mcp-route
	}
	if !hmac.Equal([]byte(e.MAC), []byte(c.mac(&e))) {
		c.log.Warn("describe cache: entry fails authentication (tampered with?): ignored, the tool is described again", slog.String("entry", f.Name()), slog.String("path", path))
		return nil, false
	}
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > touchAfter {
		now := time.Now()
		os.Chtimes(f.Name(), now, now) // still in use: keep it from prune
	}
	return e.Def, true
}

// prune removes entries (and temporary files a crash left) not used for
// pruneAfter. Errors are ignored: another mcp-route may prune at the same
// time, and a file left over costs only space.
func prune(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".tmp-")) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > pruneAfter {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// put stores def for the executable at path with stamp, unless the
// executable changed too recently for its stamp to be trusted. A failure
// is reported once; the cache is only an optimisation.
func (c *diskCache) put(path, stamp string, mtime time.Time, def []byte, logger *slog.Logger) {
	if time.Since(mtime) < racyWindow {
		return
	}
	e := cacheEntry{Path: path, Salt: c.salt, Stamp: stamp, Def: def, KeyID: c.keyID}
	e.MAC = c.mac(&e)
	data, err := json.Marshal(e)
	if err == nil {
		err = c.write(c.file(path), data)
	}
	if err != nil {
		c.mu.Lock()
		first := !c.warnedOnce
		c.warnedOnce = true
		c.mu.Unlock()
		if first {
			logger.Warn("describe cache: write failed", slog.Any("error", err))
		}
	}
}

// write replaces name atomically: readers (other mcp-route processes) see
// the old entry or the new one, never a part.
func (c *diskCache) write(name string, data []byte) error {
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// DefaultCacheDir is the describe cache mcp-route uses unless told
// otherwise: $XDG_CACHE_HOME/mcpipe/describe, else
// $HOME/.cache/mcpipe/describe. It is an error when neither is set, or when
// the directory holding that cache base ($HOME, say) does not exist: a
// made-up HOME (a sandbox, a service account) must not be created by us.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(base) {
		return "", errors.New("cache directory is not absolute: " + base)
	}
	if _, err := os.Stat(filepath.Dir(base)); err != nil {
		return "", err
	}
	return filepath.Join(base, "mcpipe", "describe"), nil
}

// stampOf is what the registry compares to tell that a file changed:
// size, mode and mtime, plus inode, device and ctime where the platform
// gives them (statExtra), so that a file replaced by another with the same
// size and mtime (cp -p, a restored backup) still counts as changed.
func stampOf(fi os.FileInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %v %d", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
	b.WriteString(statExtra(fi))
	return b.String()
}
