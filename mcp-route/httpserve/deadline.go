package httpserve

import (
	"net/http"
	"time"
)

// writeChunk is the most of a body one write deadline covers: a reader
// must take this much within WriteTimeout (1 KiB/s at the default 30 s),
// not a whole result of many MiB.
const writeChunk = 32 << 10

// deadlineWriter gives every write of a response, and every flush, a
// write deadline. The server has no WriteTimeout (it would end SSE
// streams, which last as long as their call or subscription), and without
// a deadline a client that stops reading would hold the handler in Write
// for ever, with its conversation or stream. A write past its deadline
// fails, the exchange ends as for a client gone, and net/http closes the
// connection once the handler returns. net/http clears the deadline after
// each response, before the next request of a kept-alive connection.
//
// Two bounds, the earlier wins:
//   - Per write: each write (at most writeChunk of a body) and each flush
//     must complete within timeout of its start. This alone catches a
//     client that stops reading, but not one that trickles: reading
//     32 KiB every timeout - 1s, a client would keep a 16 MiB result, its
//     handler and its conversation for four hours at the default 30 s.
//   - Minimum rate: the bytes of a Write are due at minRate, one after
//     the other, from the Write's start, or from when the bytes of the
//     Writes before were due if that is later; every chunk must be written
//     within timeout of when its last byte is due. So a JSON body (one
//     Write) of N bytes must be out within timeout + N/minRate of its
//     start. The clock runs only while there is something to send: an SSE
//     stream idle between events (its events are one Write each, keepalive
//     comments too) owes nothing for the idle time, and a client that
//     reads at minRate or faster whenever there is something to read is
//     never cut, however long the stream. Writes back to back (a batch's
//     answers as SSE events) queue up: the second's bytes are due after
//     the first's, not from the second's start, since the client is still
//     taking in the first from the kernel's buffers.
//
// "Written" here means taken by the kernel: what its buffers hold (some
// MiB) counts as sent, a head start the rate bound grants every client.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	minRate int64            // bytes per second
	now     func() time.Time // time.Now; tests set it
	due     time.Time        // when the bytes written so far are due at minRate
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration, minRate int64) *deadlineWriter {
	d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, minRate: minRate, now: time.Now}
	// For what net/http writes by itself once the handler returns (the
	// header of a response the handler wrote nothing of).
	d.arm()
	return d
}

// arm sets the per-write deadline: now + timeout.
func (d *deadlineWriter) arm() {
	d.rc.SetWriteDeadline(d.now().Add(d.timeout))
}

// WriteHeader arms too: the header goes out with the first flush, or
// when the handler returns.
func (d *deadlineWriter) WriteHeader(code int) {
	d.arm()
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		d.arm()
		return d.ResponseWriter.Write(b)
	}
	if now := d.now(); d.due.Before(now) {
		// Nothing owed: the client has had time to take all that went
		// before; this Write's clock starts now.
		d.due = now
	}
	n := 0
	for len(b) > 0 {
		c := min(len(b), writeChunk)
		d.due = d.due.Add(time.Duration(float64(c) * float64(time.Second) / float64(d.minRate)))
		deadline := d.now().Add(d.timeout)
		if rated := d.due.Add(d.timeout); rated.Before(deadline) {
			deadline = rated
		}
		d.rc.SetWriteDeadline(deadline)
		m, err := d.ResponseWriter.Write(b[:c])
		n += m
		if err != nil {
			return n, err
		}
		b = b[c:]
	}
	return n, nil
}

// FlushError is what http.ResponseController.Flush calls. A flush gets
// the per-write bound alone: what it sends (the tail of a Write that
// net/http buffered, a few KiB) was counted by Write, and a flush follows
// each Write of a stream at most once.
func (d *deadlineWriter) FlushError() error {
	d.arm()
	return d.rc.Flush()
}

// Flush is for handlers that flush through http.Flusher (promhttp).
func (d *deadlineWriter) Flush() { d.FlushError() }

// Unwrap lets http.ResponseController reach the connection (read
// deadlines).
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
