//go:build linux

package jail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSwapRace flips root/dir between a real directory and a symlink to a
// directory outside while other goroutines read and write dir/f through
// the Root. Whatever the interleaving, no read may return outside data and
// nothing outside may change: zero escapes.
func TestSwapRace(t *testing.T) { bothPaths(t, testSwapRace) }

func testSwapRace(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root + "/dir", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string) {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root+"/dir/f", "inside")
	write(outside+"/f", outsideData)
	// Two links: absolute and relative; the flipper alternates them.
	if err := os.Symlink(outside, root+"/link-abs"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", root+"/link-rel"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, outside)

	r := openRoot(t, root)

	// Bounded work, not bounded time: the flipper makes flips swaps (or
	// stops early once both outcomes have been seen often enough), and the
	// workers run until it stops. On a busy machine the workers may get
	// the CPU only while dir is one thing, or every operation may lose its
	// race with a rename; so the flipper then holds dir still, first as
	// the real directory until a read and a write have gone through, then
	// as the link out until an operation has been refused. Both outcomes
	// are certain: the test never ends having proved nothing.
	const flips = 20000
	var stop atomic.Bool
	var reads, writes, refused, escapes, leaked atomic.Int64
	var wg sync.WaitGroup

	var flipFailed bool // set by the flipper before it stops
	// hold waits until seen is true, failing the test if that takes
	// longer than any machine would: with dir held still, operations that
	// never succeed (or never fail) are a bug, not a busy machine.
	hold := func(what string, seen func() bool) bool {
		deadline := time.Now().Add(2 * time.Minute)
		for !seen() {
			if time.Now().After(deadline) {
				t.Errorf("with dir held still as %s, no operation came out as expected in 2 minutes (reads %d, writes %d, refused %d, escapes %d)", what, reads.Load(), writes.Load(), refused.Load(), escapes.Load())
				return false
			}
			time.Sleep(time.Millisecond)
		}
		return true
	}

	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stop.Store(true)
		exchange := func() bool {
			if err := unix.Renameat2(unix.AT_FDCWD, root+"/dir", unix.AT_FDCWD, root+"/link-abs", unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return false
			}
			return true
		}
		defer func() {
			// Unless a swap failed, dir is the real directory here
			// (every round below puts it back).
			if flipFailed || !hold("the real directory", func() bool { return reads.Load() > 0 && writes.Load() > 0 }) {
				return
			}
			if !exchange() {
				return
			}
			before := escapes.Load()
			hold("a link out of the root", func() bool { return escapes.Load() > before })
			exchange()
		}()
		for i := 0; i < flips; i++ {
			link := root + "/link-abs"
			if i%2 == 1 {
				link = root + "/link-rel"
			}
			// RENAME_EXCHANGE swaps the directory and the link in one
			// step, so dir is always one or the other; every fourth
			// round goes through a moment with no dir at all.
			if i%4 == 3 {
				os.Rename(root+"/dir", root+"/parked")
				// MkdirAll("dir/m/n") may make a new dir in the moment
				// there is none: put the real one (with f) back over it,
				// or every later read fails and the test proves nothing.
				for try := 0; os.Rename(root+"/parked", root+"/dir") != nil; try++ {
					if try == 1000 {
						t.Errorf("could not put dir back")
						return
					}
					os.RemoveAll(root + "/dir")
				}
				continue
			}
			if err := unix.Renameat2(unix.AT_FDCWD, root+"/dir", unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				flipFailed = true
				return
			}
			if err := unix.Renameat2(unix.AT_FDCWD, root+"/dir", unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				flipFailed = true
				return
			}
			if i > 2000 && reads.Load() > 100 && escapes.Load() > 100 && writes.Load() > 100 {
				return
			}
		}
	}()

	check := func(err error) {
		switch {
		case err == nil:
		case errors.Is(err, ErrEscapes):
			escapes.Add(1)
			refused.Add(1)
		case errors.Is(err, fs.ErrNotExist):
			refused.Add(1)
		default:
			// ENOTDIR and the like when dir is a link at the wrong
			// moment are fine too; only outside access matters.
			refused.Add(1)
		}
	}
	for w := 0; w < 5; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for !stop.Load() {
				switch w {
				case 0:
					data, _, err := r.ReadFile("dir/f", 100)
					if strings.Contains(string(data), outsideData) {
						leaked.Add(1)
					}
					if err == nil {
						reads.Add(1)
					}
					check(err)
				case 1:
					f, err := r.Open("dir/f")
					if err == nil {
						buf := make([]byte, 100)
						n, _ := f.Read(buf)
						if strings.Contains(string(buf[:n]), outsideData) {
							leaked.Add(1)
						}
						f.Close()
						reads.Add(1)
					}
					check(err)
				case 2:
					err := r.WriteFileAtomic("dir/w", []byte("written"), 0o644)
					if err == nil {
						writes.Add(1)
					}
					check(err)
				case 4:
					// Resolve returns a string, which is only advice, but
					// it must never name a place outside. (It may name
					// the real directory under the name it was just
					// renamed to: root/link-abs/f is where f is then.)
					p, err := r.Resolve("dir/f")
					if err == nil && !strings.HasPrefix(p, root+"/") {
						leaked.Add(1)
						t.Errorf("Resolve(dir/f) = %q", p)
					}
					check(err)
				case 3:
					f, err := r.OpenFile("dir/f2", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
					if err == nil {
						f.WriteString("written")
						f.Close()
						writes.Add(1)
					}
					check(err)
					check(r.MkdirAll("dir/m/n", 0o755))
					check(r.Remove("dir/f2"))
					check(r.Chmod("dir/f", 0o600))
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("reads %d, writes %d, refused %d (escapes %d)", reads.Load(), writes.Load(), refused.Load(), escapes.Load())
	if n := leaked.Load(); n != 0 {
		t.Errorf("%d reads returned data from outside the root", n)
	}
	if after := snapshot(t, outside); after != before {
		t.Errorf("outside changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if !flipFailed && (reads.Load() == 0 || writes.Load() == 0 || escapes.Load() == 0) {
		t.Errorf("some outcome never happened (reads %d, writes %d, escapes refused %d): the test proves nothing", reads.Load(), writes.Load(), escapes.Load())
	}
}
