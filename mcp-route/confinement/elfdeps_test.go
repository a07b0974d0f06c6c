package confinement

import (
	"debug/elf"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadELFDeps: on the system's own binaries and libraries, what
// readELFDeps reads is what debug/elf reads (the test may link it; the
// binary does not).
func TestReadELFDeps(t *testing.T) {
	var files []string
	for _, pattern := range []string{"/bin/*", "/usr/bin/*", "/lib/x86_64-linux-gnu/*.so*", "/usr/lib/x86_64-linux-gnu/*.so*", "/lib64/*.so*", "/usr/lib/*.so*"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	files = append(files, os.Args[0]) // a Go binary: no PT_DYNAMIC
	checked := 0
	for _, p := range files {
		if checked >= 300 {
			break
		}
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		var interp string
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b := make([]byte, prog.Filesz)
				prog.ReadAt(b, 0)
				interp = strings.TrimRight(string(b), "\x00")
			}
		}
		needed, _ := f.ImportedLibraries()
		runpath, _ := f.DynString(elf.DT_RUNPATH)
		rpath, _ := f.DynString(elf.DT_RPATH)
		f.Close()
		d, err := readELFDeps(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if d.interp != interp || !slices.Equal(d.needed, needed) || !slices.Equal(d.runpath, runpath) || !slices.Equal(d.rpath, rpath) {
			t.Errorf("%s: read %+v; debug/elf: interp %q needed %q runpath %q rpath %q", p, d, interp, needed, runpath, rpath)
		}
		checked++
	}
	if checked < 10 {
		t.Skipf("only %d ELF files found to compare", checked)
	}
	t.Logf("%d ELF files agree", checked)
}

// TestReadELFDepsHostile: files that claim more than they hold, or are
// not ELF, are refused or read within bounds, never trusted to size a
// read.
func TestReadELFDepsHostile(t *testing.T) {
	self, err := os.ReadFile(mustEval(t, "/bin/sh"))
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hugePhnum := slices.Clone(self)
	hugePhnum[56], hugePhnum[57] = 0xff, 0xff // e_phnum 65535
	farPhoff := slices.Clone(self)
	for i := 32; i < 40; i++ {
		farPhoff[i] = 0xff // e_phoff far beyond the file
	}
	for name, b := range map[string][]byte{
		"empty":      {},
		"script":     []byte("#!/bin/sh\necho hi\n"),
		"truncated":  self[:40],
		"huge-phnum": hugePhnum,
		"far-phoff":  farPhoff,
		"no-phdrs":   self[:64],
	} {
		if _, err := readELFDeps(write(name, b)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	// The genuine article still reads.
	d, err := readELFDeps(write("sh", self))
	if err != nil || d.interp == "" || len(d.needed) == 0 {
		t.Errorf("a copy of /bin/sh: %+v %v", d, err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Skip(err)
	}
	return r
}
