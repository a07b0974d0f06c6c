package confinement

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// elfDeps is what the dynamic loader reads from an ELF executable or
// library to load it: its loader (PT_INTERP), the libraries it needs
// (DT_NEEDED) and where it looks for them (DT_RPATH, DT_RUNPATH).
type elfDeps struct {
	interp  string
	needed  []string
	rpath   []string // DT_RPATH, then DT_RUNPATH values, unsplit
	runpath []string
}

// Bounds on what readELFDeps reads of a file it does not trust.
const (
	maxPhnum      = 256
	maxInterpPath = 4096
	maxDynamic    = 64 << 10
	maxDynStr     = 1 << 20
)

var errNotELF = errors.New("not an ELF file the loader reads")

// readELFDeps reads path's program headers and dynamic section the way the
// loader does (through the segments, not the section headers, which the
// loader ignores and a file may lack). It is a few dozen lines where
// debug/elf, which mcp-route used for this, linked DWARF, zlib and zstd
// readers: 290 kB of the binary. Every offset and size comes from the file,
// so each is checked against the bounds above and the file's size.
func readELFDeps(path string) (elfDeps, error) {
	f, err := os.Open(path)
	if err != nil {
		return elfDeps{}, err
	}
	defer f.Close()
	var ident [16]byte
	if _, err := f.ReadAt(ident[:], 0); err != nil || string(ident[:4]) != "\x7fELF" {
		return elfDeps{}, errNotELF
	}
	var bo binary.ByteOrder
	switch ident[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return elfDeps{}, errNotELF
	}
	wide := ident[4] == 2 // ELFCLASS64; 1 is ELFCLASS32
	if !wide && ident[4] != 1 {
		return elfDeps{}, errNotELF
	}
	// The header fields needed: e_phoff, e_phentsize, e_phnum.
	var hdr [64]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return elfDeps{}, err
	}
	var phoff uint64
	var phentsize, phnum uint16
	if wide {
		phoff = bo.Uint64(hdr[32:])
		phentsize, phnum = bo.Uint16(hdr[54:]), bo.Uint16(hdr[56:])
	} else {
		phoff = uint64(bo.Uint32(hdr[28:]))
		phentsize, phnum = bo.Uint16(hdr[42:]), bo.Uint16(hdr[44:])
	}
	want := uint16(32)
	if wide {
		want = 56
	}
	if phentsize != want || phnum > maxPhnum {
		return elfDeps{}, errNotELF
	}
	ph := make([]byte, int(phentsize)*int(phnum))
	if phoff > 1<<40 {
		return elfDeps{}, errNotELF
	}
	if _, err := f.ReadAt(ph, int64(phoff)); err != nil {
		return elfDeps{}, errNotELF
	}
	type seg struct{ typ, off, vaddr, filesz uint64 }
	segs := make([]seg, phnum)
	for i := range segs {
		p := ph[i*int(phentsize):]
		if wide {
			segs[i] = seg{uint64(bo.Uint32(p)), bo.Uint64(p[8:]), bo.Uint64(p[16:]), bo.Uint64(p[32:])}
		} else {
			segs[i] = seg{uint64(bo.Uint32(p)), uint64(bo.Uint32(p[4:])), uint64(bo.Uint32(p[8:])), uint64(bo.Uint32(p[16:]))}
		}
	}
	read := func(off, n, limit uint64) ([]byte, bool) {
		if n > limit || off > 1<<40 {
			return nil, false
		}
		b := make([]byte, n)
		_, err := f.ReadAt(b, int64(off))
		return b, err == nil
	}
	const ptDynamic, ptInterp, ptLoad = 2, 3, 1
	var d elfDeps
	var dyn []byte
	for _, s := range segs {
		switch s.typ {
		case ptInterp:
			if b, ok := read(s.off, s.filesz, maxInterpPath); ok {
				d.interp = string(bytes.TrimRight(b, "\x00"))
			}
		case ptDynamic:
			dyn, _ = read(s.off, s.filesz, maxDynamic)
		}
	}
	if dyn == nil {
		return d, nil
	}
	// The dynamic entries: tag, value pairs. DT_STRTAB is an address,
	// found in the file through the PT_LOAD segment that maps it.
	const dtNull, dtNeeded, dtStrtab, dtStrsz, dtRpath, dtRunpath = 0, 1, 5, 10, 15, 29
	type dent struct{ tag, val uint64 }
	var ents []dent
	var strtab, strsz uint64
	size := 8
	if wide {
		size = 16
	}
	for p := dyn; len(p) >= size; p = p[size:] {
		var e dent
		if wide {
			e = dent{bo.Uint64(p), bo.Uint64(p[8:])}
		} else {
			e = dent{uint64(bo.Uint32(p)), uint64(bo.Uint32(p[4:]))}
		}
		if e.tag == dtNull {
			break
		}
		switch e.tag {
		case dtStrtab:
			strtab = e.val
		case dtStrsz:
			strsz = e.val
		case dtNeeded, dtRpath, dtRunpath:
			ents = append(ents, e)
		}
	}
	var str []byte
	for _, s := range segs {
		if s.typ == ptLoad && s.vaddr <= strtab && strtab-s.vaddr < s.filesz {
			off := s.off + (strtab - s.vaddr)
			n := min(strsz, s.filesz-(strtab-s.vaddr))
			str, _ = read(off, n, maxDynStr)
			break
		}
	}
	at := func(i uint64) (string, bool) {
		if i >= uint64(len(str)) {
			return "", false
		}
		end := bytes.IndexByte(str[i:], 0)
		if end < 0 {
			return "", false
		}
		return string(str[i : i+uint64(end)]), true
	}
	for _, e := range ents {
		s, ok := at(e.val)
		if !ok {
			continue
		}
		switch e.tag {
		case dtNeeded:
			d.needed = append(d.needed, s)
		case dtRpath:
			d.rpath = append(d.rpath, s)
		case dtRunpath:
			d.runpath = append(d.runpath, s)
		}
	}
	return d, nil
}
