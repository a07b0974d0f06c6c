// Command mcp-frame checks a stream of MCP messages: newline-framed JSON-RPC
// in, the same messages out, one canonical compact line each. Frames that
// break JSON-RPC 2.0 or the MCP rules never pass; each is reported on stderr
// as "mcp-frame: line N: reason" and the stream goes on.
//
// Synopsis:
//
//	mcp-frame [--check] [--revision REV] [--from client|server|any] [--pretty] [--max-frame N] < in > out
//
// Uses:
//
//	mcp-frame --check < session.jsonl               # lint a capture
//	SERVER < requests | mcp-frame --check --from server   # prove a server writes only protocol
//	CLIENT | mcp-frame --from client | SERVER       # guard a server's stdin
//	mcp-frame --pretty < session.jsonl | less       # read a capture
//
// Options:
//
//	--check          lint: write nothing on stdout, only the reports
//	--revision REV   check every frame by the rules of REV (2024-11-05,
//	                 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28); default:
//	                 follow the session (the revision initialize asks for,
//	                 then the one its result grants; a request's _meta
//	                 protocolVersion for that request), else the newest
//	--from SIDE      who wrote the stream: client (requests and notifications
//	                 a client sends), server (responses, and what a server may
//	                 send), or any (default)
//	--pretty         indented JSON for humans; not a protocol stream
//	--max-frame N    frame size cap in bytes (suffix K, M or G); default 16M;
//	                 a longer line is reported and skipped
//	--help           this text; --version the version
//
// Output lines are the input with insignificant white space removed and the
// envelope members in a fixed order (jsonrpc, id, method, params | result |
// error); members inside params and result keep their order, and ids, strings
// and numbers are kept byte for byte. See package filter for the exact rules.
//
// Exit status: 0 every frame was valid; 1 some frames were invalid (reported
// and dropped); 2 usage error, or reading or writing failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/version"
	"github.com/mcpipe/mcpipe/mcp-frame/filter"
)

const prog = "mcp-frame"

const usage = `Usage: mcp-frame [flags] < in > out

Checks newline-framed JSON-RPC (MCP) messages: writes each valid frame as one
canonical compact line and reports each invalid one on stderr as
"mcp-frame: line N: reason" (never passing it through); the stream goes on.

Flags:
  --check          lint only: nothing on stdout, reports on stderr
  --revision REV   check by the rules of REV, one of
                   %s
                   (default, or auto: follow the session: what initialize asks for,
                   then what its result grants, or a request's _meta
                   protocolVersion; else the newest)
  --from SIDE      who wrote the stream: client (requests, notifications),
                   server (responses, notifications, its own requests) or
                   any (default)
  --pretty         indented JSON for humans (not a protocol stream)
  --max-frame N    frame size cap in bytes, suffix K, M or G (default 16M)
  --help           show this help
  --version        show the version

Examples:
  mcp-frame --check < session.jsonl
  SERVER < requests.jsonl | mcp-frame --check --from server
  CLIENT | mcp-frame --from client | SERVER

Exit status:
  0  every frame was valid
  1  invalid frames were found (reported and dropped)
  2  usage error, or reading or writing failed
`

// main installs no signal handler, on purpose: like cat, a filter should die
// of SIGINT, SIGTERM or SIGPIPE with the default action. Output is flushed
// before every read that may block, so nothing read and checked is lost, and
// there is nothing else to clean up. (A NotifyContext would swallow the
// signal while the filter sits in a read of stdin, which cannot be
// interrupted portably.)
func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		check    = fs.Bool("check", false, "")
		revision = fs.String("revision", "", "")
		from     = fs.String("from", "any", "")
		pretty   = fs.Bool("pretty", false, "")
		maxFrame = fs.String("max-frame", "16M", "")
		showVer  = fs.Bool("version", false, "")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usage, strings.Join(codec.Revisions, ", "))
			return 0
		}
		return usageErr(stderr, err.Error())
	}
	if *showVer {
		fmt.Fprintf(stdout, "%s %s\n", prog, version.String())
		return 0
	}
	if fs.NArg() > 0 {
		return usageErr(stderr, fmt.Sprintf("unexpected argument %q: input is read from stdin", fs.Arg(0)))
	}
	opts := filter.Options{Check: *check, Pretty: *pretty}
	if *revision != "" && *revision != "auto" {
		if !codec.IsSupportedRevision(*revision) {
			return usageErr(stderr, fmt.Sprintf("unknown revision %q (want one of %s)", *revision, strings.Join(codec.Revisions, ", ")))
		}
		opts.Revision = *revision
	}
	dir, err := codec.ParseDirection(*from)
	if err != nil {
		return usageErr(stderr, "--from: "+err.Error())
	}
	opts.From = dir
	n, err := parseSize(*maxFrame)
	if err != nil {
		return usageErr(stderr, "--max-frame: "+err.Error())
	}
	opts.MaxFrame = n
	if *check && *pretty {
		return usageErr(stderr, "--check and --pretty exclude each other")
	}
	opts.Report = func(line int, reason string) {
		fmt.Fprintf(stderr, "%s: line %d: %s\n", prog, line, reason)
	}
	_ = ctx // see main: signals end the process

	stats, err := filter.Run(stdin, stdout, opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	if stats.Bad > 0 {
		fmt.Fprintf(stderr, "%s: %d of %d frames invalid\n", prog, stats.Bad, stats.Frames)
		return 1
	}
	return 0
}

func usageErr(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s (see --help)\n", prog, msg)
	return 2
}

// parseSize parses a byte count with an optional K, M or G suffix (powers of
// 1024).
func parseSize(arg string) (int, error) {
	s, mult := arg, 1
	switch {
	case strings.HasSuffix(s, "K"), strings.HasSuffix(s, "k"):
		mult = 1 << 10
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult = 1 << 20
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("invalid size %q (want a positive byte count such as 1048576 or 16M)", arg)
	}
	return n * mult, nil
}
