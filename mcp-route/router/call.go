package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
	"github.com/mcpipe/mcpipe/internal/toolenv"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
	"github.com/mcpipe/mcpipe/mcp-route/runner"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
	"github.com/mcpipe/mcpipe/mcp-route/worker"
)

// call answers tools/call: checks, then runs the tool on this request's
// goroutine.
func (s *server) call(ctx context.Context, req *core.Request) (any, error) {
	// Admission across conversations (the core's Limit counts one
	// conversation's requests; an HTTP server has one per request).
	if n := s.admitted.Add(1); n > int64(s.limit()) {
		s.admitted.Add(-1)
		s.observe("", "busy", 0, false, false)
		return s.busy(int(n-1), false)
	}
	defer s.admitted.Add(-1)
	if err := s.waitLoaded(ctx); err != nil {
		return codec.ErrorResult("canceled: server shutting down"), nil
	}
	var p codec.CallToolParams
	// Not json.Unmarshal: the frame was validated as it was read, and
	// encoding/json would check it all again before calling UnmarshalJSON.
	if err := p.UnmarshalJSON(req.Params); err != nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: %v", err)
	}
	if p.Name == "" {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: missing tool name")
	}
	t := s.opts.Registry.Lookup(p.Name)
	if s.opts.Upstreams != nil && (t == nil || s.opts.Upstreams.Has(p.Name)) {
		if ut := s.opts.Upstreams.Lookup(ctx, p.Name); ut != nil {
			if t != nil {
				return codec.ErrorResult("tool " + p.Name + " is not served: " + clashText(p.Name, ut)), nil
			}
			return s.forward(ctx, req, ut, &p)
		}
	}
	if t == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "unknown tool: %s", codec.QuoteClip(p.Name, maxNameEcho))
	}
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: arguments must be a JSON object")
	}
	if err := t.Input.Validate(args); err != nil {
		s.logCall(ctx, slog.LevelDebug, "call: invalid arguments", t.Def.Name, req.ID, slog.Any("error", err))
		return codec.ErrorResult("invalid arguments: " + err.Error()), nil
	}
	if s.opts.Confirm.Needs(&t.Def) {
		if refused := s.approve(ctx, req, &t.Def, args); refused != nil {
			return refused, nil
		}
	}
	ch := s.newChannel(ctx, req, t)
	defer ch.close()
	return s.run(ctx, req.Revision, req.ID, t, args, ch), nil
}

// maxNameEcho bounds how much of a tool name a client sent comes back in
// an error or goes into the log.
const maxNameEcho = 200

// forward passes a call of an upstream tool on (package mcp-route/upstream).
// It holds no MaxProcs slot: it starts no process, and a slow upstream must
// not starve the local tools; it counts for MaxQueue admission like any
// call, so a flood still gets "server busy".
func (s *server) forward(ctx context.Context, req *core.Request, t *upstream.Tool, p *codec.CallToolParams) (any, error) {
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: arguments must be a JSON object")
	}
	if s.opts.Confirm.NeedsUpstream(&t.Def) {
		if refused := s.approve(ctx, req, &t.Def, args); refused != nil {
			return refused, nil
		}
	}
	var progress func(codec.ProgressParams)
	if _, ok := p.ProgressToken(); ok {
		progress = func(pp codec.ProgressParams) { req.Progress(pp) }
	}
	ctx = upstream.WithAsker(ctx, ctx.Value(clientKey{}), askerOf(req))
	start := time.Now()
	res, outcome, err := s.opts.Upstreams.Call(ctx, t, args, req.Revision, progress)
	elapsed := time.Since(start)
	s.observe(t.Def.Name, outcome, elapsed, false, false)
	end := []slog.Attr{slog.String("upstream", t.Upstream.Name()), slog.String("outcome", outcome), slog.Duration("elapsed", elapsed.Round(time.Millisecond))}
	switch outcome {
	case "ok", "tool_error", "canceled":
		s.logCall(ctx, slog.LevelDebug, "call ended", t.Def.Name, req.ID, end...)
	default:
		if r, ok := res.(*codec.CallToolResult); ok && len(r.Content) > 0 {
			s.logCall(ctx, slog.LevelWarn, "call failed", t.Def.Name, req.ID, append(end, slog.String("error", r.Content[0].Text))...)
		}
	}
	return res, err
}

// run waits for a process slot, runs the tool and shapes its result.
func (s *server) run(ctx context.Context, rev string, id codec.ID, t *registry.Tool, args []byte, ch *callChannel) *codec.CallToolResult {
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
	var stdout []byte
	var failure string
	var routine bool // a failure that is no news for the operator
	outcome, killed := "ok", false
	defer func() { s.observe(t.Def.Name, outcome, time.Since(start), true, killed) }()
	if t.Run.Mode == registry.ModeWorker {
		stdout, failure, routine = s.runWorker(ctx, rev, t, args, ch, timeout, maxOut)
	} else {
		spec := s.spec(t, s.env(rev, t, args))
		spec.Stdin, spec.Timeout, spec.MaxOutput, spec.Progress = args, timeout, maxOut, ch.line
		spec.Answers = ch.pipe()
		res := runner.Run(ctx, spec)
		stdout = res.Stdout
		if !res.OK() {
			failure = res.Failure()
			if res.Canceled && errors.Is(context.Cause(ctx), core.ErrShutdown) {
				failure = "canceled: server shutting down"
			}
			// A non-zero exit is how a tool reports an ordinary error to
			// the model, and a cancelled call was asked for: routine. A
			// timeout, a signal, an output cap or a tool that cannot start
			// is worth a look.
			routine = res.Err == nil && (res.Canceled || (!res.TimedOut && !res.OutputExceeded && res.Signal == 0))
			killed = res.Canceled || res.TimedOut || res.OutputExceeded
			switch {
			case res.TimedOut:
				outcome = "timeout"
			case res.Canceled:
				outcome = "canceled"
			case res.Err != nil:
				outcome = "failed"
			}
		} else if len(res.Stderr) > 0 {
			s.logCall(ctx, slog.LevelDebug, "call: tool stderr", t.Def.Name, id, slog.String("stderr", runner.StderrTail(res.Stderr, 500)))
		}
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	if failure != "" {
		level := slog.LevelWarn
		if routine {
			level = slog.LevelDebug
		}
		if outcome == "ok" {
			outcome = "tool_error"
		}
		s.logCall(ctx, level, "call failed", t.Def.Name, id, slog.String("outcome", outcome), slog.Duration("elapsed", elapsed), slog.String("error", failure))
		if s.opts.Explain != nil && !killed {
			if note, attrs, ok := s.opts.Explain(failure); ok {
				failure += "\n" + note
				s.logCall(ctx, slog.LevelWarn, "confinement refused a path the tool needed", t.Def.Name, id, attrs...)
			}
		}
		return codec.ErrorResult(failure)
	}
	result, err := shape(rev, t, stdout)
	if err != nil {
		outcome = "tool_error"
		s.logCall(ctx, slog.LevelWarn, "call: bad result", t.Def.Name, id, slog.String("outcome", outcome), slog.Duration("elapsed", elapsed), slog.Any("error", err))
		return codec.ErrorResult(err.Error())
	}
	s.logCall(ctx, slog.LevelDebug, "call ended", t.Def.Name, id, slog.String("outcome", outcome), slog.Duration("elapsed", elapsed))
	// A content type the client's revision lacks becomes a text block.
	return codec.CallToolResultFor(rev, result)
}

// spec is how the tool's process starts, for an exec'd call (with the
// call's env) and a worker (with the worker env) alike: one place, so that
// both run the same way.
func (s *server) spec(t *registry.Tool, env []string) runner.Spec {
	lim := s.opts.Limits
	if t.Run.LimitMem > 0 {
		lim.Memory = t.Run.LimitMem
	}
	if t.Run.LimitPids > 0 {
		lim.Pids = t.Run.LimitPids
	}
	if t.Run.LimitCPU > 0 {
		lim.CPU = t.Run.LimitCPU
	}
	return runner.Spec{Path: t.Path, Dir: s.opts.Root, Env: env, Grace: s.opts.Grace, Spawn: s.opts.Spawn, Limits: lim}
}

// runWorker runs the call on a worker of the tool (mcp-route/worker) and
// returns the output, or the isError text and whether that failure is
// routine (the tool's own error, a cancellation).
func (s *server) runWorker(ctx context.Context, rev string, t *registry.Tool, args []byte, ch *callChannel, timeout time.Duration, maxOut int64) (out []byte, failure string, routine bool) {
	var progress func([]byte)
	if ch.progress {
		progress = ch.line
	}
	res := s.workers.Call(ctx, s.workerSpec(t, maxOut), worker.Call{
		Tool:            t.Def.Name,
		Arguments:       args,
		ProtocolVersion: rev,
		Progress:        progress,
		Channel:         ch.workerLine,
		Timeout:         timeout,
		MaxOutput:       maxOut,
	})
	switch res.Kind {
	case worker.Answered:
		return res.Output, "", false
	case worker.Canceled:
		if errors.Is(context.Cause(ctx), core.ErrShutdown) {
			return nil, "canceled: server shutting down", true
		}
		return nil, res.Failure, true
	case worker.ToolError:
		return nil, res.Failure, true
	}
	return nil, res.Failure, false
}

// workerSpec is how t's workers start. It is the same for every call of
// one registry.Tool (a reload makes new ones), so it is built once per
// tool: the worker environment is most of the router's own work per call.
func (s *server) workerSpec(t *registry.Tool, maxOut int64) worker.Spec {
	s.specMu.Lock()
	spec, ok := s.specs[t]
	s.specMu.Unlock()
	if ok {
		return spec
	}
	env := toolenv.Call{
		Root:    s.opts.Root,
		Env:     t.Run.Env,
		PassEnv: t.Run.PassEnv,
		Lookup:  s.opts.LookupEnv,
	}.Worker(s.opts.Env)
	spec = worker.Spec{
		Cmd:   runner.Command(s.spec(t, env)),
		Exec:  t.Exec,
		Stamp: t.Stamp,
		Limits: worker.Limits{
			Workers:     t.Run.Workers,
			Concurrency: t.Run.Concurrency,
			Idle:        t.Run.Idle,
			MaxCalls:    t.Run.MaxCalls,
			MaxRSS:      t.Run.MaxRSS,
		},
		// An output of maxOut bytes fits however it is escaped.
		MaxLine: int(6*maxOut) + 64<<10,
	}
	s.specMu.Lock()
	if len(s.specs) >= maxCachedSpecs {
		clear(s.specs) // tools of past reloads
	}
	s.specs[t] = spec
	s.specMu.Unlock()
	return spec
}

// maxCachedSpecs bounds the worker specs kept: past it, the specs of
// tools that reloads replaced are dropped with the rest.
const maxCachedSpecs = 1024

// env builds a tool's complete environment with package toolenv; later
// sources win: the base environment, the tool's run.env and run.passEnv,
// MCP_ARG_*, then the MCP_TOOL, MCP_ROOT and MCP_PROTOCOL_VERSION the router
// owns.
func (s *server) env(rev string, t *registry.Tool, args []byte) []string {
	return toolenv.Call{
		Tool:            t.Def.Name,
		Root:            s.opts.Root,
		ProtocolVersion: rev,
		Env:             t.Run.Env,
		PassEnv:         t.Run.PassEnv,
		Lookup:          s.opts.LookupEnv,
		Args:            args,
	}.Build(s.opts.Env)
}

// ArgEnv returns the MCP_ARG_<NAME> variables of an arguments object; see
// toolenv.ArgEnv, which it is.
func ArgEnv(args []byte) map[string]string { return toolenv.ArgEnv(args) }

// Limits on MCP_ARG_* variables (see toolenv.ArgEnv).
const (
	MaxArgEnvValue = toolenv.MaxArgEnvValue
	MaxArgEnvTotal = toolenv.MaxArgEnvTotal
)

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

// observe tells Options.Observe of a finished call.
func (s *server) observe(tool, outcome string, elapsed time.Duration, started, killed bool) {
	if s.opts.Observe != nil {
		s.opts.Observe(tool, outcome, elapsed, started, killed)
	}
}

// clientKey is the context key of who sent a tools/call: its
// subscriberOf (an HTTP session, else the conversation).
type clientKey struct{}

// askerOf passes an upstream's elicitation/create or sampling/createMessage
// (when --upstream-allow lets it) to the client of the call req: only a
// client that declared the capability, in a revision that has the method,
// on a transport with a way back (core.Request.CanAsk, Call).
func askerOf(req *core.Request) upstream.Asker {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, string, error) {
		mode := codec.ElicitForm
		if method == codec.MethodElicit {
			var p struct {
				Mode string `json:"mode"`
			}
			if json.Unmarshal(params, &p) == nil && p.Mode != "" {
				mode = p.Mode
			}
		}
		if !req.CanAsk(method, mode) {
			return nil, "it did not declare the capability, or its protocol revision (" + req.Revision + ") lacks " + method, nil
		}
		resp, err := req.Call(ctx, method, params)
		switch {
		case errors.Is(err, core.ErrNoBackChannel):
			return nil, "its transport carries no request to it", nil
		case err != nil:
			return nil, "", codec.Errorf(codec.CodeInternalError, "asking the client: %v", err)
		case resp.Error != nil:
			return nil, "", resp.Error
		}
		return resp.Result, "", nil
	}
}
