package router

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/mcpipe/mcpipe/codec"
	core "github.com/mcpipe/mcpipe/codec/server"
)

// Confirm is the approval gate (mcp-route --confirm): before a tool it
// names runs, the user is asked by elicitation to approve that call, its
// tool, arguments and their digest shown. Declined, cancelled, not
// answered within Timeout, or a client that cannot be asked (no
// elicitation capability, an HTTP request without a session or an SSE
// stream): the call gets an isError result saying so, and nothing runs.
// A 2026-07-28 request is asked with an input_required result instead
// (confirm_modern.go). Clients cannot be trusted to ask on their own;
// this gate does not rely on them.
//
// In the legacy revisions an approval is an answer to one question about
// one call: it is taken once, from the connection (over HTTP, the
// session) that made the call,
// and only while the question is open (Timeout). It covers those
// arguments only: a later call, with the same arguments or others, is
// asked again. In the question, a character of the title or the
// arguments that is not printable (a newline, a bidi override, an
// invisible Unicode tag) is shown as its \u escape, so neither can
// redraw what the user approves. Every decision is logged (Info: approved; Warn: refused),
// with the tool and the digest.
type Confirm struct {
	All         bool            // every tool
	Destructive bool            // tools that may destroy (see Needs)
	Tools       map[string]bool // tools by name (a local tool's, or an upstream's NAME__TOOL)
	// UpstreamHints trusts an upstream tool's readOnlyHint and
	// destructiveHint for Destructive. An upstream describes itself, and a
	// hostile one says readOnlyHint: true of its most destructive tool:
	// mcp-route sets this only under --pin, where a definition cannot
	// change its annotations without being withheld until `mcp-route pin`
	// records the change. Without it, every upstream tool counts as
	// destructive.
	UpstreamHints bool
	// Timeout bounds the wait for the user's answer; 0 means
	// DefaultConfirmTimeout.
	Timeout time.Duration
}

// DefaultConfirmTimeout is how long an approval question stays open.
const DefaultConfirmTimeout = 2 * time.Minute

// ParseConfirm reads --confirm: a comma-separated list of "destructive",
// "all" and tool names (the two words win over tools named so).
func ParseConfirm(spec string) (*Confirm, error) {
	c := &Confirm{Tools: map[string]bool{}}
	for _, w := range strings.Split(spec, ",") {
		switch w = strings.TrimSpace(w); w {
		case "":
		case "all":
			c.All = true
		case "destructive":
			c.Destructive = true
		default:
			if err := codec.ValidateToolName(w); err != nil {
				return nil, fmt.Errorf("--confirm %s: %v: want destructive, all or tool names, separated by commas", codec.QuoteClip(w, 80), err)
			}
			c.Tools[w] = true
		}
	}
	if !c.All && !c.Destructive && len(c.Tools) == 0 {
		return nil, fmt.Errorf("--confirm %q: names nothing: want destructive, all or tool names, separated by commas", spec)
	}
	return c, nil
}

// Needs reports whether a call of def, a local tool's definition, must be
// approved. A tool is destructive unless it says otherwise: the MCP
// defaults are readOnlyHint false and destructiveHint true, so a tool
// without annotations may destroy, and so may one whose destructiveHint
// is true and readOnlyHint is not.
func (c *Confirm) Needs(def *codec.Tool) bool {
	return c.needs(def, true)
}

// NeedsUpstream is Needs for an upstream tool: its hints count only with
// UpstreamHints.
func (c *Confirm) NeedsUpstream(def *codec.Tool) bool {
	return c.needs(def, c != nil && c.UpstreamHints)
}

func (c *Confirm) needs(def *codec.Tool, trustHints bool) bool {
	if c == nil {
		return false
	}
	if c.All || c.Tools[def.Name] {
		return true
	}
	if !c.Destructive {
		return false
	}
	if !trustHints {
		return true
	}
	a := def.Annotations
	if a == nil {
		return true
	}
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		return false
	}
	return a.DestructiveHint == nil || *a.DestructiveHint
}

// ArgsDigest is the digest an approval question shows: SHA-256 over the
// tool's name, a NUL and the arguments as sent, compacted.
func ArgsDigest(name string, args []byte) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(compactArgs(args))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// compactArgs is args without insignificant space; as given when it is
// not JSON (it was checked before: it is).
func compactArgs(args []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return args
	}
	return b.Bytes()
}

// printable is s with every character that is not printable (controls,
// newlines, format characters such as bidi overrides and Unicode tags,
// line and paragraph separators, bytes that are not UTF-8) as a \u escape:
// a title (an upstream's) or an argument (a model's) cannot redraw the
// question the user approves. Inside a JSON string the escape is the same
// string, so the arguments shown still match the digest.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != unicode.ReplacementChar {
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// maxShownArgs bounds the arguments a question shows. Past it the
// question says, before the arguments, that some are not shown: a payload
// padded past the bound must not pass for the harmless start the user
// sees.
const maxShownArgs = 16 << 10

// approve asks the user to approve the call of def with args; it returns
// nil when they did, else what the call gets: an isError result, or (in
// 2026-07-28) the input_required result that asks (confirm_modern.go).
func (s *server) approve(ctx context.Context, req *core.Request, def *codec.Tool, args []byte) any {
	c := s.opts.Confirm
	digest := ArgsDigest(def.Name, args)
	attrs := []slog.Attr{slog.String("tool", def.Name), slog.String("call", req.ID.String()), slog.String("digest", digest)}
	refuse := func(why string) *codec.CallToolResult {
		s.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "call not approved: nothing ran", append(attrs, slog.String("why", why))...)
		return codec.ErrorResult(fmt.Sprintf("not run: tool %s needs the user's approval (--confirm), and %s", def.Name, why))
	}
	if !codec.IsModernRevision(req.Revision) && !req.CanAsk(codec.MethodElicit, codec.ElicitForm) {
		why := "this client cannot be asked: it did not declare the elicitation capability"
		if req.Revision < codec.Rev20250618 {
			why = "this client cannot be asked: its protocol revision " + req.Revision + " has no elicitation"
		}
		return refuse(why)
	}
	shown := string(compactArgs(args))
	cut := ""
	if len(shown) > maxShownArgs {
		cut = fmt.Sprintf("\n\nWARNING: only the first %d of the arguments' %d bytes are shown; the rest is not visible here.", maxShownArgs, len(shown))
		shown = strings.ToValidUTF8(shown[:maxShownArgs], "") + fmt.Sprintf("... (%d bytes not shown)", len(shown)-maxShownArgs)
	}
	shown = printable(shown)
	title := def.Title
	if title == "" && def.Annotations != nil {
		title = def.Annotations.Title
	}
	if title != "" {
		title = " (" + printable(title) + ")"
	}
	params := map[string]any{
		"message": fmt.Sprintf("Approve running the tool %s%s?%s\n\nArguments: %s\nDigest: %s", def.Name, title, cut, shown, digest),
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{
					"type":        "boolean",
					"title":       "Run " + def.Name,
					"description": "Run " + def.Name + " with these arguments, once",
				},
			},
			"required": []string{"approve"},
		},
	}
	approvedLog := func() {
		s.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "call approved by the user", attrs...)
	}
	if codec.IsModernRevision(req.Revision) {
		res := s.approveModern(ctx, req, def, digest, params, refuse)
		if res == nil {
			approvedLog()
			return nil
		}
		return res
	}
	timeout := c.timeout()
	actx, cancel := context.WithTimeoutCause(ctx, timeout, errApprovalTimeout)
	defer cancel()
	resp, err := req.Call(actx, codec.MethodElicit, params)
	switch {
	case errors.Is(err, core.ErrNoBackChannel):
		return refuse("this request cannot carry the question (over HTTP it takes a session and a client that accepts text/event-stream)")
	case errors.Is(err, errApprovalTimeout):
		return refuse(fmt.Sprintf("no answer came within %v", timeout))
	case err != nil:
		return refuse("no answer came: " + err.Error())
	case resp.Error != nil:
		return refuse(fmt.Sprintf("the client could not ask: %s (%d)", resp.Error.Message, resp.Error.Code))
	}
	if res := s.approved(ctx, req, def, resp.Result, refuse); res != nil {
		return res
	}
	approvedLog()
	return nil
}

// checkConfirmNames warns, after the first load, of each tool --confirm
// names that no local tool has: names are exact, so a typo or another
// case ("Wipe" for wipe) gates nothing, silently. An upstream's NAME__TOOL
// is left alone: upstreams list theirs later.
func (s *server) checkConfirmNames() {
	c := s.opts.Confirm
	if c == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(c.Tools)) {
		if !strings.Contains(name, "__") && s.opts.Registry.Lookup(name) == nil {
			s.opts.Logger.Warn("--confirm names no tool (names are exact, case included): until one is, it gates nothing", slog.String("tool", name))
		}
	}
}

func (c *Confirm) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultConfirmTimeout
	}
	return c.Timeout
}

var errApprovalTimeout = errors.New("approval timed out")
