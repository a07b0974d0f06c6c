package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
	"github.com/mcpipe/mcpipe/internal/proc"
	"github.com/mcpipe/mcpipe/mcp-route/registry"
)

// The tool channel: what a tool tells mcp-route while its call runs, and
// what mcp-route answers. One JSON object per line, the same for every
// kind; an exec'd tool writes them on fd 3 and reads the answers on fd 4,
// a worker wraps them in its protocol (mcp-route/worker). The kind is
// told by the member present, checked in this order:
//
//	{"ask":"elicitation/create","id":1,"params":{...}}     a question (see below)
//	{"level":"info","data":ANY,"logger":"name"}             a log record ("message":"text" may stand for data)
//	{"progress":1,"total":4,"message":"..."}                progress
//
// A log record becomes notifications/message when the client asked for
// records at that level or above (logging/setLevel in a legacy session,
// _meta logLevel in a 2026-07-28 request; none otherwise). Its logger is
// the tool's name, or "TOOL/name" when the record names one, so a tool
// cannot speak as another or as mcp-route. At most MaxLogRecords records
// of one call reach the client; the rest are counted and logged.
//
// A question asks the client: "ask" is elicitation/create (params as MCP
// defines them: a form with message and requestedSchema, or mode "url"
// with message, url and elicitationId) or sampling/createMessage. The
// answer is one line on fd 4, echoing the question's id when it had one:
//
//	{"id":1,"result":{"action":"accept","content":{...}}}   the client's result, as MCP defines it
//	{"id":1,"error":"why there is no answer"}
//
// An error answer is a refusal the tool should report: the client did
// not declare the capability (mcp-route never asks for what a client
// cannot give), the revision has no such request (2026-07-28 asks through
// input_required results, which mcp-route does not offer yet), the
// transport cannot carry it (an HTTP request without a session or an SSE
// stream), the question is not valid MCP, the client answered with an
// error, or too many questions are waiting (MaxQueuedAsks), or a sampling
// request asks for more than the client declared (includeContext other
// than "none" needs sampling.context; tools and toolChoice, sampling.tools). Questions are
// asked one at a time, in order. Time spent waiting for the user counts
// toward the call's timeout.
const (
	MaxLogRecords = 1000
	MaxQueuedAsks = 4
)

// answerWriteTimeout bounds one write of an answer on fd 4: a tool that
// asks and never reads fills the pipe, and mcp-route gives up on it.
const answerWriteTimeout = 5 * time.Second

// callChannel is one call's half of the tool channel.
type callChannel struct {
	s        *server
	req      *core.Request
	tool     string
	progress bool // the client asked for progress

	// reply writes one answer line (newline added); nil: the tool has no
	// way to read an answer, and a question is only logged.
	reply        func(line []byte) error
	closeAnswers *os.File // fd 4's write end, closed by close
	workerReply  atomic.Pointer[func([]byte)]

	logs, dropped atomic.Int64

	ctx    context.Context // the call's: ends when the call does
	cancel context.CancelFunc
	asks   chan question
	start  sync.Once
	wg     sync.WaitGroup
}

type question struct {
	id     json.RawMessage
	method string
	mode   string
	params json.RawMessage
}

// newChannel returns the channel of call req of tool t; close it when the
// call's process is gone.
func (s *server) newChannel(ctx context.Context, req *core.Request, t *registry.Tool) *callChannel {
	_, progress := req.ProgressToken()
	c := &callChannel{s: s, req: req, tool: t.Def.Name, progress: progress, asks: make(chan question, MaxQueuedAsks)}
	c.ctx, c.cancel = context.WithCancel(ctx)
	if t.Run.Mode == registry.ModeWorker {
		c.reply = func(line []byte) error {
			f := c.workerReply.Load()
			if f == nil {
				return errors.New("no worker line to answer")
			}
			(*f)(line)
			return nil
		}
	}
	return c
}

// pipe opens fd 4 for an exec'd call: the read end goes to the tool
// (runner.Spec.Answers), the write end carries the answers. It returns
// nil when no pipe can be had: the tool then runs without fd 4.
func (c *callChannel) pipe() *os.File {
	// The read end only goes to the tool: out of the poller (ChildPipe).
	r, w, err := proc.ChildPipe(true)
	if err != nil {
		c.s.logCall(c.ctx, slog.LevelWarn, "call: no answer pipe (fd 4)", c.tool, c.req.ID, slog.Any("error", err))
		return nil
	}
	var mu sync.Mutex
	c.reply = func(line []byte) error {
		mu.Lock()
		defer mu.Unlock()
		w.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
		_, err := w.Write(append(line, '\n'))
		return err
	}
	c.closeAnswers = w
	return r
}

// workerLine is line for a worker's channel line (worker.Call.Channel):
// the answers go back through reply, the same for every line of a call.
func (c *callChannel) workerLine(line []byte, reply func(answer []byte)) {
	c.workerReply.CompareAndSwap(nil, &reply)
	c.line(line)
}

// close ends the channel: a question still waiting is given up, and fd
// 4's write end is closed.
func (c *callChannel) close() {
	c.cancel()
	c.wg.Wait()
	if c.closeAnswers != nil {
		c.closeAnswers.Close()
	}
	if n := c.dropped.Load(); n > 0 {
		c.s.logCall(c.ctx, slog.LevelWarn, "call: log records past the limit dropped", c.tool, c.req.ID, slog.Int64("dropped", n), slog.Int("limit", MaxLogRecords))
	}
}

// line handles one line of the channel. It is called from one goroutine
// per call, in order, and never waits for the client.
func (c *callChannel) line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var l struct {
		Ask      *string         `json:"ask"`
		ID       json.RawMessage `json:"id"`
		Params   json.RawMessage `json:"params"`
		Level    *string         `json:"level"`
		Data     json.RawMessage `json:"data"`
		Logger   *string         `json:"logger"`
		Progress *float64        `json:"progress"`
		Total    *float64        `json:"total"`
		Message  *string         `json:"message"`
	}
	if line[0] != '{' || json.Unmarshal(line, &l) != nil {
		c.malformed(line, "not a JSON object")
		return
	}
	switch {
	case l.Ask != nil:
		c.question(question{id: l.ID, method: *l.Ask, params: l.Params})
	case l.Level != nil:
		data := l.Data
		if len(data) == 0 && l.Message != nil {
			data, _ = json.Marshal(*l.Message)
		}
		if _, ok := codec.LogLevelRank(*l.Level); !ok || len(data) == 0 {
			c.malformed(line, fmt.Sprintf("a log record needs a level (one of %v) and data or message", codec.LogLevels))
			return
		}
		c.log(*l.Level, l.Logger, data)
	case l.Progress != nil:
		if !c.progress {
			return
		}
		p := codec.ProgressParams{Progress: *l.Progress, Total: l.Total}
		if l.Message != nil {
			p.Message = *l.Message
		}
		c.req.Progress(p)
	default:
		c.malformed(line, `none of "ask", "level" and "progress"`)
	}
}

func (c *callChannel) malformed(line []byte, why string) {
	c.s.logCall(c.ctx, slog.LevelWarn, "call: channel line ignored", c.tool, c.req.ID, slog.String("why", why), slog.String("line", clip(line)))
}

// log sends one record, within MaxLogRecords.
func (c *callChannel) log(level string, name *string, data json.RawMessage) {
	if c.logs.Add(1) > MaxLogRecords {
		c.dropped.Add(1)
		return
	}
	logger := c.tool
	if name != nil && *name != "" {
		logger += "/" + *name
	}
	c.req.Log(level, logger, data)
}

// question queues q for the asking goroutine, or refuses it at once.
func (c *callChannel) question(q question) {
	if c.reply == nil {
		c.s.logCall(c.ctx, slog.LevelWarn, "call: the tool asked, but it has no answer channel here", c.tool, c.req.ID, slog.String("method", q.method))
		return
	}
	if q.method != codec.MethodElicit && q.method != codec.MethodCreateMessage {
		c.refuse(q, fmt.Sprintf("unknown question %s: ask is %q or %q", codec.QuoteClip(q.method, 60), codec.MethodElicit, codec.MethodCreateMessage))
		return
	}
	if !bytes.HasPrefix(bytes.TrimSpace(q.params), []byte("{")) {
		c.refuse(q, "a question needs params, a JSON object: the params of "+q.method)
		return
	}
	if q.method == codec.MethodElicit {
		var p struct {
			Mode string `json:"mode"`
		}
		json.Unmarshal(q.params, &p)
		q.mode = p.Mode
		if q.mode == "" {
			q.mode = codec.ElicitForm
		}
	}
	if why := c.cannotAsk(q); why != "" {
		c.refuse(q, why)
		return
	}
	if q.method == codec.MethodCreateMessage {
		if why := c.samplingBeyondCaps(q.params); why != "" {
			c.refuse(q, why)
			return
		}
	}
	c.start.Do(func() {
		c.wg.Add(1)
		go c.askLoop()
	})
	select {
	case c.asks <- q:
	default:
		c.refuse(q, fmt.Sprintf("too many questions waiting (%d): wait for an answer before asking again", MaxQueuedAsks))
	}
}

// cannotAsk says why the client cannot be asked q, "" when it can.
func (c *callChannel) cannotAsk(q question) string {
	if c.req.CanAsk(q.method, q.mode) {
		return ""
	}
	rev := c.req.Revision
	what := "sampling"
	if q.method == codec.MethodElicit {
		what = "elicitation (" + q.mode + " mode)"
	}
	switch {
	case codec.IsModernRevision(rev):
		return fmt.Sprintf("cannot ask the client for %s: this request is of revision %s, where a server asks through an input_required result, which mcp-route does not offer yet", what, rev)
	case q.method == codec.MethodElicit && (rev < codec.Rev20250618 || q.mode == codec.ElicitURL && rev < codec.Rev20251125):
		return fmt.Sprintf("cannot ask the client for %s: the session's protocol revision %s does not have it", what, rev)
	}
	return fmt.Sprintf("cannot ask the client for %s: the client did not declare that capability", what)
}

// samplingBeyondCaps says what of a sampling request the client did not
// declare, "" when nothing: includeContext other than "none" needs
// sampling.context, tools or toolChoice sampling.tools (2025-11-25). A
// tool that had the client include every server's context would read it
// in the model's answer.
func (c *callChannel) samplingBeyondCaps(params json.RawMessage) string {
	var p struct {
		IncludeContext string          `json:"includeContext"`
		Tools          json.RawMessage `json:"tools"`
		ToolChoice     json.RawMessage `json:"toolChoice"`
	}
	json.Unmarshal(params, &p)
	var sampling map[string]json.RawMessage
	json.Unmarshal(c.req.ClientCapabilities()["sampling"], &sampling)
	declared := func(name string) bool {
		return bytes.HasPrefix(bytes.TrimSpace(sampling[name]), []byte("{"))
	}
	switch {
	case p.IncludeContext != "" && p.IncludeContext != "none" && !declared("context"):
		return fmt.Sprintf("cannot ask the client for sampling with includeContext %s: the client did not declare sampling.context", codec.QuoteClip(p.IncludeContext, 40))
	case (len(p.Tools) > 0 || len(p.ToolChoice) > 0) && !declared("tools"):
		return "cannot ask the client for sampling with tools or toolChoice: the client did not declare sampling.tools"
	}
	return ""
}

// askLoop asks the queued questions one at a time until the call ends.
func (c *callChannel) askLoop() {
	defer c.wg.Done()
	for {
		select {
		case q := <-c.asks:
			c.ask(q)
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *callChannel) ask(q question) {
	m, err := codec.NewRequest(codec.StringID("check"), q.method, q.params)
	if err == nil {
		err = codec.CheckMessage(c.req.Revision, codec.FromServer, m, q.method)
	}
	if err != nil {
		c.refuse(q, "the question is not valid: "+err.Error())
		return
	}
	resp, err := c.req.Call(c.ctx, q.method, q.params)
	switch {
	case errors.Is(err, core.ErrNoBackChannel):
		c.refuse(q, "cannot ask the client: this request's transport cannot carry a question (over HTTP it takes a session and a client that accepts text/event-stream)")
		return
	case err != nil:
		c.s.logCall(c.ctx, slog.LevelDebug, "call: question not answered", c.tool, c.req.ID, slog.String("method", q.method), slog.Any("error", err))
		c.refuse(q, "no answer: "+err.Error())
		return
	case resp.Error != nil:
		c.refuse(q, fmt.Sprintf("the client refused: %s (%d)", resp.Error.Message, resp.Error.Code))
		return
	}
	c.answer(q, "result", resp.Result)
}

func (c *callChannel) refuse(q question, why string) {
	c.s.logCall(c.ctx, slog.LevelDebug, "call: question refused", c.tool, c.req.ID, slog.String("method", q.method), slog.String("why", why))
	b, _ := json.Marshal(why)
	c.answer(q, "error", b)
}

// answer writes {"id":ID,KEY:VALUE} on the answer channel.
func (c *callChannel) answer(q question, key string, value json.RawMessage) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(q.id) > 0 {
		b.WriteString(`"id":`)
		json.Compact(&b, q.id) // one line, whatever the tool wrote
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "%q:", key)
	json.Compact(&b, value)
	b.WriteByte('}')
	if err := c.reply(b.Bytes()); err != nil {
		c.s.logCall(c.ctx, slog.LevelDebug, "call: answer not delivered", c.tool, c.req.ID, slog.String("method", q.method), slog.Any("error", err))
	}
}
