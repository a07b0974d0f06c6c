//go:build unix

package router

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
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
	if !nonBlocking(t, in) {
		t.Error("the copy is blocking")
	}
}

// nonBlocking reports whether x's descriptor is in non-blocking mode,
// without Fd (which would make it blocking).
func nonBlocking(t *testing.T, x any) bool {
	t.Helper()
	rc, err := x.(interface {
		SyscallConn() (syscall.RawConn, error)
	}).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// A pipe on the output is written through a non-blocking description of
// our own: every byte arrives, a write to a full pipe waits for the reader
// instead of failing, and the host's description stays blocking.
func TestPollableOutputPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := unix.SetNonblock(int(w.Fd()), false); err != nil {
		t.Fatal(err)
	}
	out, closeOut := pollableOutput(w)
	if out == io.Writer(w) {
		t.Fatal("a pipe was returned as it is, want a non-blocking copy")
	}
	if !nonBlocking(t, out) {
		t.Error("the copy is blocking")
	}
	// More than a pipe holds (64 KiB): the write must wait, not fail.
	want := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	if n, err := out.Write(want); n != len(want) || err != nil {
		t.Errorf("write of %d bytes: %d, %v", len(want), n, err)
	}
	if nonBlocking(t, w) {
		t.Error("the caller's pipe description was made non-blocking")
	}
	closeOut()
	w.Close()
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("read %d bytes, want the %d written", len(b), len(want))
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
