package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpipe/mcpipe/codec/client"
)

// The commands for resources, prompts and completion: resources,
// templates, read URI, prompts, prompt NAME [key=value...], complete
// prompt|resource REF ARG [VALUE]. Lists follow nextCursor (at most
// maxListPages pages).

const maxListPages = 1000

// listAll gathers the items of a paginated list method.
func (s *session) listAll(ctx context.Context, method, member string) ([]json.RawMessage, error) {
	var all []json.RawMessage
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < maxListPages; page++ {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		rctx, cancel := s.reqCtx(ctx)
		raw, err := s.conn.Request(rctx, method, params)
		cancel()
		if err != nil {
			return nil, err
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, &client.ProtocolError{Msg: fmt.Sprintf("%s: the result is not an object: %v", method, err)}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(res[member], &items); err != nil || items == nil {
			return nil, &client.ProtocolError{Msg: fmt.Sprintf("%s: the result has no %s list", method, member)}
		}
		all = append(all, items...)
		var next string
		json.Unmarshal(res["nextCursor"], &next)
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, &client.ProtocolError{Msg: fmt.Sprintf("%s: cursor %q came back twice", method, next)}
		}
		seen[next] = true
		cursor = next
	}
	return nil, &client.ProtocolError{Msg: fmt.Sprintf("%s: more than %d pages", method, maxListPages)}
}

// cmdList prints a list: one key per line (with the name and title when
// they say more), or the items with --json.
func (s *session) cmdList(ctx context.Context, method, member, key string) int {
	items, err := s.listAll(ctx, method, member)
	if err != nil {
		return s.fail(err)
	}
	if s.opts.json {
		if items == nil {
			items = []json.RawMessage{}
		}
		if err := s.printJSON(items); err != nil {
			return s.fail(err)
		}
		return exitOK
	}
	for _, raw := range items {
		var it map[string]any
		json.Unmarshal(raw, &it)
		line, _ := it[key].(string)
		if d, _ := it["description"].(string); d != "" {
			line += "\t" + firstLine(d)
		}
		fmt.Fprintln(s.stdout, line)
	}
	return exitOK
}

// show sends one request and prints its result: whole with --json;
// otherwise decoded into res (a pointer to the shape the command reads;
// want names that shape in the error) and printed by text.
func (s *session) show(ctx context.Context, method string, params any, want string, res any, text func() error) int {
	rctx, cancel := s.reqCtx(ctx)
	raw, err := s.conn.Request(rctx, method, params)
	cancel()
	if err != nil {
		return s.fail(err)
	}
	if s.opts.json {
		if err := s.printJSON(raw); err != nil {
			return s.fail(err)
		}
		return exitOK
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return s.fail(&client.ProtocolError{Msg: fmt.Sprintf("%s: the result is not a %s: %v", method, want, err)})
	}
	if err := text(); err != nil {
		return s.fail(err)
	}
	return exitOK
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// cmdRead prints a resource's contents: text as it is, a blob decoded.
func (s *session) cmdRead(ctx context.Context, uri string) int {
	var res struct {
		Contents []struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	return s.show(ctx, "resources/read", map[string]string{"uri": uri}, "ReadResourceResult", &res, func() error {
		if len(res.Contents) == 0 {
			return &client.ProtocolError{Msg: "resources/read: the result has no contents"}
		}
		for _, c := range res.Contents {
			switch {
			case c.Text != nil:
				s.stdout.Write([]byte(*c.Text))
			case c.Blob != nil:
				b, err := base64.StdEncoding.DecodeString(*c.Blob)
				if err != nil {
					return &client.ProtocolError{Msg: fmt.Sprintf("resources/read: %s: blob is not base64: %v", c.URI, err)}
				}
				s.stdout.Write(b)
			default:
				return &client.ProtocolError{Msg: fmt.Sprintf("resources/read: %s: neither text nor blob", c.URI)}
			}
		}
		return nil
	})
}

// cmdPrompt gets a prompt with key=value arguments (all strings, as
// prompts take) and prints its messages: "ROLE: TEXT" for text, a note
// for the rest.
func (s *session) cmdPrompt(ctx context.Context, name string, words []string) int {
	args := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return s.fail(usagef("prompt argument %q: want key=value", w))
		}
		args[k] = v
	}
	var res struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				MimeType string `json:"mimeType"`
				Data     string `json:"data"`
				URI      string `json:"uri"`
				Resource *struct {
					URI  string  `json:"uri"`
					Text *string `json:"text"`
				} `json:"resource"`
			} `json:"content"`
		} `json:"messages"`
	}
	return s.show(ctx, "prompts/get", map[string]any{"name": name, "arguments": args}, "GetPromptResult", &res, func() error {
		for _, m := range res.Messages {
			c := m.Content
			switch c.Type {
			case "text":
				fmt.Fprintf(s.stdout, "%s: %s\n", m.Role, c.Text)
			case "resource":
				if c.Resource != nil && c.Resource.Text != nil {
					fmt.Fprintf(s.stdout, "%s: [resource %s]\n%s\n", m.Role, c.Resource.URI, *c.Resource.Text)
				} else if c.Resource != nil {
					fmt.Fprintf(s.stdout, "%s: [resource %s, binary]\n", m.Role, c.Resource.URI)
				}
			case "resource_link":
				fmt.Fprintf(s.stdout, "%s: [link %s]\n", m.Role, c.URI)
			default:
				fmt.Fprintf(s.stdout, "%s: [%s %s, %d bytes of base64]\n", m.Role, c.Type, c.MimeType, len(c.Data))
			}
		}
		return nil
	})
}

// cmdComplete asks completion/complete and prints the values, one a line.
func (s *session) cmdComplete(ctx context.Context, kind, ref, arg, value string) int {
	var r map[string]string
	switch kind {
	case "prompt":
		r = map[string]string{"type": "ref/prompt", "name": ref}
	case "resource":
		r = map[string]string{"type": "ref/resource", "uri": ref}
	default:
		return s.fail(usagef("complete %q: want complete prompt NAME ARG [VALUE] or complete resource URITEMPLATE VAR [VALUE]", kind))
	}
	var res struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	params := map[string]any{"ref": r, "argument": map[string]string{"name": arg, "value": value}}
	return s.show(ctx, "completion/complete", params, "CompleteResult", &res, func() error {
		for _, v := range res.Completion.Values {
			fmt.Fprintln(s.stdout, v)
		}
		return nil
	})
}
