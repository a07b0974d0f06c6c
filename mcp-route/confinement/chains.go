package confinement

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
)

// chainEntry is the interpreter chain resolved for one executable, and
// what it was resolved for: the file's identity and the parts of the
// start that steer it. Another key resolves it again.
type chainEntry struct {
	key   string
	chain ToolChain
}

// chainKey is what a chain depends on besides the files it reads: the
// executable's identity (a rebuilt tool may have a new shebang), the
// tool's PATH and PYENV_VERSION, and the working directory.
func chainKey(cmd *exec.Cmd) (string, bool) {
	fi, err := os.Stat(cmd.Path)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %v\x00%s", fi.Size(), fi.ModTime().UnixNano(), fi.Mode(), cmd.Dir)
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "PYENV_VERSION=") {
			b.WriteString("\x00" + kv)
		}
	}
	return b.String(), true
}

// chainNeeds returns the grants of cmd's interpreter chain, resolved with
// the environment and directory it starts with (a tool's run.env may set
// its own PATH): once per executable and key, so a call of an unchanged
// tool costs one stat. A chain resolved anew is logged.
func (c *Confinement) chainNeeds(cmd *exec.Cmd) []string {
	key, ok := chainKey(cmd)
	if !ok {
		return nil
	}
	c.chainMu.Lock()
	e, hit := c.chains[cmd.Path]
	c.chainMu.Unlock()
	if !hit || e.key != key {
		unsafe := c.cfg.unsafe()
		e = chainEntry{key: key, chain: Chain(cmd.Path, cmd.Env, cmd.Dir, unsafe)}
		c.chainMu.Lock()
		prev, had := c.chains[cmd.Path]
		c.chains[cmd.Path] = e
		c.chainMu.Unlock()
		if !had || !sameChain(prev.chain, e.chain) {
			c.logChain(e.chain)
		}
	}
	var out []string
	for _, g := range e.chain.Grants {
		out = append(out, g.Path)
	}
	return out
}

func sameChain(a, b ToolChain) bool {
	return fmt.Sprint(a.Grants, a.Refused) == fmt.Sprint(b.Grants, b.Refused)
}

// logChain says what a tool's chain is granted (debug) and refused (warn:
// the tool will likely fail, and this is why).
func (c *Confinement) logChain(tc ToolChain) {
	l := c.cfg.Logger
	if l == nil {
		return
	}
	// Each once: the chains resolved at start are resolved again at the
	// tools' first start, with their own environment.
	first := func(g Grant) bool {
		k := tc.Tool + "\x00" + g.Path
		c.chainMu.Lock()
		defer c.chainMu.Unlock()
		if c.logged[k] {
			return false
		}
		c.logged[k] = true
		return true
	}
	for _, g := range tc.Grants {
		if !first(g) {
			continue
		}
		l.Debug("interpreter granted to tools (read+exec)", slog.String("tool", tc.Tool), slog.String("path", g.Path), slog.String("why", g.Why))
	}
	for _, g := range tc.Refused {
		if !first(g) {
			continue
		}
		l.Warn("interpreter not granted: it is in a place the tools can write (--root, --allow-write or their TMPDIR), where a client could replace it",
			slog.String("tool", tc.Tool), slog.String("path", g.Path), slog.String("why", g.Why))
	}
}

// ChainDetail is the chains for --confine-check, one line per step,
// grant and refusal, of the tools whose chain needs more than the system
// directories. All tools share one domain, so every tool may use
// what any chain is granted.
func ChainDetail(chains []ToolChain) string {
	var b strings.Builder
	for _, tc := range chains {
		if len(tc.Grants) == 0 && len(tc.Refused) == 0 {
			continue // the system directories hold its chain
		}
		fmt.Fprintf(&b, "tool %s\n", tc.Tool)
		if len(tc.Steps) > 0 {
			fmt.Fprintf(&b, "  runs     %s\n", strings.Join(append([]string{tc.Tool}, tc.Steps...), " -> "))
		}
		for _, g := range tc.Grants {
			fmt.Fprintf(&b, "  grant    read+exec  %s  [%s]\n", g.Path, g.Why)
		}
		for _, g := range tc.Refused {
			fmt.Fprintf(&b, "  REFUSED  %s  [%s: inside a place the tools can write]\n", g.Path, g.Why)
		}
	}
	if b.Len() > 0 {
		return "interpreter chains (granted to all tools: they share one domain):\n" + b.String()
	}
	return ""
}
