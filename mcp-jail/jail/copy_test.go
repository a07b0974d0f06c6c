package jail

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCopyAtomic: the copy lands whole with exactly the given bits (an
// existing file's bits are replaced, unlike WriteFileAtomic), no temporary
// file is left behind, and a destination outside the root is refused with
// nothing written there.
func TestCopyAtomic(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A umask that would cut bits off shows that the bits are set exactly.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)

	if n, err := r.CopyAtomic("new.txt", strings.NewReader("hello"), 0o754); err != nil || n != 5 {
		t.Fatalf("CopyAtomic = %d, %v", n, err)
	}
	if err := os.WriteFile(filepath.Join(root, "old.txt"), []byte("previous contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CopyAtomic("old.txt", strings.NewReader("copied"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		data string
		mode os.FileMode
	}{"new.txt": {"hello", 0o754}, "old.txt": {"copied", 0o644}} {
		p := filepath.Join(root, name)
		b, err := os.ReadFile(p)
		fi, serr := os.Stat(p)
		if err != nil || serr != nil || string(b) != want.data || fi.Mode().Perm() != want.mode {
			t.Errorf("%s: %q %v, want %q %v (%v %v)", name, b, fi.Mode().Perm(), want.data, want.mode, err, serr)
		}
	}

	for _, name := range []string{"../outside.txt", filepath.Join(base, "outside.txt"), "."} {
		if _, err := r.CopyAtomic(name, strings.NewReader("x"), 0o644); err == nil {
			t.Errorf("CopyAtomic(%q) succeeded", name)
		} else if name != "." && !errors.Is(err, ErrEscapes) {
			t.Errorf("CopyAtomic(%q) = %v, want ErrEscapes", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "outside.txt")); err == nil {
		t.Error("a file was written outside the root")
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 {
		t.Errorf("root holds %d entries, want 2 (no temporary file left)", len(entries))
	}
}
