package confinement

import (
	"log/slog"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// Explain returns the denial a failed tool call shows (the isError text:
// outcome and the end of stderr), when the confinement in force caused
// it; confine.Explain reads it, against the rules in force. false: no
// confinement, or nothing names a path the rules refuse and the file's
// permissions allow.
func (c *Confinement) Explain(failure string) (confine.Denial, bool) {
	c.mu.RLock()
	rules := c.report.Rules
	inForce := c.sp != nil
	c.mu.RUnlock()
	if !inForce {
		return confine.Denial{}, false
	}
	if rules == nil {
		rules = []confine.Rule{}
	}
	return confine.Explain(failure, rules)
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
