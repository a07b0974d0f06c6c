package codec

import "fmt"

// What a legacy session remembers beside its revision: the capabilities
// the client declared in initialize, and the log level it asked for with
// logging/setLevel. A 2026-07-28 request carries both in its _meta
// instead, and a server must not take them from an earlier request.

// SetClientCapabilities records the capabilities the client declared in
// initialize (or, for a resumed session, in the initialize that began it).
func (s *Session) SetClientCapabilities(caps ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}

// ClientCapabilities returns what SetClientCapabilities recorded; nil
// before. The map is shared: do not modify it.
func (s *Session) ClientCapabilities() ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// SetLogLevel records the threshold of logging/setLevel; a name that is
// not a LoggingLevel is refused.
func (s *Session) SetLogLevel(level string) error {
	if _, ok := LogLevelRank(level); !ok {
		return fmt.Errorf("codec: unknown log level %q: want one of %v", level, LogLevels)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = level
	return nil
}

// LogLevel returns the threshold the client set, "" when it set none (then
// no notifications/message is sent, as in 2026-07-28 and the Go SDK).
func (s *Session) LogLevel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}
