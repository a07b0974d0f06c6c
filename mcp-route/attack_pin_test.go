package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mcp-route pin runs in the operator's terminal and prints why an upstream
// could not be listed, its stderr's tail included: a hostile upstream
// wrote terminal escapes there (ESC ] 0 ; retitles the window, ESC [ 2 J
// clears it, hiding what came before). They are shown escaped now; the
// upstream's words still are, and a failing upstream still says why.
func TestAttackPinUpstreamStderrEscapes(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.Mkdir(root, 0o755)
	evil := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\nprintf 'oops \\033]0;pwned\\007\\033[2Jbye\\n' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "p.json")
	code, _, errs := runWith(t, "", "pin", "--confine", "off", "--root", root, "--pin", p, "--upstream", "ev="+evil)
	if code != 1 || !strings.Contains(errs, "mcp-route: pin: upstream ev: ") {
		t.Fatalf("pin of a failing upstream: code %d, stderr %q", code, errs)
	}
	if strings.ContainsAny(errs, "\x1b\x07") {
		t.Errorf("the upstream's escapes reach the terminal: %q", errs)
	}
	if !strings.Contains(errs, `oops \x1b]0;pwned\x07\x1b[2Jbye`) {
		t.Errorf("the upstream's stderr is not shown, escaped: %q", errs)
	}
}
