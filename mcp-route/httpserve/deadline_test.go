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
	// A fake clock, when the test sets now: each write starts at clock
	// (recorded in at) and takes step.
	clock time.Time
	step  time.Duration
	at    []time.Time
}

// now is the fake clock, for deadlineWriter.now.
func (w *recordingWriter) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock
}

func (w *recordingWriter) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clock = w.clock.Add(d)
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
	w.at = append(w.at, w.clock)
	w.clock = w.clock.Add(w.step)
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
	w := newDeadlineWriter(rec, time.Hour, DefaultMinRate)
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

// fakeClocked is a deadlineWriter over a recordingWriter with a fake
// clock: timeout 10 s, and a rate of one chunk a second.
func fakeClocked() (*deadlineWriter, *recordingWriter) {
	rec := &recordingWriter{header: http.Header{}, clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	w := newDeadlineWriter(rec, 10*time.Second, writeChunk)
	w.now = rec.now
	return w, rec
}

// A client that takes a body at half the minimum rate (one chunk every
// 2 s, the rate being a chunk a second) passes every per-write deadline
// (10 s), but the rate bound catches up with it: chunk i (from 0) must be
// written by start + timeout + (i+1) s, whatever the per-write bound.
func TestDeadlineMinRate(t *testing.T) {
	w, rec := fakeClocked()
	rec.step = 2 * time.Second
	start := rec.now()
	if _, err := w.Write(make([]byte, 20*writeChunk)); err != nil {
		t.Fatal(err)
	}
	for i, d := range rec.armed {
		perWrite := rec.at[i].Add(10 * time.Second)
		rated := start.Add(10*time.Second + time.Duration(i+1)*time.Second)
		want := perWrite
		if rated.Before(want) {
			want = rated
		}
		if !d.Equal(want) {
			t.Errorf("chunk %d written at +%v: deadline +%v, want +%v", i, rec.at[i].Sub(start), d.Sub(start), want.Sub(start))
		}
	}
	// By the end, the rate bound is well inside the per-write one.
	if last := len(rec.armed) - 1; !rec.armed[last].Before(rec.at[last]) {
		t.Errorf("last chunk written at +%v with deadline +%v: the rate bound did not catch up", rec.at[last].Sub(start), rec.armed[last].Sub(start))
	}
}

// An SSE stream idle between events owes nothing for the idle time: an
// event written an hour after the last gets the full per-write bound, not
// a deadline an hour in the past.
func TestDeadlineIdleStream(t *testing.T) {
	w, rec := fakeClocked()
	w.Write(make([]byte, 3*writeChunk))
	rec.advance(time.Hour)
	now := rec.now()
	w.Write(make([]byte, 100))
	if got := rec.armed[len(rec.armed)-1]; !got.Equal(now.Add(10 * time.Second)) {
		t.Errorf("event after an hour idle: deadline %v after it, want 10s", got.Sub(now))
	}
}

// Writes back to back queue up: the second's bytes are due after the
// first's, which the client is still taking from the kernel's buffers.
// Here the kernel took a 20-chunk event at once; the next event, 5 s
// later, is not yet behind the rate (the first is due at +20 s), so its
// chunks keep the per-write bound though they go out at half the rate.
func TestDeadlineBackToBack(t *testing.T) {
	w, rec := fakeClocked()
	w.Write(make([]byte, 20*writeChunk))
	rec.advance(5 * time.Second)
	rec.step = 2 * time.Second
	first := len(rec.armed)
	w.Write(make([]byte, 10*writeChunk))
	for i := first; i < len(rec.armed); i++ {
		if want := rec.at[i].Add(10 * time.Second); !rec.armed[i].Equal(want) {
			t.Errorf("second event, chunk %d: deadline %v after its write, want 10s", i-first, rec.armed[i].Sub(rec.at[i]))
		}
	}
}

// A keepalive comment that cannot be written (the client stopped reading)
// ends the conversation at once: the core's Read learns the client is
// gone, though the core itself has nothing to write.
func TestFailedKeepaliveEndsConversation(t *testing.T) {
	rec := &recordingWriter{header: http.Header{}}
	r := httptest.NewRequest("GET", Path, nil)
	r.Header.Set("Accept", "text/event-stream")
	x := newExchange(newDeadlineWriter(rec, time.Second, DefaultMinRate), r, nil, nil, 10*time.Millisecond)
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
