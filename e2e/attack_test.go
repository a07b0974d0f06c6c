package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/codec"
)

// Hostile-client attacks on what mcp-route serves beside tools, through
// the real binary.

// rssKiB is the resident set of process pid, from /proc.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// A resource template matches URIs of any length ({who} takes anything
// but / ? # & = ,), and resources/subscribe accepted each such URI and
// kept it for the session: 1024 subscriptions of a frame's size (16 MiB)
// each held gigabytes per session. Updates are only sent for the
// directory's files, never for a template's URI, so such a subscription
// is answered and not kept: subscribing 128 URIs of 512 KiB leaves the
// server's memory where it was (it grew by 64 MiB before). A static
// resource's subscription still gets its update.
func TestAttackSubscribeTemplateFlood(t *testing.T) {
	f := newSurfaceFixture(t)
	s := startServer(t, f.dir, nil, f.args()...)
	s.initialize(codec.Rev20251125)
	s.result(s.request(s.rev, "resources/list", nil), &struct{}{})
	time.Sleep(300 * time.Millisecond) // the start-up garbage returned (GOGC back to 100)
	before := rssKiB(t, s.cmd.Process.Pid)
	big := strings.Repeat("x", 512<<10)
	for i := range 128 {
		s.result(s.request(s.rev, "resources/subscribe", map[string]any{"uri": fmt.Sprintf("greet://%d%s", i, big)}), &struct{}{})
	}
	after := rssKiB(t, s.cmd.Process.Pid)
	if grew := after - before; grew > 32<<10 {
		t.Errorf("128 subscriptions of 512 KiB template URIs: RSS %d -> %d KiB (+%d MiB): the URIs are kept", before, after, grew>>10)
	}

	notes := "file://" + filepath.Join(f.resources, "notes.txt")
	s.result(s.request(s.rev, "resources/subscribe", map[string]any{"uri": notes}), &struct{}{})
	time.Sleep(50 * time.Millisecond)
	write(t, filepath.Join(f.resources, "notes.txt"), "changed notes, longer\n", 0o644)
	waitNote(t, s, "notifications/resources/updated", notes)
}
