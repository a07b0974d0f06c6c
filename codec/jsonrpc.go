package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC 2.0 and MCP error codes.
const (
	CodeParseError         = -32700
	CodeInvalidRequest     = -32600
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeInternalError      = -32603
	CodeUnsupportedVersion = -32022
)

// Sentinels, one per code. They match any *Error with the same code under
// errors.Is, whatever its message: errors.Is(err, codec.ErrInvalidParams).
var (
	ErrParse              = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest     = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound     = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams      = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal           = &Error{Code: CodeInternalError, Message: "internal error"}
	ErrUnsupportedVersion = &Error{Code: CodeUnsupportedVersion, Message: "unsupported protocol version"}
)

// Error is a JSON-RPC error object. It is also a Go error; errors.Is compares codes.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an error object with the given code and message.
func NewError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// Errorf returns an error object with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) || e == nil || t == nil {
		return false
	}
	return e.Code == t.Code
}

// UnsupportedVersionError is the -32022 answer to a modern request whose _meta
// names a version this side does not speak; data carries the supported list
// and the requested version, as UnsupportedProtocolVersionError requires.
func UnsupportedVersionError(requested string, supported []string) *Error {
	if supported == nil {
		supported = []string{}
	}
	data, _ := marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{supported, requested})
	return &Error{
		Code:    CodeUnsupportedVersion,
		Message: fmt.Sprintf("unsupported protocol version %q", requested),
		Data:    data,
	}
}

// AsError returns the JSON-RPC error object behind err: err itself (or what it
// wraps) when that is an *Error, ErrFrameTooLarge as -32600, anything else as
// -32603 carrying err's text.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrFrameTooLarge) {
		return &Error{Code: CodeInvalidRequest, Message: err.Error()}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// ID is a JSON-RPC request id: a JSON string or integer, kept as the exact bytes
// it arrived as, so that a response echoes it byte for byte ("\u0061" stays
// "\u0061", -0 stays -0). The zero ID is invalid (IsZero reports it). IDs are
// comparable: == compares the raw bytes; use Key to compare by value.
//
// Integers follow the JSON integer grammar (-?(0|[1-9][0-9]*), any length);
// a fraction or exponent (1.5, 1e3, 1.0) is refused, as are null, booleans,
// objects and arrays.
type ID struct{ raw string }

// StringID returns the id for the string s.
func StringID(s string) ID {
	b, _ := marshal(s)
	return ID{string(b)}
}

// IntID returns the id for the integer n.
func IntID(n int64) ID { return ID{strconv.FormatInt(n, 10)} }

// ParseID checks raw as an id (a JSON string or integer, surrounding white
// space allowed) and keeps its bytes.
func ParseID(raw []byte) (ID, error) {
	return parseID(raw, false)
}

// parseID is ParseID; scanned says raw has passed the frame scanner, so a
// string token is known to be valid.
func parseID(raw []byte, scanned bool) (ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ID{}, errors.New("empty id")
	}
	switch c := raw[0]; {
	case c == '"':
		if !scanned {
			if !jsValidString(raw) {
				return ID{}, errors.New("id is not a valid JSON string")
			}
		}
		return ID{string(raw)}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if !isJSONInteger(raw) {
			return ID{}, fmt.Errorf("id %s is not an integer", raw)
		}
		return ID{string(raw)}, nil
	case c == 'n':
		return ID{}, errors.New("id must not be null")
	default:
		return ID{}, fmt.Errorf("id must be a string or an integer, not %s", jsonKind(raw))
	}
}

func isJSONInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '0' {
		return len(b) == 1
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '"':
		return "a string"
	default:
		return "a number"
	}
}

// IsZero reports whether id is the zero ID (no id).
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether id is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Raw returns the id's JSON bytes exactly as received.
func (id ID) Raw() []byte { return []byte(id.raw) }

// String returns the id's JSON text as received ("\"a\"" or "1"); suitable for logs.
func (id ID) String() string { return id.raw }

// Value returns the decoded string of a string id, or the integer text of an
// integer id.
func (id ID) Value() string {
	if id.IsString() {
		var s string
		_ = json.Unmarshal([]byte(id.raw), &s)
		return s
	}
	return id.raw
}

// Key returns a value-based key: two ids that denote the same JSON value
// ("a" and "\u0061", 0 and -0) have the same Key. Use it to match a
// notifications/cancelled requestId to an in-flight request.
func (id ID) Key() string {
	if id.IsString() {
		return "s" + id.Value()
	}
	if id.raw == "-0" {
		return "n0"
	}
	return "n" + id.raw
}

// MarshalJSON writes the id's bytes as received; the zero ID is null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON accepts a string or an integer (see ParseID).
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := ParseID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method, no ID), or a response (Result or Error, no Method).
// Params and Result are raw JSON; decode them with json.Unmarshal into the MCP
// types of this package. To change one, assign a new slice rather than edit
// its bytes: MarshalJSON copies a value DecodeFrame checked and found
// compact as it is, without checking it again, as long as the field still
// holds that slice.
type Message struct {
	JSONRPC string // "2.0"; MarshalJSON always writes "2.0"
	ID      *ID
	Method  string
	Params  json.RawMessage
	Result  json.RawMessage
	Error   *Error

	// compact is the Params or Result slice DecodeFrame made, when the value
	// had no white space outside its strings (see writeRaw).
	compact []byte
}

// writeRaw writes raw (m's Params or Result) compact: copied when it is
// still the valid compact value DecodeFrame gave m, else through
// compactInto, which checks it.
func (m *Message) writeRaw(b *bytes.Buffer, raw []byte) error {
	if len(raw) > 0 && len(raw) == len(m.compact) && &raw[0] == &m.compact[0] {
		b.Write(raw)
		return nil
	}
	return compactInto(b, raw)
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response (no method).
func (m *Message) IsResponse() bool { return m.Method == "" }

// MarshalJSON writes the compact envelope. A response with a nil ID (an
// answer to a frame whose id could not be read) has no "id" member: JSON-RPC
// 2.0 asks for null there, but every MCP schema types RequestId as string or
// integer, and 2025-11-25 and later make the member optional, so omitting it
// is the form that validates.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(64 + len(m.Params) + len(m.Result))
	b.WriteString(`{"jsonrpc":"2.0"`)
	if m.ID != nil && !m.ID.IsZero() {
		b.WriteString(`,"id":`)
		b.WriteString(m.ID.raw)
	}
	if m.Method != "" {
		b.WriteString(`,"method":`)
		s, err := marshal(m.Method)
		if err != nil {
			return nil, err
		}
		b.Write(s)
		if len(m.Params) > 0 {
			b.WriteString(`,"params":`)
			if err := m.writeRaw(&b, m.Params); err != nil {
				return nil, fmt.Errorf("params: %w", err)
			}
		}
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	if m.Error != nil {
		b.WriteString(`,"error":`)
		e, err := marshal(m.Error)
		if err != nil {
			return nil, err
		}
		b.Write(e)
	} else {
		b.WriteString(`,"result":`)
		if len(m.Result) == 0 {
			b.WriteString("{}")
		} else if err := m.writeRaw(&b, m.Result); err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes and checks one message object (see DecodeMessage).
func (m *Message) UnmarshalJSON(b []byte) error {
	msg, err := DecodeMessage(b)
	if err != nil {
		return err
	}
	*m = *msg
	return nil
}

// NewRequest builds a request; params is marshalled (nil means no params).
func NewRequest(id ID, method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{JSONRPC: "2.0", ID: &id, Method: method, Params: p}, nil
}

// NewNotification builds a notification; params is marshalled (nil means no params).
func NewNotification(method string, params any) (*Message, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Message{JSONRPC: "2.0", Method: method, Params: p}, nil
}

// NewResponse builds a result response; result is marshalled (nil means {}).
func NewResponse(id ID, result any) (*Message, error) {
	r, err := marshalParams(result)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = json.RawMessage("{}")
	}
	return &Message{JSONRPC: "2.0", ID: &id, Result: r}, nil
}

// NewErrorResponse builds an error response. A nil id (the request's id could
// not be read) leaves "id" out; see Message.MarshalJSON.
func NewErrorResponse(id *ID, err *Error) *Message {
	if err == nil {
		err = ErrInternal
	}
	if id != nil && id.IsZero() {
		id = nil
	}
	return &Message{JSONRPC: "2.0", ID: id, Error: err}
}

func marshalParams(v any) (json.RawMessage, error) {
	switch p := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if p == nil {
			return nil, nil
		}
		var b bytes.Buffer
		if err := compactInto(&b, p); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return marshal(v)
}

// marshal is json.Marshal without HTML escaping and without the trailing
// newline of json.Encoder: frames carry <, > and & as themselves.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil
}

// Marshal encodes v as compact JSON without HTML escaping (the encoding every
// frame uses). The result never contains a raw newline.
func Marshal(v any) ([]byte, error) { return marshal(v) }
