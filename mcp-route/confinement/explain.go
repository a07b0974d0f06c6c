package confinement

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// Denials explained. A confined tool that is refused a path sees EACCES
// or EPERM, the same errors a plain permission problem gives, and prints
// whatever its runtime makes of them ("Permission denied", a Python
// traceback, exit 126 for an interpreter the kernel would not run). Explain
// reads a failure for the paths it names and checks each against the
// policy in force and against the file's own permissions, checked by
// mcp-route itself (which is not confined): only a path the policy does
// not grant, and the file's mode would, is blamed on the confinement.

// Denial is a path the confinement refused a failed tool.
type Denial struct {
	Path string // as the tool named it
	// Allowed is what the policy grants there: "" nothing, or
	// confine.AccessRead / AccessReadExec.
	Allowed string
	// Flag is the mcp-route flag, with its argument, that grants what
	// was refused.
	Flag string
}

// String is the sentence added to the isError text.
func (d Denial) String() string {
	what := "tools are granted nothing there"
	if d.Allowed != "" {
		what = "tools may only " + strings.ReplaceAll(d.Allowed, "+", " and ") + " there"
	}
	return fmt.Sprintf("mcp-route's confinement refused %s (%s); %s grants it", d.Path, what, d.Flag)
}

// Attrs are the log attributes of d.
func (d Denial) Attrs() []slog.Attr {
	allowed := d.Allowed
	if allowed == "" {
		allowed = "nothing"
	}
	return []slog.Attr{slog.String("path", d.Path), slog.String("allowed", allowed), slog.String("grant", d.Flag)}
}

// deniedLine: a line reporting EACCES or EPERM, as the usual runtimes
// word it.
var deniedLine = regexp.MustCompile(`(?i)permission denied|operation not permitted|\beacces\b|\beperm\b|errno 13\b|errno 1\b`)

// pathIn finds absolute paths in a line: after a space, quote, colon or
// bracket, up to the next of those.
var pathIn = regexp.MustCompile(`(?:^|[\s'"(\[=:,])(/[^\s'"()\[\]:,]*)`)

// exitNoExec: the outcome of a program whose interpreter could not be
// executed (126) or found (127).
var exitNoExec = regexp.MustCompile(`^exit status 12[67]\b`)

// Explain returns the denial a failure (the isError text: outcome and the
// end of stderr) shows, when the confinement in force caused it: a path
// named on a "Permission denied" or "Operation not permitted" line (the
// last one of the line first), or, when the tool exited 126 or 127, any
// path the failure names. false: nothing names a path the policy refuses and the
// file's permissions allow.
func (c *Confinement) Explain(failure string) (Denial, bool) {
	c.mu.RLock()
	rules := c.report.Rules
	inForce := c.sp != nil
	c.mu.RUnlock()
	if !inForce {
		return Denial{}, false
	}
	noExec := exitNoExec.MatchString(failure)
	for _, line := range strings.Split(failure, "\n") {
		if !noExec && !deniedLine.MatchString(line) {
			continue
		}
		// "sh: /tools/t: 2: cannot create /x/y: Permission denied": the
		// path nearest the words is the one refused, not the program's
		// own name before it.
		ms := pathIn.FindAllStringSubmatch(line, -1)
		for i := len(ms) - 1; i >= 0; i-- {
			if d, ok := denial(strings.TrimRight(ms[i][1], ".;"), rules); ok {
				return d, true
			}
		}
	}
	return Denial{}, false
}

// denial decides whether the confinement, and not the file's mode, refused
// p: the access the policy grants at p is compared with what mcp-route's
// own user may do there.
func denial(p string, rules []confine.Rule) (Denial, bool) {
	if p == "/" {
		return Denial{}, false
	}
	real, err := filepath.EvalSymlinks(p)
	creating := false
	if errors.Is(err, os.ErrNotExist) {
		// A file to be made: the directory it goes in decides.
		dir, derr := filepath.EvalSymlinks(filepath.Dir(p))
		if derr != nil {
			return Denial{}, false
		}
		real, creating = dir, true
	} else if err != nil {
		return Denial{}, false
	}
	allowed := ""
	for _, r := range rules {
		if within(real, r.Path) && rank(r.Access) > rank(allowed) {
			allowed = r.Access
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Denial{}, false
	}
	dir := real
	if !fi.IsDir() {
		dir = filepath.Dir(real)
	}
	can := func(mode uint32) bool { return unix.Access(real, mode) == nil }
	switch allowed {
	case confine.AccessReadWrite, confine.AccessDevice:
		return Denial{}, false // the policy allows it: a plain permission error
	case "":
		switch {
		case creating && can(unix.W_OK):
			return Denial{p, "", "--allow-write " + dir}, true
		case fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && can(unix.X_OK):
			return Denial{p, "", "--allow-exec " + dir}, true
		case can(unix.R_OK):
			if fi.IsDir() {
				return Denial{p, "", "--allow-read " + real}, true
			}
			return Denial{p, "", "--allow-read " + dir}, true
		}
	case confine.AccessRead:
		if fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && can(unix.X_OK) {
			return Denial{p, allowed, "--allow-exec " + dir}, true
		}
		fallthrough
	case confine.AccessReadExec:
		if can(unix.W_OK) {
			return Denial{p, allowed, "--allow-write " + dir}, true
		}
	}
	return Denial{}, false
}

func rank(access string) int {
	switch access {
	case confine.AccessRead:
		return 1
	case confine.AccessReadExec:
		return 2
	case confine.AccessDevice:
		return 3
	case confine.AccessReadWrite:
		return 4
	}
	return 0
}

// ExplainFailure is Explain in the form router.Options.Explain takes: the
// sentence for the isError text and the log attributes.
func (c *Confinement) ExplainFailure(failure string) (string, []slog.Attr, bool) {
	d, ok := c.Explain(failure)
	if !ok {
		return "", nil, false
	}
	return d.String(), d.Attrs(), true
}
