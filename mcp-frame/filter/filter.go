// Package filter is the engine of mcp-frame: it reads newline-delimited
// JSON-RPC frames, checks each against JSON-RPC 2.0 and the MCP rules of a
// protocol revision, writes the valid ones out in canonical form and reports
// the others.
//
// Everything protocol-shaped is codec's: codec.Reader splits and caps frames,
// codec.DecodeFrame checks the JSON-RPC envelope, codec.CheckMessage the MCP
// rules, codec.Writer writes the lines. This package adds the stream: line
// numbers, which revision applies to each frame, and pairing responses with
// the requests it has seen.
//
// # Output
//
// Each valid frame is written as one canonical compact line: the envelope
// members in a fixed order (jsonrpc, id, method, params | result | error),
// no insignificant white space, and inside params, result and error.data the
// members in the order they arrived and every string and number exactly as
// written ("\u00e9" stays "\u00e9", 1.50 stays 1.50): the line is the input
// with the white space taken out, not a re-marshalled map. Ids are echoed
// byte for byte. Envelope members JSON-RPC does not define are dropped, and
// an error response whose id is null is written without "id" (the form every
// MCP schema accepts; see codec.Message.MarshalJSON). A 2025-03-26 batch is
// written as one line holding the array.
//
// With Options.Pretty the frames are indented JSON for a human to read: a
// message then spans several lines, so pretty output is not a protocol
// stream and must not be fed to a peer.
//
// # What is refused
//
// A frame is invalid, reported and dropped (never written), when it is not
// JSON or not UTF-8, is longer than the cap (the rest of the line is skipped
// without buffering it), is not a JSON-RPC 2.0 message (jsonrpc, id, method,
// result/error members), is a batch outside 2025-03-26 (a batch with one bad
// element is dropped whole), or breaks codec.CheckMessage for its revision
// and direction. The stream goes on with the next line.
//
// # Revisions
//
// Options.Revision pins one revision for every frame. Without it the filter
// follows the session: before anything names a revision it applies
// codec.LatestRevision; an initialize request switches to the revision it
// asks for (codec.NegotiateLegacy) and the initialize result to the one it
// grants; a request whose _meta names a 2026-07-28 (or later) revision is
// checked under that revision without changing the session. Batches are
// allowed only while the session's revision is 2025-03-26.
//
// # Pairing
//
// On a stream of both sides (From codec.FromAny, e.g. a whole captured
// session) the filter remembers the method of each request it passes (by id,
// at most maxPending at a time), so the response it sees later is checked
// against the result of that method. A response whose request it does not
// know (not seen, forgotten, or refused as invalid) is taken for what its
// members say (codec.GuessAnyResultMethod: a client's sampling, elicitation
// or roots answer in a legacy revision, else as a server's result below), so
// an invalid result never passes for want of its request. On one side only
// there is nothing to pair with (the requests a side answers are on the
// other stream): a server's results are taken for what their members say
// (codec.GuessResultMethod: content means tools/call, tools means
// tools/list, ...), a client's only by the rules every result follows.
//
// # Buffering and concurrency
//
// Output is buffered and flushed whenever the filter is about to wait for
// input, so a live exchange through it is never held back, while a file is
// filtered in large writes. Run is not safe for concurrent use on the same
// reader or writer; separate Runs are independent.
package filter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/mcpipe/mcpipe/codec"
)

// maxPending bounds the request ids remembered for pairing: a capture full of
// requests that are never answered must not grow memory without end. When
// full, the oldest half is forgotten (their responses are then checked
// without their method).
const maxPending = 1 << 16

// Options configure Run. The zero value follows the session's revision,
// accepts both directions, caps frames at codec.DefaultMaxFrame and writes
// compact lines.
type Options struct {
	// Revision pins the MCP revision for every frame; "" follows the session.
	Revision string
	// From says who wrote the stream: codec.FromClient, codec.FromServer, or
	// codec.FromAny (a mix, or unknown).
	From codec.Direction
	// MaxFrame caps a frame in bytes; <= 0 means codec.DefaultMaxFrame.
	MaxFrame int
	// Check writes nothing: only reports (lint mode).
	Check bool
	// Pretty writes indented JSON for humans instead of protocol lines.
	Pretty bool
	// Report is called for each invalid frame with its 1-based line number
	// and the reason; for a batch, once per bad element. Nil discards.
	Report func(line int, reason string)
}

// Stats counts what Run saw.
type Stats struct {
	Frames   int // non-blank lines read, oversized ones included
	Messages int // messages written (or, with Check, found valid)
	Bad      int // frames reported and dropped
}

// Run filters r into w until r ends. The error is an I/O error only (reading
// r, or writing or flushing w); invalid frames are reported through
// opts.Report and counted in Stats.Bad.
func Run(r io.Reader, w io.Writer, opts Options) (Stats, error) {
	if opts.Revision != "" && !codec.IsSupportedRevision(opts.Revision) {
		return Stats{}, fmt.Errorf("unsupported revision %q", opts.Revision)
	}
	f := &filter{opts: opts, pending: map[string]pendingReq{}}
	if opts.Check {
		err := f.loop(codec.NewReader(r, opts.MaxFrame))
		return f.stats, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	fr := &flushReader{r: r, w: bw}
	f.out, f.raw = codec.NewWriter(bw), bw
	err := f.loop(codec.NewReader(fr, opts.MaxFrame))
	switch {
	case fr.werr != nil: // the reader saw it first, as a read error
		return f.stats, fmt.Errorf("write: %w", fr.werr)
	case err != nil:
		return f.stats, err
	}
	if err := bw.Flush(); err != nil {
		return f.stats, fmt.Errorf("write: %w", err)
	}
	return f.stats, nil
}

type pendingReq struct {
	method string
	seq    int
}

type filter struct {
	opts    Options
	out     *codec.Writer
	raw     io.Writer // under out, for pretty output
	stats   Stats
	session string // revision the session named; "" none yet
	pending map[string]pendingReq
	seq     int
}

func (f *filter) loop(rd *codec.Reader) error {
	maxFrame := f.opts.MaxFrame
	if maxFrame <= 0 {
		maxFrame = codec.DefaultMaxFrame
	}
	for {
		frame, err := rd.ReadFrame()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, codec.ErrFrameTooLarge):
			f.stats.Frames++
			f.stats.Bad++
			f.bad(rd.Line(), fmt.Sprintf("frame too large (over the %d-byte limit); skipped to the next line", maxFrame))
			continue
		default:
			return fmt.Errorf("read: %w", err)
		}
		f.stats.Frames++
		if err := f.frame(rd.Line(), frame); err != nil {
			return err
		}
	}
}

func (f *filter) bad(line int, reason string) {
	if f.opts.Report != nil {
		f.opts.Report(line, reason)
	}
}

// sessionRev is the revision for messages that name none themselves.
func (f *filter) sessionRev() string {
	switch {
	case f.opts.Revision != "":
		return f.opts.Revision
	case f.session != "":
		return f.session
	}
	return codec.LatestRevision
}

// messageRev is the revision m is checked under, given the method of the
// request a response answers.
func (f *filter) messageRev(m *codec.Message, method string) string {
	if f.opts.Revision != "" {
		return f.opts.Revision
	}
	v, ok := codec.DeclaredRevision(m, method)
	switch {
	case !ok:
	case m.Method == codec.MethodInitialize || m.IsResponse():
		return codec.NegotiateLegacy(v)
	case codec.IsModernRevision(v):
		if codec.IsSupportedRevision(v) {
			return v
		}
		return codec.LatestRevision
	}
	return f.sessionRev()
}

// frame handles one frame; its error is an I/O error.
func (f *filter) frame(line int, data []byte) error {
	msgs, batch, err := codec.DecodeFrame(data, codec.BatchesAllowed(f.sessionRev()))
	var be *codec.BatchError
	if err != nil && !errors.As(err, &be) {
		f.bad(line, err.Error())
		f.stats.Bad++
		return nil
	}
	// Problems by batch position: the elements DecodeFrame refused, then
	// the MCP checks of the ones it decoded (msgs holds those, in order).
	var problems map[int]string // allocated only for a bad frame
	if be != nil {
		problems = map[int]string{}
		for _, e := range be.Errs {
			problems[e.Index] = e.Err.Message
		}
	}
	// One message per frame is the rule: keep its bookkeeping off the heap.
	var mbuf, rbuf [1]string
	methods, revs := mbuf[:], rbuf[:]
	if len(msgs) > 1 {
		methods, revs = make([]string, len(msgs)), make([]string, len(msgs))
	}
	pos := 0
	for i, m := range msgs {
		for problems[pos] != "" {
			pos++
		}
		switch {
		case !m.IsResponse():
		case f.opts.From == codec.FromAny:
			methods[i] = f.answered(m)
		case f.opts.From == codec.FromServer:
			methods[i] = codec.GuessResultMethod(m)
		}
		revs[i] = f.messageRev(m, methods[i])
		if err := codec.CheckMessage(revs[i], f.opts.From, m, methods[i]); err != nil {
			if problems == nil {
				problems = map[int]string{}
			}
			problems[pos] = codec.AsError(err).Message
		}
		pos++
	}
	if len(problems) > 0 {
		for _, i := range slices.Sorted(maps.Keys(problems)) {
			p := problems[i]
			if batch {
				p = fmt.Sprintf("batch element %d: %s", i, p)
			}
			f.bad(line, p)
		}
		// A bad answer still answers its request: forget the request, so
		// a second answer is not checked as the first one.
		for _, m := range msgs {
			if m.IsResponse() && m.ID != nil {
				delete(f.pending, m.ID.Key())
			}
		}
		f.stats.Bad++
		return nil
	}
	for i, m := range msgs {
		f.track(m, methods[i], revs[i])
	}
	f.stats.Messages += len(msgs)
	if f.opts.Check {
		return nil
	}
	switch {
	case f.opts.Pretty:
		err = f.pretty(msgs, batch)
	case batch:
		err = f.out.WriteBatch(msgs)
	default:
		err = f.out.Write(msgs[0])
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// answered names the method of the request response m answers on a stream
// of both sides: the pending request's, or, when there is none (never seen,
// forgotten, or refused), the one its members tell, as on a server's side
// only. Without the guess a result whose request was missing or refused
// would be checked by the rules every result follows only, and a bad
// tools/call result would pass through.
func (f *filter) answered(m *codec.Message) string {
	if m.ID != nil {
		if p, ok := f.pending[m.ID.Key()]; ok {
			return p.method
		}
	}
	return codec.GuessAnyResultMethod(f.messageRev(m, ""), m)
}

// track updates the session and the pending requests after a valid message.
func (f *filter) track(m *codec.Message, method, rev string) {
	switch {
	case m.IsRequest():
		if m.Method == codec.MethodInitialize {
			f.session = rev
		}
		if len(f.pending) >= maxPending {
			f.forgetOldest()
		}
		f.seq++
		f.pending[m.ID.Key()] = pendingReq{method: m.Method, seq: f.seq}
	case m.IsResponse():
		if m.Error == nil && (method == codec.MethodInitialize || method == "") {
			if _, ok := codec.DeclaredRevision(m, method); ok {
				f.session = rev
			}
		}
		if m.ID != nil {
			delete(f.pending, m.ID.Key())
		}
	}
}

func (f *filter) forgetOldest() {
	cut := f.seq - maxPending/2
	for k, p := range f.pending {
		if p.seq <= cut {
			delete(f.pending, k)
		}
	}
}

func (f *filter) pretty(msgs []*codec.Message, batch bool) error {
	var line []byte
	var err error
	if batch {
		line, err = codec.Marshal(msgs)
	} else {
		line, err = msgs[0].MarshalJSON()
	}
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, line, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err = f.raw.Write(b.Bytes())
	return err
}

// flushReader flushes the output before each read of the input, that is
// whenever the filter has consumed what it has and may block waiting for
// more: a live peer gets every frame at once, a file is written in big
// chunks. A flush error stops the reading; Run reports it as a write error.
type flushReader struct {
	r    io.Reader
	w    *bufio.Writer
	werr error
}

func (fr *flushReader) Read(p []byte) (int, error) {
	if fr.werr != nil {
		return 0, fr.werr
	}
	if fr.w.Buffered() > 0 {
		if err := fr.w.Flush(); err != nil {
			fr.werr = err
			return 0, err
		}
	}
	return fr.r.Read(p)
}
