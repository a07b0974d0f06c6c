package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScaleOutRouteDrain: one of 3 mcp-route replicas behind the deploy
// example's nginx (static round-robin, no sticky sessions, nothing marked
// down) gets SIGTERM in the middle of a load run, and that is all the
// operator does. No call fails, every call runs exactly once (the tool
// logs each call id it runs), and the drained replica exits 0 within its
// --grace.
func TestScaleOutRouteDrain(t *testing.T) {
	nginxBin(t) // skips early, before the replicas start
	root := t.TempDir()
	tools := t.TempDir()
	runLog := filepath.Join(root, "runs.log") // tools write under --root only
	// record: logs its id (one short O_APPEND write, atomic) and takes a
	// little time, so that calls are in flight on every replica when one
	// is drained.
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$MCP_ARG_ID\" >> %s\nsleep 0.05\nprintf '%%s\\n' \"$MCP_ARG_ID\"\n", runLog)
	schema := `{"name": "record", "description": "Log the id, wait 50 ms, return the id.",
  "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}`
	if err := os.WriteFile(filepath.Join(tools, "record"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "record.json"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "session-key")
	// A key file as the README makes one: text (raw random bytes would
	// lose their leading or trailing whitespace bytes to the trim).
	k := make([]byte, 48)
	rand.Read(k)
	if err := os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reps []*routeReplica
	var urls []string
	for i := 0; i < 3; i++ {
		r := startRouteReplica(t, tools, root, key)
		reps = append(reps, r)
		urls = append(urls, r.url)
	}
	lb := startNginx(t, upstreamsOf(t, urls))

	ctx := context.Background()
	cs, closeSession := goSDKHTTPSession(t, ctx, lb.URL)
	defer closeSession()
	const n, inFlight, grace = 3000, 32, 10 * time.Second // grace: startRouteReplica's --grace
	drained := reps[1]
	drainTook := make(chan time.Duration, 1)
	res := runLoad(ctx, n, inFlight, func(ctx context.Context, i int) (string, error) {
		return sdkCall(ctx, cs, "record", map[string]any{"id": fmt.Sprint(i)})
	}, func() {
		start := time.Now()
		_ = drained.cmd.Process.Signal(syscall.SIGTERM)
		go func() {
			<-drained.exited
			drainTook <- time.Since(start)
		}()
	})
	failed := 0
	for i, r := range res {
		if r.err != nil || r.text != fmt.Sprint(i)+"\n" {
			if failed++; failed <= 5 {
				t.Errorf("call %d while a replica drained: %q, %v", i, r.text, r.err)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d calls failed while a replica drained; want none", failed, n)
	}
	// Exactly once: nginx resent no call to a second replica.
	b, err := os.ReadFile(runLog)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, id := range strings.Fields(string(b)) {
		runs[id]++
	}
	for i := 0; i < n; i++ {
		if c := runs[fmt.Sprint(i)]; c != 1 {
			t.Errorf("call %d ran %d times, want once", i, c)
		}
	}
	if len(runs) != n {
		t.Errorf("%d distinct calls ran, want %d", len(runs), n)
	}
	select {
	case took := <-drainTook:
		if code := drained.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("drained replica exited %d, want 0", code)
		}
		if took > grace {
			t.Errorf("drained replica exited %v after SIGTERM, more than its --grace %v", took, grace)
		}
		t.Logf("%d calls, %d in flight; the drained replica exited %d, %v after SIGTERM", n, inFlight, drained.cmd.ProcessState.ExitCode(), took.Round(time.Millisecond))
	case <-time.After(waitLong):
		t.Errorf("drained replica still running %v after the run", waitLong)
	}
	if !strings.Contains(drained.stderr.String(), "drained: exit") {
		t.Errorf("drained replica's log lacks \"drained: exit\":\n%s", tail([]byte(drained.stderr.String()), 2000))
	}
}
