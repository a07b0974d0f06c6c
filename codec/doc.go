// Package codec is the single home of the MCP wire protocol in mcpipe:
// JSON-RPC 2.0 and MCP message types, newline framing, envelope validation,
// protocol eras and version negotiation, tool-definition checks and
// result-envelope helpers. It never starts processes, touches the file system
// or reads flags.
//
// # Revisions and eras
//
// The supported revisions are in [Revisions] (2024-11-05 … 2026-07-28).
// 2024-11-05 to 2025-11-25 are legacy: an initialize handshake negotiates one
// revision per connection ([NegotiateLegacy]). 2026-07-28 is modern: no
// handshake, every request names its revision in
// _meta["io.modelcontextprotocol/protocolVersion"] ([MetaProtocolVersion]).
// A [Session] applies both rules to each incoming message ([Session.Classify]):
// it answers which revision applies, or the JSON-RPC error to send (-32022
// with data.supported and data.requested for an unknown modern version,
// -32600 for a request before initialize). [DecorateResult] fits a result to
// a revision (resultType and _meta serverInfo for modern ones; the
// 2026-only members removed for legacy ones); [NewResultFor] builds the
// response with it. [ToolFor] and [CallToolResultFor] drop or convert what an
// older revision does not define (tool titles and icons, audio and
// resource_link blocks), so one tool list and one result serve every era.
// [DeclaredRevision] tells which revision a message names.
//
// # MCP checks
//
// [CheckMessage] applies the MCP rules of a revision to one message that
// [DecodeFrame] accepted: the method exists in that revision and is sent by
// the right side, its params (and the result answering it) have the
// required members with the right JSON types, content blocks are of a type
// the revision defines with that type's members, and 2026-07-28 requests
// carry their _meta protocol version and results their resultType. The
// error is an [*Error], -32602 for bad params and -32600 for the rest, whose
// message names the offending member. The rules are written from the
// official schemas and tested against them both ways, erring towards
// letting a message through: refusing one the schema accepts is a bug.
//
// A [Direction] says who sent the message: [FromClient], [FromServer], or
// [FromAny] when the stream mixes both or the sender is unknown (then only
// the rules every message follows apply; [ParseDirection] reads "client",
// "server" or "any" from a flag). [IsKnownMethod] tells an MCP method from
// an extension's, which passes with the envelope rules only. A response
// is checked against the request it answers, named by the caller;
// [GuessResultMethod] names it from the result's members for an observer
// that sees only the server's side (content answers tools/call, tools
// answers tools/list, and so on). [CheckToolResult] checks a CallToolResult
// a tool wrote, before a server fits it to its client's revision.
//
// # Framing
//
// [Reader] reads one frame per line: blank lines skipped, CRLF accepted, a
// final line without newline still a frame, an oversized line (cap
// [DefaultMaxFrame], 16 MiB, configurable) reported with a
// [*FrameTooLargeError] (wrapping [ErrFrameTooLarge]) and skipped without
// buffering it, so the stream goes on and memory stays bounded; the error
// keeps the line's first KiB and last 256 bytes, from which
// [FrameTooLargeError.ResponseID] reads the id of a response, so a client
// can fail the request it answered. A Reader is not safe for concurrent use.
//
// [DecodeFrame] turns a frame into messages. A bad frame yields a
// [*DecodeError] whose Err is the JSON-RPC error to answer with (-32700 for
// bytes that are not UTF-8 JSON, -32600 for an invalid envelope) and whose ID
// is the request id when it could be read. Batches (JSON arrays) are refused
// unless the caller allows them (only a session that negotiated 2025-03-26,
// see [Session.AllowBatch]); bad elements of an allowed batch come back as a
// [*BatchError], one [*DecodeError] each. A member name that appears twice
// in one object, at any depth ("id":1,"id":2, or two "name"s in a tool's
// arguments), makes the message invalid (-32600 naming its path, e.g.
// `duplicate member "params.name"`): RFC 8259 leaves its meaning to the
// receiver and receivers differ (encoding/json keeps the last value, others
// the first), so a checker could pass one message and the receiver act on
// another. A message nested deeper than 10,000 levels (encoding/json's
// limit) is -32600 too, and keeps its id when the id came before the deep
// member, so that the client is answered rather than left to its timeout.
// Errors call a bad request an "invalid request", a bad response an
// "invalid response". Decoded messages never alias the frame. JSON is
// checked in one pass, UTF-8 included (encoding/json would accept invalid
// UTF-8 and replace it). A lone surrogate escape ("\ud800") is valid JSON
// text and passes DecodeFrame (mcp-frame forwards it byte for byte), but
// decodes to no Unicode character: a server refuses it in tools/call params
// (below).
//
// # Params a server acts on
//
// [CallToolParams] and [ListToolsParams] decode with errors in JSON's words
// (`params.name: expected a string, got a number`), never Go's. A tools/call
// whose params hold a lone surrogate escape is refused (-32602 naming the
// member: `params.arguments.path: lone surrogate \ud800 ...`), never
// altered: decoding it would turn it into U+FFFD and a tool would act on a
// name the client never sent ([CheckUnicodeEscapes]). A request whose
// _meta.progressToken is not a string or an integer is refused by
// [Session.Classify] (-32602) in every revision, and by CheckMessage: the
// server would echo it in notifications/progress, which allows nothing else
// (the schemas' ProgressToken; JSONRPCRequest defines it until 2025-06-18).
//
// Request ids ([ID]) are a JSON string or integer, kept as the bytes they
// arrived as and echoed byte for byte; null, fractional or exponent numbers,
// booleans, objects and arrays are invalid requests. An error response to a
// frame whose id could not be read has no "id" member (see
// [Message.MarshalJSON] for why not null).
//
// [Writer] writes one compact line per message, never an embedded newline,
// without HTML escaping, in a single Write call under a mutex: it is safe for
// concurrent use and concurrent frames never interleave. Use [Marshal]
// (not json.Marshal, which escapes HTML) for any other JSON that goes out.
// Params and results are written as they came, byte for byte (member order,
// escapes and number spellings kept), when they hold no white space outside
// strings; otherwise only that white space is removed. A compact decoded
// message that goes back out unchanged is not scanned again.
//
// # Tools
//
// [ValidateTool] checks a definition: the 2025-11-25 name rules (1–128 of
// A-Z a-z 0-9 _ - .), a non-blank description, and input/output schemas that
// are JSON Schema objects with "type": "object" compiling as JSON Schema
// 2020-12. [CompileSchema] and [Schema.Validate] check call arguments; the
// errors name the offending field (`argument "count": got string, want
// integer`, `missing required argument "path"`). Schemas must be
// self-contained: any external $ref (file or network) is refused.
//
// # Results
//
// [CallToolResult] has helpers for clients: [CallToolResult.Text],
// [CallToolResult.TextBlocks], [CallToolResult.ContentTypes],
// [CallToolResult.ErrorMessage].
package codec
