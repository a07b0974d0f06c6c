// Package upstream mounts other MCP servers into mcp-route: one supervised
// upstream server per --upstream NAME=CMD (or NAME=https://...), its tools
// served as NAME__TOOL beside the local ones, its prompts as NAME__PROMPT
// and its resources as mcp-upstream://NAME/URI (package router does the
// merge).
//
// # Specs
//
// NAME matches [A-Za-z0-9-]{1,32}. CMD is split like a shell would split it,
// without running one (internal/cmdline: quotes and backslashes work; an
// unquoted ; | & < > is refused). A CMD that starts with http:// or https://
// is a Streamable HTTP endpoint, reached with codec/client's HTTP transport;
// plain http only to a loopback address. Refused, with an error naming the
// spec: no "=", a bad NAME, a NAME given twice, a CMD that does not split,
// http to a host that is not loopback.
//
// An HTTP upstream's Spec.Header goes with every request to it
// (--upstream-header NAME='K: V', --upstream-token-file NAME=FILE, applied
// by SetHeaders, which refuses a header the MCP transport sets itself, a
// line break in one, and a NAME that is not an HTTP upstream). It may hold
// a token: it is never logged. An upstream that refuses mcp-route's
// credentials (401, 403) fails to start with that status in the log, and
// is retried like any upstream that fails to start.
//
// # Starting and supervision
//
// A stdio upstream is started as a tool is (codec/client.Start on
// internal/proc): its own process group, Options.Env (the tools' minimal
// environment with --pass-env and --env), --root as its working directory,
// and on the tools' confined spawner when confinement is on (it is then
// confined exactly like a tool: its program must be where a tool may
// execute, and it reads and writes only what a tool may). mcp-route connects
// with codec/client's auto era (server/discover, else initialize) and lists
// its tools; the last good list is kept.
//
// An upstream that exits or closes its stdout fails its calls in flight at
// once with an isError result "upstream NAME died: <how it ended>; stderr:
// <its last lines>". It is restarted after a backoff: MinBackoff (500ms),
// doubled per restart, capped at MaxBackoff (30s), with ±20% jitter
// (mcp-route's --upstream-backoff MIN,MAX sets both; ParseBackoff reads
// it: two positive durations, MIN <= MAX); a run
// of 2×MaxBackoff or more starts the doubling over. While it waits, its
// tools stay listed from the last good list and a call to one fails at once
// with isError "upstream NAME is restarting; retry in 2s". A call that
// arrives while a start is under way waits for it, at most ListTimeout
// (then isError "upstream NAME is starting and not ready after 3s; retry
// later"). MaxFailures (5) failed starts in a row (the process cannot
// start, the handshake fails or gets no answer within ConnectTimeout, or
// tools/list fails) mark it down: the log says why, calls fail at once
// naming the last error, and a start is tried again every MaxBackoff.
// A stdio upstream that lives on but stops reading its stdin is taken as
// hung once a write to it has made no progress for StallTimeout (the call
// timeout, --timeout, by default; codec/client's Options.WriteTimeout, in
// chunks of 16 KiB): by then every call it had been sent has timed out, so
// restarting it loses nothing that could still succeed, while a server that
// reads slowly, or works on one call at a time, is left alone. Its calls in
// flight fail at once with isError "upstream NAME is hung: it read nothing
// of its stdin for 30s; restarting it"; it is stopped (stdin closed, then
// its whole group SIGTERMed and SIGKILLed, Grace apart) and restarted like
// one that died.
// An HTTP upstream has no process: a call that cannot reach it (no
// connection, 502-504) or whose session is gone (404) gets an isError
// result "upstream NAME is unreachable: ...; reconnecting", and the
// connection is made again the same way, after the same backoff.
//
// Spec.Spawn, when set, starts the process instead of Options.Spawn;
// Spec.Rules, when set, are what its confinement opens: a start that
// fails, or an upstream that dies, with a stderr that reports a refused
// file (EACCES, EPERM, "Permission denied", "Operation not permitted")
// naming a path the rules refuse and the file's mode allows, gets the
// tools' explanation (confine.Explain: "mcp-route's confinement refused
// PATH (...); --allow-write DIR grants it", the narrowest grant) in its
// message, and its stderr cut to the lines about the denial (without a
// launcher's advice, such as npm's "sudo chown").
//
// # Launcher profiles
//
// Launcher tells, from a command line, which launcher profile it asks for:
// ProfileNpx for npx and npm exec (npm x), ProfileUvx for uvx and uv tool
// run (uv tool x). LoadProfile computes the places that profile needs for
// an upstream with a given environment, the way the launcher finds them
// (npm: npm_config_* in the environment, the user npmrc, the global npmrc
// under npm's prefix, npm's builtin npmrc, ~/.npm; node as PATH finds it;
// uv: UV_CACHE_DIR, UV_TOOL_DIR, UV_PYTHON_INSTALL_DIR, the XDG_*
// directories, ~/.cache/uv and ~/.local/share/uv), symlinks resolved,
// places that do not exist left out (the cache is made, 0700). It never
// reads the project .npmrc in the working directory (--root, which
// clients may write). Bounds keep it from widening the operator's grants:
// a place inside the root, the private TMPDIR or an --allow-write path is
// dropped (the operator's flag decides it), and so is a writable place
// that holds the home directory, a tool directory, the root, an
// --allow-write path or a system directory, or "/". Profile.Dropped says
// why for each. With Bounds.NoNetwork, Profile.Env turns the launcher's
// offline mode on (npm_config_offline=true, UV_OFFLINE=1) unless the
// environment sets it; mcp-route adds it as Spec.Env. mcp-route runs such
// an upstream on a confinement of its own (Spec.Spawn): the tools do not
// get the launcher's places.
//
// A launcher's first start may fetch its package: Spec.FirstConnect and
// Spec.FirstList replace ConnectTimeout and ListTimeout until a start has
// listed the upstream's tools once. mcp-route sets them for a launcher
// upstream to LauncherFirstConnect (3m) and LauncherFirstList (15s, or
// --upstream-timeout when given); see the constants for the figures
// behind them. List's waits for several upstreams overlap: each counts
// from the start of the List.
//
// An upstream's stderr goes to the log at debug level (--verbose), one
// record per line, rate-limited (see Bounds); its last 2 KiB are kept, all
// of it whatever the log shows, for the messages above.
//
// # Lists
//
// Each tool is served as NAME__TOOL with its description, schemas and
// annotations as the upstream gave them. Left out, with one log line each:
// a tool whose name breaks the 2025-11-25 tool-name rules
// (codec.ValidateToolName), one whose NAME__TOOL is longer than 64
// characters (the limit many LLM APIs set), a name the upstream lists
// twice (neither is served), and under --readonly a tool not annotated
// readOnlyHint: true (logged at debug: the operator asked for it). Two
// upstreams never clash, since NAME holds no '_' and names are unique; a
// clash with a local tool is the router's to report (neither is served).
// Options.Admit, when set (definition pinning), may withhold a tool: it is
// left out of the list and a call to it gets isError with the reason. It
// is asked again when an upstream's list changes, and after Readmit (the
// pin file changed), which also runs the OnChange functions.
//
// List waits for upstreams that have not listed yet at most ListTimeout
// (--upstream-timeout) in all, and for each only once: it serves what it
// has, and an upstream it gave up on appears with the list change its first
// list makes. An upstream's notifications/tools/list_changed (for a
// 2026-07-28 upstream on the subscriptions/listen request mcp-route opens,
// and whose acknowledgement it awaits, at most 5s, before the first
// tools/list, so that no change falls between the two) makes it re-list
// that upstream (at most once a second, see Bounds); when the list
// differs, the OnChange functions run (the router then sends list_changed
// to its clients). A failed re-list keeps the last
// good list. An HTTP upstream's notifications reach mcp-route on the
// stream of the listen request (a modern one) or on the GET stream
// mcp-route opens after initialized and reopens while connected (a legacy
// one; an upstream that answers the GET with 405 has no way to announce a
// change, and its list is read again only when it reconnects).
//
// # Resources and prompts
//
// An upstream that declares the resources capability has its
// resources/list and resources/templates/list read with its tools (and
// again on its list_changed), one that declares prompts its prompts/list;
// a list that fails is logged and served empty (the tools are not held
// back by it). Set.Surface serves them renamed: a prompt as
// NAME__PROMPT, under the tool-name rules (codec.ValidateToolName,
// MaxListedName); a resource's uri and a template's uriTemplate as
// mcp-upstream://NAME/ followed by the upstream's own, verbatim (Scheme,
// ServedURI). No escaping: the own URI is a URI already, whose characters
// are all allowed in a path, and a template keeps its expressions where
// they were, so what a client expands the served template to is the
// prefix and what the upstream's expansion would be, mapped back by
// cutting the prefix. Every other member is kept as the upstream gave it.
//
// ParseURI reads a client's URI: the scheme (compared without case), the
// NAME up to the next "/", which must be an upstream's, and the rest,
// which must be an absolute URI (scheme:...) of at most MaxURI bytes,
// UTF-8, without white space or control characters, and not in Scheme
// itself. Anything else is refused, the error naming what is wrong (the
// router sends it as -32602): a NAME no upstream has, a NAME with an
// escape ("docs%2F..%2Ffs"), a rest that is a relative path ("../fs/...")
// or escaped ("%66ile:"), a nested mcp-upstream://. Only the upstream the
// NAME gives is ever asked, with the rest as it came: a client reaches
// another upstream's resource, or a local one, by its own URI only.
//
// Left out of a list, with one log line each: an item whose uri or
// template breaks those rules (one in Scheme is an upstream pointing back
// at the gateway), a name with a control character, a key listed twice
// (none served), more than MaxSurfaceItems of one kind, an item over
// MaxToolDef bytes, and what passes MaxListBytes (counted apart from the
// tools). RewriteContents and RewritePrompt put the uris of a read's
// contents and of a prompt's embedded resources under the scheme; one
// that breaks the rules (an upstream answering with another's URI in the
// scheme) makes the answer an error. Forward bounds an answer by
// MaxOutput and CallTimeout, and passes the upstream's JSON-RPC error on.
// Options.AdmitSurface, when set (pinning), withholds an item as Admit
// withholds a tool: left out of the list, a read or get of it refused.
// notifications/resources/updated of an upstream reaches OnResourceUpdated
// with the served uri, from a goroutine of its own (queued, at most 1024;
// more are dropped): a function slow to return holds up the updates, not
// the upstream's answers. List changes reach OnSurfaceChange.
//
// # Calls
//
// A call is forwarded with its arguments as they came (the upstream checks
// them against its schema) and the upstream's CallToolResult is returned as
// it gave it: content of every type, structuredContent, isError and other
// members; only resultType and the upstream's serverInfo in _meta are
// replaced by mcp-route's, and for a client of a revision before 2025-11-25
// a content type its revision lacks becomes text, as for local tools. A
// JSON-RPC error from the upstream is passed on with its code and message.
// A downstream progressToken is replaced by a token of mcp-route's own
// upstream, and notifications/progress for it go back with the client's
// token. Cancellation (notifications/cancelled, which cancels the call's
// context) is passed on as notifications/cancelled for the upstream's
// request id (codec/client). The per-call timeout (CallTimeout) applies the
// same way and ends in an isError "upstream NAME: TOOL timed out after 30s".
// A result that asks for more (2026-07-28 resultType other than complete)
// is an isError: mcp-route cannot relay input requests.
//
// Requests from an upstream to mcp-route (sampling/createMessage,
// elicitation/create, roots/list) are answered with JSON-RPC error -32601
// (naming --upstream-allow for the first two); only ping is answered.
// Spec.Allow (--upstream-allow NAME=elicitation,sampling, read by
// ParseAllow) declares those capabilities to the upstream, and its
// requests of them go to the Asker of the latest call in flight to it
// (WithAsker, on the call's context: the router's core.Request.Call to
// that call's client; a sampling request's includeContext made "none":
// through the gateway the client's context is every upstream's); none in
// flight, calls of more than one client in
// flight (WithAsker's client differs: two HTTP sessions), or a client that
// cannot be asked (the Asker says why), is -32600; the client's answer (over MaxOutput:
// -32603) or error goes back as it came. codec/client serves at most
// client.MaxServerRequests at once. roots/list is never passed on.
//
// # Bounds
//
// An upstream is not trusted to behave: what it can make mcp-route hold,
// do or write is bounded.
//   - Options.MaxOutput (--max-output, 1 MiB by default) caps a result (its
//     JSON as the upstream sent it) and a JSON-RPC error (its message and
//     data): over it, the call gets an isError naming the cap ("upstream
//     NAME: TOOL: its result of N bytes exceeds --max-output (M bytes)";
//     an error's first 200 bytes are quoted).
//   - An answer longer than the frame mcp-route reads from an upstream
//     (codec.DefaultMaxFrame, 16 MiB) is skipped unread up to its newline,
//     never held whole (codec/client), and the upstream's later answers
//     are read as usual. When its first or last bytes give its id (see
//     codec/client's package doc), the call it answers fails at once with
//     the same isError ("its result of N bytes exceeds --max-output (M
//     bytes)", or "exceeds the largest frame mcp-route reads (16777216
//     bytes)" when --max-output is larger); else it is a protocol error
//     (below), and that call ends with its timeout.
//   - Protocol errors (a line that is not JSON-RPC, an answer to no request)
//     are logged at most MaxNoiseLines (10) per NoiseWindow (a minute) per
//     upstream, each clipped to MaxNoiseLine (300) bytes; past that one line
//     says the rest are counted, and the count is logged when the next
//     window begins.
//   - Its stderr lines are logged (--verbose) at most MaxStderrLines (100)
//     per NoiseWindow per upstream, each cut to MaxStderrLine (1 KiB);
//     past that one line says the rest are counted, and the count is
//     logged when the next window begins.
//   - A tool definition larger than MaxToolDef (1 MiB, as the upstream sent
//     it) is left out, with one log line.
//   - The upstream tools served add up to at most Options.MaxListBytes
//     (DefaultMaxListBytes, 8 MiB: half the 16 MiB frame a client reads by
//     default, the rest left for the local tools), so that the merged
//     tools/list always fits a client's frame. An upstream's definitions
//     past it are not even kept as its list is read (its memory is bounded
//     by one page), and the upstreams are served in the order given: one
//     whose tools would pass what the earlier ones left loses them. Either
//     way one log line says how many tools were left out.
//   - Progress for a call is relayed from that call's own goroutine, out of
//     a queue of at most MaxQueuedProgress (64) notifications: one client
//     slow to read its progress (an HTTP client that does not read its
//     stream) holds up its own call only, never the upstream's other calls.
//     Progress is lossy by nature: a notification that finds the queue full
//     is dropped, and a message is cut to MaxProgressMessage (1 KiB).
//     What is queued when the result comes is sent before it.
//   - An upstream is re-listed at most once per RelistInterval (a second):
//     a storm of notifications/tools/list_changed is coalesced into one
//     tools/list when the second is up, and a change announced while a list
//     is under way makes another, so the last change is never lost.
//   - A stdio upstream that stops reading its stdin: at most 64 writes to
//     it are under way at once (codec/client.MaxPendingWrites), each
//     holding a goroutine until the upstream is stopped, which happens
//     when one has made no progress for StallTimeout (above); a call that
//     finds none free meanwhile waits without sending anything. At most
//     4096 abandoned request ids (timed out, cancelled) are remembered so
//     that their late answers are ignored (codec/client.MaxAbandoned); an
//     older one's late answer is a protocol error.
//   - What an upstream names in a log line (a tool name, an error text, an
//     id) is quoted and cut to a few hundred bytes, and the leave-out lines
//     already logged are remembered for at most 4096 tools (past that they
//     may be logged again), so an upstream that keeps renaming its tools
//     cannot grow mcp-route's memory.
//
// # Shutdown
//
// Close stops every upstream the stdio transport's way (stdin closed, then
// SIGTERM, then SIGKILL of its whole group, Grace apart) and returns when
// each is reaped: nothing an upstream started outlives mcp-route.
//
// For `mcp-route pin`: NewSet, Start, each Upstream's WaitListed and Tools
// (definitions as the upstream gave them), then Close. Admit is asked once
// per tool each time an upstream's list changes; Readmit asks again (after
// the pins changed).
package upstream
