package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/cmdline"
)

// maxScriptLine bounds one script line: its arguments go out in one frame,
// so a line may be as long as a frame may be.
const maxScriptLine = codec.DefaultMaxFrame

// cmdScript runs one call per stdin line over the one connection. Each
// call's output is printed as `call` would print it (a JSON line each with
// --json); failures are reported on stderr with their line number and the
// script goes on unless --fail-fast. A line over maxScriptLine is such a
// failure (status 2), not the end of the script. The status is the worst one
// seen; a server that went away ends the script with 3.
func (s *session) cmdScript(ctx context.Context) int {
	r := bufio.NewReaderSize(s.stdin, 64<<10)
	worst := exitOK
	for lineNo := 1; ; lineNo++ {
		b, tooLong, err := readLine(r, maxScriptLine)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.errorf("script line %d: reading stdin: %v", lineNo, err)
				worst = max(worst, exitProtocol)
			}
			return worst
		}
		code, gone := exitOK, false
		if line := strings.TrimSpace(string(b)); tooLong {
			code, gone = s.reportLine(lineNo, usagef("longer than the %d MiB limit for one line (%d bytes, the frame cap); pass less data per call", maxScriptLine>>20, maxScriptLine))
		} else if line != "" && !strings.HasPrefix(line, "#") {
			code, gone = s.scriptLine(ctx, lineNo, line)
		}
		worst = max(worst, code)
		if gone || (code != exitOK && s.opts.failFast) || ctx.Err() != nil {
			return max(worst, exitCode(ctx.Err()))
		}
	}
}

// readLine returns the next line of r without its "\n". A line longer than
// limit bytes is read to its end and dropped: tooLong is true and line is
// nil. err is io.EOF only when nothing is left.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var buf []byte
	got := false
	for {
		chunk, err := r.ReadSlice('\n')
		got = got || len(chunk) > 0
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong && len(buf)+len(chunk) > limit {
			tooLong, buf = true, nil
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && got:
			return buf, tooLong, nil
		case err != nil:
			return nil, false, err
		}
		return buf, tooLong, nil
	}
}

// reportLine reports line n's failure on stderr (and, with --json, as an
// {"error":...} line, so that output lines match calls) and returns its
// status; gone reports that the server is unreachable.
func (s *session) reportLine(n int, err error) (code int, gone bool) {
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

// scriptLine runs one line; gone reports that the server is unreachable.
func (s *session) scriptLine(ctx context.Context, n int, line string) (code int, gone bool) {
	report := func(err error) (int, bool) { return s.reportLine(n, err) }
	words, err := cmdline.Split(line)
	if err != nil {
		return report(usagef("%v", err))
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
