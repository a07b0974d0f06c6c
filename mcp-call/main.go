// mcp-call calls an MCP server over stdio, or over Streamable HTTP with
// --url, from the command line or a script.
//
// Synopsis:
//
//	mcp-call [flags] COMMAND [ARGS] [-- SERVER [SERVER ARGS]]
//	mcp-call --url URL [--header 'K: V']... [--token-file FILE] [flags] COMMAND [ARGS]
//
// The server is the command line after --, or $MCP_SERVER (split with shell
// word rules by internal/cmdline; no shell runs, so an unquoted ; | & < > is
// a usage error, not the end of the command). Commands: tools, describe
// TOOL, call TOOL [ARGS], discover, ping, raw, script, resources,
// templates, read URI, prompts, prompt NAME [key=value...], complete
// prompt|resource REF ARG [VALUE]. Run `mcp-call --help` for the full
// text (usage.go holds it), including the argument syntax (a JSON object,
// key=value coerced by the tool's inputSchema, key:=json) and the flags.
//
// Exit status:
//
//	0  ok
//	1  the tool returned isError (its text on stderr; script: some call did)
//	2  usage error, arguments refused by the schema, or a protocol error: a
//	   JSON-RPC error response, an invalid line from the server, a result of
//	   the wrong shape (an invalid line wins over a later timeout or exit)
//	3  the server could not be started or reached (it exited, closed its
//	   stdout), or a timeout or interrupt
//
// Over --url (see codec/client's HTTP transport): no connection, a
// proxy's 502/503/504, or a stream cut before the answer is 3; any other
// HTTP error status is 2. --header and --token-file need --url; --url
// excludes a server command. raw over --url sends each line as one POST, in
// order, and prints every message of each answer (body or SSE events).
//
// script exits with the worst status of its calls. raw sends every non-blank
// stdin line as it is and treats error answers as data (0); 2 for a server
// line that is not JSON-RPC, 3 for requests left unanswered.
//
// Eras: --era auto (the default) probes with server/discover as the
// 2026-07-28 stdio binding says and falls back to the legacy initialize
// handshake on any answer but a DiscoverResult or -32022, or on no answer
// within 5s (or half of --timeout if shorter); the probe and initialize
// share one --timeout. A server that reads the probe and then exits with
// status 0 or closes its stdout is restarted once for initialize; one that
// exits non-zero is not (its error would only be printed twice).
// --protocol-version pins a revision.
//
// Terminals: a server's text may carry control sequences (screen rewrites,
// OSC 52 clipboard writes, hyperlinks). On a terminal, stdout and stderr
// escape them (internal/termsafe: \x1b, \u009b); into a pipe or file the
// bytes pass unchanged. --safe and --raw force either.
//
// The protocol work is in package codec/client, argument coercion in
// mcp-call/args; this package parses flags, prints, and maps errors to exit
// statuses.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
