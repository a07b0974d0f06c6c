package client

import (
	"context"
	"encoding/json"

	"github.com/mcpipe/mcpipe/codec"
)

// maxPages bounds tools/list pagination against a server that never stops.
const maxPages = 1000

// ListTools returns every tool, following nextCursor.
func (c *Client) ListTools(ctx context.Context) ([]codec.Tool, error) {
	raws, err := c.ListToolsRaw(ctx)
	if err != nil {
		return nil, err
	}
	tools := make([]codec.Tool, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &tools[i]); err != nil {
			return nil, protoErrorf("tools/list: tool %d is not a Tool: %v", i, err)
		}
	}
	return tools, nil
}

// ListToolsRaw is ListTools with each definition as the server sent it,
// members this package does not know included.
func (c *Client) ListToolsRaw(ctx context.Context) ([]json.RawMessage, error) {
	return c.ListToolsRawFunc(ctx, nil)
}

// ListToolsRawFunc is ListToolsRaw where keep, when not nil, decides as
// each page arrives which definitions are kept: one it refuses is not held
// past its page, so a caller that bounds what it keeps bounds the memory
// a server's list takes to one page (Options.MaxFrame).
func (c *Client) ListToolsRawFunc(ctx context.Context, keep func(json.RawMessage) bool) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, protoErrorf("tools/list: more than %d pages", maxPages)
		}
		var params any
		if cursor != "" {
			params = codec.ListToolsParams{Cursor: cursor}
		}
		raw, err := c.Request(ctx, codec.MethodToolsList, params)
		if err != nil {
			return nil, err
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, protoErrorf("tools/list: result is not a ListToolsResult: %v", err)
		}
		if res.Tools == nil {
			return nil, protoErrorf("tools/list: result has no tools")
		}
		for _, t := range res.Tools {
			if keep == nil || keep(t) {
				all = append(all, t) // its own copy (json.RawMessage)
			}
		}
		if res.NextCursor == "" {
			if h, ok := c.t.(*httpTransport); ok {
				// x-mcp-header: learn which arguments go into headers,
				// and leave out definitions the spec says to refuse.
				all = h.learnTools(all)
			}
			return all, nil
		}
		if seen[res.NextCursor] {
			return nil, protoErrorf("tools/list: cursor %q came back twice", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// FindTool returns the tool named name from ListTools, or nil when there is
// none.
func (c *Client) FindTool(ctx context.Context, name string) (*codec.Tool, error) {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i], nil
		}
	}
	return nil, nil
}

// CallOptions tune one CallTool.
type CallOptions struct {
	// ProgressToken, when set, asks for notifications/progress (they arrive
	// through Options.OnNotification).
	ProgressToken any
}

// CallTool calls a tool. arguments is a JSON object (nil means none). It
// returns the decoded result and the result as the server sent it. A result
// with isError is not a Go error: check res.IsError.
func (c *Client) CallTool(ctx context.Context, name string, arguments json.RawMessage, opts CallOptions) (*codec.CallToolResult, json.RawMessage, error) {
	p := codec.CallToolParams{Name: name, Arguments: arguments}
	if opts.ProgressToken != nil {
		tok, err := codec.Marshal(opts.ProgressToken)
		if err != nil {
			return nil, nil, err
		}
		p.Meta = map[string]json.RawMessage{codec.MetaProgressToken: tok}
	}
	raw, err := c.Request(ctx, codec.MethodToolsCall, p)
	if err != nil {
		return nil, nil, err
	}
	var res codec.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, raw, protoErrorf("tools/call: result is not a CallToolResult: %v", err)
	}
	switch res.ResultType {
	case "", codec.ResultTypeComplete:
	case codec.ResultTypeInputRequired:
		return nil, raw, protoErrorf("tools/call: server asked for input (resultType input_required), which mcp-call cannot give")
	default:
		return nil, raw, protoErrorf("tools/call: unknown resultType %q", res.ResultType)
	}
	if res.Content == nil {
		var probe map[string]json.RawMessage
		_ = json.Unmarshal(raw, &probe)
		if _, ok := probe["content"]; !ok {
			return nil, raw, protoErrorf("tools/call: result has no content")
		}
	}
	return &res, raw, nil
}

// Ping checks that the server answers. Legacy: a ping request. Modern:
// 2026-07-28 has no ping, so a server/discover round trip stands in.
func (c *Client) Ping(ctx context.Context) error {
	method := codec.MethodPing
	if info := c.Info(); info != nil && info.Era == EraModern {
		method = codec.MethodDiscover
	}
	raw, err := c.Request(ctx, method, nil)
	if err != nil {
		return err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return protoErrorf("%s: result is not an object", method)
	}
	return nil
}
