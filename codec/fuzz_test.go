package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// Seeds live in testdata/fuzz/<Target>/; plain `go test` runs them.

func FuzzReader(f *testing.F) {
	f.Add([]byte("{}\n\n{\"a\":1}\r\nlast"), 8)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		max = max%64 + 1 // small caps exercise the oversized path
		if max < 1 {
			max = -max + 1
		}
		r := NewReader(bytes.NewReader(data), max)
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatal("reader does not make progress")
			}
			frame, err := r.ReadFrame()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			if len(frame) > max {
				t.Fatalf("frame of %d bytes over the cap %d", len(frame), max)
			}
			if bytes.IndexByte(frame, '\n') >= 0 || isBlank(frame) {
				t.Fatalf("bad frame %q", frame)
			}
			if r.Line() < 1 {
				t.Fatalf("Line() = %d", r.Line())
			}
		}
	})
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, allowBatch bool) {
		msgs, _, err := DecodeFrame(data, allowBatch)
		if err != nil {
			var de *DecodeError
			var be *BatchError
			switch {
			case errors.As(err, &be):
			case errors.As(err, &de):
				if c := de.Err.Code; c != CodeParseError && c != CodeInvalidRequest {
					t.Fatalf("code %d", c)
				}
				b, merr := de.Response().MarshalJSON()
				if merr != nil || !json.Valid(b) {
					t.Fatalf("error response %q: %v", b, merr)
				}
				return
			default:
				t.Fatalf("error of type %T", err)
			}
		}
		for _, m := range msgs {
			b, err := m.MarshalJSON()
			if err != nil {
				t.Fatalf("re-encode %+v: %v", m, err)
			}
			if bytes.IndexByte(b, '\n') >= 0 {
				t.Fatalf("re-encoded frame has a newline: %q", b)
			}
			back, err := DecodeMessage(b)
			if err != nil {
				t.Fatalf("re-encoded %s does not decode: %v", b, err)
			}
			if back.Method != m.Method || (back.ID == nil) != (m.ID == nil) || (m.ID != nil && *back.ID != *m.ID) {
				t.Fatalf("round trip changed %s", b)
			}
			// Params and result go out as json.Compact would write them (a
			// compact decoded value is copied, not compacted).
			for _, v := range [][2][]byte{{m.Params, back.Params}, {m.Result, back.Result}} {
				var want bytes.Buffer
				if len(v[0]) > 0 && (json.Compact(&want, v[0]) != nil || !bytes.Equal(v[1], want.Bytes())) {
					t.Fatalf("re-encoded %s has %s, want %s", b, v[1], want.Bytes())
				}
			}
		}
	})
}

func FuzzValidateTool(f *testing.F) {
	f.Add("fs_read", "Read a file", []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`), []byte(`{"path":"a"}`))
	f.Fuzz(func(t *testing.T, name, desc string, schema, args []byte) {
		tool := &Tool{Name: name, Description: desc, InputSchema: schema}
		err := ValidateTool(tool)
		if err != nil && bytes.IndexByte([]byte(err.Error()), '\n') >= 0 {
			t.Fatalf("multi-line error %q", err)
		}
		s, err := CompileSchema(schema)
		if err != nil {
			return
		}
		if err := s.Validate(args); err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("Validate error %T %v", err, err)
			}
		}
	})
}

// FuzzSession feeds a session a sequence of frames (one per line): no panic,
// and every error is a JSON-RPC error a server can send.
func FuzzSession(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewSession()
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			msgs, _, err := DecodeFrame(line, s.AllowBatch())
			if err != nil && msgs == nil {
				continue
			}
			for _, m := range msgs {
				rev, cerr := s.Classify(m)
				if cerr != nil {
					if b, err := NewErrorResponse(m.ID, cerr).MarshalJSON(); err != nil || !json.Valid(b) {
						t.Fatalf("error response %q: %v", b, err)
					}
					continue
				}
				if !IsSupportedRevision(rev) {
					t.Fatalf("Classify(%s) = unsupported revision %q", line, rev)
				}
			}
		}
	})
}
