package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestDecodeFrameEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		frame  string
		code   int    // 0 = valid
		wantID string // id carried by the error, "" = none
		kind   string // req, note, resp for valid frames
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "", "req"},
		{"request with params", `{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}`, 0, "", "req"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", "note"},
		{"result", `{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "", "resp"},
		{"error", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x","data":[1]}}`, 0, "", "resp"},
		{"error null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, "", "resp"},
		{"error no id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`, 0, "", "resp"},
		{"white space around", " \t{\"jsonrpc\":\"2.0\",\"method\":\"x\"}  ", 0, "", "note"},
		{"unknown member kept out", `{"jsonrpc":"2.0","method":"x","extra":1}`, 0, "", "note"},

		{"not json", `{"jsonrpc":`, CodeParseError, "", ""},
		{"garbage", `hello`, CodeParseError, "", ""},
		{"trailing garbage", `{"jsonrpc":"2.0","method":"x"} x`, CodeParseError, "", ""},
		{"two objects", `{"jsonrpc":"2.0","method":"x"}{"jsonrpc":"2.0","method":"x"}`, CodeParseError, "", ""},
		{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", CodeParseError, "", ""},
		{"empty", ``, CodeParseError, "", ""},
		{"number", `42`, CodeInvalidRequest, "", ""},
		{"string", `"x"`, CodeInvalidRequest, "", ""},
		{"null", `null`, CodeInvalidRequest, "", ""},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, CodeInvalidRequest, "1", ""},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "1", ""},
		{"jsonrpc number", `{"jsonrpc":2.0,"id":"q","method":"ping"}`, CodeInvalidRequest, `"q"`, ""},
		{"jsonrpc case", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, CodeInvalidRequest, "1", ""},
		{"method case", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, CodeInvalidRequest, "1", ""},
		{"null id request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"float id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"exp id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "", ""},
		{"method number", `{"jsonrpc":"2.0","id":2,"method":1}`, CodeInvalidRequest, "2", ""},
		{"method null", `{"jsonrpc":"2.0","id":2,"method":null}`, CodeInvalidRequest, "2", ""},
		{"method empty", `{"jsonrpc":"2.0","id":2,"method":""}`, CodeInvalidRequest, "2", ""},
		{"params array", `{"jsonrpc":"2.0","id":2,"method":"x","params":[1]}`, CodeInvalidRequest, "2", ""},
		{"params string", `{"jsonrpc":"2.0","id":2,"method":"x","params":"a"}`, CodeInvalidRequest, "2", ""},
		{"params null", `{"jsonrpc":"2.0","id":2,"method":"x","params":null}`, CodeInvalidRequest, "2", ""},
		{"request with result", `{"jsonrpc":"2.0","id":2,"method":"x","result":{}}`, CodeInvalidRequest, "2", ""},
		{"result and error", `{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, CodeInvalidRequest, "3", ""},
		{"nothing", `{"jsonrpc":"2.0","id":3}`, CodeInvalidRequest, "3", ""},
		{"empty object", `{}`, CodeInvalidRequest, "", ""},
		{"result without id", `{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "", ""},
		{"result not object", `{"jsonrpc":"2.0","id":4,"result":1}`, CodeInvalidRequest, "4", ""},
		{"error not object", `{"jsonrpc":"2.0","id":4,"error":"x"}`, CodeInvalidRequest, "4", ""},
		{"error code float", `{"jsonrpc":"2.0","id":4,"error":{"code":1.5,"message":"x"}}`, CodeInvalidRequest, "4", ""},
		{"error no message", `{"jsonrpc":"2.0","id":4,"error":{"code":1}}`, CodeInvalidRequest, "4", ""},
		{"params without method", `{"jsonrpc":"2.0","id":4,"params":{}}`, CodeInvalidRequest, "4", ""},
		{"batch refused", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "", ""},
		{"bad batch json", `[{"jsonrpc":"2.0"`, CodeParseError, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, _, err := DecodeFrame([]byte(tt.frame), false)
			if tt.code == 0 {
				if err != nil {
					t.Fatalf("DecodeFrame(%s): %v", tt.frame, err)
				}
				m := msgs[0]
				kind := map[bool]string{true: "req"}[m.IsRequest()] + map[bool]string{true: "note"}[m.IsNotification()] + map[bool]string{true: "resp"}[m.IsResponse()]
				if kind != tt.kind {
					t.Errorf("kind = %q, want %q", kind, tt.kind)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeFrame(%s) accepted", tt.frame)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.Err.Code != tt.code {
				t.Errorf("code = %d (%s), want %d", de.Err.Code, de.Err.Message, tt.code)
			}
			gotID := ""
			if id := ErrorID(err); id != nil {
				gotID = id.String()
			}
			if gotID != tt.wantID {
				t.Errorf("error id = %q, want %q", gotID, tt.wantID)
			}
			// The answer to a bad frame must itself be a valid frame.
			b, merr := de.Response().MarshalJSON()
			if merr != nil || !json.Valid(b) {
				t.Errorf("error response %s: %v", b, merr)
			}
		})
	}
}

func TestDecodeFrameBatch(t *testing.T) {
	frame := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":5},7]`
	msgs, batch, err := DecodeFrame([]byte(frame), true)
	if !batch {
		t.Fatal("batch = false")
	}
	if len(msgs) != 2 || !msgs[0].IsRequest() || !msgs[1].IsNotification() {
		t.Fatalf("msgs = %v", msgs)
	}
	var be *BatchError
	if !errors.As(err, &be) || len(be.Errs) != 2 {
		t.Fatalf("err = %v", err)
	}
	if be.Errs[0].Index != 2 || be.Errs[0].ID == nil || be.Errs[0].ID.String() != "3" || be.Errs[1].Index != 3 {
		t.Errorf("batch errors = %+v %+v", be.Errs[0], be.Errs[1])
	}
	if !errors.Is(err, ErrInvalidRequest) {
		t.Error("BatchError does not unwrap to -32600")
	}
	if _, _, err := DecodeFrame([]byte(`[]`), true); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("empty batch: %v", err)
	}
	if _, batch, err := DecodeFrame([]byte(` [ ] `), false); !batch || !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("refused batch: %v", err)
	}
	msgs, _, err = DecodeFrame([]byte(`[{"jsonrpc":"2.0","id":1,"result":{}}]`), true)
	if err != nil || len(msgs) != 1 || !msgs[0].IsResponse() {
		t.Errorf("response batch: %v %v", msgs, err)
	}
}

func readAll(t *testing.T, r *Reader) (frames []string, lines []int, errs []string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		f, err := r.ReadFrame()
		if err == io.EOF {
			return
		}
		if err != nil {
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			errs = append(errs, fmt.Sprintf("%d:too large", r.Line()))
			continue
		}
		frames = append(frames, string(f))
		lines = append(lines, r.Line())
	}
	t.Fatal("reader does not end")
	return
}

func TestReader(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		max    int
		frames []string
		lines  []int
		errs   []string
	}{
		{"empty", "", 0, nil, nil, nil},
		{"one", "{}\n", 0, []string{"{}"}, []int{1}, nil},
		{"no final newline", "{}\n[1]", 0, []string{"{}", "[1]"}, []int{1, 2}, nil},
		{"blank lines", "\n\n  \t\n{}\n\r\n\n{\"a\":1}\n\n", 0, []string{"{}", `{"a":1}`}, []int{4, 7}, nil},
		{"crlf", "{}\r\n{\"a\":1}\r\n", 0, []string{"{}", `{"a":1}`}, []int{1, 2}, nil},
		{"inner cr kept", "a\rb\n", 0, []string{"a\rb"}, []int{1}, nil},
		{"bad then good", "not json\n{}\n", 0, []string{"not json", "{}"}, []int{1, 2}, nil},
		{"at cap", "12345\n", 5, []string{"12345"}, []int{1}, nil},
		{"at cap crlf", "12345\r\n", 5, []string{"12345"}, []int{1}, nil},
		{"over cap", "123456\nok\n", 5, []string{"ok"}, []int{2}, []string{"1:too large"}},
		{"over cap cr", "12345x\r\nok\n", 5, []string{"ok"}, []int{2}, []string{"1:too large"}},
		{"over cap at eof", "ok\n123456", 5, []string{"ok"}, []int{1}, []string{"2:too large"}},
		{"over cap twice", "1234567890\n1234567890\n{}", 5, []string{"{}"}, []int{3}, []string{"1:too large", "2:too large"}},
		{"only blanks", "\n \n\r\n", 0, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte at a time too, so that lines straddle reads.
			for _, src := range []io.Reader{strings.NewReader(tt.in), &oneByteReader{s: tt.in}} {
				frames, lines, errs := readAll(t, NewReader(src, tt.max))
				if fmt.Sprint(frames) != fmt.Sprint(tt.frames) || fmt.Sprint(lines) != fmt.Sprint(tt.lines) || fmt.Sprint(errs) != fmt.Sprint(tt.errs) {
					t.Errorf("got frames %q lines %v errs %v, want %q %v %v", frames, lines, errs, tt.frames, tt.lines, tt.errs)
				}
			}
		})
	}
}

type oneByteReader struct {
	s string
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[r.i]
	r.i++
	return 1, nil
}

func TestReaderFramesAreOwned(t *testing.T) {
	r := NewReader(strings.NewReader("aaaa\nbbbb\n"), 0)
	a, _ := r.ReadFrame()
	b, _ := r.ReadFrame()
	if string(a) != "aaaa" || string(b) != "bbbb" {
		t.Errorf("frames %q %q: a later read overwrote an earlier frame", a, b)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("{}\n"), &errReader{boom}), 0)
	if f, err := r.ReadFrame(); err != nil || string(f) != "{}" {
		t.Fatalf("%q %v", f, err)
	}
	if _, err := r.ReadFrame(); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
}

type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) { return 0, r.err }

var xs = bytes.Repeat([]byte{'x'}, 64<<10)

// patternReader yields n bytes of 'x' followed by tail, without allocating n.
type patternReader struct {
	n    int64
	tail string
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		k := copy(p[:min(int64(len(p)), r.n)], xs)
		r.n -= int64(k)
		return k, nil
	}
	if r.tail == "" {
		return 0, io.EOF
	}
	k := copy(p, r.tail)
	r.tail = r.tail[k:]
	return k, nil
}

// A 64 MiB line must be skipped with bounded memory, and the line after it
// must still be read.
func TestReaderOversizedBoundedMemory(t *testing.T) {
	const huge = 64 << 20
	const limit = 1 << 20
	src := &patternReader{n: huge, tail: "\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"}
	r := NewReader(src, limit)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := r.ReadFrame()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if !strings.Contains(err.Error(), "line 1") {
		t.Errorf("error %q does not name the line", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*limit {
		t.Errorf("skipping a %d-byte line allocated %d bytes; the cap is %d", huge, grew, limit)
	}
	f, err := r.ReadFrame()
	if err != nil || !strings.Contains(string(f), `"ping"`) || r.Line() != 2 {
		t.Fatalf("after the oversized line: %q %v line %d", f, err, r.Line())
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Errorf("want EOF, got %v", err)
	}
}

func TestReaderDefaultCap(t *testing.T) {
	src := &patternReader{n: DefaultMaxFrame + 1, tail: "\nok\n"}
	r := NewReader(src, 0)
	if _, err := r.ReadFrame(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v", err)
	}
	if f, err := r.ReadFrame(); err != nil || string(f) != "ok" {
		t.Fatalf("%q %v", f, err)
	}
	src = &patternReader{n: DefaultMaxFrame, tail: "\n"}
	r = NewReader(src, 0)
	if f, err := r.ReadFrame(); err != nil || len(f) != DefaultMaxFrame {
		t.Fatalf("a frame at the cap: len %d, %v", len(f), err)
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	req, _ := NewRequest(IntID(1), "tools/call", map[string]string{"text": "a\nb <&> \u2028"})
	if err := w.Write(req); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(map[string]any{"jsonrpc": "2.0", "method": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(json.RawMessage("{\n  \"a\": 1\n}")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame([]byte("[1,\n2]")); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame([]byte("{")); err == nil {
		t.Error("WriteFrame accepted broken JSON")
	}
	r1, _ := NewResponse(IntID(1), nil)
	r2 := NewErrorResponse(nil, ErrMethodNotFound)
	if err := w.WriteBatch([]*Message{r1, r2}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(nil); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"text":"a\nb <&> \u2028"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"x"}` + "\n" +
		`{"a":1}` + "\n" +
		`[1,2]` + "\n" +
		`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","error":{"code":-32601,"message":"method not found"}}]` + "\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

type countingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

// slowWriter writes each call in small pieces, as a pipe might; without the
// Writer's lock concurrent frames would interleave.
type slowWriter struct{ buf bytes.Buffer }

func (s *slowWriter) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		s.buf.Write(p[i:min(i+7, len(p))])
		runtime.Gosched()
	}
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	sw := &slowWriter{}
	w := NewWriter(sw)
	const goroutines, each = 16, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := strings.Repeat(fmt.Sprintf("g%d-", g), 20+i)
				m, _ := NewResponse(IntID(int64(g*1000+i)), map[string]string{"text": text})
				if err := w.Write(m); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	r := NewReader(&sw.buf, 0)
	seen := map[string]bool{}
	for {
		f, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs, _, err := DecodeFrame(f, false)
		if err != nil {
			t.Fatalf("line %d is not a frame (interleaved?): %v", r.Line(), err)
		}
		seen[msgs[0].ID.String()] = true
	}
	if len(seen) != goroutines*each {
		t.Errorf("got %d distinct frames, want %d", len(seen), goroutines*each)
	}

	cw := &countingWriter{}
	w = NewWriter(cw)
	for range 10 {
		_ = w.Write(map[string]int{"a": 1})
	}
	if cw.writes != 10 {
		t.Errorf("10 frames took %d Write calls; want one each", cw.writes)
	}
}

type badMarshaler struct{}

func (badMarshaler) MarshalJSON() ([]byte, error) { return []byte("{\"a\":\n1}"), nil }

func TestWriterNoRawNewline(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	// encoding/json compacts a MarshalJSON result, so even this comes out as one line.
	if err := w.Write(badMarshaler{}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "{\"a\":1}\n" {
		t.Errorf("got %q", buf.String())
	}
}

func TestDecodeFrameKeys(t *testing.T) {
	// An escaped member name means the same name, as in encoding/json.
	msgs, _, err := DecodeFrame([]byte(`{"jsonrpc":"2.0","\u006dethod":"x\u0079"}`), false)
	if err != nil || msgs[0].Method != "xy" {
		t.Fatalf("escaped key: %v %v", msgs, err)
	}
	// Params never alias the frame.
	frame := []byte(`{"jsonrpc":"2.0","method":"x","params":{"a":1}}`)
	msgs, _, _ = DecodeFrame(frame, false)
	copy(frame, bytes.Repeat([]byte{' '}, len(frame)))
	if string(msgs[0].Params) != `{"a":1}` {
		t.Errorf("params alias the frame: %s", msgs[0].Params)
	}
}

func TestDecodeErrorText(t *testing.T) {
	_, _, err := DecodeFrame([]byte(`{"jsonrpc":"2.0","id":7,"method":3}`), false)
	if got := err.Error(); got != "invalid request: method must be a string, not a number" {
		t.Errorf("lone: %q", got)
	}
	_, _, err = DecodeFrame([]byte(`[1,{"jsonrpc":"2.0","method":"x"},2]`), true)
	if got := err.Error(); got != "batch element 0: invalid request: a message must be a JSON object, not a number (and 1 more invalid batch elements)" {
		t.Errorf("batch: %q", got)
	}
	if ErrorID(err) != nil || ErrorID(errors.New("x")) != nil {
		t.Error("ErrorID of a batch or a plain error")
	}
	// A bad response is not called a request (mcp-frame reports these).
	_, _, err = DecodeFrame([]byte(`{"jsonrpc":"2.0","id":7,"result":[1]}`), false)
	if got := err.Error(); got != "invalid response: result must be an object, not an array" {
		t.Errorf("response: %q", got)
	}
	if _, err := DecodeMessage([]byte(`[]`)); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("DecodeMessage of an array: %v", err)
	}
	if _, err := DecodeMessage([]byte("{\"a\":\"\xff\"}")); !errors.Is(err, ErrParse) {
		t.Errorf("DecodeMessage of bad UTF-8: %v", err)
	}
}

func TestWriterNilMessage(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.Write((*Message)(nil)); err == nil {
		t.Error("nil message written")
	}
	if err := w.WriteBatch([]*Message{nil}); err == nil {
		t.Error("nil batch element written")
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}

// TestDecodeFrameDuplicateMembers: a name twice in one object, at any
// depth, makes the frame an invalid message (receivers differ on which value
// counts), answered with the id when it is not the duplicate; the same names
// in different objects are fine.
func TestDecodeFrameDuplicateMembers(t *testing.T) {
	for _, c := range []struct {
		frame, want, id string
	}{
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, `invalid request: duplicate member "id"`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, `invalid request: duplicate member "method"`, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`, `invalid request: duplicate member "params.name"`, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"p":[{"x":1,"\u0078":2}]}}}`, `invalid request: duplicate member "params.arguments.p[0].x"`, "1"},
		{`{"jsonrpc":"2.0","id":"r","result":{"content":[],"content":[]}}`, `invalid response: duplicate member "result.content"`, `"r"`},
		{`{"jsonrpc":"2.0","jsonrpc":"2.0","id":3,"result":{}}`, `invalid response: duplicate member "jsonrpc"`, "3"},
	} {
		_, _, err := DecodeFrame([]byte(c.frame), false)
		var de *DecodeError
		if !errors.As(err, &de) || de.Err.Code != CodeInvalidRequest || !strings.Contains(de.Err.Message, c.want) {
			t.Errorf("%s: err %v, want -32600 containing %q", c.frame, err, c.want)
			continue
		}
		if got := ""; de.ID != nil {
			got = de.ID.String()
			if got != c.id {
				t.Errorf("%s: id %s, want %q", c.frame, got, c.id)
			}
		} else if c.id != "" {
			t.Errorf("%s: no id, want %s", c.frame, c.id)
		}
	}
	// Many members (past the linear search), one duplicate at the end.
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"x","params":{`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"k7":0}}`)
	if _, _, err := DecodeFrame([]byte(b.String()), false); err == nil || !strings.Contains(err.Error(), `"params.k7"`) {
		t.Errorf("40 members, k7 twice: %v", err)
	}
	// In a batch, the element with the duplicate is refused alone.
	msgs, _, err := DecodeFrame([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b","params":{"x":1,"x":1}}]`), true)
	var be *BatchError
	if len(msgs) != 1 || !errors.As(err, &be) || be.Errs[0].Index != 1 || !strings.Contains(be.Errs[0].Error(), `"params.x"`) {
		t.Errorf("batch: %v %v", msgs, err)
	}
	// The same name in different objects, or in sibling objects of an array.
	for _, ok := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"id":1,"a":{"id":2},"b":[{"id":3},{"id":4}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":{"b":1},"c":{"b":1}},"x":{"params":1}}`,
	} {
		if _, _, err := DecodeFrame([]byte(ok), false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
