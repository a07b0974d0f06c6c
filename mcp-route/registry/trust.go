package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Nothing a tool can write is trusted (DESIGN.md, "Trust"). Tools work in
// the root and, unless mcp-route runs --readonly, may write anything under
// it (the stock fs_write, fs_chmod, fs_move do). A tool directory there, or
// a tool whose path leads through a directory there (a symlink into the
// root, a symlinked directory in it), is a tool a client could write,
// replace or chmod +x, and then call: code execution for whoever holds the
// client.
//
// The check resolves paths the way the kernel will when it executes the
// tool: component by component, following symlinks, `..` applied to the
// directory actually reached. Every directory entry looked at on the way is
// an entry a client could rewrite when it sits in a directory under the
// root; entries that only name the root or its ancestors are not (a tool
// cannot replace its own root). A path that resolves to the root itself
// (--tools naming the root) is under it.

// maxLinks bounds symlinks followed in one resolution, as the kernel's
// ELOOP does.
const maxLinks = 40

// throughRoot reports the first place where resolving path depends on
// something under root, which must be a real path (symlinks resolved):
// a directory entry strictly inside root, or path resolving to root or
// into it. It returns "" when nothing is. A missing component is taken
// as it would be once created (so a dangling symlink into the root
// counts); an unreadable one is an error.
func throughRoot(path, root string) (string, error) {
	// Not filepath.Abs, which cleans the path: "link/../f" is f beside
	// link's target for the kernel, not beside link.
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + "/" + path
	}
	under := func(p string) bool {
		return root == "/" || strings.HasPrefix(p, root+"/")
	}
	rest := strings.Split(path, "/")
	cur := "/"
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if under(next) {
			return next, nil
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			cur = next // what follows is created under it, no links yet
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	if cur == root {
		return cur, nil
	}
	return "", nil
}

// realRoot resolves root's symlinks, as throughRoot wants it.
func realRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// CheckToolsOutsideRoot is mcp-route's startup check for a root the tools
// can write (no --readonly): it returns an error, one line that says what
// to do, when a tool directory lies under root or is reached through it,
// or when an entry of one (a tool, its sidecar, a file that chmod could
// make a tool) leads there, e.g. a link made by `mcp-stock install` to a
// binary built inside the root.
func CheckToolsOutsideRoot(dirs []string, root string) error {
	return checkToolsOutside(dirs, root, "--root", "move the tools out of the root, or add --readonly")
}

// CheckToolsOutsideWritable is the same check for a place confined tools
// may write besides the root (--allow-write), --readonly or not: a tool
// binary there (say ~/go/bin/mcp-stock under --allow-write ~/go) is one a
// client could rewrite for every later session, confined or not.
func CheckToolsOutsideWritable(dirs []string, place string) error {
	return checkToolsOutside(dirs, place, "--allow-write", "move the tools out of it, or narrow --allow-write")
}

func checkToolsOutside(dirs []string, root, flag, remedy string) error {
	real, err := realRoot(root)
	if err != nil {
		return fmt.Errorf("%s %s: %v", flag, root, err)
	}
	for _, dir := range dirs {
		at, err := throughRoot(dir, real)
		if err != nil {
			return fmt.Errorf("--tools %s: %v", dir, err)
		}
		if at != "" {
			return fmt.Errorf("--tools %s is inside %s %s%s, where tools can write: a client could add a tool; %s", dir, flag, root, via(at, dir), remedy)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("--tools %s: %v", dir, err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				continue // never a tool nor a sidecar
			}
			path := filepath.Join(dir, e.Name())
			at, err := throughRoot(path, real)
			if err != nil {
				continue // unreadable or a link loop: the registry skips it too
			}
			if at != "" {
				return fmt.Errorf("--tools %s: %s leads to %s, inside %s %s, where tools can write: a client could rewrite the tool; %s", dir, e.Name(), at, flag, root, remedy)
			}
		}
	}
	return nil
}

// PathThrough reports where resolving path depends on something under
// place (a directory entry inside it, or path resolving into it), as the
// kernel would resolve both; "" when nothing does. mcp-route refuses a
// --pin file there: a tool or upstream that can write place could pin
// its own definitions.
func PathThrough(path, place string) (string, error) {
	real, err := realRoot(place)
	if err != nil {
		return "", err
	}
	return throughRoot(path, real)
}

// via names the path inside the root when it is not the one the user gave.
func via(at, given string) string {
	if at == given {
		return ""
	}
	return " (as " + at + ")"
}

// rootGuard leaves out, at every reload, the tools that resolve through a
// root the tools can write: the startup check saw the directories as they
// were, but a link can be retargeted later.
type rootGuard struct {
	roots []string // real paths; none when the guard is off

	mu     sync.Mutex
	logged map[string]string // path → what was logged, to say it once
}

func newRootGuard(root string, readOnly bool, writable []string, logger *slog.Logger) *rootGuard {
	g := &rootGuard{logged: map[string]string{}}
	places := writable
	if root != "" && !readOnly {
		places = append([]string{root}, writable...)
	}
	for _, p := range places {
		real, err := realRoot(p)
		if err != nil {
			// The place is gone or unreadable: nothing can be shown safe.
			logger.Warn("root unreadable: every tool is left out", slog.String("root", p), slog.Any("error", err))
			real = "/"
		}
		g.roots = append(g.roots, real)
	}
	return g
}

// filter returns the candidates whose executable and sidecar paths lead
// nowhere under the root, and logs each one left out once per reason.
func (g *rootGuard) filter(cands []candidate, logger *slog.Logger) []candidate {
	if len(g.roots) == 0 {
		return cands
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	kept := cands[:0:0]
	seen := map[string]string{}
	for _, c := range cands {
		why := ""
	check:
		for _, root := range g.roots {
			for _, p := range []string{c.path, c.path + ".json"} {
				at, err := throughRoot(p, root)
				switch {
				case err != nil:
					why = fmt.Sprintf("%s cannot be resolved: %v", p, err)
				case at != "":
					why = fmt.Sprintf("%s leads to %s, inside %s, where tools can write", p, at, root)
				}
				if why != "" {
					break check
				}
			}
		}
		if why == "" {
			kept = append(kept, c)
			continue
		}
		seen[c.path] = why
		if g.logged[c.path] != why {
			logger.Warn("tool left out", slog.String("tool", c.name), slog.String("path", c.path), slog.String("why", why))
		}
	}
	g.logged = seen
	return kept
}
