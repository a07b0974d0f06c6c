package codec

import (
	"encoding/json"
)

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is a sized icon (2025-11-25 and later).
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ClientCapabilities is kept raw per capability: a tools-only server does not
// act on any of them, and passing them through loses nothing.
type ClientCapabilities map[string]json.RawMessage

// ServerCapabilities lists what a server offers. Tools is typed; the other
// capabilities stay raw JSON (a tools-only server leaves them out; a client
// shows what it got).
type ServerCapabilities struct {
	Tools        *ToolsCapability           `json:"tools,omitempty"`
	Logging      json.RawMessage            `json:"logging,omitempty"`
	Completions  json.RawMessage            `json:"completions,omitempty"`
	Prompts      json.RawMessage            `json:"prompts,omitempty"`
	Resources    json.RawMessage            `json:"resources,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ToolsCapability is the "tools" server capability.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// InitializeParams are the params of initialize (legacy revisions).
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            map[string]any     `json:"_meta,omitempty"`
}

// InitializeResult is the result of initialize (legacy revisions).
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            map[string]any     `json:"_meta,omitempty"`
}

// DiscoverResult is the result of server/discover (2026-07-28). ResultType
// may be left empty: DecorateResult (and NewResultFor) set it to "complete".
type DiscoverResult struct {
	ResultType        string             `json:"resultType,omitempty"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             int64              `json:"ttlMs"`
	CacheScope        string             `json:"cacheScope"`
	Meta              map[string]any     `json:"_meta,omitempty"`
}

// RequestMeta is the _meta object of a request. Known keys are typed; the
// rest stay in Other.
type RequestMeta struct {
	ProtocolVersion    string
	ClientInfo         *Implementation
	ClientCapabilities ClientCapabilities
	LogLevel           string
	ProgressToken      json.RawMessage
	Other              map[string]json.RawMessage
}

// Tool is a tool definition as advertised in tools/list.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Bool returns a pointer to b, for ToolAnnotations hints.
func Bool(b bool) *bool { return &b }

// ListToolsParams are the params of tools/list.
type ListToolsParams struct {
	Cursor string                     `json:"cursor,omitempty"`
	Meta   map[string]json.RawMessage `json:"_meta,omitempty"`
}

// ListToolsResult is the result of tools/list. TTLMs and CacheScope are
// required in 2026-07-28 and absent before (see DecorateResult).
type ListToolsResult struct {
	Tools      []Tool         `json:"tools"`
	NextCursor string         `json:"nextCursor,omitempty"`
	TTLMs      *int64         `json:"ttlMs,omitempty"`
	CacheScope string         `json:"cacheScope,omitempty"`
	ResultType string         `json:"resultType,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments,omitempty"`
	Meta      map[string]json.RawMessage `json:"_meta,omitempty"`
}

// ProgressToken returns _meta.progressToken when the request carries one.
func (p *CallToolParams) ProgressToken() (json.RawMessage, bool) {
	t, ok := p.Meta[MetaProgressToken]
	if !ok || string(t) == "null" {
		return nil, false
	}
	return t, true
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
	Meta              map[string]any  `json:"_meta,omitempty"`
}

// Content types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Content is one content block; Type says which fields apply:
// text: Text; image, audio: Data (base64) and MimeType; resource_link: URI,
// Name, Title, Description, MimeType, Size; resource: Resource.
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"`
}

// MarshalJSON writes "text" even when empty for a text block (the schema
// requires it).
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content
	if c.Type == ContentText && c.Text == "" {
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
			plain
		}{c.Type, "", plain(c)})
	}
	return marshal(plain(c))
}

// ResourceContents is the resource of an embedded resource block: Text or
// Blob (base64).
type ResourceContents struct {
	URI      string         `json:"uri"`
	MimeType string         `json:"mimeType,omitempty"`
	Text     *string        `json:"text,omitempty"`
	Blob     string         `json:"blob,omitempty"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// Annotations are content annotations.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: ContentText, Text: s} }

// ImageContent returns an image block; data is base64.
func ImageContent(data, mimeType string) Content {
	return Content{Type: ContentImage, Data: data, MimeType: mimeType}
}

// AudioContent returns an audio block; data is base64.
func AudioContent(data, mimeType string) Content {
	return Content{Type: ContentAudio, Data: data, MimeType: mimeType}
}

// ResourceLinkContent returns a resource_link block.
func ResourceLinkContent(uri, name string) Content {
	return Content{Type: ContentResourceLink, URI: uri, Name: name}
}

// EmbeddedTextResource returns an embedded resource block with text contents.
func EmbeddedTextResource(uri, mimeType, text string) Content {
	return Content{Type: ContentResource, Resource: &ResourceContents{URI: uri, MimeType: mimeType, Text: &text}}
}

// EmbeddedBlobResource returns an embedded resource block with base64 contents.
func EmbeddedBlobResource(uri, mimeType, blob string) Content {
	return Content{Type: ContentResource, Resource: &ResourceContents{URI: uri, MimeType: mimeType, Blob: blob}}
}

// ProgressParams are the params of notifications/progress.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
	Meta          map[string]any  `json:"_meta,omitempty"`
}

// CancelledParams are the params of notifications/cancelled.
type CancelledParams struct {
	RequestID *ID            `json:"requestId,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// The schemas require these members to be present: a nil slice or map must
// go out as [] or {}, never null.

// MarshalJSON writes a nil ClientCapabilities as {}.
func (c ClientCapabilities) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("{}"), nil
	}
	return marshal(map[string]json.RawMessage(c))
}

// MarshalJSON writes nil Content as [].
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	type plain CallToolResult
	if r.Content == nil {
		r.Content = []Content{}
	}
	return marshal(plain(r))
}

// MarshalJSON writes nil Tools as [].
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type plain ListToolsResult
	if r.Tools == nil {
		r.Tools = []Tool{}
	}
	return marshal(plain(r))
}

// MarshalJSON writes nil SupportedVersions as [].
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	type plain DiscoverResult
	if r.SupportedVersions == nil {
		r.SupportedVersions = []string{}
	}
	return marshal(plain(r))
}
