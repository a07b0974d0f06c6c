package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/cmdline"
	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/mcp-route/pin"
)

// Spec is one --upstream NAME=CMD or NAME=URL.
type Spec struct {
	Name string
	Argv []string // a stdio server's command line, split; nil for URL
	URL  string   // a Streamable HTTP endpoint; "" for Argv
	// Header is sent with every request to an HTTP upstream
	// (--upstream-header, --upstream-token-file; see SetHeaders). It may
	// hold a secret: it is never logged, and String leaves it out.
	Header http.Header
	// Allow are the requests the upstream may send mcp-route's client
	// (--upstream-allow): "elicitation", "sampling". See ParseAllow.
	Allow []string

	// Set by mcp-route for a stdio upstream; zero values leave Options'
	// ways. Spawn starts its process instead of Options.Spawn (an upstream
	// with a launcher profile has a confinement of its own). Rules, when
	// set, returns what its confinement opens: a file its stderr reports
	// refused is checked against them, and the failure names it (see
	// "Launcher profiles" in the package doc). Launcher is its launcher
	// profile's name, "" for none. FirstConnect and FirstList replace
	// ConnectTimeout and ListTimeout until a start has listed its tools
	// (a launcher's first-start allowance).
	// Env is added to Options.Env for this upstream (a launcher
	// profile's settings, such as npm_config_offline under --no-network).
	Env                     []string
	Spawn                   func(*exec.Cmd) error
	Rules                   func() []confine.Rule
	Launcher                string
	FirstConnect, FirstList time.Duration
}

// Separator joins an upstream's name and its tool's name: NAME__TOOL.
const Separator = "__"

// MaxListedName is the longest NAME__TOOL served: the limit many LLM APIs
// put on a tool name, below the 128 characters MCP allows.
const MaxListedName = 64

// ParseSpec reads NAME=CMD or NAME=http(s)://...; see the package doc for
// what it refuses.
func ParseSpec(s string) (Spec, error) {
	name, cmd, ok := strings.Cut(s, "=")
	if !ok {
		return Spec{}, fmt.Errorf("--upstream %q: want NAME=COMMAND or NAME=https://HOST/PATH", s)
	}
	if pin.ValidateUpstream(name) != nil {
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

// reservedHeaders are the headers codec/client's HTTP transport sets
// itself (or Go's HTTP client does): one given by --upstream-header would
// break the protocol, so it is refused. Mcp-Param-* too.
var reservedHeaders = map[string]bool{
	"Mcp-Session-Id":       true,
	"Mcp-Protocol-Version": true,
	"Mcp-Method":           true,
	"Mcp-Name":             true,
	"Content-Type":         true,
	"Content-Length":       true,
	"Accept":               true,
	"Host":                 true,
	"Transfer-Encoding":    true,
	"Connection":           true,
	"Last-Event-Id":        true,
}

// TokenFileError is a --upstream-token-file that cannot be read or holds
// no token: the operator's file, not the command line, is wrong (mcp-route
// exits 1 for it, 2 for the other errors of SetHeaders).
type TokenFileError struct{ Err error }

func (e *TokenFileError) Error() string { return e.Err.Error() }
func (e *TokenFileError) Unwrap() error { return e.Err }

// SetHeaders applies --upstream-header NAME=K: V (each header added to
// NAME's requests) and --upstream-token-file NAME=FILE (Authorization:
// Bearer with the first non-blank line of FILE, read now) to specs. NAME
// must be an HTTP upstream among specs. Refused: a K that is not an HTTP
// header name, a K or V with a control character (CR, LF: a header split
// in two), a header the transport sets itself (Content-Type, Accept,
// Content-Length, Host, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method,
// Mcp-Name, Mcp-Param-*, Transfer-Encoding, Connection, Last-Event-ID), a
// token file given twice for one NAME, and a token file beside an
// Authorization header. A token file that cannot be read, or holds no
// token or one with a character that is not visible ASCII, is a
// *TokenFileError. No error quotes a header's value or a token.
func SetHeaders(specs []Spec, headers, tokenFiles []string) error {
	find := func(flag, form, arg string) (*Spec, string, error) {
		name, rest, ok := strings.Cut(arg, "=")
		if !ok || pin.ValidateUpstream(name) != nil {
			return nil, "", fmt.Errorf("--%s: want NAME=%s, NAME an --upstream's", flag, form)
		}
		for i := range specs {
			if specs[i].Name != name {
				continue
			}
			if specs[i].URL == "" {
				return nil, "", fmt.Errorf("--%s %s: upstream %s is not an HTTP upstream (NAME=https://...): a stdio upstream gets no headers", flag, name, name)
			}
			return &specs[i], rest, nil
		}
		return nil, "", fmt.Errorf("--%s %s: no --upstream %s=URL (headers are for an HTTP upstream)", flag, name, name)
	}
	for _, h := range headers {
		sp, kv, err := find("upstream-header", "'Key: value'", h)
		if err != nil {
			return err
		}
		k, v, ok := strings.Cut(kv, ":")
		k = strings.TrimSpace(k)
		switch {
		case !ok || !isToken(k):
			return fmt.Errorf("--upstream-header %s: want NAME='Key: value', Key an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~)", sp.Name)
		case strings.ContainsAny(v, "\r\n"):
			return fmt.Errorf("--upstream-header %s: header %s: the value has a line break (CR or LF), which would split it into two headers", sp.Name, k)
		}
		v = strings.TrimSpace(v)
		switch {
		case hasControl(v):
			return fmt.Errorf("--upstream-header %s: header %s: the value has a control character", sp.Name, k)
		}
		ck := http.CanonicalHeaderKey(k)
		if reservedHeaders[ck] || strings.HasPrefix(ck, "Mcp-Param-") {
			return fmt.Errorf("--upstream-header %s: header %s is set by the MCP transport itself and cannot be given", sp.Name, k)
		}
		if sp.Header == nil {
			sp.Header = http.Header{}
		}
		sp.Header.Add(ck, v)
	}
	seen := map[string]bool{}
	for _, tf := range tokenFiles {
		sp, path, err := find("upstream-token-file", "FILE", tf)
		if err != nil {
			return err
		}
		switch {
		case path == "":
			return fmt.Errorf("--upstream-token-file %s: want NAME=FILE", sp.Name)
		case seen[sp.Name]:
			return fmt.Errorf("--upstream-token-file %s: given twice", sp.Name)
		case sp.Header.Get("Authorization") != "":
			return fmt.Errorf("--upstream-token-file %s and --upstream-header '%s=Authorization: ...' exclude each other", sp.Name, sp.Name)
		}
		seen[sp.Name] = true
		tok, err := readToken(path)
		if err != nil {
			return &TokenFileError{fmt.Errorf("--upstream-token-file %s: %w", sp.Name, err)}
		}
		if sp.Header == nil {
			sp.Header = http.Header{}
		}
		sp.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}

// readToken is the first non-blank line of the file at path, trimmed: a
// bearer token, kept out of argv (and so out of ps and shell history).
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		tok := strings.TrimSpace(line)
		if tok == "" {
			continue
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] < 0x21 || tok[i] > 0x7e {
				return "", fmt.Errorf("%s: the token has a character that is not visible ASCII (byte %d)", path, i+1)
			}
		}
		return tok, nil
	}
	return "", errors.New(path + ": no token in it (want the token on its first non-blank line)")
}

// isToken says whether s is an HTTP header name (RFC 9110 token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// hasControl says whether s has a control character other than a tab.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return true
		}
	}
	return false
}
