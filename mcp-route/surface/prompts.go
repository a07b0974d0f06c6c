package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

// PromptArgument is an argument a prompt declares.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptDef is a prompt as listed.
type PromptDef struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// Prompt is a prompt and how it is made.
type Prompt struct {
	Def       PromptDef
	dir, file string
	path      string
	exec      bool
	text      bool // an executable whose stdout is one text message (run.result "text")
	complete  map[string]json.RawMessage
}

// MarshalJSON lists the definition: what changes it changes the list.
func (p *Prompt) MarshalJSON() ([]byte, error) { return json.Marshal(p.Def) }

var promptNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func parsePrompt(en entry) (*Prompt, error) {
	sc, err := readSidecar(en)
	if err != nil {
		return nil, err
	}
	p := &Prompt{
		Def: PromptDef{Name: sc.Name, Title: sc.Title, Description: sc.Description, Arguments: sc.Arguments},
		dir: en.dir, file: en.name, path: en.path, exec: en.exec, complete: sc.Complete,
	}
	if p.Def.Name == "" {
		p.Def.Name = en.name
	}
	if !promptNameRE.MatchString(p.Def.Name) {
		return nil, fmt.Errorf("name %q: want 1-128 of A-Z a-z 0-9 and the characters _ - . only", p.Def.Name)
	}
	switch sc.Run.Result {
	case "", "messages":
	case "text":
		p.text = true
	default:
		return nil, fmt.Errorf("run.result %q: \"messages\" (the default) or \"text\"", sc.Run.Result)
	}
	seen := map[string]bool{}
	for _, a := range p.Def.Arguments {
		if a.Name == "" || seen[a.Name] {
			return nil, fmt.Errorf("argument %q: every argument needs a name of its own", a.Name)
		}
		seen[a.Name] = true
	}
	for name := range p.complete {
		if !seen[name] {
			return nil, fmt.Errorf("complete.%s: no such argument", name)
		}
	}
	return p, nil
}

// ListPrompts answers prompts/list.
func (s *Set) ListPrompts(params json.RawMessage, rev string) (any, error) {
	cursor, cerr := cursorParam(params)
	if cerr != nil {
		return nil, cerr
	}
	s.mu.Lock()
	all := s.prompts
	s.mu.Unlock()
	keys := make([]string, len(all))
	for i, p := range all {
		keys[i] = p.Def.Name
	}
	start, end, next, perr := page(keys, cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	defs := make([]PromptDef, 0, end-start)
	for _, p := range all[start:end] {
		defs = append(defs, p.Def)
	}
	return struct {
		Prompts    []PromptDef `json:"prompts"`
		NextCursor string      `json:"nextCursor,omitempty"`
		Cache
	}{defs, next, s.cache(rev, false)}, nil
}

func (s *Set) prompt(name string) *Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prompts {
		if p.Def.Name == name {
			return p
		}
	}
	return nil
}

// PromptMessage is one message of a prompts/get result.
type PromptMessage struct {
	Role    string        `json:"role"`
	Content codec.Content `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}`)

// Get answers prompts/get.
func (s *Set) Get(ctx context.Context, params json.RawMessage, rev string) (any, error) {
	var req struct {
		Name      *string                    `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &req); err != nil || req.Name == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: want {\"name\": STRING, \"arguments\"?: {NAME: STRING}}")
	}
	p := s.prompt(*req.Name)
	if p == nil {
		return nil, codec.Errorf(codec.CodeInvalidParams, "unknown prompt: %s", codec.QuoteClip(*req.Name, 200))
	}
	args := map[string]string{}
	for k, raw := range req.Arguments {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: argument %s must be a string", codec.QuoteClip(k, 200))
		}
		args[k] = v
	}
	for _, a := range p.Def.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, codec.Errorf(codec.CodeInvalidParams, "invalid params: prompt %s needs the argument %q", p.Def.Name, a.Name)
		}
	}
	if !p.exec {
		// Through the jail, as a resource: a template swapped for a
		// symlink out of the directory after the scan is refused.
		root, err := jail.Open(p.dir)
		if err != nil {
			return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: %v", p.Def.Name, err)
		}
		b, truncated, err := root.ReadFile(p.file, s.opts.MaxOutput)
		root.Close()
		if err != nil {
			s.warnOnce(p.path+"read", "prompt refused", slog.String("path", p.path), slog.Any("error", err))
			return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: %v", p.Def.Name, err)
		}
		if truncated || !utf8.Valid(b) {
			return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: the template must be UTF-8 text of at most %d bytes", p.Def.Name, s.opts.MaxOutput)
		}
		text := placeholderRE.ReplaceAllStringFunc(string(b), func(m string) string {
			return args[placeholderRE.FindStringSubmatch(m)[1]]
		})
		return GetPromptResult{Description: p.Def.Description, Messages: []PromptMessage{{Role: "user", Content: codec.TextContent(text)}}}, nil
	}
	stdin, _ := json.Marshal(args)
	out, failure := s.opts.Run(ctx, p.path, nil, stdin, map[string]string{"MCP_PROMPT": p.Def.Name}, rev)
	if failure != "" {
		return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: %s", p.Def.Name, failure)
	}
	if p.text {
		if !utf8.Valid(out) {
			return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: its output is not UTF-8 text", p.Def.Name)
		}
		return GetPromptResult{Description: p.Def.Description, Messages: []PromptMessage{{Role: "user", Content: codec.TextContent(string(out))}}}, nil
	}
	res, err := parseMessages(out)
	if err != nil {
		s.opts.Logger.Warn("prompt: bad output", slog.String("prompt", p.Def.Name), slog.Any("error", err))
		return nil, codec.Errorf(codec.CodeInternalError, "prompt %s: bad output: %v", p.Def.Name, err)
	}
	if res.Description == "" {
		res.Description = p.Def.Description
	}
	return res, nil
}

// parseMessages checks an executable prompt's output: a GetPromptResult.
func parseMessages(out []byte) (*GetPromptResult, error) {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var res GetPromptResult
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("want a JSON object {\"description\"?, \"messages\": [{\"role\", \"content\"}]}: %v", err)
	}
	if res.Messages == nil {
		return nil, errors.New("no \"messages\"")
	}
	for i, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf("messages[%d].role %q: \"user\" or \"assistant\"", i, m.Role)
		}
		switch c := m.Content; c.Type {
		case codec.ContentText:
		case codec.ContentImage, codec.ContentAudio:
			if c.Data == "" || c.MimeType == "" {
				return nil, fmt.Errorf("messages[%d].content: %s needs data and mimeType", i, c.Type)
			}
		case codec.ContentResource:
			if c.Resource == nil || c.Resource.URI == "" {
				return nil, fmt.Errorf("messages[%d].content: resource needs resource.uri", i)
			}
		case codec.ContentResourceLink:
			if c.URI == "" || c.Name == "" {
				return nil, fmt.Errorf("messages[%d].content: resource_link needs uri and name", i)
			}
		default:
			return nil, fmt.Errorf("messages[%d].content.type %q: text, image, audio, resource or resource_link", i, c.Type)
		}
	}
	return &res, nil
}
