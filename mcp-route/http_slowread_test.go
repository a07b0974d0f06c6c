package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/internal/proctest"
	"github.com/mcpipe/mcpipe/internal/testbin"
)

// The server of the tests of readers that keep up: a write may wait 2 s,
// and a body must go out at 512 KiB/s after that grace. Their reader
// reads about 2 MiB/s, four times the rate (more counting the kernel
// buffers' head start), and takes longer than the grace for 16 MiB.
var slowReadFlags = []string{"--http-write-timeout", "2s", "--http-min-rate", strconv.Itoa(512 << 10)}

// trickle reads at most burst bytes (32 KiB when 0) at a time and pauses
// after every burst; n counts the bytes read.
type trickle struct {
	r     io.Reader
	burst int
	pause time.Duration
	n     atomic.Int64
	since int
}

func (s *trickle) Read(p []byte) (int, error) {
	burst := s.burst
	if burst == 0 {
		burst = 32 << 10
	}
	if s.since >= burst {
		time.Sleep(s.pause)
		s.since = 0
	}
	n, err := s.r.Read(p[:min(len(p), burst-s.since)])
	s.since += n
	s.n.Add(int64(n))
	return n, err
}

// TestHTTPSlowReadIsCutOff: a client that reads a little, then waits less
// than --http-write-timeout, and again, never lets a write wait past the
// timeout, and would keep a big answer, its handler and its conversation
// for as long as it likes to read it: 32 KiB every 29 s keeps 16 MiB for
// four hours at the default 30 s. --http-min-rate cuts it off: long
// before the answer is out, the server's goroutines come back to what
// they were (the handler's, the conversation's and the connection's:
// net/http's goroutine of a connection lasts until it closes it), and the
// server goes on serving. As JSON and as one SSE event.
//
// Scaled to loopback: there the server's kernel buffers megabytes of the
// answer (the send buffer grows to 4 MiB), and a write blocked on a full
// buffer resumes only once a third of it has drained, so an attacker must
// read that much per write timeout to pass the per-write bound (over the
// Internet, with buffers of tens of KiB, 32 KiB does). So here the
// attacker reads 2 MiB every 2 s, the write timeout being 4 s; the rate
// asked is 8 MiB/s, eight times what it reads, and the answer 32 MiB.
// Without the rate bound it reads all of it, in half a minute.
//
// The attackers do not read what is left after the cut.
func TestHTTPSlowReadIsCutOff(t *testing.T) {
	const size = 2 * bigResult
	r := startHTTP(t, "--tools", bigTools(t), "--max-output", strconv.Itoa(2*size),
		"--http-write-timeout", "4s", "--http-min-rate", strconv.Itoa(8<<20))
	waitReady(t, r)
	base := warmGoroutines(t, r)
	// One attacker at a time: each answer costs the server some copies of
	// 32 MiB.
	for i, s := range []bool{false, true} {
		conn := dialRcvbuf(t, r.url, 256<<10)
		sendBigCall(t, conn, size, s)
		tr := &trickle{r: conn, burst: 2 << 20, pause: 2 * time.Second}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.ReadResponse(bufio.NewReaderSize(tr, 64<<10), nil); err == nil {
				io.Copy(io.Discard, resp.Body)
			}
		}()
		// The call ran; its answer is being written to the attacker.
		waitCallsDone(t, r, "big", 3+i)
		proctest.Eventually(t, func() string {
			if g := metric(t, r.url, "go_goroutines"); g > base {
				return fmt.Sprintf("sse %v: %v goroutines, %v before the slow reader: it still holds some (it read %d bytes so far)", s, g, base, tr.n.Load())
			}
			return ""
		})
		n := tr.n.Load()
		conn.Close() // ends the reader
		<-done
		t.Logf("sse %v: cut off after %d bytes of %d read", s, n, size)
		// By the time the whole answer is due (4 s + 32 MiB at 8 MiB/s)
		// the attacker has read about 8 MiB; without the bound, all but
		// the kernel's buffers (some 28 MiB).
		if n >= size/2 {
			t.Errorf("sse %v: the slow reader had read %d bytes of %d when its answer was let go; want far less", s, n, size)
		}
	}
	if code, _, body := post(t, r.url, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != 200 {
		t.Errorf("ping after the slow readers: %d %s", code, body)
	}
}

// TestHTTPMinRateReaderGetsEverything is the counterpart of both bounds
// (TestHTTPStalledReaderIsCutOff's and TestHTTPSlowReadIsCutOff's): a
// client that reads the 16 MiB answer in small reads with pauses, for
// longer than --http-write-timeout in all but faster than
// --http-min-rate, gets all of it, as JSON and as SSE.
func TestHTTPMinRateReaderGetsEverything(t *testing.T) {
	r := startHTTP(t, append([]string{"--tools", bigTools(t), "--max-output", strconv.Itoa(2 * bigResult)}, slowReadFlags...)...)
	waitReady(t, r)
	for _, s := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", s), func(t *testing.T) {
			t.Parallel()
			conn := dialSmall(t, r.url)
			sendBigCall(t, conn, bigResult, s)
			conn.SetReadDeadline(time.Now().Add(5 * time.Minute)) // a hang guard only
			// 512 pauses of 15 ms: 7.7 s and more in all (the rate
			// allows 2 s + 32 s, counted from when the kernel took it).
			start := time.Now()
			resp, err := http.ReadResponse(bufio.NewReaderSize(&trickle{r: conn, pause: 15 * time.Millisecond}, 64<<10), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("after %d bytes: %v", len(body), err)
			}
			text, err := bigText(body)
			if err != nil || len(text) != bigResult || strings.Trim(text, "a") != "" {
				t.Errorf("reader at the rate: %d bytes of text (want %d), %v", len(text), bigResult, err)
			}
			t.Logf("read %d bytes in %v", len(body), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestHTTPSSEIdleGapNotCut: the rate is per event, not per stream. A call
// that sends a progress notification, is silent for three times
// --http-write-timeout (no keepalive comment either), then answers 1 MiB,
// gets its whole answer: a rate counted from the stream's first byte
// would put that answer's deadline in the past.
func TestHTTPSSEIdleGapNotCut(t *testing.T) {
	dir := bigTools(t)
	proctest.WriteExecutable(t, filepath.Join(dir, "gap"),
		[]byte("#!/bin/sh\necho '{\"progress\":1}' >&3\nsleep 6\nhead -c \"$MCP_ARG_BYTES\" /dev/zero | tr '\\0' a\n"))
	def := `{"description":"an answer after a silence","inputSchema":{"type":"object","properties":{"bytes":{"type":"integer"}}}}`
	if err := os.WriteFile(filepath.Join(dir, "gap.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startHTTP(t, append([]string{"--tools", dir, "--sse-keepalive", "1h"}, slowReadFlags...)...)
	waitReady(t, r)
	const n = 1 << 20
	body, hdr := bigCall(n, true)
	body = strings.Replace(body, `"name":"big"`, `"name":"gap"`, 1)
	hdr[len(hdr)-1] = "gap"
	code, h, out := post(t, r.url, body, hdr...)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s, want 200 and an SSE stream", code, h.Get("Content-Type"))
	}
	data, comments := sse(out)
	text, err := bigText([]byte(out))
	if err != nil || len(text) != n || len(data) != 2 || comments != 0 {
		t.Errorf("after the silence: %d events, %d comments, %d bytes of text (want 2, 0, %d), %v", len(data), comments, len(text), n, err)
	}
}

// TestHTTPMinRateFlag: a rate that is not a positive number of bytes per
// second is refused, one line, exit 2.
func TestHTTPMinRateFlag(t *testing.T) {
	bin := testbin.Path(t, "MCP_ROUTE_BIN", "mcp-route")
	for _, c := range []struct{ val, want string }{
		{"0", "mcp-route: --http-min-rate 0: want a positive number of bytes per second\n"},
		{"-5", "mcp-route: --http-min-rate -5: want a positive number of bytes per second\n"},
		{"64KiB", "mcp-route: invalid value \"64KiB\" for flag -http-min-rate: parse error (see --help)\n"},
	} {
		cmd := exec.Command(bin, "--http", "127.0.0.1:0", "--tools", t.TempDir(), "--http-min-rate", c.val)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 || stdout.Len() != 0 || stderr.String() != c.want {
			t.Errorf("--http-min-rate %s: exit %d, stdout %q, stderr %q; want 2 and %q", c.val, code, stdout.String(), stderr.String(), c.want)
		}
	}
}
