package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchStream is a realistic session: a handshake, a tools/list answer with
// 30 tools, tool calls with arguments, a 64 KB text result, progress and
// cancellation notifications, in both eras.
func benchStream(tb testing.TB) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	must := func(m *Message, err error) *Message {
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	client := Implementation{Name: "bench-client", Version: "1.0"}
	_ = w.Write(must(NewRequest(IntID(0), MethodInitialize, InitializeParams{ProtocolVersion: Rev20250618, Capabilities: ClientCapabilities{}, ClientInfo: client})))
	_ = w.Write(must(NewResultFor(Rev20250618, testServer, IntID(0), InitializeResult{ProtocolVersion: Rev20250618, Capabilities: ServerCapabilities{Tools: &ToolsCapability{ListChanged: true}}, ServerInfo: testServer})))
	_ = w.Write(must(NewNotification(MethodInitialized, nil)))
	var tools []Tool
	for i := range 30 {
		tools = append(tools, Tool{
			Name:        fmt.Sprintf("tool_%02d", i),
			Description: strings.Repeat("Does a useful thing with files under the root. ", 3),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path under the root"},"count":{"type":"integer","minimum":1},"recursive":{"type":"boolean"}},"required":["path"]}`),
			Annotations: &ToolAnnotations{ReadOnlyHint: Bool(true)},
		})
	}
	ttl := int64(60000)
	_ = w.Write(must(NewRequest(IntID(1), MethodToolsList, nil)))
	_ = w.Write(must(NewResultFor(Rev20260728, testServer, IntID(1), ListToolsResult{Tools: tools, TTLMs: &ttl, CacheScope: CacheScopePublic})))
	meta := ModernRequestMeta(Rev20260728, client, json.RawMessage(`"tok"`))
	for i := range 20 {
		_ = w.Write(must(NewRequest(IntID(int64(10+i)), MethodToolsCall, CallToolParams{Name: "tool_01", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"src/file_%d.go","count":%d,"recursive":true}`, i, i+1)), Meta: meta})))
		total := 4.0
		_ = w.Write(must(NewNotification(MethodProgress, ProgressParams{ProgressToken: json.RawMessage(`"tok"`), Progress: 1, Total: &total, Message: "reading"})))
		_ = w.Write(must(NewResultFor(Rev20260728, testServer, IntID(int64(10+i)), TextResult(fmt.Sprintf("line %d\n", i)))))
	}
	big := strings.Repeat("The quick brown fox jumps over the lazy dog. \"quoted\" <tag> é\n", 1024) // ~64 KB
	_ = w.Write(must(NewResultFor(Rev20260728, testServer, IntID(99), TextResult(big))))
	id := IntID(12)
	_ = w.Write(must(NewNotification(MethodCancelled, CancelledParams{RequestID: &id, Reason: "user"})))
	return buf.Bytes()
}

// BenchmarkReadValidate measures read + DecodeFrame throughput (MB/s).
func BenchmarkReadValidate(b *testing.B) {
	stream := benchStream(b)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream), 0)
		for {
			f, err := r.ReadFrame()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := DecodeFrame(f, false); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReadValidateArgs adds what a server does per tools/call: decode
// the params and check the arguments against the tool's compiled schema.
func BenchmarkReadValidateArgs(b *testing.B) {
	stream := benchStream(b)
	schema, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer","minimum":1},"recursive":{"type":"boolean"}},"required":["path"]}`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream), 0)
		for {
			f, err := r.ReadFrame()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			msgs, _, err := DecodeFrame(f, false)
			if err != nil {
				b.Fatal(err)
			}
			if msgs[0].Method == MethodToolsCall {
				var p CallToolParams
				if err := json.Unmarshal(msgs[0].Params, &p); err != nil {
					b.Fatal(err)
				}
				if err := schema.Validate(p.Arguments); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

func TestBenchStreamDecodes(t *testing.T) {
	stream := benchStream(t)
	if len(stream) < 64<<10 {
		t.Fatalf("stream is %d bytes", len(stream))
	}
	r := NewReader(bytes.NewReader(stream), 0)
	n := 0
	for {
		f, err := r.ReadFrame()
		if err == io.EOF {
			break
		}
		if _, _, err := DecodeFrame(f, false); err != nil {
			t.Fatalf("line %d: %v", r.Line(), err)
		}
		n++
	}
	if n < 60 {
		t.Errorf("only %d frames", n)
	}
}
