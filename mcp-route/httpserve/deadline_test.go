package httpserve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec/server"
)

// recordingWriter is a ResponseWriter that records its writes and the
// write deadline set before each, and fails every write once fail is set,
// as a connection past its write deadline does.
type recordingWriter struct {
	header http.Header

	mu       sync.Mutex
	deadline time.Time
	writes   []int       // sizes
	armed    []time.Time // the deadline in force at each write
	fail     bool
}

func (w *recordingWriter) Header() http.Header { return w.header }
func (w *recordingWriter) WriteHeader(int)     {}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail {
		return 0, os.ErrDeadlineExceeded
	}
	w.writes = append(w.writes, len(b))
	w.armed = append(w.armed, w.deadline)
	return len(b), nil
}

func (w *recordingWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail {
		return os.ErrDeadlineExceeded
	}
	return nil
}

func (w *recordingWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

// A big body goes out 32 KiB at a time, each piece with a fresh deadline:
// a reader that keeps reading is never cut off by the size of the answer.
func TestDeadlinePerWrite(t *testing.T) {
	rec := &recordingWriter{header: http.Header{}}
	w := newDeadlineWriter(rec, time.Hour)
	before := time.Now()
	if n, err := w.Write(make([]byte, 3*writeChunk+100)); n != 3*writeChunk+100 || err != nil {
		t.Fatalf("Write: %d %v", n, err)
	}
	if len(rec.writes) != 4 || rec.writes[0] != writeChunk || rec.writes[3] != 100 {
		t.Errorf("writes %v, want three of %d and one of 100", rec.writes, writeChunk)
	}
	for i, d := range rec.armed {
		if d.Before(before.Add(time.Hour)) {
			t.Errorf("write %d: deadline %v, want now + the timeout", i, d)
		}
	}
	if err := http.NewResponseController(w).Flush(); err != nil || rec.deadline.IsZero() {
		t.Errorf("flush: %v, deadline %v", err, rec.deadline)
	}
}

// A keepalive comment that cannot be written (the client stopped reading)
// ends the conversation at once: the core's Read learns the client is
// gone, though the core itself has nothing to write.
func TestFailedKeepaliveEndsConversation(t *testing.T) {
	rec := &recordingWriter{header: http.Header{}}
	r := httptest.NewRequest("GET", Path, nil)
	r.Header.Set("Accept", "text/event-stream")
	x := newExchange(newDeadlineWriter(rec, time.Second), r, nil, nil, 10*time.Millisecond)
	defer x.Close()
	x.mu.Lock()
	x.toSSE()
	x.mu.Unlock()
	rec.mu.Lock()
	rec.fail = true
	rec.mu.Unlock()
	x.startKeepalive()
	got := make(chan error, 1)
	go func() {
		_, err := x.Read(context.Background())
		got <- err
	}()
	select {
	case err := <-got:
		if !errors.Is(err, server.ErrOutputClosed) {
			t.Errorf("Read: %v, want ErrOutputClosed", err)
		}
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("Read still waits after the keepalive failed")
	}
}
