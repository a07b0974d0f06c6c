package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// logRecords parses stderr of --log-format json: every line must be one
// JSON object with time, level and msg.
func logRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["time"] == nil || rec["level"] == nil || rec["msg"] == nil {
			t.Errorf("not a JSON log record: %q (%v)", l, err)
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

// findRecord returns the record with msg and tool, nil when none.
func findRecord(recs []map[string]any, msg, tool string) map[string]any {
	for _, r := range recs {
		if r["msg"] == msg && r["tool"] == tool {
			return r
		}
	}
	return nil
}

// wantCallRecord checks the end record of the call id of tool: its
// outcome, level, and an elapsed time (nanoseconds in JSON).
func wantCallRecord(t *testing.T, recs []map[string]any, msg, tool, id, outcome, level string) map[string]any {
	t.Helper()
	r := findRecord(recs, msg, tool)
	if r == nil {
		t.Errorf("no %q record for tool %s in %v", msg, tool, recs)
		return nil
	}
	if _, ok := r["elapsed"].(float64); !ok || r["id"] != id || r["outcome"] != outcome || r["level"] != level {
		t.Errorf("%s record of %s: %v; want id %q, outcome %q, level %s and a numeric elapsed", msg, tool, r, id, outcome, level)
	}
	return r
}

// TestLogRecordsJSON: under --log-format json the records of the real
// binary are JSON objects whose attributes say which tool, which request,
// how long and how it ended, so that `jq 'select(.tool=="fine")'` finds
// them: a call that went fine, one whose tool failed, one whose worker
// crashed (with the worker's own record), and a tool left out.
func TestLogRecordsJSON(t *testing.T) {
	dir := t.TempDir()
	proctest.WriteExecutable(t, filepath.Join(dir, "fine"), []byte("#!/bin/sh\necho hi\n"))
	proctest.WriteExecutable(t, filepath.Join(dir, "fails"), []byte("#!/bin/sh\necho boom >&2\nexit 3\n"))
	proctest.WriteExecutable(t, filepath.Join(dir, "crashes"), []byte("#!/bin/sh\nread line\nexit 4\n"))
	proctest.WriteExecutable(t, filepath.Join(dir, "broken"), []byte("#!/bin/sh\n"))
	for name, def := range map[string]string{
		"fine": `{"description":"d"}`, "fails": `{"description":"d"}`,
		"crashes": `{"description":"d","run":{"mode":"worker"}}`, "broken": `{"description":`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(def), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdin := initLine + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fine"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fails"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"c-4","method":"tools/call","params":{"name":"crashes"}}` + "\n"
	code, out, errs := routeBin(t, t.TempDir(), nil, stdin, "--tools", dir, "--describe-cache", "", "--confine", "off", "--verbose", "--log-format", "json")
	if code != 0 || strings.Count(out, "\n") != 4 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	recs := logRecords(t, errs)
	wantCallRecord(t, recs, "call ended", "fine", "2", "ok", "DEBUG")
	// A non-zero exit is the tool's own error report: routine (Debug).
	if r := wantCallRecord(t, recs, "call failed", "fails", "3", "tool_error", "DEBUG"); r != nil && !strings.Contains(r["error"].(string), "boom") {
		t.Errorf("the failed call's record lacks the tool's stderr: %v", r)
	}
	// A string id is logged as its value.
	wantCallRecord(t, recs, "call failed", "crashes", "c-4", "tool_error", "WARN")
	if r := findRecord(recs, "worker died: its calls in flight fail", "crashes"); r == nil || r["level"] != "WARN" || r["outcome"] != "exit status 4" || r["pid"] == nil {
		t.Errorf("the worker's crash record: %v", r)
	}
	if r := findRecord(recs, "tool left out", "broken"); r == nil || r["level"] != "WARN" || r["path"] != filepath.Join(dir, "broken") || r["why"] == nil {
		t.Errorf("the left-out record: %v", r)
	}
}

// TestLogRecordsHTTPSession: over --http a call's records carry the
// session, a digest of its Mcp-Session-Id (the id itself, which
// authenticates the session, is not written).
func TestLogRecordsHTTPSession(t *testing.T) {
	r := startHTTP(t, "--tools", httpTools(t), "--verbose", "--log-format", "json")
	sid := initialize(t, r.url, "2025-11-25")
	sess := []string{"Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25"}
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":"hi"}}}`, sess...); code != 200 || !strings.Contains(body, "hi") {
		t.Fatalf("tools/call: %d %s", code, body)
	}
	proctest.Eventually(t, func() string {
		if !strings.Contains(r.stderr.String(), `"msg":"call ended"`) {
			return "no call record yet:\n" + r.stderr.String()
		}
		return ""
	})
	recs := logRecords(t, r.stderr.String())
	rec := wantCallRecord(t, recs, "call ended", "echo", "7", "ok", "DEBUG")
	if s, _ := rec["session"].(string); len(s) != 16 || strings.Contains(r.stderr.String(), sid) {
		t.Errorf("session attribute %q: want a 16-digit digest, and the id %s nowhere in the log", s, sid)
	}
}

// TestLogRecordsTextEscaped: the text format stays one readable line per
// record, and what a tool controls (its file name, its stderr) never
// reaches the terminal raw: an escape sequence is written escaped.
func TestLogRecordsTextEscaped(t *testing.T) {
	dir := t.TempDir()
	evil := "evil\x1b[2J"
	proctest.WriteExecutable(t, filepath.Join(dir, evil), []byte("#!/bin/sh\n"))
	os.WriteFile(filepath.Join(dir, evil+".json"), []byte(`{"description":`), 0o644)
	proctest.WriteExecutable(t, filepath.Join(dir, "loud"), []byte("#!/bin/sh\nprintf 'red \\033[31m\\n' >&2\necho ok\n"))
	os.WriteFile(filepath.Join(dir, "loud.json"), []byte(`{"description":"d"}`), 0o644)
	stdin := initLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"loud"}}` + "\n"
	code, _, errs := routeBin(t, t.TempDir(), nil, stdin, "--tools", dir, "--describe-cache", "", "--confine", "off", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if strings.Contains(errs, "\x1b") || !strings.Contains(errs, `tool="evil\x1b[2J"`) || !strings.Contains(errs, `stderr="red \x1b[31m"`) {
		t.Errorf("want the escapes written escaped, never raw:\n%q", errs)
	}
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		if !strings.HasPrefix(l, "mcp-route: time=") {
			t.Errorf("text: line %q", l)
		}
	}
}
