//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpipe/mcpipe/mcp-route/router"
)

// Apart because mcp-route's router builds only on Unix systems, and
// mcp-call's tests are vetted for Windows too.

// TestDefaultTimeoutOutlastsRoute: mcp-call's default --timeout must
// outlast mcp-route's per-call timeout and kill grace, or a slow tool ends
// with mcp-call giving up instead of with the server's "timed out" answer.
func TestDefaultTimeoutOutlastsRoute(t *testing.T) {
	if route := router.DefaultTimeout + router.DefaultGrace; defaultTimeout <= route+5*time.Second {
		t.Errorf("default --timeout %v does not outlast mcp-route's %v + %v by a margin", defaultTimeout, router.DefaultTimeout, router.DefaultGrace)
	}
	if !strings.Contains(usage, "(default 45s;") || defaultTimeout != 45*time.Second {
		t.Errorf("--help and defaultTimeout (%v) disagree", defaultTimeout)
	}
}
