package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
)

// bigResult is the size of the big tool's result: several times what the
// kernel buffers between the server and a client that reads nothing (the
// server's send buffer grows to 4 MiB on Linux by default).
const bigResult = 16 << 20

// bigTools writes the tool big: one progress line on fd 3, then
// $MCP_ARG_BYTES bytes of "a" as its result.
func bigTools(t *testing.T) string {
	dir := t.TempDir()
	proctest.WriteExecutable(t, filepath.Join(dir, "big"),
		[]byte("#!/bin/sh\necho '{\"progress\":1}' >&3\nhead -c \"$MCP_ARG_BYTES\" /dev/zero | tr '\\0' a\n"))
	def := `{"description":"a big result","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}}`
	if err := os.WriteFile(filepath.Join(dir, "big.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bigCall is the tools/call of big for n bytes; with sse the client takes
// SSE and asks for progress, so the answer is an SSE stream.
func bigCall(n int, sse bool) (body string, headers []string) {
	meta, accept := metaRev, "application/json"
	if sse {
		meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p"}`
		accept = "application/json, text/event-stream"
	}
	body = fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d},%s}}`, n, meta)
	return body, []string{"Accept", accept, "Mcp-Protocol-Version", modernRev, "Mcp-Method", "tools/call", "Mcp-Name", "big"}
}

// dialSmall connects to the server at url with a receive buffer of a few
// KiB, set before the handshake: a client that takes little at a time.
func dialSmall(t *testing.T, url string) net.Conn {
	t.Helper()
	return dialRcvbuf(t, url, 4096)
}

// dialRcvbuf connects to the server at url with a receive buffer of size
// bytes, set before the handshake.
func dialRcvbuf(t *testing.T, url string, size int) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, size)
		}); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sendBigCall writes the tools/call of big on conn as a raw HTTP request.
func sendBigCall(t *testing.T, conn net.Conn, n int, sse bool) {
	t.Helper()
	body, headers := bigCall(n, sse)
	var req strings.Builder
	req.WriteString("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n")
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(&req, "%s: %s\r\n", headers[i], headers[i+1])
	}
	fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
}

// bigText is the text of the tools/call result in an answer: a JSON
// body, or the last event of an SSE stream.
func bigText(body []byte) (string, error) {
	if bytes.HasPrefix(body, []byte("event:")) {
		data, _ := sse(string(body))
		if len(data) == 0 {
			return "", fmt.Errorf("no SSE event")
		}
		body = []byte(data[len(data)-1])
	}
	var resp struct {
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return "", err
	}
	if len(resp.Result.Content) != 1 {
		return "", fmt.Errorf("%d content items", len(resp.Result.Content))
	}
	return resp.Result.Content[0].Text, nil
}

// callsDone reads mcp_route_calls_total for tool's calls that went fine.
func callsDone(t *testing.T, url, tool string) float64 {
	t.Helper()
	f, _ := scrape(t, url, func(l string) bool {
		return strings.HasPrefix(l, "mcp_route_calls_total{") && strings.Contains(l, `tool="`+tool+`"`) && strings.Contains(l, `outcome="ok"`)
	})
	return f
}

// warmGoroutines serves a big call as JSON and as SSE, and returns the
// server's goroutines afterwards: the baseline that a client holding
// nothing leaves. Warm, on the client's kept-alive connection that
// /metrics uses too: every goroutine a served call leaves (pools, timers)
// is there before the baseline. The least of a few readings: a goroutine
// of the server's own that happened to run (a poll) would hide one a
// client holds.
func warmGoroutines(t *testing.T, r *httpRoute) float64 {
	t.Helper()
	for _, s := range []bool{false, true} {
		body, hdr := bigCall(1000, s)
		code, _, out := post(t, r.url, body, hdr...)
		if text, err := bigText([]byte(out)); code != 200 || err != nil || len(text) != 1000 {
			t.Fatalf("warm-up call (sse %v): %d %v", s, code, err)
		}
	}
	base := metric(t, r.url, "go_goroutines")
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		base = min(base, metric(t, r.url, "go_goroutines"))
	}
	return base
}

// waitCallsDone waits until the server has run n calls of tool.
func waitCallsDone(t *testing.T, r *httpRoute, tool string, n int) {
	t.Helper()
	proctest.Eventually(t, func() string {
		if done := callsDone(t, r.url, tool); done < float64(n) {
			return fmt.Sprintf("%s calls done: %v, want %d", tool, done, n)
		}
		return ""
	})
}

// TestHTTPStalledReaderIsCutOff: a client that sends a call and never
// reads its answer (16 MiB, as JSON or SSE) held the handler in Write for
// ever, with its connection and goroutines. With --http-write-timeout the
// write fails after the bound: the connection is closed (the client gets
// part of the answer, then the end) and the server's goroutines come back
// to what they were; the server goes on serving.
func TestHTTPStalledReaderIsCutOff(t *testing.T) {
	r := startHTTP(t, "--tools", bigTools(t), "--max-output", strconv.Itoa(2*bigResult), "--http-write-timeout", "1s")
	waitReady(t, r)
	base := warmGoroutines(t, r)
	for i, s := range []bool{false, true} {
		conn := dialSmall(t, r.url)
		sendBigCall(t, conn, bigResult, s)
		// The call has run; its answer is being written to a client that
		// reads nothing.
		waitCallsDone(t, r, "big", 3+i)
		proctest.Eventually(t, func() string {
			if g := metric(t, r.url, "go_goroutines"); g > base {
				return fmt.Sprintf("sse %v: %v goroutines, %v before the stalled client: it still holds some", s, g, base)
			}
			return ""
		})
		// The client reads at last: part of the answer, then the end of
		// the connection, which the server closed (the deadline only
		// guards against a hang: it is reached when nothing was closed).
		conn.SetReadDeadline(time.Now().Add(time.Minute))
		var got []byte
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			got, err = io.ReadAll(resp.Body)
		}
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() || len(got) >= bigResult {
			t.Errorf("sse %v: the stalled client read %d bytes, then %v; want part of the answer, then the connection closed", s, len(got), err)
		}
	}
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != 200 {
		t.Errorf("ping after the stalled clients: %d %s", code, body)
	}
}
