package router

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
)

// The approval gate in 2026-07-28, where a server asks nothing on its own
// stream: the first tools/call of a gated tool is answered with an
// input_required result whose inputRequests hold the approval question
// (key ApprovalInput) and whose requestState seals what was asked: the
// tool, the digest of the arguments, the caller and an expiry. The client
// asks its user and calls again with the same arguments, the answer in
// inputResponses and the requestState. That call runs when the state is
// authentic (HMAC-SHA256 under Options.StateKey: mcp-route --http uses
// its --session-key-file, so any replica continues it), names this tool
// and these arguments, this caller (over HTTP: the bearer token, when
// --http-token-file is set; any caller otherwise), has not expired
// (--confirm-timeout), and the answer approves. Otherwise: isError, and
// nothing ran. Stateless, the state cannot be spent: the same caller may
// present it again, for the same tool and arguments, until it expires.

// ApprovalInput is the key of the approval question in inputRequests and
// of its answer in inputResponses.
const ApprovalInput = "mcp-route/approve"

type approvalState struct {
	Tool    string `json:"t"`
	Digest  string `json:"d"`
	Caller  string `json:"c"`
	Expires int64  `json:"e"` // unix milliseconds
	Nonce   string `json:"n"`
}

// inputRequiredResult is a 2026-07-28 InputRequiredResult.
type inputRequiredResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

const stateLabel = "mcp-route approval v1\x00"

func (s *server) seal(st approvalState) string {
	body, _ := json.Marshal(st)
	m := hmac.New(sha256.New, s.opts.StateKey)
	m.Write([]byte(stateLabel))
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var errBadState = errors.New("the requestState is not one of ours (forged, altered, or sealed under another key)")

func (s *server) open(state string) (*approvalState, error) {
	b64, mac64, ok := strings.Cut(state, ".")
	if !ok || len(state) > 4096 {
		return nil, errBadState
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	mac, err2 := base64.RawURLEncoding.DecodeString(mac64)
	if err1 != nil || err2 != nil {
		return nil, errBadState
	}
	m := hmac.New(sha256.New, s.opts.StateKey)
	m.Write([]byte(stateLabel))
	m.Write(body)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return nil, errBadState
	}
	var st approvalState
	if json.Unmarshal(body, &st) != nil {
		return nil, errBadState
	}
	return &st, nil
}

// approveModern is approve for a 2026-07-28 request: nil when approved,
// else an isError result or the input_required result that asks.
func (s *server) approveModern(ctx context.Context, req *core.Request, def *codec.Tool, digest string, question map[string]any, refuse func(string) *codec.CallToolResult) any {
	var p struct {
		RequestState   string                     `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	json.Unmarshal(req.Params, &p)
	caller := core.CallerOf(ctx)
	timeout := s.opts.Confirm.timeout()
	if p.RequestState == "" {
		if !codec.ClientCanElicit(req.ClientCapabilities(), codec.ElicitForm) {
			return refuse("this client cannot be asked: its request declares no elicitation capability")
		}
		ask, _ := json.Marshal(map[string]any{"method": codec.MethodElicit, "params": question})
		nonce := make([]byte, 12)
		rand.Read(nonce)
		st := approvalState{Tool: def.Name, Digest: digest, Caller: caller,
			Expires: time.Now().Add(timeout).UnixMilli(), Nonce: hex.EncodeToString(nonce)}
		s.logCall(ctx, slog.LevelDebug, "call: approval asked (input_required)", def.Name, req.ID)
		return inputRequiredResult{ResultType: codec.ResultTypeInputRequired,
			InputRequests: map[string]json.RawMessage{ApprovalInput: ask}, RequestState: s.seal(st)}
	}
	st, err := s.open(p.RequestState)
	switch {
	case err != nil:
		return refuse(err.Error())
	case st.Tool != def.Name || st.Digest != digest:
		return refuse("the approval presented was given for another call (tool or arguments differ: " + digest + ")")
	case st.Caller != caller:
		return refuse("the approval presented was given to another caller")
	case time.Now().UnixMilli() > st.Expires:
		return refuse(fmt.Sprintf("the approval presented has expired (--confirm-timeout %v)", timeout))
	}
	if r := s.approved(ctx, req, def, p.InputResponses[ApprovalInput], refuse); r != nil {
		return r
	}
	return nil
}

// approved reads an elicitation result: nil when it approves.
func (s *server) approved(ctx context.Context, req *core.Request, def *codec.Tool, result json.RawMessage, refuse func(string) *codec.CallToolResult) *codec.CallToolResult {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil {
		return refuse("the client's answer is not an elicitation result")
	}
	switch {
	case r.Action == "accept" && r.Content["approve"] == true:
		return nil
	case r.Action == "accept":
		return refuse("the user did not approve it")
	case r.Action == "decline" || r.Action == "cancel":
		return refuse("the user answered " + r.Action)
	}
	return refuse(fmt.Sprintf("the client answered %s", codec.QuoteClip(r.Action, 40)))
}
