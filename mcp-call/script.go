package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-shellwords"

	"github.com/mcpipe/mcpipe/codec"
)

// maxScriptLine bounds one script line (it is a command line, not a frame).
const maxScriptLine = 1 << 20

// cmdScript runs one call per stdin line over the one connection. Each
// call's output is printed as `call` would print it (a JSON line each with
// --json); failures are reported on stderr with their line number and the
// script goes on unless --fail-fast. The status is the worst one seen; a
// server that went away ends the script with 3.
func (s *session) cmdScript(ctx context.Context) int {
	sc := bufio.NewScanner(s.stdin)
	sc.Buffer(make([]byte, 0, 64<<10), maxScriptLine)
	worst := exitOK
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		code, gone := s.scriptLine(ctx, lineNo, line)
		worst = max(worst, code)
		if gone || (code != exitOK && s.opts.failFast) || ctx.Err() != nil {
			return max(worst, exitCode(ctx.Err()))
		}
	}
	if err := sc.Err(); err != nil {
		s.errorf("script line %d: %v", lineNo+1, err)
		worst = max(worst, exitProtocol)
	}
	return worst
}

// scriptLine runs one line; gone reports that the server is unreachable.
func (s *session) scriptLine(ctx context.Context, n int, line string) (code int, gone bool) {
	report := func(err error) (int, bool) {
		s.errorf("line %d: %s", n, s.explain(err))
		if s.opts.json {
			var e any = map[string]string{"message": err.Error()}
			var rpc *codec.Error
			if errors.As(err, &rpc) {
				e = rpc
			}
			s.printJSONLine(map[string]any{"error": e})
		}
		return exitCode(err), connectionGone(err)
	}
	words, err := shellwords.Parse(line)
	if err != nil {
		return report(usagef("cannot split %q: %v", line, err))
	}
	name, words := words[0], words[1:]
	a, err := s.prepareCall(ctx, name, words)
	if err != nil {
		return report(err)
	}
	res, raw, err := s.callTool(ctx, name, a)
	if err != nil {
		return report(err)
	}
	if s.opts.json {
		s.printJSONLine(raw)
	}
	if res.IsError {
		s.errorf("line %d: %s: %s", n, name, oneLine(res.ErrorMessage()))
		return exitIsError, false
	}
	switch {
	case s.opts.json:
	case s.opts.structured:
		if len(res.StructuredContent) == 0 {
			return report(fmt.Errorf("%s: result has no structuredContent", name))
		}
		s.printJSONLine(res.StructuredContent)
	default:
		writeText(s.stdout, res.Text())
		s.noteOtherBlocks(name, res)
	}
	return statusOf(res, nil), false
}

// printJSONLine prints v compact on one line (JSON Lines).
func (s *session) printJSONLine(v any) {
	b, err := codec.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	fmt.Fprintf(s.stdout, "%s\n", b)
}
