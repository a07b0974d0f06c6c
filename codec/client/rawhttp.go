package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/mcpipe/mcpipe/codec"
)

// RawHTTP sends frames to a Streamable HTTP endpoint as they are, for
// mcp-call raw: nothing is answered or checked on the caller's behalf. It
// still does the transport's part: the headers a frame that decodes asks
// for (see the Streamable HTTP section of http.go), and the session id and
// version a legacy initialize settles, on the later frames.
type RawHTTP struct {
	c *Client
	h *httpTransport
}

// NewRawHTTP prepares a RawHTTP for endpoint; see NewHTTP.
func NewRawHTTP(endpoint string, hopts HTTPOptions) (*RawHTTP, error) {
	c, err := NewHTTP(endpoint, hopts, Options{})
	if err != nil {
		return nil, err
	}
	return &RawHTTP{c: c, h: c.t.(*httpTransport)}, nil
}

// RawAnswer is what one POST got back.
type RawAnswer struct {
	Status int
	// Location is a redirect's (3xx) target, which is not followed.
	Location string
	// Messages are the JSON texts of the answer in order: the body, or the
	// data of each SSE event, or a JSON body of an error status.
	Messages [][]byte
	// Body is the start of an answer that is neither, for people.
	Body string
}

// Post sends frame as one POST and reads the whole answer (an SSE stream
// until it ends, or until the response to frame's request when frame is
// one). err is a failure to reach the server, a cut stream or ctx's end.
func (r *RawHTTP) Post(ctx context.Context, frame []byte) (*RawAnswer, error) {
	var hdr http.Header
	var reqID *codec.ID
	isInit := false
	msgs, batch, derr := codec.DecodeFrame(frame, true)
	if derr == nil && !batch && len(msgs) == 1 {
		var err error
		if hdr, err = r.h.headers(msgs[0]); err != nil {
			return nil, err
		}
		if msgs[0].IsRequest() {
			reqID = msgs[0].ID
		}
		isInit = msgs[0].Method == codec.MethodInitialize
	} else {
		// Not one message: the legacy headers, whatever it is.
		hdr, _ = r.h.headers(&codec.Message{})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.h.url, bytes.NewReader(frame))
	if err != nil {
		return nil, err
	}
	req.Header = hdr
	resp, err := r.h.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if isInit && resp.StatusCode/100 == 2 {
		if err := r.h.takeSession(resp.Header.Get("Mcp-Session-Id"), "HTTP answer to initialize"); err != nil {
			return nil, err
		}
	}
	ans := &RawAnswer{Status: resp.StatusCode}
	if resp.StatusCode/100 == 3 {
		ans.Location = resp.Header.Get("Location")
	}
	take := func(m []byte) {
		ans.Messages = append(ans.Messages, bytes.Clone(m))
		if isInit {
			var res struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(m, &res) == nil && res.Result.ProtocolVersion != "" && !codec.IsModernRevision(res.Result.ProtocolVersion) {
				r.h.negotiated(res.Result.ProtocolVersion)
			}
		}
	}
	max := r.c.opts.MaxFrame
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		err := readSSEEvents(resp.Body, max, func(data []byte) bool {
			take(data)
			return reqID != nil && answers(data, *reqID)
		})
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return ans, nil
		case errors.Is(err, codec.ErrFrameTooLarge):
			return ans, protoErrorf("HTTP answer: an event is larger than %d bytes", max)
		case ctx.Err() != nil:
			return ans, ctx.Err()
		}
		return ans, fmt.Errorf("%w: the event stream broke: %v", ErrClosed, err)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return ans, fmt.Errorf("%w: reading the answer: %v", ErrClosed, err)
	}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
	case json.Valid(b) && len(b) <= max:
		take(b)
	default:
		ans.Body = fmt.Sprintf("%.300s", b)
	}
	return ans, nil
}

// answers says whether data holds the response to id.
func answers(data []byte, id codec.ID) bool {
	msgs, _, _ := codec.DecodeFrame(data, true)
	for _, m := range msgs {
		if m.IsResponse() && m.ID != nil && m.ID.Key() == id.Key() {
			return true
		}
	}
	return false
}

// Close ends the session, if any, as Client.CloseWrite does.
func (r *RawHTTP) Close() { r.c.CloseWrite() }
