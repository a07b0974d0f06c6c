package codec

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestRevisionPredicates(t *testing.T) {
	for _, r := range Revisions {
		if !IsSupportedRevision(r) {
			t.Errorf("%s not supported", r)
		}
		if IsModernRevision(r) == IsLegacyRevision(r) {
			t.Errorf("%s is both or neither era", r)
		}
	}
	if !IsModernRevision("2027-01-01") || IsModernRevision("2025-11-25") || IsModernRevision("latest") {
		t.Error("IsModernRevision")
	}
	if IsSupportedRevision("2027-01-01") || IsSupportedRevision("") {
		t.Error("IsSupportedRevision")
	}
	if Revisions[len(Revisions)-1] != LatestRevision || LegacyRevisions[len(LegacyRevisions)-1] != LatestLegacyRevision {
		t.Error("latest")
	}
	for _, r := range Revisions {
		if BatchesAllowed(r) != (r == Rev20250326) {
			t.Errorf("BatchesAllowed(%s)", r)
		}
	}
}

func TestNegotiateLegacy(t *testing.T) {
	tests := map[string]string{
		"2024-11-05": "2024-11-05",
		"2025-03-26": "2025-03-26",
		"2025-06-18": "2025-06-18",
		"2025-11-25": "2025-11-25",
		"2026-07-28": LatestLegacyRevision, // modern: no initialize in that era
		"2023-01-01": LatestLegacyRevision,
		"":           LatestLegacyRevision,
		"garbage":    LatestLegacyRevision,
	}
	for in, want := range tests {
		if got := NegotiateLegacy(in); got != want {
			t.Errorf("NegotiateLegacy(%q) = %q, want %q", in, got, want)
		}
	}
}

func modernParams(rev string, extra string) string {
	p := `{"_meta":{"` + MetaProtocolVersion + `":"` + rev + `","` + MetaClientCapabilities + `":{}}`
	if extra != "" {
		p += "," + extra
	}
	return p + "}"
}

func msg(t *testing.T, frame string) *Message {
	t.Helper()
	msgs, _, err := DecodeFrame([]byte(frame), false)
	if err != nil {
		t.Fatalf("%s: %v", frame, err)
	}
	return msgs[0]
}

func TestRequestRevision(t *testing.T) {
	if rev, ok := RequestRevision(json.RawMessage(modernParams("2026-07-28", ""))); !ok || rev != "2026-07-28" {
		t.Errorf("got %q %v", rev, ok)
	}
	for _, p := range []string{``, `{}`, `{"_meta":{}}`, `{"_meta":{"` + MetaProtocolVersion + `":5}}`, `{"_meta":[]}`} {
		if rev, ok := RequestRevision(json.RawMessage(p)); ok {
			t.Errorf("%s: got %q", p, rev)
		}
	}
	m, err := ParseRequestMeta(json.RawMessage(`{"_meta":{"progressToken":"t1","` + MetaClientInfo + `":{"name":"c","version":"1"},"` + MetaLogLevel + `":"info","x.y/z":1}}`))
	if err != nil || string(m.ProgressToken) != `"t1"` || m.ClientInfo.Name != "c" || m.LogLevel != "info" || string(m.Other["x.y/z"]) != "1" {
		t.Errorf("ParseRequestMeta: %+v %v", m, err)
	}
}

// Each legacy revision: initialize negotiates it, later requests use it,
// batches only in 2025-03-26.
func TestSessionLegacy(t *testing.T) {
	for _, rev := range append(slicesClone(LegacyRevisions), "1999-01-01") {
		t.Run(rev, func(t *testing.T) {
			s := NewSession()
			want := NegotiateLegacy(rev)
			if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); err == nil || err.Code != CodeInvalidRequest || !strings.Contains(err.Message, "not initialized") {
				t.Errorf("tools/list before initialize: %q %v", got, err)
			}
			if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)); err != nil || got != LatestLegacyRevision {
				t.Errorf("ping before initialize: %q %v", got, err)
			}
			if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)); err != nil || got != want {
				t.Fatalf("initialize: %q %v, want %q", got, err, want)
			}
			if s.Revision() != want || s.Initialized() {
				t.Errorf("after initialize: %q %v", s.Revision(), s.Initialized())
			}
			if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil || !s.Initialized() {
				t.Errorf("initialized: %v", err)
			}
			for _, m := range []string{"tools/list", "tools/call", "ping", "resources/list"} {
				if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":4,"method":"`+m+`"}`)); err != nil || got != want {
					t.Errorf("%s: %q %v", m, got, err)
				}
			}
			if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":5,"method":"server/discover"}`)); err != nil || got != LatestRevision {
				t.Errorf("discover in a legacy session: %q %v", got, err)
			}
			if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"`+rev+`"}}`)); err == nil || err.Code != CodeInvalidRequest {
				t.Errorf("second initialize: %v", err)
			}
			if s.AllowBatch() != (want == Rev20250326) {
				t.Errorf("AllowBatch = %v", s.AllowBatch())
			}
			// A modern request in a legacy session is still answered in its own revision.
			if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":`+modernParams(Rev20260728, "")+`}`)); err != nil || got != Rev20260728 {
				t.Errorf("modern request in legacy session: %q %v", got, err)
			}
		})
	}
}

func TestSessionModern(t *testing.T) {
	s := NewSession()
	if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":`+modernParams(Rev20260728, "")+`}`)); err != nil || got != Rev20260728 {
		t.Errorf("discover: %q %v", got, err)
	}
	if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`)); err != nil || got != Rev20260728 {
		t.Errorf("discover without _meta: %q %v", got, err)
	}
	if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+modernParams(Rev20260728, `"name":"x"`)+`}`)); err != nil || got != Rev20260728 {
		t.Errorf("tools/call: %q %v", got, err)
	}
	if s.Revision() != "" || s.AllowBatch() {
		t.Error("modern requests must not change the session")
	}
	got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":`+modernParams("2099-01-01", "")+`}`))
	if err == nil || err.Code != CodeUnsupportedVersion {
		t.Fatalf("unknown version: %q %v", got, err)
	}
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if json.Unmarshal(err.Data, &data) != nil || data.Requested != "2099-01-01" || len(data.Supported) != len(Revisions) {
		t.Errorf("-32022 data = %s", err.Data)
	}
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"`+MetaProtocolVersion+`":7}}}`)); err == nil || err.Code != CodeInvalidParams {
		t.Errorf("version not a string: %v", err)
	}
	// A legacy revision named in _meta does not bypass initialize.
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":`+modernParams(Rev20250618, "")+`}`)); err == nil || err.Code != CodeInvalidRequest {
		t.Errorf("legacy version in _meta before initialize: %v", err)
	}
}

func TestSessionEdgeCases(t *testing.T) {
	s := NewSession()
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)); err == nil || err.Code != CodeInvalidParams {
		t.Errorf("initialize without params: %v", err)
	}
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":3}}`)); err == nil || err.Code != CodeInvalidParams {
		t.Errorf("initialize with a number: %v", err)
	}
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err == nil {
		t.Error("initialized before initialize accepted")
	}
	if _, err := s.Classify(msg(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)); err != nil {
		t.Errorf("cancelled: %v", err)
	}
	if got, err := s.Classify(msg(t, `{"jsonrpc":"2.0","id":1,"result":{}}`)); err != nil || got == "" {
		t.Errorf("response: %q %v", got, err)
	}
}

func TestSessionConcurrent(t *testing.T) {
	s := NewSession()
	init := msg(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
	var wg sync.WaitGroup
	ok := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rev, err := s.Classify(init); err == nil {
				ok <- rev
			}
			s.AllowBatch()
		}()
	}
	wg.Wait()
	close(ok)
	n := 0
	for range ok {
		n++
	}
	if n != 1 {
		t.Errorf("%d initialize calls succeeded, want exactly 1", n)
	}
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }
