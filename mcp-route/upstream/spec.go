package upstream

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/cmdline"
)

// Spec is one --upstream NAME=CMD or NAME=URL.
type Spec struct {
	Name string
	Argv []string // a stdio server's command line, split; nil for URL
	URL  string   // a Streamable HTTP endpoint; "" for Argv
}

// Separator joins an upstream's name and its tool's name: NAME__TOOL.
const Separator = "__"

// MaxListedName is the longest NAME__TOOL served: the limit many LLM APIs
// put on a tool name, below the 128 characters MCP allows.
const MaxListedName = 64

var nameRE = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// ParseSpec reads NAME=CMD or NAME=http(s)://...; see the package doc for
// what it refuses.
func ParseSpec(s string) (Spec, error) {
	name, cmd, ok := strings.Cut(s, "=")
	if !ok {
		return Spec{}, fmt.Errorf("--upstream %q: want NAME=COMMAND or NAME=https://HOST/PATH", s)
	}
	if !nameRE.MatchString(name) {
		return Spec{}, fmt.Errorf("--upstream %q: name %q: want 1 to 32 letters, digits or '-' (it prefixes the tools: NAME__TOOL)", s, name)
	}
	spec := Spec{Name: name}
	trimmed := strings.TrimSpace(cmd)
	if lower := strings.ToLower(trimmed); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(trimmed)
		if err != nil || u.Host == "" {
			return Spec{}, fmt.Errorf("--upstream %s: %q is not a URL with a host", name, trimmed)
		}
		if strings.EqualFold(u.Scheme, "http") && !loopback(u.Hostname()) {
			return Spec{}, fmt.Errorf("--upstream %s: plain http only to a loopback address (127.0.0.1, ::1, localhost), not %q: use https", name, u.Host)
		}
		spec.URL = trimmed
		return spec, nil
	}
	argv, err := cmdline.Split(cmd)
	if err != nil {
		return Spec{}, fmt.Errorf("--upstream %s: %v", name, err)
	}
	spec.Argv = argv
	return spec, nil
}

// ParseSpecs parses every --upstream and refuses a name given twice.
func ParseSpecs(list []string) ([]Spec, error) {
	seen := map[string]bool{}
	var out []Spec
	for _, s := range list {
		spec, err := ParseSpec(s)
		if err != nil {
			return nil, err
		}
		if seen[spec.Name] {
			return nil, fmt.Errorf("--upstream %s: the name is given twice; each upstream needs its own", spec.Name)
		}
		seen[spec.Name] = true
		out = append(out, spec)
	}
	return out, nil
}

// ParseBackoff reads --upstream-backoff MIN,MAX: two positive durations
// (time.ParseDuration: 500ms, 0.5s, 1m), MIN no greater than MAX. The
// error names the flag, what was given and the form wanted.
func ParseBackoff(s string) (minWait, maxWait time.Duration, err error) {
	bad := func(why string) (time.Duration, time.Duration, error) {
		return 0, 0, fmt.Errorf("--upstream-backoff %q: %s; want MIN,MAX, two positive durations with MIN <= MAX, e.g. 0.5s,30s", s, why)
	}
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return bad("no comma")
	}
	minWait, err = time.ParseDuration(strings.TrimSpace(a))
	if err != nil {
		return bad(fmt.Sprintf("MIN %q is not a duration", strings.TrimSpace(a)))
	}
	maxWait, err = time.ParseDuration(strings.TrimSpace(b))
	if err != nil {
		return bad(fmt.Sprintf("MAX %q is not a duration", strings.TrimSpace(b)))
	}
	switch {
	case minWait <= 0 || maxWait <= 0:
		return bad("both must be positive")
	case minWait > maxWait:
		return bad("MIN is greater than MAX")
	}
	return minWait, maxWait, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String is the spec as given, for logs.
func (s Spec) String() string {
	if s.URL != "" {
		return s.Name + "=" + s.URL
	}
	return s.Name + "=" + strings.Join(s.Argv, " ")
}
