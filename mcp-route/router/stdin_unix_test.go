//go:build unix

package router

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A pipe on the input is read through a non-blocking description of our
// own: every byte still arrives, EOF still ends it, and the host's
// description stays blocking (O_NONBLOCK there would leak to whatever else
// holds it).
func TestPollableInputPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// os.Pipe makes both ends non-blocking; a host's stdin is blocking.
	if err := unix.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	in, closeIn := pollableInput(r)
	defer closeIn()
	if in == io.Reader(r) {
		t.Fatal("a pipe was returned as it is, want a non-blocking copy")
	}
	if _, err := w.Write([]byte("{\"a\":1}\n{\"b\":2}\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("read through the copy: %q, %v", got, err)
	}
	flags, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Error("the caller's pipe description was made non-blocking")
	}
	copyFlags, err := unix.FcntlInt(in.(*os.File).Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if copyFlags&unix.O_NONBLOCK == 0 {
		t.Error("the copy is blocking")
	}
}

// Anything but a pipe is read as it is.
func TestPollableInputNotAPipe(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "requests"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in, closeIn := pollableInput(f); in != io.Reader(f) {
		closeIn()
		t.Error("a regular file was replaced")
	}
	var r io.Reader = io.LimitReader(f, 1)
	if in, _ := pollableInput(r); in != r {
		t.Error("a reader that is no *os.File was replaced")
	}
}
