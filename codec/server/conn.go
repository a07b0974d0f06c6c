package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpipe/mcpipe/codec"
)

// Conn is the message source and sink of one conversation: a transport.
//
// Read returns the next frame (one JSON-RPC message or batch, as bytes); it
// returns io.EOF when the client is done, an error wrapping
// codec.ErrFrameTooLarge for a frame that was skipped (the conversation goes
// on), an error wrapping ErrOutputClosed when the transport learns that
// nothing it writes can reach the client any more, and ctx's error when ctx is
// done first. Read is called from one goroutine at a time.
//
// Write and WriteBatch send one message, or one batch answer as a single
// array; they must be safe for concurrent use and never interleave two
// messages. An error wrapping ErrOutputClosed means the client can no longer
// receive anything: the conversation ends. Any other error loses that one
// message only.
//
// Close releases what the Conn holds (its goroutines); Serve calls it once
// when it returns. It must make a pending Read return.
type Conn interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, m *codec.Message) error
	WriteBatch(ctx context.Context, msgs []*codec.Message) error
	Close() error
}

// ErrOutputClosed is wrapped by the errors of a Conn whose client can no
// longer receive (a closed pipe, a reset connection).
var ErrOutputClosed = errors.New("server: output closed")

// NewStreamConn returns a Conn of newline-delimited JSON over r and w (stdio:
// os.Stdin and os.Stdout), framed by codec.Reader (lines capped at maxFrame
// bytes, 0 meaning codec.DefaultMaxFrame) and codec.Writer.
//
// A goroutine reads r ahead of Read, one frame at a time; it ends when r's
// Read returns an error (EOF included) or, after Close, once the frame it
// holds is refused. A reader that never returns (a terminal nobody types
// into) keeps that goroutine alive after Close: close r to end it. Close
// does not close r or w; they are the caller's.
//
// Every error w returns is wrapped in ErrOutputClosed: a partial line may
// have gone out, so the stream can carry nothing more. When w is a pipe or
// a socket (an *os.File), the Conn also watches it: once the client closes
// its reading end, Read returns an error wrapping ErrOutputClosed at once,
// even while nothing is being written (on Unix; elsewhere only a failed
// write tells).
func NewStreamConn(r io.Reader, w io.Writer, maxFrame int) Conn {
	c := &streamConn{
		w:      codec.NewWriter(sink{w}),
		frames: make(chan frame),
		stop:   make(chan struct{}),
	}
	c.outGone, c.stopWatch = watchOutput(w)
	go c.readAhead(codec.NewReader(r, maxFrame))
	return c
}

type frame struct {
	data []byte
	err  error
}

type streamConn struct {
	w         *codec.Writer
	frames    chan frame // closed after a fatal read error
	stop      chan struct{}
	outGone   <-chan error // receives once when the watcher sees the client's end closed
	stopWatch func()
	closeOnce sync.Once
	readErr   error // the fatal read error, set before frames is closed
}

func (c *streamConn) readAhead(r *codec.Reader) {
	for {
		data, err := r.ReadFrame()
		if err != nil && !errors.Is(err, codec.ErrFrameTooLarge) {
			c.readErr = err
			close(c.frames)
			return
		}
		select {
		case c.frames <- frame{data, err}:
		case <-c.stop:
			return
		}
	}
}

func (c *streamConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case f, ok := <-c.frames:
		if !ok {
			return nil, c.readErr
		}
		return f.data, f.err
	case err := <-c.outGone:
		return nil, err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-c.stop:
		return nil, errors.New("server: read on a closed Conn")
	}
}

func (c *streamConn) Write(_ context.Context, m *codec.Message) error { return c.w.Write(m) }

func (c *streamConn) WriteBatch(_ context.Context, msgs []*codec.Message) error {
	return c.w.WriteBatch(msgs)
}

func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.stopWatch()
	})
	return nil
}

// sink marks every error of the underlying writer as ErrOutputClosed, so
// that a Conn user can tell it from an error encoding one message.
type sink struct{ w io.Writer }

func (s sink) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("%w: %w", ErrOutputClosed, err)
	}
	return n, nil
}
