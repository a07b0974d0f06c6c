package client

// Streamable HTTP
//
// [NewHTTP] and [DialHTTP] connect a Client to an MCP endpoint URL instead of
// a server's stdio; everything above the transport (eras, handshake,
// requests, errors) is the same. The transport follows the Streamable HTTP
// binding of each revision:
//
//   - Every message is its own POST to the URL, with Content-Type
//     application/json, Accept "application/json, text/event-stream", and
//     the HTTPOptions.Header (an Authorization header, say) on every request.
//   - Modern era (2026-07-28): MCP-Protocol-Version (the body's _meta
//     version), Mcp-Method, Mcp-Name for tools/call and prompts/get
//     (params.name) and resources/read (params.uri), and Mcp-Param-NAME for
//     each tool argument that the tool's inputSchema marks with x-mcp-header
//     (learned from tools/list, so list before calling). A tool definition
//     whose x-mcp-header breaks the spec's rules is left out of ListTools,
//     with a note to Options.OnWarning. Values that are not plain visible
//     ASCII go as =?base64?…?=. No notifications/cancelled is sent: ending
//     the request (closing its stream) is the cancellation.
//   - Legacy era (2025-03-26 to 2025-11-25): initialize goes without a
//     version header; the Mcp-Session-Id it is answered with, and
//     MCP-Protocol-Version with the negotiated version, go on every later
//     request; Close ends the session with DELETE. The GET stream, on which
//     a server sends what belongs to no request (notifications/tools/
//     list_changed), is opened after initialized only when
//     HTTPOptions.StandaloneStream asks for it: a client of one command
//     needs none. It is reopened when it ends (after 250 ms, doubling to
//     5 s while the streams carry nothing) until Close; a 405 means the server offers none, and ends the
//     tries quietly. A server request arriving on a stream (ping) is
//     answered with a POST, as over stdio. 2024-11-05's HTTP+SSE transport
//     is not spoken.
//   - Answers: application/json (one message) or text/event-stream, whose
//     events carry notifications (progress) and then the response; reading
//     stops at the response. 202 Accepted answers notifications.
//
// Redirects are not followed: a 3xx answer is an *HTTPError naming its
// Location. Following one would resend the request body and the
// HTTPOptions.Header (a bearer token, an API key) to wherever the server
// points, another host or plain http included; an MCP endpoint answers at
// its own URL, so the caller is told to use the one it redirects to.
//
// Errors: an HTTP error status whose body is a JSON-RPC error answers the
// request with that error (-32022 unsupported version, -32020 header
// mismatch, -32601 are *codec.Errors as over stdio). Other error statuses,
// and 401 and 403 whatever their body (credentials missing or refused: the
// caller must see the status), are an *HTTPError (a 401 carries the
// server's WWW-Authenticate); a failure to
// connect, and 502, 503 or 504 from a proxy, wrap ErrUnreachable; a stream
// that ends before the response wraps ErrClosed (a stream is not resumed with
// Last-Event-ID), and a legacy session that expired (404) is not renewed:
// the request fails with that *HTTPError. In the auto era, a 400, 404 or 405 without a JSON-RPC error
// to the server/discover probe means a legacy server: the client falls back
// to initialize, as the 2026-07-28 transport's backward-compatibility rules
// say.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// ErrUnreachable reports that the HTTP server could not be reached: the
// connection failed, or a proxy answered 502, 503 or 504.
var ErrUnreachable = errors.New("server unreachable")

// HTTPError is an HTTP error status that carried no JSON-RPC error.
type HTTPError struct {
	StatusCode int
	Status     string // "401 Unauthorized"
	Method     string // the MCP method of the message that got it
	// Body is the start of the response body, for people.
	Body string
	// WWWAuthenticate is the header of a 401, telling how to authenticate.
	WWWAuthenticate string
	// Location is the header of a redirect (3xx), which is not followed.
	Location string
}

func (e *HTTPError) Error() string {
	msg := "HTTP " + e.Status
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + fmt.Sprintf("%.200s", strings.Join(strings.Fields(b), " "))
	}
	if e.WWWAuthenticate != "" {
		msg += " (WWW-Authenticate: " + e.WWWAuthenticate + ")"
	}
	if e.StatusCode/100 == 3 {
		msg += fmt.Sprintf(": redirect to %.200q not followed (the request and its headers go to the given URL only; give the endpoint's own URL)", e.Location)
	}
	return msg
}

// Unwrap makes the statuses a proxy gives for a server it cannot reach
// match ErrUnreachable.
func (e *HTTPError) Unwrap() error {
	switch e.StatusCode {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ErrUnreachable
	}
	return nil
}

// legacyAnswer says whether the status, without a JSON-RPC error, is how a
// legacy server answers a modern request.
func (e *HTTPError) legacyAnswer() bool {
	switch e.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

func (e *HTTPError) statusText() string { return "HTTP " + e.Status }

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	// Header is sent with every request (Authorization, say).
	Header http.Header
	// Client, optional, makes the requests. The default has no overall
	// timeout (a call's stream lasts as long as the call) and keeps up to 64
	// idle connections to the server. Its CheckRedirect is not used: no
	// redirect is followed (see the package doc).
	Client *http.Client
	// StandaloneStream opens the legacy era's GET stream for messages the
	// server sends outside any request (a gateway watching for
	// list_changed wants it). The modern era has no such stream:
	// subscriptions/listen is a request.
	StandaloneStream bool
}

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

type httpTransport struct {
	c      *Client
	url    string
	hc     *http.Client
	header http.Header
	// standalone: open the legacy GET stream after initialized.
	standalone bool

	base      context.Context // ended by close: aborts requests in flight
	cancelAll context.CancelFunc
	closeOnce sync.Once

	mu            sync.Mutex
	session       string                         // legacy Mcp-Session-Id
	legacyVersion string                         // the negotiated legacy version; "" in the modern era
	paramHeaders  map[string][]codec.HeaderParam // tool name → its x-mcp-header arguments
}

// NewHTTP returns a Client for the Streamable HTTP endpoint at endpoint
// (http:// or https://). No request is made until Connect.
func NewHTTP(endpoint string, hopts HTTPOptions, opts Options) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %v", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("URL %q: want http://HOST[:PORT]/PATH or https://…", endpoint)
	}
	hc := hopts.Client
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		hc = &http.Client{Transport: tr}
	}
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hc = &noRedirect
	c := newClient(opts, "in an HTTP answer")
	base, cancel := context.WithCancel(context.Background())
	c.t = &httpTransport{c: c, url: u.String(), hc: hc, header: hopts.Header.Clone(), standalone: hopts.StandaloneStream, base: base, cancelAll: cancel}
	return c, nil
}

// negotiated records the legacy version initialize settled.
func (h *httpTransport) negotiated(version string) {
	h.mu.Lock()
	h.legacyVersion = version
	h.mu.Unlock()
}

func (h *httpTransport) sendFailed(method string, err error) error {
	return fmt.Errorf("%s: %w", method, err)
}

// closeWrite ends the client: a legacy session is ended with DELETE,
// requests in flight are aborted and fail with ErrClosed.
func (h *httpTransport) closeWrite() error {
	h.closeOnce.Do(func() {
		h.mu.Lock()
		sid := h.session
		h.mu.Unlock()
		if sid != "" {
			ctx, cancel := context.WithTimeout(h.base, 5*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.url, nil)
			if err == nil {
				req.Header = h.header.Clone()
				if req.Header == nil {
					req.Header = http.Header{}
				}
				req.Header.Set("Mcp-Session-Id", sid)
				h.setVersionHeader(req.Header)
				// Best effort: 405 (the server keeps no sessions) and
				// errors change nothing for us.
				if resp, err := h.hc.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		h.cancelAll()
		h.hc.CloseIdleConnections()
		h.c.failPending(ErrClosed)
		close(h.c.done)
	})
	return nil
}

func (h *httpTransport) setVersionHeader(hdr http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.legacyVersion != "" {
		hdr.Set(codec.HeaderProtocolVersion, h.legacyVersion)
	}
}

// send POSTs m and, for a request, reads the answer into the Client.
func (h *httpTransport) send(ctx context.Context, m *codec.Message) error {
	if m.Method == codec.MethodCancelled {
		if info := h.c.Info(); info == nil || info.Era == EraModern {
			// 2026-07-28: closing the request's stream is the
			// cancellation; the caller's context has done that.
			return nil
		}
	}
	select {
	case <-h.base.Done():
		return ErrClosed
	default:
	}
	body, err := codec.Marshal(m)
	if err != nil {
		return err
	}
	hdr, err := h.headers(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.base, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = hdr
	if h.c.opts.Trace != nil {
		h.c.opts.Trace(true, body)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		if h.base.Err() != nil {
			return ErrClosed
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	what := m.Method
	if what == "" {
		what = "response"
	}
	src := "HTTP answer to " + what
	ok := resp.StatusCode/100 == 2
	if ok && m.Method == codec.MethodInitialize {
		if err := h.takeSession(resp.Header.Get("Mcp-Session-Id"), src); err != nil {
			return err
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	isReq := m.IsRequest()
	switch {
	case resp.StatusCode == http.StatusAccepted && isReq:
		return protoErrorf("%s: 202 Accepted to a request, which needs an answer", src)
	case ok && !isReq:
		return nil
	case ok && ct == "text/event-stream":
		return h.readSSE(ctx, resp.Body, *m.ID, src)
	case ok && ct == "application/json":
		return h.readJSON(resp.Body, *m.ID, src)
	case ok:
		return protoErrorf("%s: Content-Type %q (want application/json or text/event-stream)", src, ct)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	// A 401 or 403 is the HTTP layer's refusal whatever its body says (a
	// JSON-RPC error, often): the caller must see the status to know that
	// credentials are missing or wrong.
	auth := resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	if isReq && !auth && h.rpcError(b, *m.ID, src) {
		return nil
	}
	return &HTTPError{
		StatusCode:      resp.StatusCode,
		Status:          resp.Status,
		Method:          what,
		Body:            string(b),
		WWWAuthenticate: resp.Header.Get("WWW-Authenticate"),
		Location:        resp.Header.Get("Location"),
	}
}

// Bounds of the wait before the GET stream is reopened.
const (
	streamRetryMin = 250 * time.Millisecond
	streamRetryMax = 5 * time.Second
)

// openStandalone keeps the legacy GET stream open until Close, as the
// package doc describes. It returns at once; the stream is read on a
// goroutine of its own.
func (h *httpTransport) openStandalone() {
	go func() {
		wait := streamRetryMin
		for {
			heard, stop := h.readStandalone()
			if stop {
				return
			}
			if heard {
				// Only a stream that carried something resets the wait:
				// a server that answers each GET and hangs up at once is
				// asked less and less often, not four times a second.
				wait = streamRetryMin
			}
			select {
			case <-h.base.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, streamRetryMax)
		}
	}()
}

// readStandalone makes one GET and reads its events until the stream ends.
// heard says the stream carried at least one message; stop says not to try
// again (the client is closed, or the server refuses the stream for good).
func (h *httpTransport) readStandalone() (heard, stop bool) {
	req, err := http.NewRequestWithContext(h.base, http.MethodGet, h.url, nil)
	if err != nil {
		return false, true
	}
	req.Header = h.header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Accept", "text/event-stream")
	h.mu.Lock()
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
	}
	if h.legacyVersion != "" {
		req.Header.Set(codec.HeaderProtocolVersion, h.legacyVersion)
	}
	h.mu.Unlock()
	resp, err := h.hc.Do(req)
	if err != nil {
		return false, h.base.Err() != nil
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return false, true
	case resp.StatusCode/100 == 3:
		h.warnf("GET stream: HTTP %s: redirect to %.200q not followed: server messages outside requests (list_changed) will not arrive", resp.Status, resp.Header.Get("Location"))
		return false, true
	case resp.StatusCode/100 == 4:
		h.warnf("GET stream: HTTP %s: server messages outside requests (list_changed) will not arrive", resp.Status)
		return false, true
	case resp.StatusCode/100 != 2 || ct != "text/event-stream":
		return false, h.base.Err() != nil
	}
	src := "HTTP GET stream"
	_ = readSSEEvents(resp.Body, h.c.opts.MaxFrame, func(data []byte) bool {
		heard = true
		h.c.receive(bytes.Clone(data), src)
		return false
	})
	return heard, h.base.Err() != nil
}

func (h *httpTransport) warnf(format string, args ...any) {
	if h.c.opts.OnWarning != nil {
		h.c.opts.OnWarning(fmt.Sprintf(format, args...))
	}
}

// takeSession keeps the session id initialize was answered with.
func (h *httpTransport) takeSession(sid, src string) error {
	if sid == "" {
		return nil
	}
	for i := 0; i < len(sid); i++ {
		if sid[i] < 0x21 || sid[i] > 0x7e {
			return protoErrorf("%s: Mcp-Session-Id %.100q has characters other than visible ASCII", src, sid)
		}
	}
	h.mu.Lock()
	h.session = sid
	h.mu.Unlock()
	return nil
}

// rpcError hands a JSON-RPC error answer in an HTTP error body to request
// id; an error without id (the server could not tell which request) is
// taken as this request's. It reports whether id got its answer.
func (h *httpTransport) rpcError(b []byte, id codec.ID, src string) bool {
	msgs, batch, err := codec.DecodeFrame(bytes.TrimSpace(b), false)
	if err != nil || batch || len(msgs) != 1 || !msgs[0].IsResponse() || msgs[0].Error == nil {
		return false
	}
	if h.c.opts.Trace != nil {
		h.c.opts.Trace(false, b)
	}
	m := msgs[0]
	if m.ID == nil {
		m.ID = &id
		return h.c.deliver(id, reply{msg: m})
	}
	h.c.dispatch(src, b, m)
	return !h.c.isPending(id)
}

// readJSON reads an application/json answer.
func (h *httpTransport) readJSON(body io.Reader, id codec.ID, src string) error {
	max := h.c.opts.MaxFrame
	b, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrClosed, src, err)
	}
	if len(b) > max {
		return &ProtocolError{Msg: fmt.Sprintf("%s: %v (more than %d bytes)", src, codec.ErrFrameTooLarge, max), err: codec.ErrFrameTooLarge}
	}
	h.c.receive(bytes.TrimSpace(b), src)
	if h.c.isPending(id) {
		return protoErrorf("%s: it holds no response to request %s", src, id)
	}
	return nil
}

// readSSE reads a text/event-stream answer until the response to id.
func (h *httpTransport) readSSE(ctx context.Context, body io.Reader, id codec.ID, src string) error {
	max := h.c.opts.MaxFrame
	err := readSSEEvents(body, max, func(data []byte) bool {
		h.c.receive(bytes.Clone(data), src)
		return !h.c.isPending(id)
	})
	switch {
	case err == nil || !h.c.isPending(id):
		return nil
	case errors.Is(err, codec.ErrFrameTooLarge):
		return &ProtocolError{Msg: fmt.Sprintf("%s: an event is larger than %d bytes", src, max), err: codec.ErrFrameTooLarge}
	case h.base.Err() != nil:
		return ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("%w: %s: the event stream ended before the response", ErrClosed, src)
}

// readSSEEvents calls each with the data of every message event until each
// returns true (then nil) or the stream ends (io.EOF or the read error).
// Comments (keepalives) and other fields are skipped; an event or line
// larger than max fails with codec.ErrFrameTooLarge.
func readSSEEvents(body io.Reader, max int, each func(data []byte) (stop bool)) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	hasData, event := false, ""
	for {
		line, err := readSSELine(br, max)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if hasData && (event == "" || event == "message") && each(data) {
				return nil
			}
			data, hasData, event = data[:0], false, ""
			continue
		}
		if line[0] == ':' {
			continue // a comment: keepalive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
			if len(data) > max {
				return codec.ErrFrameTooLarge
			}
		case "event":
			event = string(value)
		}
	}
}

// readSSELine reads one line without its CRLF, LF or CR ending, failing
// with codec.ErrFrameTooLarge past max bytes.
func readSSELine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max+2 {
			return nil, codec.ErrFrameTooLarge
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}

// headers builds the request headers for m as the package doc describes.
func (h *httpTransport) headers(m *codec.Message) (http.Header, error) {
	hdr := h.header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	var p struct {
		Name      *string                    `json:"name"`
		URI       *string                    `json:"uri"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
	}
	if len(m.Params) > 0 {
		_ = json.Unmarshal(m.Params, &p)
	}
	var version string
	if raw, ok := p.Meta[codec.MetaProtocolVersion]; ok {
		_ = json.Unmarshal(raw, &version)
	}
	if version == "" || !codec.IsModernRevision(version) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.legacyVersion != "" {
			hdr.Set(codec.HeaderProtocolVersion, h.legacyVersion)
		}
		if h.session != "" {
			hdr.Set(codec.HeaderSession, h.session)
		}
		return hdr, nil
	}
	hdr.Set(codec.HeaderProtocolVersion, version)
	hdr.Set(codec.HeaderMethod, m.Method)
	switch codec.NameParam(m.Method) {
	case "name":
		if p.Name != nil {
			hdr.Set(codec.HeaderName, codec.EncodeHeaderValue(*p.Name))
		}
	case "uri":
		if p.URI != nil {
			hdr.Set(codec.HeaderName, codec.EncodeHeaderValue(*p.URI))
		}
	}
	if m.Method == codec.MethodToolsCall && p.Name != nil {
		h.mu.Lock()
		params := h.paramHeaders[*p.Name]
		h.mu.Unlock()
		if err := setParamHeaders(hdr, params, p.Arguments); err != nil {
			return nil, err
		}
	}
	return hdr, nil
}

// learnTools records the x-mcp-header arguments of each tool and returns
// the definitions, without those whose annotations the spec makes invalid
// (a client on Streamable HTTP must leave them out). Legacy revisions have
// no x-mcp-header.
func (h *httpTransport) learnTools(tools []json.RawMessage) []json.RawMessage {
	h.mu.Lock()
	legacy := h.legacyVersion != ""
	h.mu.Unlock()
	if legacy {
		return tools
	}
	kept := make([]json.RawMessage, 0, len(tools))
	byName := map[string][]codec.HeaderParam{}
	for _, raw := range tools {
		var t struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			kept = append(kept, raw) // ListTools reports it
			continue
		}
		params, err := codec.HeaderParams(t.InputSchema)
		if err != nil {
			if h.c.opts.OnWarning != nil {
				h.c.opts.OnWarning(fmt.Sprintf("tools/list: left out tool %q: %v", t.Name, err))
			}
			continue
		}
		byName[t.Name] = params
		kept = append(kept, raw)
	}
	h.mu.Lock()
	h.paramHeaders = byName
	h.mu.Unlock()
	return kept
}

// setParamHeaders adds Mcp-Param-NAME for each annotated argument present
// in args and not null.
func setParamHeaders(hdr http.Header, params []codec.HeaderParam, args json.RawMessage) error {
	if len(params) == 0 || len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var obj any
	if err := dec.Decode(&obj); err != nil {
		return nil
	}
	for _, p := range params {
		v := obj
		for _, k := range p.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case bool:
			s = strconv.FormatBool(x)
		case json.Number:
			s = x.String()
			if i, err := x.Int64(); err == nil {
				s = strconv.FormatInt(i, 10)
			} else if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
				s = strconv.FormatInt(int64(f), 10) // 42.0 is the integer 42
			}
		default:
			continue // absent, null, or not a primitive: no header
		}
		hdr.Set(codec.HeaderParamPrefix+p.Name, codec.EncodeHeaderValue(s))
	}
	return nil
}
