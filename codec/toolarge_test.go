package codec

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// A line over the cap, whether found so when a read fills the buffer or only
// at its newline, is reported with its first and last bytes, and the next
// line is read.
func TestReaderOversizedKeepsEnds(t *testing.T) {
	for _, limit := range []int{100, 70 << 10} { // under and over the 64 KiB read buffer
		body := `{"id":7,"result":{"text":"` + strings.Repeat("a", 2*limit+4096) + `"},"jsonrpc":"2.0"}`
		r := NewReader(strings.NewReader(body+"\r\n"+body[:limit]+"\n"), limit)
		_, err := r.ReadFrame()
		var fe *FrameTooLargeError
		if !errors.As(err, &fe) || !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("limit %d: err %v, want a *FrameTooLargeError", limit, err)
		}
		if fe.Line != 1 || fe.Size != len(body)+1 || fe.Limit != limit ||
			string(fe.Head) != body[:FrameHeadSize] || string(fe.Tail) != body[len(body)-FrameTailSize:] {
			t.Errorf("limit %d: line %d size %d limit %d head %.40q tail %.40q", limit, fe.Line, fe.Size, fe.Limit, fe.Head, fe.Tail)
		}
		if want := "line 1: codec: frame too large"; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q, want it to begin %q", err, want)
		}
		if id := fe.ResponseID(); id == nil || id.String() != "7" {
			t.Errorf("limit %d: ResponseID %v, want 7", limit, id)
		}
		if f, err := r.ReadFrame(); err != nil || string(f) != body[:limit] {
			t.Errorf("limit %d: the next line: %.40q %v", limit, f, err)
		}
		if _, err := r.ReadFrame(); err != io.EOF {
			t.Errorf("want EOF, got %v", err)
		}
	}
	// Just over the cap, ended by the newline: head and tail are the line.
	r := NewReader(strings.NewReader(`{"id":1,"result":{}}`+"\n"), 10)
	_, err := r.ReadFrame()
	var fe *FrameTooLargeError
	if !errors.As(err, &fe) || string(fe.Head) != `{"id":1,"result":{}}` || string(fe.Tail) != `{"id":1,"result":{}}` {
		t.Fatalf("%v %+v", err, fe)
	}
}

func TestResponseID(t *testing.T) {
	big := strings.Repeat("x", 3000)
	tests := []struct {
		line string
		want string // "" for none
	}{
		{`{"jsonrpc":"2.0","id":5,"result":{"content":"` + big + `"}}`, "5"},
		{`{"id":"a\"b","jsonrpc":"2.0","result":{"content":"` + big + `"}}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","id":-3,"error":{"code":1,"message":"` + big + `"}}`, "-3"},
		// The id last (the result first): read from the end.
		{`{"result":{"content":"` + big + `"},"jsonrpc":"2.0","id":12}`, "12"},
		{`{"result":{"content":"` + big + `"} , "jsonrpc":"2.0" , "id" : "k\\"  }` + "\r", `"k\\"`},
		{`{"error":{"code":1,"message":"` + big + `"},"id":"q\"x\""}`, `"q\"x\""`},
		// A request of the other side: its ids are its own.
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"x":"` + big + `"}}`, ""},
		{`{"method":"x","params":{"x":"` + big + `"},"jsonrpc":"2.0","id":5}`, ""},
		// A notification, junk, a batch, no id to be seen.
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"m":"` + big + `"}}`, ""},
		{big, ""},
		{`[{"jsonrpc":"2.0","id":5,"result":{"content":"` + big + `"}}]`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"}}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"},"x":{"id":4}}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `", "id":4}}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"},"xid":4}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"},"id":null}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"},"id":1.5}`, ""},
		{`{"jsonrpc":"2.0","result":{"content":"` + big + `"}"id":4}`, ""},
		// The id among the first members, but the line too long to show
		// whether it is an answer.
		{`{"jsonrpc":"2.0","id":5,"_meta":{"m":"` + big + `"},"result":{}}`, ""},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.line+"\n"), 2000)
		_, err := r.ReadFrame()
		var fe *FrameTooLargeError
		if !errors.As(err, &fe) {
			t.Fatalf("%.60q: %v", tt.line, err)
		}
		got := ""
		if id := fe.ResponseID(); id != nil {
			got = id.String()
		}
		if got != tt.want {
			t.Errorf("%.60q...%.40q: ResponseID %q, want %q", tt.line, tt.line[len(tt.line)-40:], got, tt.want)
		}
	}
}
