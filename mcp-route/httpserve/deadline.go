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
// write deadline of its own: now + timeout. The server has no
// WriteTimeout (it would end SSE streams, which last as long as their
// call or subscription), and without a deadline a client that stops
// reading would hold the handler in Write for ever, with its conversation
// or stream. A write past its deadline fails, the exchange ends as for a
// client gone, and net/http closes the connection once the handler
// returns. The deadline is per write, not per response: a slow reader
// that keeps reading gets everything. net/http clears it after each
// response, before the next request of a kept-alive connection.
type deadlineWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	d := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
	// For what net/http writes by itself once the handler returns (the
	// header of a response the handler wrote nothing of).
	d.arm()
	return d
}

func (d *deadlineWriter) arm() {
	d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
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
	n := 0
	for len(b) > 0 {
		c := min(len(b), writeChunk)
		d.arm()
		m, err := d.ResponseWriter.Write(b[:c])
		n += m
		if err != nil {
			return n, err
		}
		b = b[c:]
	}
	return n, nil
}

// FlushError is what http.ResponseController.Flush calls.
func (d *deadlineWriter) FlushError() error {
	d.arm()
	return d.rc.Flush()
}

// Flush is for handlers that flush through http.Flusher (promhttp).
func (d *deadlineWriter) Flush() { d.FlushError() }

// Unwrap lets http.ResponseController reach the connection (read
// deadlines).
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }
