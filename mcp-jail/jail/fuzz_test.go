package jail

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve checks two properties for any name: whatever Resolve and
// ResolveLexical return lies inside the root, and in a tree without
// symlinks the two agree exactly (same path, or both refuse as an
// escape). The seeds run with every `go test`; `go test -fuzz
// FuzzResolve` explores further.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		".", "..", "a/..", "a/../..", "../x", "/", "//", "a//b/./c/", "f.txt/..", "f.txt/x",
		"sub/deep/../..", "sub/deep/../../..", "...", ".../x", "..x", "x..", "./.", "/./..",
		"sub/./deep/h.txt", "\x00", "a\x00b", "", strings.Repeat("../", 10), strings.Repeat("a/", 10) + strings.Repeat("../", 11),
	} {
		f.Add(s)
	}
	base := f.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	root := filepath.Join(base, "data")
	for _, d := range []string{"data/sub/deep", "data-evil"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{"data/f.txt", "data/sub/deep/h.txt", "data-evil/x"} {
		if err := os.WriteFile(filepath.Join(base, p), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(root + "/f.txt")
	f.Add(root + "-evil/x")
	f.Add(root + "/../data/f.txt")
	r, err := Open(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	inside := func(p string) bool {
		return p == root || strings.HasPrefix(p, root+"/") && filepath.Clean(p) == p
	}
	f.Fuzz(func(t *testing.T, name string) {
		lex, lexErr := ResolveLexical(root, name)
		phys, physErr := r.Resolve(name)
		if lexErr == nil && !inside(lex) {
			t.Fatalf("ResolveLexical(%q) = %q, outside", name, lex)
		}
		if physErr == nil && !inside(phys) {
			t.Fatalf("Resolve(%q) = %q, outside", name, phys)
		}
		if errors.Is(lexErr, ErrEscapes) != errors.Is(physErr, ErrEscapes) ||
			errors.Is(lexErr, ErrInvalidPath) != errors.Is(physErr, ErrInvalidPath) {
			t.Fatalf("%q: lexical %q, %v; physical %q, %v", name, lex, lexErr, phys, physErr)
		}
		if lexErr == nil && physErr == nil && lex != phys {
			t.Fatalf("%q: lexical %q, physical %q", name, lex, phys)
		}
	})
}
