package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// A confined upstream that is refused a file says so in its own words,
// and launchers add advice that misleads under confinement (npm: "Your
// cache folder contains root-owned files ... sudo chown"). explainDenial
// finds the refused path in the stderr tail and checks it against the
// upstream's rules, so the warning names the real cause and the flag that
// grants it.

var (
	denialRE = regexp.MustCompile(`(?i)\bEACCES\b|\bEPERM\b|permission denied|operation not permitted`)
	// A path starts a word (or follows a quote, '=' or ':'), and is not
	// the // of a URL.
	denialPathRE = regexp.MustCompile(`(?:^|[\s"'=(:])(/[^/\s"'` + "`" + `,;()\[\]{}<>][^\s"'` + "`" + `,;()\[\]{}<>]*)`)
)

// explainDenial returns, when the tail of stderr reports a refused file
// and names a path that rules do not open for writing, what confinement
// refused and which flag grants it, and the tail's lines about it (the
// denial and the path, without the launcher's advice); "" otherwise.
// rules nil (unconfined) explains nothing.
func explainDenial(name, stderr string, rules []confine.Rule) (why, lines string) {
	if rules == nil || !denialRE.MatchString(stderr) {
		return "", ""
	}
	for _, line := range strings.Split(stderr, "\n") {
		for _, m := range denialPathRE.FindAllStringSubmatch(line, -1) {
			p := cleanDenied(m[1])
			if p == "" {
				continue
			}
			access := covering(p, rules)
			if access == confine.AccessReadWrite || access == confine.AccessDevice {
				continue // opened for everything: not refused by the rules
			}
			dir := existingDir(p)
			if access == "" {
				why = fmt.Sprintf("confinement refused %s: upstream %s may not read or write it (grant it with --allow-read %s, or --allow-write %s to write there too)", p, name, dir, dir)
			} else {
				why = fmt.Sprintf("confinement refused %s: upstream %s may read but not write it (grant it with --allow-write %s)", p, name, dir)
			}
			return why, denialLines(stderr, p)
		}
	}
	return "", ""
}

// cleanDenied is a path as a program printed it, made plain: npm writes
// a temporary file's name as "***", others end a path with '.' or ':'.
func cleanDenied(p string) string {
	p = strings.TrimRight(p, ".:")
	for strings.HasSuffix(p, "/***") || strings.HasSuffix(p, "*") {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "/***"), "*")
	}
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// covering is the widest access of the rules that hold p, "" for none.
func covering(p string, rules []confine.Rule) string {
	rank := map[string]int{confine.AccessRead: 1, confine.AccessReadExec: 2, confine.AccessDevice: 3, confine.AccessReadWrite: 4}
	best := ""
	for _, r := range rules {
		held := p == r.Path || (!r.File && within(p, r.Path))
		if held && rank[r.Access] > rank[best] {
			best = r.Access
		}
	}
	return best
}

// existingDir is the nearest directory at or above p that exists: what a
// flag can name.
func existingDir(p string) string {
	for d := p; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if d == "/" {
			return d
		}
	}
}

// denialLines are the lines of stderr that report the denial or name p.
func denialLines(stderr, p string) string {
	var keep []string
	for _, line := range strings.Split(stderr, "\n") {
		if denialRE.MatchString(line) || strings.Contains(line, p) {
			keep = append(keep, strings.TrimSpace(line))
		}
	}
	return strings.Join(keep, "\n")
}
