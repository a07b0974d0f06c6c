package jail

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchTree builds a source-tree-like fixture: 40 directories two and
// three levels deep, 3000 files, and 100 symlinks (to files and to
// directories), and returns the root and every name in it as find(1)
// prints them ("./a/b/f.go").
func benchTree(b *testing.B) (string, []string) {
	b.Helper()
	root := b.TempDir()
	var names []string
	add := func(rel string) { names = append(names, "./"+rel) }
	for i := 0; i < 40; i++ {
		dir := fmt.Sprintf("pkg%02d/internal%d", i, i%3)
		if i%2 == 0 {
			dir += "/sub"
		}
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			b.Fatal(err)
		}
		add(dir)
		for j := 0; j < 75; j++ {
			rel := fmt.Sprintf("%s/file_%03d.go", dir, j)
			if err := os.WriteFile(filepath.Join(root, rel), nil, 0o644); err != nil {
				b.Fatal(err)
			}
			add(rel)
		}
		for j := 0; j < 2; j++ {
			rel := fmt.Sprintf("%s/link_%d.go", dir, j)
			if err := os.Symlink(fmt.Sprintf("file_%03d.go", j), filepath.Join(root, rel)); err != nil {
				b.Fatal(err)
			}
			add(rel)
		}
		rel := fmt.Sprintf("pkg%02d/up", i)
		if err := os.Symlink(fmt.Sprintf("../pkg%02d/internal%d", (i+1)%40, (i+1)%3), filepath.Join(root, rel)); err != nil {
			b.Fatal(err)
		}
		add(rel + "/x.go")
	}
	return root, names
}

func BenchmarkResolveLexical(b *testing.B) {
	root, names := benchTree(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ResolveLexical(root, names[i%len(names)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "paths/s")
}

func BenchmarkResolvePhysical(b *testing.B) {
	root, names := benchTree(b)
	r, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Resolve(names[i%len(names)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "paths/s")
}

// BenchmarkResolveWalker is BenchmarkResolvePhysical without openat2: the
// walker alone, as on kernels before 5.6.
func BenchmarkResolveWalker(b *testing.B) {
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	BenchmarkResolvePhysical(b)
}
