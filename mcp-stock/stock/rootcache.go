package stock

import (
	"context"
	"io/fs"
	"os"
	"sync"

	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

// rootCache keeps a worker's root open between calls. Opening a jail root
// evaluates every symlink on its path and opens it twice, which was a sixth
// of a worker's CPU on small reads; a worker's MCP_ROOT is fixed for its
// life, so it opens the root once and every call shares it (a jail.Root is
// safe for concurrent use, and every operation resolves relative to its
// descriptor, so sharing it weakens nothing).
//
// The path is still checked on every call, with one stat: when the
// directory it names is no longer the one held (the root was renamed, or
// replaced, or a symlink on its path now points elsewhere), the root is
// opened again, so a call works in the directory MCP_ROOT names when the
// call starts, as a call of a tool run once per call does. When the path
// no longer names a directory, the call fails as such a call would. Calls
// that started before a change finish in the directory they started in.
type rootCache struct {
	mu   sync.Mutex
	path string // MCP_ROOT as the calls give it
	cur  *sharedRoot
}

// sharedRoot is a root held by the cache and by the calls using it; it is
// closed when the cache has let go of it and the last call has returned.
type sharedRoot struct {
	r      *jail.Root
	id     fs.FileInfo // the directory held, for os.SameFile
	users  int         // calls using it, and 1 while the cache holds it
	closed bool
}

type rootCacheKey struct{}

// withRootCache returns ctx carrying a new rootCache for the calls that
// run under it, and the function that closes the cache's root.
func withRootCache(ctx context.Context) (context.Context, func()) {
	rc := &rootCache{}
	return context.WithValue(ctx, rootCacheKey{}, rc), rc.close
}

// rootCacheOf returns the cache ctx carries, nil if none.
func rootCacheOf(ctx context.Context) *rootCache {
	rc, _ := ctx.Value(rootCacheKey{}).(*rootCache)
	return rc
}

// open returns the root at path and the function that releases it once
// the call is done with it.
func (rc *rootCache) open(path string) (*jail.Root, func() error, error) {
	named, statErr := os.Stat(path)
	rc.mu.Lock()
	if sr := rc.cur; sr != nil && rc.path == path && statErr == nil && os.SameFile(sr.id, named) {
		sr.users++
		rc.mu.Unlock()
		return sr.r, func() error { rc.release(sr); return nil }, nil
	}
	rc.mu.Unlock()

	r, err := jail.Open(path)
	if err != nil {
		return nil, nil, err
	}
	id, err := r.Stat(".")
	if err != nil {
		// Use it for this call alone, as an uncached root.
		return r, r.Close, nil
	}
	sr := &sharedRoot{r: r, id: id, users: 2}
	rc.mu.Lock()
	old := rc.cur
	rc.path, rc.cur = path, sr
	rc.mu.Unlock()
	if old != nil {
		rc.release(old)
	}
	return r, func() error { rc.release(sr); return nil }, nil
}

// release drops one user of sr and closes it when none is left.
func (rc *rootCache) release(sr *sharedRoot) {
	rc.mu.Lock()
	sr.users--
	last := sr.users == 0 && !sr.closed
	if last {
		sr.closed = true
	}
	rc.mu.Unlock()
	if last {
		sr.r.Close()
	}
}

// close lets go of the cached root; it is closed once no call uses it.
func (rc *rootCache) close() {
	rc.mu.Lock()
	sr := rc.cur
	rc.cur = nil
	rc.mu.Unlock()
	if sr != nil {
		rc.release(sr)
	}
}
