//go:build unix

package rawpipe

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func pipe(t *testing.T) (*File, *File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := New(r)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := New(w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	return pr, pw
}

// What is written arrives whole and in order, also when it is more than
// the pipe holds (the writer waits for the reader), and the reader sees EOF
// when the writer closes.
func TestPipeCarriesEverything(t *testing.T) {
	r, w := pipe(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, 16 pipes full
	go func() {
		w.Write(want[:100])
		w.Write(want[100:])
		w.Close()
	}()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(want))
	}
}

// A Read waiting for data ends with os.ErrClosed when the file is closed,
// as *os.File's does: a reader goroutine is never stranded.
func TestCloseEndsWaitingRead(t *testing.T) {
	r, _ := pipe(t)
	done := make(chan error)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it wait in the poller
	r.Close()
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read after close: %v, want os.ErrClosed", err)
	}
}

// A write to a pipe whose reader is gone fails (EPIPE) instead of waiting.
func TestWriteToClosedPipeFails(t *testing.T) {
	r, w := pipe(t)
	r.Close()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write with no reader succeeded")
	}
}

// A blocking file is refused: reading it without the runtime knowing would
// stall every goroutine on the processor.
func TestNewRefusesBlocking(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	r.Fd() // Fd puts the file in blocking mode
	if _, err := New(r); !errors.Is(err, ErrBlocking) {
		t.Fatalf("New(blocking pipe): %v, want ErrBlocking", err)
	}
}

// The portable path, which macOS and the BSDs take, passes the same tests
// on Linux (where the raw calls are the default): the counts show that it
// was the one exercised.
func TestPortablePath(t *testing.T) {
	read0, write0, flags0 := sysRead, sysWrite, getFlags
	t.Cleanup(func() { sysRead, sysWrite, getFlags = read0, write0, flags0 })
	var reads, writes, flags atomic.Int64
	sysRead = func(fd uintptr, b []byte) (int, syscall.Errno) { reads.Add(1); return portableRead(fd, b) }
	sysWrite = func(fd uintptr, b []byte) (int, syscall.Errno) { writes.Add(1); return portableWrite(fd, b) }
	getFlags = func(fd uintptr) (int, syscall.Errno) { flags.Add(1); return portableGetFlags(fd) }
	for name, test := range map[string]func(*testing.T){
		"PipeCarriesEverything": TestPipeCarriesEverything,
		"CloseEndsWaitingRead":  TestCloseEndsWaitingRead,
		"WriteToClosedPipe":     TestWriteToClosedPipeFails,
		"NewRefusesBlocking":    TestNewRefusesBlocking,
	} {
		t.Run(name, test)
	}
	if reads.Load() == 0 || writes.Load() == 0 || flags.Load() == 0 {
		t.Fatalf("portable calls made: %d reads, %d writes, %d fcntl; want some of each", reads.Load(), writes.Load(), flags.Load())
	}
}
