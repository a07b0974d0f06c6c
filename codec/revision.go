package codec

import "slices"

// Protocol revisions this package speaks, oldest first.
const (
	Rev20241105 = "2024-11-05"
	Rev20250326 = "2025-03-26"
	Rev20250618 = "2025-06-18"
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
)

// Revisions lists every supported revision, oldest first. Treat it as read-only.
var Revisions = []string{Rev20241105, Rev20250326, Rev20250618, Rev20251125, Rev20260728}

// LegacyRevisions lists the revisions that use the initialize handshake, oldest first.
var LegacyRevisions = []string{Rev20241105, Rev20250326, Rev20250618, Rev20251125}

const (
	// LatestRevision is the newest supported revision.
	LatestRevision = Rev20260728
	// LatestLegacyRevision is the newest revision with an initialize handshake;
	// legacy negotiation offers it when the client asks for an unknown version.
	LatestLegacyRevision = Rev20251125
	// FirstModernRevision is the first stateless revision (no initialize,
	// per-request _meta version).
	FirstModernRevision = Rev20260728
)

// IsSupportedRevision reports whether rev is one of [Revisions].
func IsSupportedRevision(rev string) bool { return slices.Contains(Revisions, rev) }

// IsModernRevision reports whether rev is a stateless revision (2026-07-28 or
// later). Revision strings are dates, so they compare lexically; an unknown
// later date counts as modern, which is what an era probe needs.
func IsModernRevision(rev string) bool { return isDate(rev) && rev >= FirstModernRevision }

// IsLegacyRevision reports whether rev is a supported revision with the
// initialize handshake.
func IsLegacyRevision(rev string) bool { return slices.Contains(LegacyRevisions, rev) }

// BatchesAllowed reports whether rev permits JSON-RPC batches (only 2025-03-26).
func BatchesAllowed(rev string) bool { return rev == Rev20250326 }

func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Reserved _meta keys of the 2026-07-28 revision (RequestMetaObject,
// ResultMetaObject, NotificationMetaObject).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	// MetaProgressToken is the _meta key of a request's progress token (all revisions).
	MetaProgressToken = "progressToken"
)

// Method names.
const (
	MethodInitialize       = "initialize"
	MethodInitialized      = "notifications/initialized"
	MethodPing             = "ping"
	MethodDiscover         = "server/discover"
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	MethodProgress         = "notifications/progress"
	MethodCancelled        = "notifications/cancelled"
	MethodToolsListChanged = "notifications/tools/list_changed"
)

// Result types of the 2026-07-28 revision.
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
)

// Cache scopes of the 2026-07-28 revision.
const (
	CacheScopePublic  = "public"
	CacheScopePrivate = "private"
)
