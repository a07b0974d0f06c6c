package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/codec/client"
	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-call/args"
)

// session runs one command against one server.
type session struct {
	opts   options
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer // locked

	conn     *client.Conn
	protoN   atomic.Int64      // invalid lines the server wrote (OnProtocolError)
	tools    []codec.Tool      // cached tools/list
	rawTools []json.RawMessage // the same, as the server sent them
}

func (s *session) errorf(format string, a ...any) {
	fmt.Fprintf(s.stderr, "%s: %s\n", prog, fmt.Sprintf(format, a...))
}

// fail prints err and returns its exit status. Invalid lines from the
// server win over a later timeout or disconnect (status 2, not 3): they are
// the likelier cause, and --help promises 2 for them. An interrupt is the
// user's and keeps 3.
func (s *session) fail(err error) int {
	s.errorf("%s", s.explain(err))
	code := exitCode(err)
	if code == exitServer && s.protoN.Load() > 0 && !errors.Is(err, context.Canceled) {
		code = exitProtocol
	}
	return code
}

// explain words err for the one stderr line; a server that went away is
// given a moment to be reaped so the line can say how it ended.
func (s *session) explain(err error) string {
	msg := describeErr(err, s.opts.timeout)
	if s.conn != nil && s.conn.Proc != nil && errors.Is(err, client.ErrClosed) {
		s.conn.Proc.WaitExit(context.Background(), client.DefaultGrace)
		msg += " (server " + s.conn.Proc.State() + ")"
	}
	return msg
}

// reqCtx bounds one step by --timeout.
func (s *session) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.opts.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.opts.timeout)
}

// dialer connects within ctx: to a server it starts, or to a URL.
type dialer func(ctx context.Context, copts client.Options) (*client.Conn, *client.Info, error)

func (s *session) connected(ctx context.Context, dial dialer, name string, cmdArgs []string) int {
	copts := client.Options{
		Era:             s.opts.era,
		ProtocolVersion: s.opts.version,
		ClientInfo:      codec.Implementation{Name: prog, Version: version.Number},
		OnProtocolError: func(err error) {
			s.protoN.Add(1)
			s.errorf("%v", err)
		},
		OnNotification: s.notification,
		OnWarning:      func(msg string) { s.errorf("%s", msg) },
	}
	if s.opts.trace {
		copts.Trace = func(sent bool, frame []byte) {
			dir := "<"
			if sent {
				dir = ">"
			}
			s.errorf("%s %s", dir, frame)
		}
	}
	// The probe shares the connect deadline (--timeout) with initialize:
	// leave half of a short --timeout for the fallback.
	if s.opts.timeout > 0 && s.opts.timeout/2 < client.DefaultProbeTimeout {
		copts.ProbeTimeout = s.opts.timeout / 2
	}
	// Read a call's "-" arguments before starting the server: stdin is ours.
	if name == "call" && len(cmdArgs) == 2 && cmdArgs[1] == "-" {
		b, err := io.ReadAll(s.stdin)
		if err != nil {
			return s.fail(fmt.Errorf("reading arguments from stdin: %w", err))
		}
		cmdArgs = []string{cmdArgs[0], string(bytes.TrimSpace(b))}
		if len(cmdArgs[1]) == 0 {
			cmdArgs = cmdArgs[:1]
		}
	}
	cctx, cancel := s.reqCtx(ctx)
	conn, info, err := dial(cctx, copts)
	cancel()
	if err != nil {
		return s.fail(err)
	}
	s.conn = conn
	defer conn.Close()

	var code int
	switch name {
	case "tools":
		code = s.cmdTools(ctx)
	case "describe":
		code = s.cmdDescribe(ctx, cmdArgs[0])
	case "call":
		code = s.cmdCall(ctx, cmdArgs[0], cmdArgs[1:])
	case "discover":
		code = s.cmdDiscover(info)
	case "ping":
		code = s.cmdPing(ctx)
	case "resources":
		code = s.cmdList(ctx, "resources/list", "resources", "uri")
	case "templates":
		code = s.cmdList(ctx, "resources/templates/list", "resourceTemplates", "uriTemplate")
	case "prompts":
		code = s.cmdList(ctx, "prompts/list", "prompts", "name")
	case "read":
		code = s.cmdRead(ctx, cmdArgs[0])
	case "prompt":
		code = s.cmdPrompt(ctx, cmdArgs[0], cmdArgs[1:])
	case "complete":
		value := ""
		if len(cmdArgs) == 4 {
			value = cmdArgs[3]
		}
		code = s.cmdComplete(ctx, cmdArgs[0], cmdArgs[1], cmdArgs[2], value)
	case "script":
		code = s.cmdScript(ctx)
	}
	if n := s.protoN.Load(); n > 0 {
		s.errorf("the server wrote %d invalid line(s) on stdout", n)
		// As in fail: they win over a timeout or disconnect, not over an
		// interrupt.
		code = max(code, exitProtocol)
		if code == exitServer && ctx.Err() == nil {
			code = exitProtocol
		}
	}
	return code
}

func (s *session) notification(m *codec.Message) {
	if !s.opts.progress || m.Method != codec.MethodProgress {
		return
	}
	var p codec.ProgressParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return
	}
	msg := fmt.Sprintf("progress %g", p.Progress)
	if p.Total != nil {
		msg += fmt.Sprintf("/%g", *p.Total)
	}
	if p.Message != "" {
		msg += ": " + p.Message
	}
	s.errorf("%s", msg)
}

// listTools fetches tools/list once per session.
func (s *session) listTools(ctx context.Context) ([]codec.Tool, error) {
	if s.tools != nil {
		return s.tools, nil
	}
	rctx, cancel := s.reqCtx(ctx)
	defer cancel()
	raws, err := s.conn.ListToolsRaw(rctx)
	if err != nil {
		return nil, err
	}
	tools := make([]codec.Tool, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &tools[i]); err != nil {
			return nil, &client.ProtocolError{Msg: fmt.Sprintf("tools/list: tool %d is not a Tool: %v", i, err)}
		}
	}
	s.tools, s.rawTools = tools, raws
	return tools, nil
}

// findTool returns the named tool's index or a usage-class error listing
// the names.
func (s *session) findTool(ctx context.Context, name string) (int, error) {
	tools, err := s.listTools(ctx)
	if err != nil {
		return -1, err
	}
	names := make([]string, len(tools))
	for i := range tools {
		if tools[i].Name == name {
			return i, nil
		}
		names[i] = tools[i].Name
	}
	sort.Strings(names)
	return -1, usagef("no tool named %q (the server has: %s)", name, strings.Join(names, ", "))
}

// printJSON prints v indented. Every value goes through codec.Marshal, so
// "<", ">" and "&" stay as the server wrote them (json.MarshalIndent would
// print \u003c) whichever command prints.
func (s *session) printJSON(v any) error {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = codec.Marshal(v); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := s.stdout.Write(buf.Bytes())
	return err
}

func (s *session) cmdTools(ctx context.Context) int {
	tools, err := s.listTools(ctx)
	if err != nil {
		return s.fail(err)
	}
	if s.opts.json {
		raw, err := codec.Marshal(s.rawTools)
		if err == nil {
			err = s.printJSON(json.RawMessage(raw))
		}
		if err != nil {
			return s.fail(err)
		}
		return exitOK
	}
	for _, t := range tools {
		fmt.Fprintln(s.stdout, t.Name)
	}
	return exitOK
}

func (s *session) cmdDescribe(ctx context.Context, name string) int {
	i, err := s.findTool(ctx, name)
	if err != nil {
		return s.fail(err)
	}
	if s.opts.json {
		if err := s.printJSON(s.rawTools[i]); err != nil {
			return s.fail(err)
		}
		return exitOK
	}
	io.WriteString(s.stdout, describeTool(&s.tools[i]))
	return exitOK
}

// prepareCall resolves the tool and builds its arguments.
func (s *session) prepareCall(ctx context.Context, name string, words []string) (json.RawMessage, error) {
	i, err := s.findTool(ctx, name)
	if err != nil {
		return nil, err
	}
	a, err := args.Build(words, s.tools[i].InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return a, nil
}

func (s *session) callTool(ctx context.Context, name string, a json.RawMessage) (*codec.CallToolResult, json.RawMessage, error) {
	var copts client.CallOptions
	if s.opts.progress {
		copts.ProgressToken = "mcp-call"
	}
	rctx, cancel := s.reqCtx(ctx)
	defer cancel()
	return s.conn.CallTool(rctx, name, a, copts)
}

func (s *session) cmdCall(ctx context.Context, name string, words []string) int {
	a, err := s.prepareCall(ctx, name, words)
	if err != nil {
		return s.fail(err)
	}
	res, raw, err := s.callTool(ctx, name, a)
	if err != nil {
		return s.fail(err)
	}
	if s.opts.json {
		if err := s.printJSON(raw); err != nil {
			return s.fail(err)
		}
	}
	if res.IsError {
		writeText(s.stderr, res.ErrorMessage())
		return exitIsError
	}
	switch {
	case s.opts.json:
	case s.opts.structured:
		if len(res.StructuredContent) == 0 {
			return s.fail(&client.ProtocolError{Msg: name + ": result has no structuredContent"})
		}
		if err := s.printJSON(res.StructuredContent); err != nil {
			return s.fail(err)
		}
	default:
		writeText(s.stdout, res.Text())
		s.noteOtherBlocks(name, res)
	}
	return exitOK
}

// writeText prints text with exactly one trailing newline; nothing for "".
func writeText(w io.Writer, text string) {
	if text == "" {
		return
	}
	io.WriteString(w, strings.TrimSuffix(text, "\n")+"\n")
}

// noteOtherBlocks says on stderr what the text output left out.
func (s *session) noteOtherBlocks(name string, res *codec.CallToolResult) {
	var other []string
	for _, t := range res.ContentTypes() {
		if t != codec.ContentText {
			other = append(other, t)
		}
	}
	if len(other) > 0 {
		s.errorf("%s: result also has %s block(s); use --json to see them", name, strings.Join(slices.Compact(other), ", "))
	}
}

func (s *session) cmdPing(ctx context.Context) int {
	rctx, cancel := s.reqCtx(ctx)
	defer cancel()
	if err := s.conn.Ping(rctx); err != nil {
		return s.fail(err)
	}
	fmt.Fprintln(s.stdout, "ok")
	return exitOK
}

func (s *session) cmdDiscover(info *client.Info) int {
	if s.opts.json {
		out := struct {
			Era             string          `json:"era"`
			ProtocolVersion string          `json:"protocolVersion"`
			Probe           string          `json:"probe"`
			Result          json.RawMessage `json:"result"`
		}{info.Era, info.ProtocolVersion, info.Probe, info.Result}
		if err := s.printJSON(out); err != nil {
			return s.fail(err)
		}
		return exitOK
	}
	var b strings.Builder
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-18s %s\n", k+":", v)
		}
	}
	row("era", info.Era)
	row("protocol version", info.ProtocolVersion)
	if info.Era == client.EraModern {
		row("supported", strings.Join(info.SupportedVersions, ", "))
	}
	srv := strings.TrimSpace(info.ServerInfo.Name + " " + info.ServerInfo.Version)
	if info.ServerInfo.Title != "" {
		srv += " (" + info.ServerInfo.Title + ")"
	}
	row("server", srv)
	row("capabilities", capabilities(info.Result))
	row("instructions", oneLine(info.Instructions))
	row("probe", info.Probe)
	io.WriteString(s.stdout, b.String())
	return exitOK
}

// capabilities renders result.capabilities as "tools (listChanged), logging".
func capabilities(result json.RawMessage) string {
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil || len(r.Capabilities) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(r.Capabilities))
	for k := range r.Capabilities {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		var sub map[string]any
		_ = json.Unmarshal(r.Capabilities[k], &sub)
		var flags []string
		for f, v := range sub {
			if v == true {
				flags = append(flags, f)
			}
		}
		sort.Strings(flags)
		if len(flags) > 0 {
			k += " (" + strings.Join(flags, ", ") + ")"
		}
		parts = append(parts, k)
	}
	return strings.Join(parts, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// describeTool renders a definition for people.
func describeTool(t *codec.Tool) string {
	var b strings.Builder
	b.WriteString(t.Name)
	if t.Title != "" {
		b.WriteString(" — " + t.Title)
	}
	b.WriteString("\n")
	if d := strings.TrimSpace(t.Description); d != "" {
		for _, l := range strings.Split(d, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("\narguments:")
	b.WriteString(renderProps(t.InputSchema))
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		b.WriteString("\noutput (structuredContent):")
		b.WriteString(renderProps(t.OutputSchema))
	}
	if a := t.Annotations; a != nil {
		var hints []string
		add := func(p *bool, yes, no string) {
			if p != nil {
				hints = append(hints, map[bool]string{true: yes, false: no}[*p])
			}
		}
		add(a.ReadOnlyHint, "read-only", "may write")
		add(a.DestructiveHint, "destructive", "not destructive")
		add(a.IdempotentHint, "idempotent", "not idempotent")
		add(a.OpenWorldHint, "open world", "closed world")
		if len(hints) > 0 {
			fmt.Fprintf(&b, "\nhints: %s\n", strings.Join(hints, ", "))
		}
	}
	return b.String()
}

// renderProps lists an object schema's properties, one per line, required
// ones first: "  name (type, required, default 3)  description".
func renderProps(schema json.RawMessage) string {
	var sch struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Default     any    `json:"default"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &sch); err != nil {
		return " " + compact(schema) + "\n"
	}
	if len(sch.Properties) == 0 {
		return " none\n"
	}
	var b strings.Builder
	b.WriteString("\n")
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	// Required first, then alphabetical: what a caller must give leads.
	sort.Slice(names, func(i, j int) bool {
		ri, rj := slices.Contains(sch.Required, names[i]), slices.Contains(sch.Required, names[j])
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		p := sch.Properties[n]
		var attrs []string
		switch ty := p.Type.(type) {
		case string:
			attrs = append(attrs, ty)
		case []any:
			var ts []string
			for _, x := range ty {
				ts = append(ts, fmt.Sprint(x))
			}
			attrs = append(attrs, strings.Join(ts, "|"))
		}
		if slices.Contains(sch.Required, n) {
			attrs = append(attrs, "required")
		}
		if p.Default != nil {
			d, _ := json.Marshal(p.Default)
			attrs = append(attrs, "default "+string(d))
		}
		if len(p.Enum) > 0 {
			e, _ := json.Marshal(p.Enum)
			attrs = append(attrs, "one of "+string(e))
		}
		fmt.Fprintf(&b, "  %s", n)
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(attrs, ", "))
		}
		if p.Description != "" {
			fmt.Fprintf(&b, "  %s", oneLine(p.Description))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	s := buf.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// statusOf maps a call's outcome to its exit status.
func statusOf(res *codec.CallToolResult, err error) int {
	if err != nil {
		return exitCode(err)
	}
	if res.IsError {
		return exitIsError
	}
	return exitOK
}

// connectionGone reports whether err means no further request can work.
func connectionGone(err error) bool {
	return errors.Is(err, client.ErrClosed)
}
