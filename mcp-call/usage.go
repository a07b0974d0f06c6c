package main

// usage is the --help text; the package doc (main.go) and the README say
// the same.
const usage = `Usage: mcp-call [flags] COMMAND [ARGS] [-- SERVER [SERVER ARGS]]
       mcp-call --url URL [--header 'K: V'] [--token-file FILE] [flags] COMMAND [ARGS]

Call an MCP server over stdio, or over Streamable HTTP with --url, from the
command line or a script. The server
is the command line after --, or the one in $MCP_SERVER (split like a shell
would, without running one: an unquoted ; | & < > is an error, not the end
of the command). mcp-call starts it, settles the protocol era,
runs COMMAND, and stops it (close stdin, SIGTERM, SIGKILL to its process
group).

Commands:
  tools              tool names, one per line (--json: the definitions)
  describe TOOL      a tool's arguments, output and hints (--json: its definition)
  call TOOL [ARGS]   call a tool and print the text of its result
  discover           era, protocol version, supported versions, server identity,
                     capabilities (legacy server: what initialize answered)
  ping               check that the server answers; prints "ok" (2026-07-28 has
                     no ping: a server/discover round trip stands in)
  resources          resource URIs, one per line with the description (--json:
                     the definitions)
  templates          resource templates (uriTemplate), likewise
  read URI           print a resource's contents: text as it is, a blob decoded
                     (--json: the whole result)
  prompts            prompt names, one per line with the description (--json)
  prompt NAME [key=value...]
                     get a prompt and print its messages, "ROLE: TEXT" (other
                     content noted); --json: the whole result
  complete prompt NAME ARG [VALUE]
  complete resource URITEMPLATE VAR [VALUE]
                     completion values for a prompt argument or a template
                     variable, one per line
  raw                send the non-blank lines of stdin as they are, also ones
                     that are not JSON or not JSON-RPC (no handshake, nothing
                     answered for you); print every line the server writes;
                     ends when every request with an id has an answer
                     (notifications and other lines await none)
  script             one call per stdin line, "TOOL ARGS...", over one
                     connection; blank lines and # comments skipped. A line
                     is split like a shell would, but no shell runs: an
                     unquoted ; | & < > is an error (quote it: 'a;b');
                     a line may be as long as a frame (16 MiB)
  completion SHELL   print the completion script for bash, zsh or fish:
                     source <(mcp-call completion bash)

Arguments (call, script):
  '{"key": "value"}'  one JSON object, quoted whole so it stays one word
  key=value           coerced by the tool's inputSchema: integer, number,
                      boolean, null, array and object properties take the value
                      as JSON text; string or undescribed properties keep it as
                      a string
  key:=json           raw JSON, e.g. tags:='["a","b"]'
  -                   (call only) read the JSON object from stdin
  call and script read tools/list first: a tool it does not list is refused,
  and arguments are checked against the inputSchema before the call; a wrong
  key or type stops mcp-call with the schema's words and exit status 2.

Output:
  call prints the text blocks of the result (other blocks are noted on
  stderr). --json prints the whole result, --structured its
  structuredContent. script prints each call's output in turn; with --json,
  one line per call: the result, or {"error":{...}} when there is none.

Terminals:
  A server's text (results, descriptions, tool names, error messages, its
  stderr) may carry control sequences that would clear or rewrite the
  screen, set the clipboard (OSC 52) or hide a link. When stdout or stderr
  is a terminal, mcp-call prints them escaped there: C0 controls but newline
  and tab, and DEL, as \xHH (ESC is \x1b), C1 controls as \uHHHH (\u009b),
  bytes that are not UTF-8 as \xHH. Into a pipe or a file the bytes go as
  the server sent them. --safe and --raw force either.

Flags:
  --json                   JSON output (see above)
  --structured             call: print structuredContent
  --timeout DURATION       bound on starting and settling the era (the probe
                           and initialize together), and on each request
                           (default 45s; 0 means none). The default outlasts
                           mcp-route's own 30s per call plus its kill grace,
                           so a slow tool ends with the server's answer; when
                           it fires, mcp-call says so and suggests a larger
                           value
  --era auto|legacy|modern auto (default) probes with server/discover and falls
                           back to initialize when the server is legacy (an
                           error answer, or none within 5s, or half of
                           --timeout if shorter; use --era modern for a
                           modern-only server that is slow to start). A
                           server that reads the probe and then exits with
                           status 0 or closes its stdout is started once
                           more for initialize; one that fails (non-zero
                           status) is not
  --protocol-version REV   pin a revision (e.g. 2025-06-18, 2026-07-28)
  --server-stderr WHERE    inherit (default: our stderr), discard, or a FILE
                           (appended)
  --url URL                talk to the Streamable HTTP endpoint URL (http://
                           or https://) instead of starting a server: both
                           eras (2026-07-28 without sessions, its
                           MCP-Protocol-Version, Mcp-Method, Mcp-Name and
                           Mcp-Param-* headers; legacy revisions with
                           Mcp-Session-Id, ended with DELETE), JSON or SSE
                           answers. Not with -- SERVER; $MCP_SERVER is not
                           read. raw sends each line as one POST, in order,
                           and prints every message of each answer
  --header 'Name: value'   with --url: send this header on every request
                           (repeatable)
  --token-file FILE        with --url: send the token on FILE's first
                           non-blank line as "Authorization: Bearer TOKEN"
  --progress               ask for progress and print it on stderr
  --fail-fast              script: stop at the first call that fails
  --trace                  print every line sent (>) and received (<) on stderr
  --safe                   escape control characters in everything printed,
                           even into a pipe or file (see Terminals)
  --raw                    print the server's bytes unchanged, even on a
                           terminal
  --help                   this text
  --version                print the version

Exit status:
  0  ok
  1  the tool returned isError (its text on stderr; script: some call did)
  2  usage error, arguments refused by the schema, or a protocol error: a
     JSON-RPC error response, an invalid line from the server, a result of
     the wrong shape. An invalid line from the server makes it 2 even when
     a timeout or the server's exit follows; one before the server has
     answered the handshake ends mcp-call at once.
  3  the server could not be started or reached (it exited, closed its
     stdout), or a timeout or interrupt
  Over --url: no connection, a proxy's 502, 503 or 504, or a stream cut
  before the answer is 3; any other HTTP error status (401 with the
  server's WWW-Authenticate, 404, ...) is 2, like a protocol error.
  script: the worst status of its calls. raw: error answers are data (0);
  2 for a server line that is not JSON-RPC, 3 for requests left unanswered.
`
