package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// The tool channel (mcp-route/README.md, "The tool channel"): besides
// progress, a tool logs (Log) and asks its user or the client's model
// (Ask, Elicit) through mcp-route. An exec'd call writes on fd 3 and
// reads the answers on fd 4; a worker wraps the same lines in its
// protocol ({"id":N,"channel":LINE} out, {"answer":N,"line":ANSWER} in).

// Methods Ask sends.
const (
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
)

// ErrNoChannel is returned by Ask when the call has no way to ask: not
// run by mcp-route, or by a version without fd 4.
var ErrNoChannel = errors.New("tool: no channel to ask on (not run by mcp-route, or no fd 4)")

// answerSource gives the answers to a call's questions, in order.
type answerSource interface {
	next(ctx context.Context) ([]byte, error)
}

// Log sends a log record at level (debug, info, notice, warning, error,
// critical, alert, emergency) with data (any JSON value; a string is the
// common case); mcp-route passes it to the client when the client asked
// for records at that level. It does nothing without a channel; errors
// are dropped, as a log must never fail a call.
func (c *Call) Log(level string, data any) {
	if c.channel == nil {
		return
	}
	b, err := marshal(struct {
		Level string `json:"level"`
		Data  any    `json:"data"`
	}{level, data})
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.channel.Write(append(b, '\n'))
}

// Ask asks the client: method is MethodElicit (the user) or
// MethodCreateMessage (the model), params that request's params as MCP
// defines them. It returns the client's result, or an error: mcp-route's
// refusal (the client cannot be asked: it did not declare the
// capability, its revision lacks the method, the transport cannot carry
// it), the client's error, ErrNoChannel, or ctx's. Questions are asked one
// at a time; a second Ask waits for the first.
func (c *Call) Ask(method string, params any) (json.RawMessage, error) {
	if c.channel == nil || c.answers == nil {
		return nil, ErrNoChannel
	}
	c.askMu.Lock()
	defer c.askMu.Unlock()
	c.asked++
	id := c.asked
	b, err := marshal(struct {
		Ask    string `json:"ask"`
		ID     int    `json:"id"`
		Params any    `json:"params"`
	}{method, id, params})
	if err != nil {
		return nil, fmt.Errorf("tool: the question's params: %w", err)
	}
	c.mu.Lock()
	_, err = c.channel.Write(append(b, '\n'))
	c.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("tool: asking: %w", err)
	}
	for {
		line, err := c.answers.next(c.ctx)
		if err != nil {
			return nil, err
		}
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *string         `json:"error"`
		}
		if json.Unmarshal(line, &a) != nil || string(a.ID) != strconv.Itoa(id) {
			continue // not the answer to this question (a late one)
		}
		if a.Error != nil {
			return nil, errors.New(*a.Error)
		}
		return a.Result, nil
	}
}

// Elicit asks the user to fill in a form: message, and requestedSchema
// (a flat object schema of strings, numbers, booleans and enums). It
// returns the user's action (accept, decline, cancel) and, on accept, the
// content.
func (c *Call) Elicit(message string, requestedSchema json.RawMessage) (action string, content map[string]any, err error) {
	res, err := c.Ask(MethodElicit, map[string]any{"message": message, "requestedSchema": requestedSchema})
	if err != nil {
		return "", nil, err
	}
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", nil, fmt.Errorf("tool: the elicitation result: %w", err)
	}
	return r.Action, r.Content, nil
}

// lineAnswers reads answers from fd 4 (an exec'd call): one line each.
type lineAnswers struct {
	mu sync.Mutex
	r  *bufio.Reader
}

func newLineAnswers(r io.Reader) *lineAnswers { return &lineAnswers{r: bufio.NewReader(r)} }

func (l *lineAnswers) next(context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, err := l.r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("tool: the answer channel closed before an answer came")
		}
		return nil, err
	}
	return line, nil
}

// chanAnswers are a worker call's answers, routed by the worker's reader.
type chanAnswers chan []byte

func (ch chanAnswers) next(ctx context.Context) ([]byte, error) {
	select {
	case l := <-ch:
		return l, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
