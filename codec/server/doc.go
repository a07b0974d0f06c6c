// Package server is the MCP server core: it serves one MCP conversation
// from any transport (a [Conn]: stdio today, Streamable HTTP and a gateway's
// client side next) and dispatches requests to a method table, so that no
// binary carries a second copy of the protocol logic.
//
// It lives below the binaries, beside codec and codec/client, because
// more than one needs it: mcp-route serves its tools through it, and the
// test server internal/fakeserver speaks through it; mcp-route and mcp-call
// must not import each other's packages. It
// imports codec and the standard library only (golang.org/x/sys/unix for
// the output watch).
//
// # Contract
//
// New returns a [Server] for one conversation; [Server.Handle] fills its
// method table by method name; [Server.Serve] serves it on a Conn until the
// conversation ends. The core owns:
//
//   - Both protocol eras, through a [codec.Session] (new, or one resumed
//     with Options.Session by a transport whose session outlives a
//     conversation, as Streamable HTTP's does): the legacy initialize
//     handshake (negotiation, notifications/initialized, requests before
//     initialize refused with -32600) and the stateless 2026-07-28 requests
//     (revision in _meta; an unsupported one gets -32022). server/discover
//     and ping are answered at any time; initialize in a modern request, a
//     notification sent as a request, and any method not in the table are
//     -32601. JSON-RPC batches are accepted only in a session that
//     negotiated 2025-03-26 and answered with one array once every request
//     in them has answered; elsewhere each request in a batch gets -32600.
//     A bad frame gets an error response and the conversation goes on.
//   - The built-in methods: initialize, ping, server/discover (from
//     Options.ServerInfo, Capabilities, Instructions and DiscoverTTL; a
//     handler may replace ping and server/discover) and
//     subscriptions/listen (listen.go); logging/setLevel when
//     Options.Capabilities declares logging (legacy revisions; -32601 in
//     2026-07-28). initialize's client capabilities are kept in the
//     Session (ask.go).
//   - For a handler: the client's capabilities and log level that apply
//     to its request, log records at or above that level
//     ([Request.Log]), and whether the client may be asked
//     ([Request.CanAsk]; see ask.go).
//   - The in-flight table: every request of the method table runs on its
//     own goroutine with a ctx of its own; an id already in flight is
//     refused (-32600); a Method's Limit caps its requests in flight, the
//     refusal answered at once. notifications/cancelled cancels the
//     request's ctx (cause [ErrCancelled]) and suppresses its answer and
//     its notifications.
//   - Progress and other notifications on behalf of a request
//     ([Request.Progress], [Request.Notify]), requests to the client
//     ([Request.Call]; responses are routed by id), and list changes
//     ([Server.ListChanged]) to a legacy session and to the subscriptions
//     that asked for them.
//   - Results: a handler's result is fitted to the request's revision
//     ([codec.NewResultFor]: resultType and _meta serverInfo for modern
//     requests); a [*codec.Error] goes out as that error, [ErrNoResponse]
//     as nothing, any other error as -32603.
//
// # Concurrency
//
// One goroutine, the read loop inside Serve, reads the Conn, classifies
// each message in arrival order (so initialize negotiates before the next
// request is looked at), answers the built-ins and starts one goroutine
// per table request. Nothing that waits runs on it: a handler that
// re-reads a directory or runs a process does so on its own goroutine,
// and a ping or server/discover sent after it is answered at once. The
// read loop does write its own answers (errors, ping, initialize,
// discover): a client that stops reading its input stalls them, as it
// stalls everything. Writes go through the Conn, which serializes them.
// Handlers run concurrently with each other; [Server.ListChanged] and
// [Server.Abort] may be called from any goroutine. Every goroutine the core
// starts is waited for before Serve returns; a Conn's own goroutines are
// the Conn's (see [NewStreamConn]).
//
// # Shutdown
//
// The conversation ends when the input ends (io.EOF), ctx is done, a read
// fails, the output is gone ([ErrOutputClosed]) or [Server.Abort] is
// called. Then [Server.Closing] is closed, open subscriptions are answered,
// and the requests in flight get Options.Grace to finish, their answers
// still written; after that their ctx is cancelled with cause
// [ErrShutdown] and Serve waits for their handlers, whose answers are
// still written. When the output is gone or Abort was called there is no
// grace: nothing could carry an answer, so every request is cancelled at
// once. Serve then closes the Conn and returns nil (or Abort's error).
//
// # Failure modes
//
//   - A handler that ignores its ctx holds Serve up after the grace: the
//     core cannot kill a goroutine. Handlers must return once ctx is done.
//   - A write that fails with ErrOutputClosed ends the conversation; any
//     other write error loses that message and is logged once.
//   - A frame over the transport's cap gets an error response without an
//     id and is skipped.
//   - Responses from the client that answer no [Request.Call] are logged
//     (debug) and dropped.
//
// What it refuses: a second Serve on one Server, Handle after Serve, and a
// handler for initialize or subscriptions/listen (the core owns the
// session and the subscriptions).
//
// Events go to Options.Logger, one record each: Warn for what an operator
// must see (refusals, errors, a lost output), Debug for routine events
// (initialize, cancellations, subscriptions, shutdown); a message is
// formatted only when its level is enabled. Nothing but protocol messages
// goes to the Conn.
package server
