package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/runner"
)

// call handles tools/call: checks, then runs the tool on its own goroutine
// and answers through ok/reply when it finishes.
func (s *server) call(rev string, id codec.ID, params json.RawMessage, ok func(any), fail func(*codec.Error), reply func(*codec.Message)) {
	var p codec.CallToolParams
	if err := json.Unmarshal(params, &p); err != nil {
		fail(codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err))
		return
	}
	if p.Name == "" {
		fail(codec.Errorf(codec.CodeInvalidParams, "invalid params: missing tool name"))
		return
	}
	t := s.opts.Registry.Lookup(p.Name)
	if t == nil {
		fail(codec.Errorf(codec.CodeInvalidParams, "unknown tool: %q", p.Name))
		return
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		fail(codec.Errorf(codec.CodeInvalidParams, "invalid params: arguments must be a JSON object"))
		return
	}
	if err := t.Input.Validate(args); err != nil {
		s.opts.Debugf("call %s %s: invalid arguments: %v", id, t.Def.Name, err)
		ok(codec.ErrorResult("invalid arguments: " + err.Error()))
		return
	}
	token, hasToken := p.ProgressToken()

	ctx, cancel := context.WithCancel(s.callsCtx)
	pc := &pending{cancel: cancel}
	key := id.Key()
	s.mu.Lock()
	if _, dup := s.inflight[key]; dup {
		s.mu.Unlock()
		cancel()
		fail(codec.Errorf(codec.CodeInvalidRequest, "invalid request: id %s is already in use by a pending call", id))
		return
	}
	s.inflight[key] = pc
	s.mu.Unlock()

	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		defer cancel()
		var progress func([]byte)
		if hasToken {
			progress = func(line []byte) { s.progress(id, t, pc, token, line) }
		}
		result := s.run(ctx, rev, id, t, args, progress)
		s.mu.Lock()
		delete(s.inflight, key)
		cancelled := pc.cancelled
		s.mu.Unlock()
		if cancelled {
			reply(nil) // the client asked us to say nothing more
			return
		}
		ok(result)
	}()
}

// run waits for a process slot, runs the tool and shapes its result.
func (s *server) run(ctx context.Context, rev string, id codec.ID, t *registry.Tool, args []byte, progress func([]byte)) *codec.CallToolResult {
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	case <-ctx.Done():
		return codec.ErrorResult("canceled: server shutting down")
	}
	if ctx.Err() != nil {
		return codec.ErrorResult("canceled: server shutting down")
	}
	timeout, maxOut := s.opts.Timeout, s.opts.MaxOutput
	if t.Run.Timeout > 0 {
		timeout = t.Run.Timeout
	}
	if t.Run.MaxOutput > 0 {
		maxOut = t.Run.MaxOutput
	}
	start := time.Now()
	res := runner.Run(ctx, runner.Spec{
		Path:      t.Path,
		Dir:       s.opts.Root,
		Env:       s.env(rev, t, args),
		Stdin:     args,
		Timeout:   timeout,
		Grace:     s.opts.Grace,
		MaxOutput: maxOut,
		Progress:  progress,
	})
	elapsed := time.Since(start).Round(time.Millisecond)
	if !res.OK() {
		msg := res.Failure()
		if res.Canceled {
			s.mu.Lock()
			shutting := s.shuttingDown
			s.mu.Unlock()
			if shutting {
				msg = "canceled: server shutting down"
			}
		}
		// A non-zero exit is how a tool reports an ordinary error to the
		// model, and a cancelled call was asked for: routine. A timeout, a
		// signal, an output cap or a tool that cannot start is worth a look.
		logf := s.opts.Logf
		if res.Err == nil && (res.Canceled || (!res.TimedOut && !res.OutputExceeded && res.Signal == 0)) {
			logf = s.opts.Debugf
		}
		logf("call %s %s: failed after %v: %s", id, t.Def.Name, elapsed, oneLine(msg))
		return codec.ErrorResult(msg)
	}
	if len(res.Stderr) > 0 {
		s.opts.Debugf("call %s %s: stderr: %s", id, t.Def.Name, oneLine(runner.StderrTail(res.Stderr, 500)))
	}
	result, err := shape(rev, t, res.Stdout)
	if err != nil {
		s.opts.Logf("call %s %s: bad result after %v: %v", id, t.Def.Name, elapsed, err)
		return codec.ErrorResult(err.Error())
	}
	s.opts.Debugf("call %s %s: ok in %v", id, t.Def.Name, elapsed)
	// A content type the client's revision lacks becomes a text block.
	return codec.CallToolResultFor(rev, result)
}

// progress turns one fd-3 line into notifications/progress.
func (s *server) progress(id codec.ID, t *registry.Tool, pc *pending, token json.RawMessage, line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	var p struct {
		Progress *float64 `json:"progress"`
		Total    *float64 `json:"total"`
		Message  *string  `json:"message"`
	}
	if err := json.Unmarshal(line, &p); err != nil || p.Progress == nil {
		s.opts.Logf("call %s %s: malformed progress line ignored: %q", id, t.Def.Name, clip(line))
		return
	}
	params := codec.ProgressParams{ProgressToken: token, Progress: *p.Progress, Total: p.Total}
	if p.Message != nil {
		params.Message = *p.Message
	}
	m, err := codec.NewNotification(codec.MethodProgress, params)
	if err != nil {
		return
	}
	s.mu.Lock()
	cancelled := pc.cancelled
	s.mu.Unlock()
	if !cancelled {
		s.write(m)
	}
}

// env builds a tool's complete environment; later sources win: the base
// environment, the tool's run.env and run.passEnv, MCP_ARG_*, then the
// MCP_TOOL, MCP_ROOT and MCP_PROTOCOL_VERSION the router owns.
func (s *server) env(rev string, t *registry.Tool, args []byte) []string {
	vars := map[string]string{}
	for _, kv := range s.opts.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for k, v := range t.Run.Env {
		vars[k] = v
	}
	for _, k := range t.Run.PassEnv {
		if v, ok := s.opts.LookupEnv(k); ok {
			vars[k] = v
		}
	}
	for k, v := range ArgEnv(args) {
		vars[k] = v
	}
	vars["MCP_TOOL"] = t.Def.Name
	vars["MCP_ROOT"] = s.opts.Root
	vars["MCP_PROTOCOL_VERSION"] = rev
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// ArgEnv returns MCP_ARG_<NAME> variables for the top-level scalar members
// of the arguments object: strings as they are, numbers as their JSON text,
// booleans as "true"/"false". NAME is the member name upper-cased with every
// character outside A-Z 0-9 _ turned into "_". Null, objects and arrays are
// left out, and so are strings holding NUL (an environment cannot carry it)
// and values longer than MaxArgEnvValue bytes, and once MaxArgEnvTotal bytes
// are used the remaining members (in name order): the kernel refuses to exec
// with oversized variables, and the tool can always read its stdin. When two
// names map to the same variable, the one sorting last wins.
func ArgEnv(args []byte) map[string]string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]string{}
	total := 0
	for _, k := range keys {
		raw := bytes.TrimSpace(obj[k])
		if len(raw) == 0 {
			continue
		}
		var val string
		switch raw[0] {
		case '"':
			if json.Unmarshal(raw, &val) != nil || strings.ContainsRune(val, 0) {
				continue
			}
		case 't', 'f':
			val = string(raw)
		case 'n', '{', '[':
			continue
		default:
			val = string(raw)
		}
		name := "MCP_ARG_" + envName(k)
		if len(val) > MaxArgEnvValue || total+len(name)+len(val) > MaxArgEnvTotal {
			continue
		}
		total += len(name) + len(val) + 2
		out[name] = val
	}
	return out
}

// Limits on MCP_ARG_* variables (see ArgEnv). Linux refuses a single
// variable over 128 KiB and all of argv+env over a quarter of the stack limit.
const (
	MaxArgEnvValue = 32 << 10
	MaxArgEnvTotal = 256 << 10
)

func envName(k string) string {
	b := []byte(strings.ToUpper(k))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// shape turns a successful tool's stdout into its result, per result mode.
func shape(rev string, t *registry.Tool, stdout []byte) (*codec.CallToolResult, error) {
	switch t.Run.Result {
	case registry.ResultJSON:
		v := bytes.TrimSpace(stdout)
		if !json.Valid(v) {
			return nil, fmt.Errorf("tool output is not one JSON value (result mode json): %s", snippet(v))
		}
		var compact bytes.Buffer
		json.Compact(&compact, v)
		r := &codec.CallToolResult{Content: []codec.Content{codec.TextContent(compact.String())}}
		if t.Output != nil {
			if err := t.Output.ValidateAs("field", compact.Bytes()); err != nil {
				return nil, fmt.Errorf("tool output does not match its outputSchema: %v", err)
			}
		}
		if compact.Bytes()[0] == '{' || codec.IsModernRevision(rev) {
			r.StructuredContent = json.RawMessage(compact.Bytes())
		}
		return r, nil
	case registry.ResultMCP:
		r, err := parseResult(stdout)
		if err != nil {
			return nil, fmt.Errorf("tool output is not a valid CallToolResult (result mode mcp): %v", err)
		}
		if t.Output != nil && len(r.StructuredContent) > 0 && !r.IsError {
			if err := t.Output.ValidateAs("field", r.StructuredContent); err != nil {
				return nil, fmt.Errorf("tool output does not match its outputSchema: %v", err)
			}
		}
		if len(r.StructuredContent) > 0 && r.StructuredContent[0] != '{' && !codec.IsModernRevision(rev) {
			r.StructuredContent = nil
		}
		return r, nil
	default:
		if !utf8.Valid(stdout) {
			return nil, fmt.Errorf("tool output is not valid UTF-8 (byte %d); use result mode json or mcp with base64 content for binary data", invalidAt(stdout))
		}
		return codec.TextResult(string(stdout)), nil
	}
}

// parseResult decodes a whole CallToolResult written by a tool and checks
// its shape with codec.CheckToolResult, the one place for the rule: content is
// an array of blocks, each of a known type with the members that type
// requires (text: text; image, audio: data and mimeType; resource_link: uri
// and name; resource: resource.uri and its text or blob). It checks against
// the newest legacy revision, which has every content type; the result is
// fitted to the client's revision later (codec.CallToolResultFor).
func parseResult(stdout []byte) (*codec.CallToolResult, error) {
	v := bytes.TrimSpace(stdout)
	// CheckMessage walks JSON that is known to be valid.
	if len(v) == 0 || v[0] != '{' || !json.Valid(v) {
		return nil, fmt.Errorf("not a JSON object: %s", snippet(v))
	}
	if err := codec.CheckToolResult(v); err != nil {
		return nil, err
	}
	r := new(codec.CallToolResult)
	if err := json.Unmarshal(v, r); err != nil {
		return nil, err
	}
	r.ResultType = "" // the router decides: always "complete" for modern revisions
	return r, nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func snippet(b []byte) string {
	if len(b) == 0 {
		return "(empty)"
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", `\r`), "\n", `\n`)
}
