package proc

import (
	"bytes"
	"io"
	"sync"
)

// capture reads one output stream to EOF. It keeps the first keep bytes
// (head) or the last keep bytes (tail), counts every byte, copies each
// chunk to tee when set, and calls over once when the count passes limit
// (limit < 0: never); it goes on reading and dropping, so the writer never
// blocks before it is killed.
type capture struct {
	keep  int
	tail  bool
	limit int64
	over  func()
	tee   io.Writer

	mu    sync.Mutex // guards buf while readFrom runs, for snapshot
	buf   []byte
	total int64
	cut   bool // the tail lost its beginning
}

func (c *capture) readFrom(r io.Reader) {
	chunk := make([]byte, 32<<10)
	overCalled := false
	for {
		n, err := r.Read(chunk)
		data := chunk[:n]
		c.total += int64(n)
		if c.tee != nil && n > 0 {
			c.tee.Write(data) // a failing tee must not stop the drain
		}
		c.mu.Lock()
		if c.tail {
			c.buf = append(c.buf, data...)
			if len(c.buf) > 2*c.keep {
				c.buf = append(c.buf[:0], c.buf[len(c.buf)-c.keep:]...)
				c.cut = true
			}
		} else if room := c.keep - len(c.buf); room > 0 {
			c.buf = append(c.buf, data[:min(room, n)]...)
		}
		c.mu.Unlock()
		if c.limit >= 0 && c.total > c.limit && !overCalled {
			overCalled = true
			if c.over != nil {
				c.over()
			}
		}
		if err != nil {
			break
		}
	}
	if c.tail && len(c.buf) > c.keep {
		c.buf = c.buf[len(c.buf)-c.keep:]
		c.cut = true
	}
}

// snapshot returns a copy of what is kept so far.
func (c *capture) snapshot() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf
	if c.tail && len(b) > c.keep {
		b = b[len(b)-c.keep:]
	}
	return append([]byte(nil), b...)
}

// readLines hands each line of r (at most max bytes; longer ones are
// dropped whole) to fn, and drains r to EOF.
func readLines(r io.Reader, max int, fn func([]byte)) {
	buf := make([]byte, 0, 512)
	chunk := make([]byte, 4096)
	skipping := false
	for {
		n, err := r.Read(chunk)
		data := chunk[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if !skipping {
					buf = append(buf, data...)
					if len(buf) > max {
						buf, skipping = buf[:0], true
					}
				}
				break
			}
			if !skipping {
				buf = append(buf, data[:i]...)
				if len(buf) <= max {
					fn(bytes.TrimSuffix(buf, []byte("\r")))
				}
			}
			buf, skipping = buf[:0], false
			data = data[i+1:]
		}
		if err != nil {
			// A final unterminated line is still a line.
			if !skipping && len(buf) > 0 {
				fn(buf)
			}
			return
		}
	}
}
