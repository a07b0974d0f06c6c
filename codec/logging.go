package codec

import (
	"encoding/json"
	"strings"
)

// Methods of logging, elicitation and sampling: what a server may ask of
// its client, and the log records it may send.
const (
	MethodLoggingSetLevel = "logging/setLevel"
	MethodLoggingMessage  = "notifications/message"
	MethodElicit          = "elicitation/create"
	MethodCreateMessage   = "sampling/createMessage"
)

// LogLevels are the syslog severities of MCP's LoggingLevel, least severe
// first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogLevelRank returns level's place in LogLevels (0 for debug), and false
// for a name that is not a LoggingLevel. Names are exact: the schemas
// allow nothing else.
func LogLevelRank(level string) (int, bool) {
	for i, l := range LogLevels {
		if l == level {
			return i, true
		}
	}
	return -1, false
}

// LogEnabled reports whether a record at level passes a client's
// threshold: false when the client set none ("") or either is unknown.
func LogEnabled(threshold, level string) bool {
	t, ok1 := LogLevelRank(threshold)
	l, ok2 := LogLevelRank(level)
	return ok1 && ok2 && l >= t
}

// LoggingMessageParams are the params of notifications/message.
type LoggingMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Elicitation modes of elicitation/create (2025-11-25 on: "form" when
// the params have no mode).
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// ClientCanElicit reports whether caps (a client's declared capabilities)
// allow elicitation/create in mode (ElicitForm or ElicitURL). An
// elicitation capability with neither form nor url is form only: the
// revisions before 2025-11-25 had no modes, and 2025-11-25 reads an empty
// object so.
func ClientCanElicit(caps ClientCapabilities, mode string) bool {
	raw, ok := caps["elicitation"]
	if !ok || !isObject(raw) {
		return false
	}
	var modes map[string]json.RawMessage
	if json.Unmarshal(raw, &modes) != nil {
		return false
	}
	_, form := modes[ElicitForm]
	_, url := modes[ElicitURL]
	if !form && !url {
		return mode == ElicitForm
	}
	if mode == ElicitURL {
		return url
	}
	return form
}

// ClientCanSample reports whether caps allow sampling/createMessage.
func ClientCanSample(caps ClientCapabilities) bool {
	raw, ok := caps["sampling"]
	return ok && isObject(raw)
}

func isObject(raw json.RawMessage) bool {
	return strings.HasPrefix(strings.TrimSpace(string(raw)), "{")
}
