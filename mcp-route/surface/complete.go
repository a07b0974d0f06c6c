package surface

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   *int     `json:"total,omitempty"`
		HasMore bool     `json:"hasMore,omitempty"`
	} `json:"completion"`
}

// Complete answers completion/complete.
func (s *Set) Complete(ctx context.Context, params json.RawMessage, rev string) (any, error) {
	var req struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if err := json.Unmarshal(params, &req); err != nil || req.Argument == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: want {\"ref\": {...}, \"argument\": {\"name\", \"value\"}}")
	}
	var complete map[string]json.RawMessage
	var path string
	switch req.Ref.Type {
	case "ref/prompt":
		p := s.prompt(req.Ref.Name)
		if p == nil {
			return nil, codec.Errorf(codec.CodeInvalidParams, "unknown prompt: %s", codec.QuoteClip(req.Ref.Name, 200))
		}
		complete, path = p.complete, p.path
	case "ref/resource":
		r := s.template(req.Ref.URI)
		if r == nil {
			return nil, notFound(req.Ref.URI)
		}
		complete, path = r.complete, r.path
	default:
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: ref.type %q: ref/prompt or ref/resource", req.Ref.Type)
	}
	name, value := req.Argument.Name, req.Argument.Value
	var all []string
	raw, ok := complete[name]
	var list []string
	switch {
	case !ok:
	case json.Unmarshal(raw, &list) == nil:
		for _, v := range list {
			if strings.HasPrefix(v, value) {
				all = append(all, v)
			}
		}
	default: // "exec"
		stdin, _ := json.Marshal(map[string]any{
			"argument":  map[string]string{"name": name, "value": value},
			"arguments": req.Context.Arguments,
		})
		out, failure := s.opts.Run(ctx, path, []string{"--mcp-complete"}, stdin,
			map[string]string{"MCP_COMPLETE_NAME": name, "MCP_COMPLETE_VALUE": value}, rev)
		if failure != "" {
			return nil, codec.Errorf(codec.CodeInternalError, "completion of %s: %s", name, failure)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if v := sc.Text(); v != "" {
				all = append(all, v)
			}
		}
	}
	var res CompleteResult
	res.Completion.Values = all[:min(len(all), MaxCompletions)]
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	total := len(all)
	res.Completion.Total = &total
	res.Completion.HasMore = len(all) > MaxCompletions
	return res, nil
}

// template returns the resource template whose uriTemplate is t.
func (s *Set) template(t string) *Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.templates {
		if r.URITemplate == t {
			return r
		}
	}
	return nil
}
