package filter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/spectest"
)

type report struct {
	line   int
	reason string
}

var legacy = codec.LegacyRevisions

func runFilter(t testing.TB, in string, opts Options) (string, []report, Stats) {
	t.Helper()
	var reps []report
	opts.Report = func(line int, reason string) { reps = append(reps, report{line, reason}) }
	var out bytes.Buffer
	st, err := Run(strings.NewReader(in), &out, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String(), reps, st
}

// metaFor is the _meta of a request in rev: the modern version key in
// 2026-07-28, nothing before.
func metaFor(rev string) string {
	if codec.IsModernRevision(rev) {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	return `"_meta":{"progressToken":"t1"}`
}

// clientStream is a valid session as a client writes it in rev.
func clientStream(rev string) []string {
	var s []string
	if !codec.IsModernRevision(rev) {
		s = append(s,
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"c","version":"1.0"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"ping-1","method":"ping"}`)
	} else {
		s = append(s, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{`+metaFor(rev)+`}}`)
	}
	return append(s,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+metaFor(rev)+`}}`,
		`{"jsonrpc":"2.0","id":"é\u00e9","method":"tools/call","params":{`+metaFor(rev)+`,"name":"echo","arguments":{"text":"a <b> & c","n":1.50}}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"x-vendor/extension","params":{`+metaFor(rev)+`,"free":[1,2]}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"é\u00e9","reason":"user"}}`,
	)
}

// serverStream is a valid session as a server writes it in rev.
func serverStream(rev string) []string {
	var s []string
	rt := ""
	if codec.IsModernRevision(rev) {
		rt = `"resultType":"complete",`
		s = append(s, `{"jsonrpc":"2.0","id":0,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}}`)
	} else {
		s = append(s,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+rev+`","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1.0"}}}`,
			`{"jsonrpc":"2.0","id":"ping-1","result":{}}`,
			`{"jsonrpc":"2.0","id":"s-1","method":"ping"}`)
	}
	return append(s,
		`{"jsonrpc":"2.0","id":1,"result":{`+rt+`"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"ttlMs":1000,"cacheScope":"public"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":1,"total":2}}`,
		`{"jsonrpc":"2.0","id":"é\u00e9","result":{`+rt+`"content":[{"type":"text","text":"a <b> & c"}],"isError":false}}`,
		`{"jsonrpc":"2.0","id":-0,"error":{"code":-32601,"message":"method not found"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	)
}

func lines(ls []string) string { return strings.Join(ls, "\n") + "\n" }

// TestValidStreams: for each revision, a client's and a server's side pass
// untouched (they are already compact), both pinned and followed, and every
// line written validates against the revision's schema.
func TestValidStreams(t *testing.T) {
	for _, rev := range codec.Revisions {
		for _, side := range []struct {
			from   codec.Direction
			stream []string
		}{{codec.FromClient, clientStream(rev)}, {codec.FromServer, serverStream(rev)}} {
			for _, pin := range []string{"", rev} {
				name := fmt.Sprintf("%s/%s/pinned=%v", rev, side.from, pin != "")
				t.Run(name, func(t *testing.T) {
					in := lines(side.stream)
					out, reps, st := runFilter(t, in, Options{Revision: pin, From: side.from})
					if len(reps) > 0 {
						t.Fatalf("reports on a valid stream: %v", reps)
					}
					if out != in {
						t.Errorf("output differs from the compact input\n got: %s\nwant: %s", out, in)
					}
					if st.Frames != len(side.stream) || st.Messages != len(side.stream) || st.Bad != 0 {
						t.Errorf("stats = %+v", st)
					}
				})
			}
		}
	}
}

func TestValidStreamsAgreeWithSchema(t *testing.T) {
	spectest.Dir(t)
	for _, rev := range codec.Revisions {
		for _, l := range clientStream(rev) {
			if strings.Contains(l, "x-vendor") {
				continue // an extension: no definition to hold it to
			}
			spectest.CheckClientMessage(t, rev, []byte(l))
		}
		methods := map[string]string{`"id":0`: "initialize", `"id":1`: "tools/list", `"id":"é\u00e9"`: "tools/call", `"id":"ping-1"`: "ping"}
		if codec.IsModernRevision(rev) {
			methods[`"id":0`] = "server/discover"
		}
		for _, l := range serverStream(rev) {
			m := ""
			for k, v := range methods {
				if strings.Contains(l, k) && strings.Contains(l, `"result"`) {
					m = v
				}
			}
			spectest.CheckServerMessage(t, rev, m, []byte(l))
		}
	}
}

// TestBadFrames: each class of bad frame is reported with its line number,
// never written, and the good frames around it still go through.
func TestBadFrames(t *testing.T) {
	// Progress goes both ways in every revision.
	good := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`
	cases := []struct {
		name  string
		revs  []string // nil: every revision
		from  codec.Direction
		frame string
		want  string
	}{
		{"not JSON", nil, codec.FromAny, `Server listening on stdio`, "parse error"},
		{"truncated JSON", nil, codec.FromAny, `{"jsonrpc":"2.0","method":"x"`, "parse error"},
		{"invalid UTF-8", nil, codec.FromAny, "{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}", "invalid UTF-8"},
		{"not an object", nil, codec.FromAny, `"hello"`, "must be a JSON object"},
		{"jsonrpc 1.0", nil, codec.FromAny, `{"jsonrpc":"1.0","id":1,"method":"x"}`, `"jsonrpc" must be "2.0"`},
		{"jsonrpc missing", nil, codec.FromAny, `{"id":1,"method":"x"}`, `missing "jsonrpc"`},
		{"null id", nil, codec.FromAny, `{"jsonrpc":"2.0","id":null,"method":"x"}`, "id must not be null"},
		{"float id", nil, codec.FromAny, `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, "not an integer"},
		{"exponent id", nil, codec.FromAny, `{"jsonrpc":"2.0","id":1e3,"method":"x"}`, "not an integer"},
		{"bool id", nil, codec.FromAny, `{"jsonrpc":"2.0","id":true,"method":"x"}`, "string or an integer"},
		{"object id", nil, codec.FromAny, `{"jsonrpc":"2.0","id":{},"method":"x"}`, "string or an integer"},
		{"method not a string", nil, codec.FromAny, `{"jsonrpc":"2.0","id":1,"method":7}`, "method must be a string"},
		{"result and error", nil, codec.FromAny, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "both"},
		{"batch outside 2025-03-26", []string{codec.Rev20241105, codec.Rev20250618, codec.Rev20251125, codec.Rev20260728}, codec.FromAny,
			`[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]`, "batches are not allowed"},
		{"empty batch in 2025-03-26", []string{codec.Rev20250326}, codec.FromAny, `[]`, "empty batch"},
		{"bad batch element", []string{codec.Rev20250326}, codec.FromAny,
			`[{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},{"jsonrpc":"2.0","id":true,"method":"x"}]`, "batch element 1"},
		{"response in client direction", []string{codec.Rev20260728}, codec.FromClient,
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, "client sends no responses"},
		{"client request from the server", nil, codec.FromServer,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, "sent by the client"},
		{"modern request without _meta", []string{codec.Rev20260728}, codec.FromClient,
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, "missing params._meta"},
		{"modern extension request without _meta", []string{codec.Rev20260728}, codec.FromClient,
			`{"jsonrpc":"2.0","id":1,"method":"x/y"}`, "missing params._meta"},
		{"modern result without resultType", []string{codec.Rev20260728}, codec.FromServer,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "missing resultType"},
		{"known method, wrong params", nil, codec.FromClient,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + metaFor(codec.Rev20260728) + `,"name":["x"]}}`, "params.name must be a string, not an array"},
		{"server's tool result with a bad content block", legacy, codec.FromServer,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"}]}}`, "tools/call result: missing content[0].text"},
		{"server's tool list with a bad schema", legacy, codec.FromServer,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x","inputSchema":{"type":"array"}}]}}`, `tools[0].inputSchema.type must be "object"`},
		// On a stream of both sides a response whose request was not seen
		// is checked by its members, as on a server's side only.
		{"unpaired bad tool result, any side", legacy, codec.FromAny,
			`{"jsonrpc":"2.0","id":4,"result":{"content":"bad"}}`, "tools/call result: content must be an array, not a string"},
		{"unpaired bad modern tool result, any side", []string{codec.Rev20260728}, codec.FromAny,
			`{"jsonrpc":"2.0","id":4,"result":{"content":"bad","resultType":"complete"}}`, "tools/call result: content must be an array, not a string"},
		{"unpaired bad tool list, any side", nil, codec.FromAny,
			`{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","tools":{}}}`, "tools/list result: tools must be an array"},
		{"unpaired client's sampling result, any side", legacy, codec.FromAny,
			`{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`, ""},
		{"unpaired bad client's sampling result, any side", legacy, codec.FromAny,
			`{"jsonrpc":"2.0","id":"s1","result":{"content":{"type":"text","text":"hi"},"model":"m"}}`, "sampling/createMessage result: missing role"},
		{"unpaired client's elicitation result, any side", []string{codec.Rev20250618, codec.Rev20251125}, codec.FromAny,
			`{"jsonrpc":"2.0","id":"s2","result":{"action":"accept","content":{"name":"x"}}}`, ""},
		{"unpaired client's roots result, any side", legacy, codec.FromAny,
			`{"jsonrpc":"2.0","id":"s3","result":{"roots":[{"uri":"file:///tmp"}]}}`, ""},
		{"unpaired bad client's roots result, any side", legacy, codec.FromAny,
			`{"jsonrpc":"2.0","id":"s3","result":{"roots":[{"name":"no uri"}]}}`, "roots/list result: missing roots[0].uri"},
		{"initialize result without serverInfo", []string{codec.Rev20241105, codec.Rev20251125}, codec.FromServer,
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`, ""},
	}
	for _, c := range cases {
		revs := c.revs
		if revs == nil {
			revs = codec.Revisions
		}
		for _, rev := range revs {
			t.Run(rev+"/"+c.name, func(t *testing.T) {
				in := good + "\n\n" + c.frame + "\n" + good + "\n"
				out, reps, st := runFilter(t, in, Options{Revision: rev, From: c.from})
				if c.want == "" {
					// Valid under this revision's rules for an unpaired result.
					if len(reps) != 0 {
						t.Fatalf("reports %v, want none", reps)
					}
					return
				}
				if len(reps) != 1 || reps[0].line != 3 || !strings.Contains(reps[0].reason, c.want) {
					t.Fatalf("reports = %v, want one for line 3 containing %q", reps, c.want)
				}
				if out != good+"\n"+good+"\n" {
					t.Errorf("output = %q, want only the two good frames", out)
				}
				if st.Bad != 1 || st.Frames != 3 || st.Messages != 2 {
					t.Errorf("stats = %+v", st)
				}
			})
		}
	}
}

func TestOversizedFrame(t *testing.T) {
	good := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	big := `{"jsonrpc":"2.0","method":"x","params":{"pad":"` + strings.Repeat("a", 300) + `"}}`
	out, reps, st := runFilter(t, good+"\n"+big+"\n"+good+"\n", Options{MaxFrame: 128})
	if len(reps) != 1 || reps[0].line != 2 || !strings.Contains(reps[0].reason, "frame too large") {
		t.Fatalf("reports = %v", reps)
	}
	if out != good+"\n"+good+"\n" || st.Bad != 1 || st.Frames != 3 {
		t.Errorf("out = %q, stats = %+v", out, st)
	}
}

func TestCanonicalForm(t *testing.T) {
	in := "{ \"params\" : { \"z\" : 1 , \"a\" : [ 1 , 2.50 , \"\\u00e9\" ] } , \"method\" : \"x/y\" , \"id\" : \"\\u0061\" , \"jsonrpc\" : \"2.0\" , \"extra\" : true }\r\n" +
		"{\"error\":{\"message\":\"bad\",\"code\":-32700,\"data\":{ \"b\" : 1 }},\"id\":null,\"jsonrpc\":\"2.0\"}\n"
	want := `{"jsonrpc":"2.0","id":"\u0061","method":"x/y","params":{"z":1,"a":[1,2.50,"\u00e9"]}}` + "\n" +
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad","data":{"b":1}}}` + "\n"
	out, reps, _ := runFilter(t, in, Options{Revision: codec.Rev20250618})
	if len(reps) > 0 {
		t.Fatalf("reports: %v", reps)
	}
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	// Idempotent: the canonical form is a fixed point.
	again, _, _ := runFilter(t, out, Options{Revision: codec.Rev20250618})
	if again != out {
		t.Errorf("not idempotent:\n%s\n%s", out, again)
	}
}

func TestFollowsSession(t *testing.T) {
	init := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	}
	initRes := func(v string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"` + v + `","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	}
	batch := `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
	listNoMeta := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	modernList := `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + metaFor(codec.Rev20260728) + `}}`
	cases := []struct {
		name string
		in   []string
		bad  []int // reported lines
	}{
		{"no session: newest rules", []string{listNoMeta}, []int{1}},
		{"initialize request sets legacy", []string{init("2025-06-18"), listNoMeta}, nil},
		{"batch allowed after 2025-03-26 is asked", []string{init("2025-03-26"), batch}, nil},
		{"result grants another revision", []string{init("2025-03-26"), initRes("2025-06-18"), batch}, []int{3}},
		{"server side only: result sets it", []string{initRes("2025-03-26"), batch}, nil},
		{"unknown version asked: newest legacy", []string{init("1999-01-01"), batch, listNoMeta}, []int{2}},
		{"modern request in a legacy session", []string{init("2025-06-18"), modernList, listNoMeta}, nil},
		{"initialize not in 2026", []string{init("2026-07-28"), listNoMeta}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, reps, _ := runFilter(t, lines(c.in), Options{})
			var got []int
			for _, r := range reps {
				got = append(got, r.line)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.bad) {
				t.Errorf("reported lines %v (%v), want %v", got, reps, c.bad)
			}
		})
	}
	// Pinned: the session's initialize does not change the rules.
	_, reps, _ := runFilter(t, lines([]string{init("2025-03-26"), batch}), Options{Revision: codec.Rev20250618})
	if len(reps) != 1 || reps[0].line != 2 {
		t.Errorf("pinned 2025-06-18: reports %v, want the batch on line 2", reps)
	}
}

// TestPairsResponses: on a capture of both sides a response is checked as
// the result of the request with its id; on one side it is not paired.
func TestPairsResponses(t *testing.T) {
	in := lines([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"text":"no content member"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"text":"a second answer is not paired"}}`,
	})
	_, reps, _ := runFilter(t, in, Options{From: codec.FromAny})
	if len(reps) != 1 || reps[0].line != 4 || !strings.Contains(reps[0].reason, "tools/call result: missing content") {
		t.Errorf("reports = %v", reps)
	}
}

// TestRefusedRequestsAnswerChecked: a response to a request the filter
// refused (so never paired) is still checked by its members: an invalid
// result must not pass through for want of its request.
func TestRefusedRequestsAnswerChecked(t *testing.T) {
	modern := metaFor(codec.Rev20260728)
	for _, c := range []struct {
		name string
		in   []string
	}{
		{"legacy", []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7}}`,
			`{"jsonrpc":"2.0","id":4,"result":{"content":"bad"}}`,
		}},
		{"modern", []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modern + `}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + modern + `,"name":7}}`,
			`{"jsonrpc":"2.0","id":4,"result":{"content":"bad","resultType":"complete"}}`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, reps, st := runFilter(t, lines(c.in), Options{From: codec.FromAny})
			if len(reps) != 2 || reps[0].line != 3 || reps[1].line != 4 ||
				!strings.Contains(reps[1].reason, "tools/call result: content must be an array, not a string") {
				t.Fatalf("reports = %v, want line 3 (the request) and line 4 (its bad result)", reps)
			}
			if want := lines(c.in[:2]); out != want {
				t.Errorf("output = %q, want %q", out, want)
			}
			if st.Bad != 2 || st.Messages != 2 {
				t.Errorf("stats = %+v", st)
			}
		})
	}
}

func TestCheckWritesNothing(t *testing.T) {
	out, reps, st := runFilter(t, lines(serverStream(codec.Rev20251125))+"oops\n", Options{Check: true, From: codec.FromServer})
	if out != "" || len(reps) != 1 || st.Bad != 1 || st.Messages != len(serverStream(codec.Rev20251125)) {
		t.Errorf("out = %q, reps = %v, stats = %+v", out, reps, st)
	}
}

func TestPretty(t *testing.T) {
	out, reps, _ := runFilter(t, `{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}`+"\n", Options{Pretty: true, Revision: codec.Rev20250618})
	want := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"a\": [\n      1\n    ]\n  }\n}\n"
	if len(reps) > 0 || out != want {
		t.Errorf("got %q, reports %v", out, reps)
	}
}

func TestUnsupportedRevision(t *testing.T) {
	if _, err := Run(strings.NewReader(""), io.Discard, Options{Revision: "2020-01-01"}); err == nil {
		t.Error("Run accepted an unknown revision")
	}
}

// TestFlushesBeforeWaiting: every frame read so far is written before the
// filter reads again, so a live peer is never kept waiting.
func TestFlushesBeforeWaiting(t *testing.T) {
	frames := serverStream(codec.Rev20260728)
	var out bytes.Buffer
	r := &stepReader{lines: frames, out: &out, t: t}
	if _, err := Run(r, &out, Options{From: codec.FromServer}); err != nil {
		t.Fatal(err)
	}
	if out.String() != lines(frames) {
		t.Errorf("output %q", out.String())
	}
}

// stepReader hands out one line per Read and checks that all earlier lines
// were written by then.
type stepReader struct {
	lines []string
	i     int
	out   *bytes.Buffer
	t     *testing.T
}

func (s *stepReader) Read(p []byte) (int, error) {
	if want := lines(s.lines[:s.i]); s.i > 0 && s.out.String() != want {
		s.t.Errorf("before read %d: output %q, want %q", s.i, s.out.String(), want)
	}
	if s.i == len(s.lines) {
		return 0, io.EOF
	}
	n := copy(p, s.lines[s.i]+"\n")
	s.i++
	return n, nil
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	_, err := Run(strings.NewReader(lines(serverStream(codec.Rev20250618))), failWriter{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "write: disk full") {
		t.Errorf("err = %v", err)
	}
}

type failReader struct{}

func (failReader) Read(p []byte) (int, error) { return 0, errors.New("device gone") }

func TestReadError(t *testing.T) {
	_, err := Run(failReader{}, io.Discard, Options{})
	if err == nil || !strings.Contains(err.Error(), "read: device gone") {
		t.Errorf("err = %v", err)
	}
}
