package surface

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/mcp-jail/jail"
)

// Resource is a resource or a resource template as listed; the rest is
// how it is read.
type Resource struct {
	URI         string          `json:"uri,omitempty"`
	URITemplate string          `json:"uriTemplate,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Size        *int64          `json:"size,omitempty"`

	dir, file, path string
	exec            bool
	tmpl            *uriTemplate
	complete        map[string]json.RawMessage
}

// sidecar is what a NAME.json may hold: the listed members, and complete.
type sidecar struct {
	URI         string                     `json:"uri"`
	URITemplate string                     `json:"uriTemplate"`
	Name        string                     `json:"name"`
	Title       string                     `json:"title"`
	Description string                     `json:"description"`
	MimeType    string                     `json:"mimeType"`
	Annotations json.RawMessage            `json:"annotations"`
	Size        *int64                     `json:"size"`
	Arguments   []PromptArgument           `json:"arguments"`
	Complete    map[string]json.RawMessage `json:"complete"`
	Run         struct {
		Result string `json:"result"`
	} `json:"run"`
}

func readSidecar(en entry) (*sidecar, error) {
	sc := &sidecar{}
	if en.sidecar != nil {
		if err := json.Unmarshal(en.sidecar, sc); err != nil {
			return nil, fmt.Errorf("%s.json: %v", en.name, err)
		}
	}
	for name, c := range sc.Complete {
		var list []string
		var word string
		if json.Unmarshal(c, &list) != nil && (json.Unmarshal(c, &word) != nil || word != "exec") {
			return nil, fmt.Errorf("%s.json: complete.%s must be a list of strings or \"exec\"", en.name, name)
		}
		if word == "exec" && !en.exec {
			return nil, fmt.Errorf("%s.json: complete.%s is \"exec\" but %s is not executable", en.name, name, en.name)
		}
	}
	return sc, nil
}

func parseResource(en entry) (*Resource, error) {
	sc, err := readSidecar(en)
	if err != nil {
		return nil, err
	}
	r := &Resource{
		URI: sc.URI, URITemplate: sc.URITemplate, Name: sc.Name, Title: sc.Title,
		Description: sc.Description, MimeType: sc.MimeType, Annotations: sc.Annotations, Size: sc.Size,
		dir: en.dir, file: en.name, path: en.path, exec: en.exec, complete: sc.Complete,
	}
	if r.Name == "" {
		r.Name = en.name
	}
	if r.MimeType == "" {
		r.MimeType = mime.TypeByExtension(filepath.Ext(en.name))
	}
	switch {
	case r.URI != "" && r.URITemplate != "":
		return nil, errors.New("the sidecar has both uri and uriTemplate: one or the other")
	case r.URITemplate != "":
		if !en.exec {
			return nil, errors.New("a uriTemplate needs an executable: a plain file has one content whatever the URI")
		}
		t, err := parseTemplate(r.URITemplate)
		if err != nil {
			return nil, fmt.Errorf("uriTemplate %q: %v", r.URITemplate, err)
		}
		r.tmpl = t
		if r.Size != nil {
			return nil, errors.New("a resource template has no size")
		}
	case r.URI == "":
		abs, err := filepath.Abs(en.path)
		if err != nil {
			return nil, err
		}
		r.URI = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	if r.URI != "" {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme == "" {
			return nil, fmt.Errorf("uri %q is not an absolute URI", r.URI)
		}
	}
	for name := range r.complete {
		if r.tmpl == nil || !r.tmpl.has(name) {
			return nil, fmt.Errorf("complete.%s: no such variable in the uriTemplate", name)
		}
	}
	if strings.Contains(r.URI, "..") || strings.Contains(r.URITemplate, "..") {
		return nil, errors.New("a uri with \"..\" is refused: a client could take it for a path out of the directory")
	}
	if len(r.Annotations) > 0 && r.Annotations[0] != '{' {
		return nil, errors.New("annotations must be an object")
	}
	return r, nil
}

// Resources and templates are listed from these handlers.

// ListResources answers resources/list.
func (s *Set) ListResources(params json.RawMessage, rev string) (any, error) {
	cursor, cerr := cursorParam(params)
	if cerr != nil {
		return nil, cerr
	}
	s.mu.Lock()
	all := s.resources
	s.mu.Unlock()
	keys := make([]string, len(all))
	for i, r := range all {
		keys[i] = r.URI
	}
	start, end, next, perr := page(keys, cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	return struct {
		Resources  []*Resource `json:"resources"`
		NextCursor string      `json:"nextCursor,omitempty"`
		Cache
	}{append([]*Resource{}, all[start:end]...), next, s.cache(rev, false)}, nil
}

// ListTemplates answers resources/templates/list.
func (s *Set) ListTemplates(params json.RawMessage, rev string) (any, error) {
	cursor, cerr := cursorParam(params)
	if cerr != nil {
		return nil, cerr
	}
	s.mu.Lock()
	all := s.templates
	s.mu.Unlock()
	keys := make([]string, len(all))
	for i, r := range all {
		keys[i] = r.URITemplate
	}
	start, end, next, perr := page(keys, cursor, s.opts.PageSize)
	if perr != nil {
		return nil, perr
	}
	return struct {
		ResourceTemplates []*Resource `json:"resourceTemplates"`
		NextCursor        string      `json:"nextCursor,omitempty"`
		Cache
	}{append([]*Resource{}, all[start:end]...), next, s.cache(rev, false)}, nil
}

// uriParam reads params.uri.
func uriParam(params json.RawMessage) (string, *codec.Error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == nil {
		return "", codec.Errorf(codec.CodeInvalidParams, "invalid params: want {\"uri\": STRING}")
	}
	return *p.URI, nil
}

// notFound is SEP-2164's error for a URI no resource names.
func notFound(uri string) *codec.Error {
	e := codec.Errorf(codec.CodeInvalidParams, "Resource not found: %s", codec.QuoteClip(uri, 200))
	e.Data, _ = json.Marshal(map[string]string{"uri": uri})
	return e
}

// Lookup returns the resource or template that serves uri, and the
// template's variables.
func (s *Set) Lookup(uri string) (*Resource, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.resources {
		if r.URI == uri {
			return r, map[string]string{}
		}
	}
	for _, r := range s.templates {
		if vars, ok := r.tmpl.match(uri); ok {
			return r, vars
		}
	}
	return nil, nil
}

// Contents is one item of a resources/read result.
type Contents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     string  `json:"blob,omitempty"`
}

// Read answers resources/read.
func (s *Set) Read(ctx context.Context, params json.RawMessage, rev string) (any, error) {
	uri, cerr := uriParam(params)
	if cerr != nil {
		return nil, cerr
	}
	r, vars := s.Lookup(uri)
	if r == nil {
		return nil, notFound(uri)
	}
	var data []byte
	if r.exec {
		stdin, _ := json.Marshal(vars)
		out, failure := s.opts.Run(ctx, r.path, nil, stdin, map[string]string{"MCP_RESOURCE_URI": uri}, rev)
		if failure != "" {
			return nil, codec.Errorf(codec.CodeInternalError, "resource %s: %s", codec.QuoteClip(uri, 200), failure)
		}
		data = out
	} else {
		root, err := jail.Open(r.dir)
		if err != nil {
			return nil, codec.Errorf(codec.CodeInternalError, "resource %s: %v", codec.QuoteClip(uri, 200), err)
		}
		defer root.Close()
		b, truncated, err := root.ReadFile(r.file, s.opts.MaxOutput)
		switch {
		case errors.Is(err, jail.ErrEscapes):
			s.warnOnce(r.path+"read", "resource refused", slog.String("path", r.path), slog.Any("error", err))
			return nil, notFound(uri)
		case err != nil:
			return nil, codec.Errorf(codec.CodeInternalError, "resource %s: %v", codec.QuoteClip(uri, 200), err)
		case truncated:
			return nil, codec.Errorf(codec.CodeInternalError, "resource %s is over %d bytes (--max-output)", codec.QuoteClip(uri, 200), s.opts.MaxOutput)
		}
		data = b
	}
	c := Contents{URI: uri, MimeType: r.MimeType}
	if isText(c.MimeType, data) {
		if c.MimeType == "" {
			c.MimeType = "text/plain"
		}
		t := string(data)
		c.Text = &t
	} else {
		if c.MimeType == "" {
			c.MimeType = "application/octet-stream"
		}
		c.Blob = base64.StdEncoding.EncodeToString(data)
	}
	return struct {
		Contents []Contents `json:"contents"`
		Cache
	}{[]Contents{c}, s.cache(rev, r.exec)}, nil
}

// isText says whether data goes out as text: UTF-8, of a textual type or
// of none.
func isText(mimeType string, data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	mt, _, _ := mime.ParseMediaType(mimeType)
	switch {
	case mt == "":
		return true
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/yaml",
		"application/x-yaml", "application/toml", "application/x-sh", "application/sql", "image/svg+xml":
		return true
	}
	return false
}

// uriTemplate is an RFC 6570 template of levels 1 and 2 ({var}, {+var},
// {#var}), matched against URIs.
type uriTemplate struct {
	re   *regexp.Regexp
	vars []string
}

var exprRE = regexp.MustCompile(`\{([+#]?)([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\}`)

func parseTemplate(t string) (*uriTemplate, error) {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	var vars []string
	for _, m := range exprRE.FindAllStringSubmatchIndex(t, -1) {
		lit := t[last:m[0]]
		if strings.ContainsAny(lit, "{}") {
			return nil, fmt.Errorf("unsupported expression near %q (levels 1 and 2: {var}, {+var}, {#var})", lit)
		}
		b.WriteString(regexp.QuoteMeta(lit))
		op, name := t[m[2]:m[3]], t[m[4]:m[5]]
		switch op {
		case "":
			b.WriteString(`([^/?#&=,]*)`)
		case "+":
			b.WriteString(`([^?#]*)`)
		case "#":
			b.WriteString(`(?:#(.*))?`)
		}
		vars = append(vars, name)
		last = m[1]
	}
	if strings.ContainsAny(t[last:], "{}") {
		return nil, fmt.Errorf("unsupported expression in %q (levels 1 and 2: {var}, {+var}, {#var})", t[last:])
	}
	if len(vars) == 0 {
		return nil, errors.New("no {variable}: use uri")
	}
	b.WriteString(regexp.QuoteMeta(t[last:]))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	return &uriTemplate{re: re, vars: vars}, nil
}

// match returns the variables of uri, decoded; a value holding ".." after
// decoding does not match: an executable may use it as a path.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := map[string]string{}
	for i, name := range t.vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil || strings.Contains(v, "..") || strings.ContainsRune(v, 0) {
			return nil, false
		}
		vars[name] = v
	}
	return vars, true
}

// has reports whether the template has the variable name.
func (t *uriTemplate) has(name string) bool {
	for _, v := range t.vars {
		if v == name {
			return true
		}
	}
	return false
}
