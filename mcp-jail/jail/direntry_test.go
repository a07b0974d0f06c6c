//go:build linux

package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestDirEntryInfoStaysInside proves that DirEntry.Info of an entry from
// ReadDir or WalkDir describes the file that was listed under the root,
// never whatever a path string names later: the listed directory is
// swapped for a symlink to a decoy outside (holding a same-named file of
// another size) between the listing and Info, and the working directory
// is moved to a place with the same relative names.
func TestDirEntryInfoStaysInside(t *testing.T) { bothPaths(t, testDirEntryInfoStaysInside) }

func testDirEntryInfoStaysInside(t *testing.T) {
	const decoy = "DECOY-OUTSIDE-MUCH-LONGER-THAN-THE-INSIDE-FILE"
	base := tree(t)
	root := filepath.Join(base, "data")
	// The decoy mirrors data/sub both beside the root (for the symlink
	// swap) and below the working directory (for a lookup relative to it).
	for _, d := range []string{"decoy", "cwd/sub", "cwd/data/sub"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(base, d, "g.txt"), []byte(decoy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(base, "cwd"))
	swap := func(t *testing.T) {
		t.Helper()
		if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(root, "sub-moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(base, "decoy"), filepath.Join(root, "sub")); err != nil {
			t.Fatal(err)
		}
	}
	unswap := func(t *testing.T) {
		t.Helper()
		if err := os.Remove(filepath.Join(root, "sub")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(root, "sub-moved"), filepath.Join(root, "sub")); err != nil {
			t.Fatal(err)
		}
	}
	checkG := func(t *testing.T, d fs.DirEntry) {
		t.Helper()
		fi, err := d.Info()
		if err != nil {
			t.Fatalf("Info(%s): %v", d.Name(), err)
		}
		if fi.Size() != int64(len("g")) || !fi.Mode().IsRegular() || fi.Name() != "g.txt" {
			t.Errorf("Info(g.txt) = %s size %d, want the regular file of size 1 listed under the root (%d is the decoy outside)",
				fi.Mode(), fi.Size(), len(decoy))
		}
	}

	t.Run("ReadDir", func(t *testing.T) {
		entries, err := openRoot(t, root).ReadDir("sub")
		if err != nil {
			t.Fatal(err)
		}
		swap(t)
		defer unswap(t)
		found := false
		for _, d := range entries {
			if d.Name() == "g.txt" {
				found = true
				checkG(t, d)
			}
			// Every entry answers Info from the listing: none may fail
			// now that sub leads outside, nor describe the decoy.
			if _, err := d.Info(); err != nil {
				t.Errorf("Info(%s): %v", d.Name(), err)
			}
		}
		if !found {
			t.Fatalf("ReadDir(sub) has no g.txt: %v", entries)
		}
	})

	t.Run("WalkDir", func(t *testing.T) {
		swapped, checked := false, false
		err := openRoot(t, root).WalkDir("sub", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case p == "sub":
				return nil
			case !swapped:
				// sub has been listed: its first child is being visited.
				swap(t)
				swapped = true
			}
			if p == "sub/g.txt" {
				checkG(t, d)
				checked = true
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		})
		if swapped {
			unswap(t)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !checked {
			t.Fatal("WalkDir(sub) never visited sub/g.txt")
		}
	})

	t.Run("File.ReadDir", func(t *testing.T) {
		// A directory opened through the Root lists the same way.
		f, err := openRoot(t, root).Open("sub")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		entries, err := f.ReadDir(-1)
		if err != nil {
			t.Fatal(err)
		}
		swap(t)
		defer unswap(t)
		for _, d := range entries {
			if d.Name() == "g.txt" {
				checkG(t, d)
			}
		}
	})

	t.Run("FS", func(t *testing.T) {
		// fs.ReadDir through FS() is the same listing.
		entries, err := fs.ReadDir(openRoot(t, root).FS(), "sub")
		if err != nil {
			t.Fatal(err)
		}
		swap(t)
		defer unswap(t)
		for _, d := range entries {
			if d.Name() == "g.txt" {
				checkG(t, d)
			}
		}
	})
}
