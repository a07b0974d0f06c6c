package codec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// DefaultMaxFrame is the frame size cap a Reader uses when given 0: 16 MiB.
const DefaultMaxFrame = 16 << 20

// ErrFrameTooLarge is wrapped by the error Reader.ReadFrame returns for a line
// longer than the cap (a *FrameTooLargeError). The line has been skipped; the
// stream goes on.
var ErrFrameTooLarge = errors.New("codec: frame too large")

// Bounds on what a FrameTooLargeError keeps of the line it reports.
const (
	FrameHeadSize = 1024 // its first bytes
	FrameTailSize = 256  // its last bytes
)

// FrameTooLargeError reports a line longer than a Reader's cap, which the
// Reader skipped. Head and Tail keep the line's first and last bytes (at
// most FrameHeadSize and FrameTailSize, overlapping on a short line), so
// that a reader can still tell whose answer it was (ResponseID).
type FrameTooLargeError struct {
	Line  int // 1-based line number
	Size  int // bytes of the line, its newline excluded
	Limit int // the cap
	Head  []byte
	Tail  []byte
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("line %d: %v (%d bytes, limit %d)", e.Line, ErrFrameTooLarge, e.Size, e.Limit)
}

// Unwrap returns ErrFrameTooLarge.
func (e *FrameTooLargeError) Unwrap() error { return ErrFrameTooLarge }

// Reader splits a byte stream into newline-delimited frames.
//
// Lines are delimited by '\n'; a trailing '\r' is dropped (CRLF input), and
// lines holding only spaces, tabs and '\r' are skipped. A final line without a
// newline is still a frame. A line longer than the cap is never buffered
// whole: ReadFrame discards it up to its newline and returns a
// *FrameTooLargeError (wrapping ErrFrameTooLarge) that keeps only its first
// and last bytes, and the next call carries on with the following line, so
// memory stays bounded by the cap plus a small read buffer.
//
// ReadFrame returns io.EOF at the end of the stream, and any other read error
// as it comes. A Reader is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	max     int
	line    int // lines consumed so far
	frameNo int // line number of the last frame or oversized line
	atEOF   bool
}

// NewReader returns a Reader over r with frames capped at maxFrame bytes (the
// line without its newline); maxFrame <= 0 means DefaultMaxFrame.
func NewReader(r io.Reader, maxFrame int) *Reader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	size := 64 << 10
	if maxFrame < size {
		size = max(maxFrame+2, 16) // room for the cap, "\r\n"
	}
	return &Reader{br: bufio.NewReaderSize(r, size), max: maxFrame}
}

// Line returns the 1-based line number of the frame (or oversized line) the
// last ReadFrame call returned; 0 before the first.
func (r *Reader) Line() int { return r.frameNo }

// ReadFrame returns the next non-blank line, without its "\n" or "\r\n". The
// returned slice is the caller's: later calls do not overwrite it.
func (r *Reader) ReadFrame() ([]byte, error) {
	for {
		if r.atEOF {
			return nil, io.EOF
		}
		frame, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if frame == nil { // blank line
			continue
		}
		return frame, nil
	}
}

// readLine consumes one line. It returns (nil, nil) for a blank line.
func (r *Reader) readLine() ([]byte, error) {
	var buf []byte
	tooLarge := false
	n := 0                // bytes of the line seen so far, newline excluded
	var head, tail []byte // of a line too large
	for {
		chunk, err := r.br.ReadSlice('\n')
		content := chunk
		if err == nil {
			content = chunk[:len(chunk)-1]
		}
		n += len(content)
		// Keep at most max+1 bytes: the cap plus the '\r' of a CRLF line.
		if !tooLarge {
			if len(buf)+len(content) > r.max+1 {
				tooLarge = true
				head, tail = overflow(buf, content)
				buf = nil
			} else {
				buf = append(buf, content...)
			}
		} else {
			head = keepHead(head, content)
			tail = keepTail(tail, content)
		}
		switch {
		case err == nil: // found '\n'
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			r.atEOF = true
			if n == 0 {
				return nil, io.EOF
			}
		default:
			return nil, err
		}
		r.line++
		if !tooLarge {
			buf = bytes.TrimSuffix(buf, []byte{'\r'})
			if len(buf) > r.max {
				tooLarge = true
				head, tail = overflow(buf, nil)
			}
		}
		if tooLarge {
			r.frameNo = r.line
			tail = bytes.TrimSuffix(tail, []byte{'\r'})
			tail = tail[max(len(tail)-FrameTailSize, 0):]
			return nil, &FrameTooLargeError{Line: r.line, Size: n, Limit: r.max, Head: head, Tail: tail}
		}
		if isBlank(buf) {
			return nil, nil
		}
		r.frameNo = r.line
		return buf, nil
	}
}

// overflow is the head and tail kept of a line found too large when its
// first bytes, buf, were to be followed by more.
func overflow(buf, more []byte) (head, tail []byte) {
	head = keepHead(keepHead(nil, buf), more)
	return head, keepTail(keepTail(nil, buf), more)
}

// keepHead is head followed by as much of b as fits in FrameHeadSize.
func keepHead(head, b []byte) []byte {
	if n := FrameHeadSize - len(head); n > 0 {
		return append(head, b[:min(len(b), n)]...)
	}
	return head
}

// keepTail is tail followed by b, cut to its last FrameTailSize+1 bytes
// (room for the '\r' of a CRLF line).
func keepTail(tail, b []byte) []byte {
	const n = FrameTailSize + 1
	if len(b) >= n {
		return append(tail[:0], b[len(b)-n:]...)
	}
	if drop := len(tail) + len(b) - n; drop > 0 {
		tail = append(tail[:0], tail[drop:]...)
	}
	return append(tail, b...)
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Writer writes newline-delimited frames. Each message goes out as one
// compact line in a single Write call under a mutex, so any number of
// goroutines may share a Writer without interleaving bytes.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write marshals msg (a *Message, or any value encoding/json accepts) as
// compact JSON without HTML escaping and writes it followed by "\n".
func (w *Writer) Write(msg any) error {
	b, err := encodeFrame(msg)
	if err != nil {
		return err
	}
	return w.writeLine(b)
}

// WriteBatch writes msgs as one JSON array on one line (the answer to a
// 2025-03-26 batch). An empty slice writes nothing: a batch of notifications
// gets no answer.
func (w *Writer) WriteBatch(msgs []*Message) error {
	if len(msgs) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		mb, err := encodeFrame(m)
		if err != nil {
			return err
		}
		b.Write(mb)
	}
	b.WriteByte(']')
	return w.writeLine(b.Bytes())
}

// WriteFrame writes one already-encoded JSON value, compacted, as a line.
func (w *Writer) WriteFrame(raw []byte) error {
	var b bytes.Buffer
	if err := compactInto(&b, raw); err != nil {
		return fmt.Errorf("codec: write frame: %w", err)
	}
	return w.writeLine(b.Bytes())
}

// writeLine writes b and a newline; b must be a fresh slice nobody else holds.
func (w *Writer) writeLine(b []byte) error {
	if bytes.IndexByte(b, '\n') >= 0 {
		// Compact JSON escapes newlines inside strings, so this means a
		// broken MarshalJSON; refuse rather than split a frame.
		return errors.New("codec: frame contains a raw newline")
	}
	line := append(b, '\n') // b is ours: usually no copy
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(line)
	return err
}

func encodeFrame(msg any) ([]byte, error) {
	switch m := msg.(type) {
	case *Message:
		if m == nil {
			return nil, errors.New("codec: write of a nil *Message")
		}
		return m.MarshalJSON()
	case json.RawMessage:
		var b bytes.Buffer
		if err := compactInto(&b, m); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return marshal(msg)
}

// DecodeError is the error of one message that could not be decoded. When the
// id could be read, ID holds it, so the caller can answer the request with
// that id; otherwise ID is nil (answer without an id). Err is the JSON-RPC
// error to send: -32700 for bytes that are not JSON (or not UTF-8), -32600 for
// JSON that is not a valid JSON-RPC 2.0 message.
type DecodeError struct {
	ID    *ID
	Index int // position in a batch; -1 for a lone message
	Err   *Error
}

func (e *DecodeError) Error() string {
	prefix := ""
	if e.Index >= 0 {
		prefix = fmt.Sprintf("batch element %d: ", e.Index)
	}
	return prefix + e.Err.Message
}

// Unwrap returns the JSON-RPC error, so errors.Is(err, ErrParse) works.
func (e *DecodeError) Unwrap() error { return e.Err }

// Response returns the error response to send for this decode error.
func (e *DecodeError) Response() *Message { return NewErrorResponse(e.ID, e.Err) }

// BatchError lists the elements of a batch that could not be decoded.
type BatchError struct{ Errs []*DecodeError }

func (e *BatchError) Error() string {
	if len(e.Errs) == 1 {
		return e.Errs[0].Error()
	}
	return fmt.Sprintf("%s (and %d more invalid batch elements)", e.Errs[0].Error(), len(e.Errs)-1)
}

// Unwrap returns each element's error.
func (e *BatchError) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, d := range e.Errs {
		out[i] = d
	}
	return out
}

// ErrorID returns the request id a decode error carries, or nil.
func ErrorID(err error) *ID {
	var d *DecodeError
	if errors.As(err, &d) {
		return d.ID
	}
	return nil
}

// DecodeFrame decodes one frame. A JSON object is one message; a JSON array is
// a batch (batch is true), refused with -32600 unless allowBatch (an empty
// batch is always invalid).
//
// A member name twice in one object, at any depth, makes the message
// invalid (-32600, `duplicate member "params.name"`; see the package doc).
//
// Errors:
//   - frame-level (not JSON, bad UTF-8, refused or empty batch, a lone bad
//     message): msgs is nil and err is a *DecodeError (ErrorID gives the id
//     when it could be read);
//   - a batch with some bad elements: msgs holds the good ones in order and
//     err is a *BatchError with one *DecodeError per bad element (Index says
//     where). JSON-RPC wants one error response per bad element.
func DecodeFrame(data []byte, allowBatch bool) (msgs []*Message, batch bool, err error) {
	var env envelope
	elems, isObj, isArr, dup, serr := jsTop(data, &env)
	if serr != nil {
		return nil, isArr, scanError(&env, isObj, serr)
	}
	switch {
	case isObj:
		if dup != "" {
			return nil, false, duplicate(&env, dup)
		}
		m, derr := decodeEnvelope(&env)
		if derr != nil {
			return nil, false, derr
		}
		return []*Message{m}, false, nil
	case !isArr:
		return nil, false, invalid(nil, "a message must be a JSON object, not %s", jsonKind(bytes.TrimSpace(data)))
	}
	if !allowBatch {
		return nil, true, &DecodeError{Index: -1, Err: Errorf(CodeInvalidRequest, "invalid request: JSON-RPC batches are not allowed in this protocol revision")}
	}
	if len(elems) == 0 {
		return nil, true, &DecodeError{Index: -1, Err: Errorf(CodeInvalidRequest, "invalid request: empty batch")}
	}
	var bad []*DecodeError
	for i, e := range elems {
		m, derr := decodeMessage(e)
		if derr != nil {
			derr.Index = i
			bad = append(bad, derr)
			continue
		}
		msgs = append(msgs, m)
	}
	if bad != nil {
		return msgs, true, &BatchError{Errs: bad}
	}
	return msgs, true, nil
}

// DecodeMessage decodes and checks one JSON-RPC message object. Its error is a
// *DecodeError (see DecodeFrame).
func DecodeMessage(data []byte) (*Message, error) {
	m, err := decodeMessage(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// scanError is the error for a frame the scanner refused. A message nested
// deeper than the limit is valid JSON: it is an invalid request (-32600),
// and it keeps its id when the id came before the deep member and reads
// without doubt, so that the client is answered, not left to its timeout.
// Anything else is a parse error, without id.
func scanError(env *envelope, isObj bool, err error) *DecodeError {
	var se *jsSyntaxError
	if !errors.As(err, &se) || !se.depth {
		return &DecodeError{Index: -1, Err: parseError(err)}
	}
	var id *ID
	if isObj && env.id != nil && string(env.id) != "null" {
		if v, err := parseID(env.id, true); err == nil {
			id = &v
		}
	}
	return &DecodeError{ID: id, Index: -1, Err: Errorf(CodeInvalidRequest,
		"%s: nested deeper than %d levels (at offset %d)", env.kind(), jsMaxDepth, se.off)}
}

func parseError(err error) *Error {
	return Errorf(CodeParseError, "parse error: %s", err.Error())
}

func invalid(id *ID, format string, args ...any) *DecodeError {
	return invalidAs("invalid request", id, format, args...)
}

// invalidAs is invalid for a message of the kind what ("invalid response").
func invalidAs(what string, id *ID, format string, args ...any) *DecodeError {
	return &DecodeError{ID: id, Index: -1, Err: Errorf(CodeInvalidRequest, what+": "+format, args...)}
}

func decodeMessage(data []byte) (*Message, *DecodeError) {
	var env envelope
	_, isObj, _, dup, err := jsTop(data, &env)
	if err != nil {
		return nil, scanError(&env, isObj, err)
	}
	if !isObj {
		return nil, invalid(nil, "a message must be a JSON object, not %s", jsonKind(bytes.TrimSpace(data)))
	}
	if dup != "" {
		return nil, duplicate(&env, dup)
	}
	return decodeEnvelope(&env)
}

// duplicate is the error for a message with a member name twice in one
// object (at path dup). RFC 8259 leaves what that means to the receiver,
// and receivers differ (encoding/json keeps the last value, others the
// first or refuse), so a checker and the receiver behind it could act on
// different messages: it is refused wherever it is. The id is kept when it
// can be read without doubt.
func duplicate(env *envelope, dup string) *DecodeError {
	var id *ID
	if dup != "id" && env.id != nil && string(env.id) != "null" {
		if v, err := parseID(env.id, true); err == nil {
			id = &v
		}
	}
	return &DecodeError{ID: id, Index: -1, Err: Errorf(CodeInvalidRequest,
		"%s: duplicate member %q (each name must appear once in an object: receivers differ on which value counts)",
		env.kind(), dup)}
}

// kind names the message an envelope holds, for errors: "invalid request"
// (which JSON-RPC's -32600 is called; notifications included), "invalid
// response", or "invalid message" when it is neither.
func (e *envelope) kind() string {
	switch {
	case e.method != nil:
		return "invalid request"
	case e.result != nil || e.error != nil:
		return "invalid response"
	}
	return "invalid message"
}

// decodeEnvelope checks the envelope. The member values are valid JSON (the
// scanner checked them); Params and Result are copied so that a Message never
// aliases the caller's frame.
func decodeEnvelope(obj *envelope) (*Message, *DecodeError) {
	m := &Message{}
	what := obj.kind()
	invalid := func(id *ID, format string, args ...any) *DecodeError { return invalidAs(what, id, format, args...) }
	// The id first, so later errors can carry it.
	if raw := obj.id; raw != nil {
		if string(raw) == "null" {
			// Only an error response may carry a null id (JSON-RPC 2.0 for
			// an unreadable request id).
			if obj.error == nil {
				return nil, invalid(nil, "id must not be null")
			}
		} else {
			id, err := parseID(raw, true)
			if err != nil {
				return nil, invalid(nil, "%s", err.Error())
			}
			m.ID = &id
		}
	}
	rawV := obj.jsonrpc
	if rawV == nil {
		return nil, invalid(m.ID, `missing "jsonrpc": "2.0"`)
	}
	if string(rawV) != `"2.0"` {
		if v, _ := stringValue(rawV); v != "2.0" { // "2.0" escaped
			return nil, invalid(m.ID, `"jsonrpc" must be "2.0", got %s`, truncate(rawV, 40))
		}
	}
	m.JSONRPC = "2.0"
	if raw := obj.method; raw != nil {
		if raw[0] != '"' {
			return nil, invalid(m.ID, "method must be a string, not %s", jsonKind(raw))
		}
		m.Method, _ = stringValue(raw)
		if m.Method == "" {
			return nil, invalid(m.ID, "method must not be empty")
		}
		if obj.result != nil {
			return nil, invalid(m.ID, `a request must not carry "result"`)
		}
		if obj.error != nil {
			return nil, invalid(m.ID, `a request must not carry "error"`)
		}
		if raw := obj.params; raw != nil {
			if raw[0] != '{' {
				return nil, invalid(m.ID, "params must be an object, not %s", jsonKind(raw))
			}
			m.Params = bytes.Clone(raw)
			if obj.paramsCompact {
				m.compact = m.Params
			}
		}
		return m, nil
	}
	if obj.params != nil {
		return nil, invalid(m.ID, `"params" without "method"`)
	}
	res, hasRes := obj.result, obj.result != nil
	errRaw, hasErr := obj.error, obj.error != nil
	switch {
	case hasRes && hasErr:
		return nil, invalid(m.ID, `a response must not carry both "result" and "error"`)
	case !hasRes && !hasErr:
		return nil, invalid(m.ID, `a message needs "method" (request or notification) or "result"/"error" (response)`)
	case hasRes:
		if m.ID == nil {
			return nil, invalid(nil, "a result response needs an id")
		}
		if res[0] != '{' {
			return nil, invalid(m.ID, "result must be an object, not %s", jsonKind(res))
		}
		m.Result = bytes.Clone(res)
		if obj.resultCompact {
			m.compact = m.Result
		}
	default:
		e, err := decodeErrorObject(errRaw)
		if err != "" {
			return nil, invalid(m.ID, "%s", err)
		}
		m.Error = e
	}
	return m, nil
}

func decodeErrorObject(raw json.RawMessage) (*Error, string) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, "error must be an object, not " + jsonKind(raw)
	}
	obj, ok := scanMembers(raw) // raw was validated with the frame
	if !ok {
		return nil, "error must be an object"
	}
	e := &Error{}
	code, ok := obj["code"]
	if !ok || !isJSONInteger(code) {
		return nil, "error.code must be an integer"
	}
	if json.Unmarshal(code, &e.Code) != nil {
		return nil, "error.code is out of range"
	}
	if e.Message, ok = stringValue(obj["message"]); !ok {
		return nil, "error.message must be a string"
	}
	if d, ok := obj["data"]; ok {
		e.Data = bytes.Clone(d)
	}
	return e, ""
}

// QuoteClip is s as a quoted Go string, for a log record or an error
// message that echoes a name a peer sent (an unknown tool's, say): at most
// n bytes of s, cut on a UTF-8 boundary, and when it was cut the quote is
// followed by "... (N bytes)", N the whole length. Without the bound a
// 1 MB name made a 1 MB log line and a 1 MB error.
func QuoteClip(s string, n int) string {
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(clipAt(s, n)) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Clip is QuoteClip unquoted, for a log attribute (the handler quotes and
// escapes it): at most n bytes of s, cut on a UTF-8 boundary, "..." and
// the whole length added when it was cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clipAt(s, n) + fmt.Sprintf("... (%d bytes)", len(s))
}

func clipAt(s string, n int) string {
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
