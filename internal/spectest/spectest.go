// Package spectest checks JSON documents against the official MCP schemas in
// tests. The schemas and the 2026-07-28 examples are vendored in
// third_party/mcp-spec (REV/schema.json, REV/examples). Dir finds that
// directory, in this order:
//
//   - $MCP_SPEC_DIR, when set: an override, for trying other schemas; it
//     must hold REV/schema.json, or every test that asks fails;
//   - under Bazel, the runfiles copy, $TEST_SRCDIR/$TEST_WORKSPACE/
//     third_party/mcp-spec (the go_test needs //third_party/mcp-spec in its
//     data; tools/testdata.py adds it to every test that imports spectest);
//   - else by walking up from the working directory (under go test, the
//     package's directory) to the directory holding third_party/mcp-spec,
//     stopping at the module root (the first directory with a go.mod).
//
// When none holds the schemas, the test fails (never skips), naming where it
// looked: a conformance test that silently did not run would prove nothing.
//
// Compiled schemas are cached per revision and definition; every function is
// safe for concurrent use from parallel tests.
package spectest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvDir names the environment variable that overrides the spec directory
// (the one holding REV/schema.json).
const EnvDir = "MCP_SPEC_DIR"

// vendored is the spec directory's path relative to the repository root.
const vendored = "third_party/mcp-spec"

// Dir returns the spec directory, or fails the test when there is none.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := Find()
	if err != nil {
		t.Fatalf("spectest: %v", err)
	}
	return d
}

// Find returns the spec directory, or an error saying where it looked; for
// a TestMain, which has no testing.TB to fail.
func Find() (string, error) {
	findOnce.Do(func() { findDir, findErr = locate() })
	return findDir, findErr
}

var (
	findOnce sync.Once
	findDir  string
	findErr  error
)

func locate() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if !isSpecDir(d) {
			return "", fmt.Errorf("the MCP schemas are not where %s points: %s holds no REV/schema.json (unset %s to use the vendored %s)", EnvDir, d, EnvDir, vendored)
		}
		return filepath.Abs(d)
	}
	var looked []string
	if src, ws := os.Getenv("TEST_SRCDIR"), os.Getenv("TEST_WORKSPACE"); src != "" && ws != "" {
		c := filepath.Join(src, ws, vendored)
		if isSpecDir(c) {
			return c, nil
		}
		looked = append(looked, c+" (Bazel runfiles: is //"+vendored+" in the go_test's data?)")
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, vendored)
		if isSpecDir(c) {
			return c, nil
		}
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			looked = append(looked, c+" (the module root)")
			break
		}
		if filepath.Dir(d) == d {
			looked = append(looked, "every "+vendored+" from "+wd+" up to /")
			break
		}
	}
	return "", errors.New("the MCP schemas (REV/schema.json) are missing: looked in " + strings.Join(looked, ", ") + "; restore " + vendored + " from git, or set " + EnvDir + " to a directory holding them")
}

func isSpecDir(d string) bool {
	m, _ := filepath.Glob(filepath.Join(d, "*", "schema.json"))
	return len(m) > 0
}

type revSchema struct {
	mu       sync.Mutex
	c        *jsonschema.Compiler
	url      string
	defsKey  string // "$defs" or "definitions"
	defs     map[string]bool
	compiled map[string]*jsonschema.Schema
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*revSchema{}
)

func load(t testing.TB, rev string) *revSchema {
	t.Helper()
	dir := Dir(t)
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if rs, ok := cache[rev]; ok {
		return rs
	}
	path := filepath.Join(dir, rev, "schema.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("spectest: revision %s: %v", rev, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("spectest: %s: %v", path, err)
	}
	top, _ := doc.(map[string]any)
	rs := &revSchema{c: jsonschema.NewCompiler(), url: "file://" + filepath.ToSlash(path), compiled: map[string]*jsonschema.Schema{}, defs: map[string]bool{}}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := top[k].(map[string]any); ok {
			rs.defsKey = k
			for name := range d {
				rs.defs[name] = true
			}
		}
	}
	if rs.defsKey == "" {
		t.Fatalf("spectest: %s has neither $defs nor definitions", path)
	}
	if err := rs.c.AddResource(rs.url, doc); err != nil {
		t.Fatalf("spectest: %s: %v", path, err)
	}
	cache[rev] = rs
	return rs
}

// Revisions lists the revisions present in the spec directory, oldest first.
func Revisions(t testing.TB) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(Dir(t), "*", "schema.json"))
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(filepath.Dir(p)))
	}
	return out // Glob sorts, and revision names are dates
}

// HasDef reports whether revision rev's schema defines def.
func HasDef(t testing.TB, rev, def string) bool {
	t.Helper()
	return load(t, rev).defs[def]
}

func (rs *revSchema) schema(def string) (*jsonschema.Schema, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if s, ok := rs.compiled[def]; ok {
		return s, nil
	}
	if !rs.defs[def] {
		return nil, fmt.Errorf("schema has no definition %q", def)
	}
	s, err := rs.c.Compile(rs.url + "#/" + rs.defsKey + "/" + def)
	if err != nil {
		return nil, err
	}
	rs.compiled[def] = s
	return s, nil
}

// Check validates doc against definition def of revision rev and returns the
// problem, or nil. It fails the test only when the schema cannot be loaded.
func Check(t testing.TB, rev, def string, doc []byte) error {
	t.Helper()
	rs := load(t, rev)
	s, err := rs.schema(def)
	if err != nil {
		return fmt.Errorf("%s: %w", rev, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s %s: %w", rev, def, err)
	}
	return nil
}

// Validate fails the test unless doc validates against #/$defs/def (or
// #/definitions/def) of revision rev's schema.json.
func Validate(t testing.TB, rev, def string, doc []byte) {
	t.Helper()
	if err := Check(t, rev, def, doc); err != nil {
		t.Errorf("spectest: %s\ndocument: %s", err, clip(doc))
	}
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// ResultDef returns the result definition for a request method, "" when the
// method has none of its own (the generic Result applies).
func ResultDef(method string) string {
	switch method {
	case "initialize":
		return "InitializeResult"
	case "server/discover":
		return "DiscoverResult"
	case "tools/list":
		return "ListToolsResult"
	case "tools/call":
		return "CallToolResult"
	case "ping":
		return "EmptyResult"
	}
	return ""
}

// MessageDef returns the definition of a request or notification by method,
// "" when the schemas have none for it.
func MessageDef(method string) string {
	return map[string]string{
		"initialize":                       "InitializeRequest",
		"ping":                             "PingRequest",
		"server/discover":                  "DiscoverRequest",
		"tools/list":                       "ListToolsRequest",
		"tools/call":                       "CallToolRequest",
		"notifications/initialized":        "InitializedNotification",
		"notifications/cancelled":          "CancelledNotification",
		"notifications/progress":           "ProgressNotification",
		"notifications/tools/list_changed": "ToolListChangedNotification",
		"notifications/message":            "LoggingMessageNotification",
		"notifications/roots/list_changed": "RootsListChangedNotification",
		"roots/list":                       "ListRootsRequest",
		"sampling/createMessage":           "CreateMessageRequest",
		"elicitation/create":               "ElicitRequest",
		"logging/setLevel":                 "SetLevelRequest",
	}[method]
}

// envelope names differ across revisions.
func resultEnvelope(t testing.TB, rev string) string {
	if HasDef(t, rev, "JSONRPCResultResponse") {
		return "JSONRPCResultResponse"
	}
	return "JSONRPCResponse"
}

func errorEnvelope(t testing.TB, rev string) string {
	if HasDef(t, rev, "JSONRPCErrorResponse") {
		return "JSONRPCErrorResponse"
	}
	return "JSONRPCError"
}

// CheckServerMessage fails the test unless line, one line a server wrote, is
// valid in revision rev: a result response to a requestMethod request (the
// envelope, the method's result definition and, in 2026-07-28, the
// method's ...ResultResponse definition), an error response (with -32022 also
// UnsupportedProtocolVersionError where defined), or a notification or
// request by its method. A JSON array is checked element by element (a
// 2025-03-26 batch answer).
func CheckServerMessage(t testing.TB, rev, requestMethod string, line []byte) {
	t.Helper()
	for _, err := range checkLine(t, rev, requestMethod, line, true) {
		t.Errorf("spectest: server message invalid: %s\nline: %s", err, clip(line))
	}
}

// CheckClientMessage fails the test unless line, one line a client wrote, is
// a valid request, notification or response in revision rev.
func CheckClientMessage(t testing.TB, rev string, line []byte) {
	t.Helper()
	for _, err := range checkLine(t, rev, "", line, false) {
		t.Errorf("spectest: client message invalid: %s\nline: %s", err, clip(line))
	}
}

// CheckServerMessageErr is CheckServerMessage returning the problems instead
// of failing the test.
func CheckServerMessageErr(t testing.TB, rev, requestMethod string, line []byte) error {
	t.Helper()
	return joinErrs(checkLine(t, rev, requestMethod, line, true))
}

// CheckClientMessageErr is CheckClientMessage returning the problems instead
// of failing the test.
func CheckClientMessageErr(t testing.TB, rev string, line []byte) error {
	t.Helper()
	return joinErrs(checkLine(t, rev, "", line, false))
}

func joinErrs(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}

func checkLine(t testing.TB, rev, requestMethod string, line []byte, fromServer bool) []error {
	t.Helper()
	line = bytes.TrimSpace(line)
	if bytes.IndexByte(line, '\n') >= 0 {
		return []error{fmt.Errorf("line contains a raw newline")}
	}
	if len(line) > 0 && line[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			return []error{fmt.Errorf("not JSON: %v", err)}
		}
		if len(elems) == 0 {
			return []error{fmt.Errorf("empty batch")}
		}
		if !HasDef(t, rev, "JSONRPCBatchResponse") && !HasDef(t, rev, "JSONRPCBatchRequest") {
			return []error{fmt.Errorf("revision %s has no batches", rev)}
		}
		var errs []error
		for i, e := range elems {
			for _, err := range checkOne(t, rev, requestMethod, e, fromServer) {
				errs = append(errs, fmt.Errorf("element %d: %w", i, err))
			}
		}
		return errs
	}
	return checkOne(t, rev, requestMethod, line, fromServer)
}

func checkOne(t testing.TB, rev, requestMethod string, doc []byte, fromServer bool) []error {
	t.Helper()
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(doc, &probe); err != nil {
		return []error{fmt.Errorf("not a JSON object: %v", err)}
	}
	var errs []error
	add := func(def string, d []byte) {
		if err := Check(t, rev, def, d); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case probe.Method != nil:
		env := "JSONRPCNotification"
		if probe.ID != nil {
			env = "JSONRPCRequest"
		}
		add(env, doc)
		if def := MessageDef(*probe.Method); def != "" {
			if !HasDef(t, rev, def) {
				errs = append(errs, fmt.Errorf("revision %s has no %s (method %q)", rev, def, *probe.Method))
			} else {
				add(def, doc)
			}
		}
	case probe.Error != nil:
		add(errorEnvelope(t, rev), doc)
		if probe.Error.Code == -32022 && HasDef(t, rev, "UnsupportedProtocolVersionError") {
			add("UnsupportedProtocolVersionError", doc)
		}
	case probe.Result != nil:
		add(resultEnvelope(t, rev), doc)
		if fromServer {
			def := ResultDef(requestMethod)
			if def == "" {
				def = "Result"
			}
			// A 2026-07-28 request may be answered with a request for
			// input instead (tools/call, prompts/get, resources/read):
			// its ...ResultResponse allows either.
			var rt struct {
				ResultType string `json:"resultType"`
			}
			if json.Unmarshal(probe.Result, &rt) == nil && rt.ResultType == "input_required" && HasDef(t, rev, "InputRequiredResult") {
				def = "InputRequiredResult"
			}
			if !HasDef(t, rev, def) {
				errs = append(errs, fmt.Errorf("revision %s has no %s (answer to %q)", rev, def, requestMethod))
				break
			}
			add(def, probe.Result)
			if rd := def + "Response"; def != "EmptyResult" && HasDef(t, rev, rd) {
				add(rd, doc)
			}
		}
	default:
		errs = append(errs, fmt.Errorf("neither a request, a notification nor a response"))
	}
	return errs
}
