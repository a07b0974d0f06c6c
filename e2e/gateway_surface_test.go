package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/codec"
)

// TestGatewaySurface: a nested mcp-route's resources, templates and
// prompts through the gateway, in a legacy and in the 2026-07-28
// revision: every line the gateway writes is checked against the
// revision's schema.
func TestGatewaySurface(t *testing.T) {
	f := newSurfaceFixture(t)
	inner := fmt.Sprintf("inner=%s --tools %s --resources %s --prompts %s --root %s --confine off --poll 100ms --describe-cache ''", routeBin(t), t.TempDir(), f.resources, f.prompts, f.root)
	for _, rev := range []string{codec.Rev20251125, codec.Rev20260728} {
		t.Run(rev, func(t *testing.T) {
			s := startServer(t, f.dir, nil, "--tools", t.TempDir(), "--root", t.TempDir(), "--confine", "off", "--upstream", inner, "--upstream-timeout", "1m")
			if !codec.IsModernRevision(rev) {
				s.initialize(rev)
			}
			var list struct{ Resources []listedResource }
			s.result(s.request(rev, "resources/list", nil), &list)
			var uris []string
			for _, r := range list.Resources {
				uris = append(uris, r.URI)
			}
			notes := "mcp-upstream://inner/file://" + filepath.Join(f.resources, "notes.txt")
			if !slices.Contains(uris, notes) || !slices.Contains(uris, "mcp-upstream://inner/docs://readme") {
				t.Errorf("resources/list: %q", uris)
			}
			var tl struct{ ResourceTemplates []listedResource }
			s.result(s.request(rev, "resources/templates/list", nil), &tl)
			if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "mcp-upstream://inner/greet://{who}" {
				t.Errorf("templates: %+v", tl.ResourceTemplates)
			}
			var c struct {
				Contents []struct {
					URI  string
					Text *string
				}
			}
			s.result(s.request(rev, "resources/read", map[string]any{"uri": "mcp-upstream://inner/greet://ada"}), &c)
			if len(c.Contents) != 1 || c.Contents[0].URI != "mcp-upstream://inner/greet://ada" || c.Contents[0].Text == nil || *c.Contents[0].Text != "hello ada at greet://ada" {
				t.Errorf("read of the template: %+v", c)
			}
			var p struct {
				Messages []struct {
					Content struct {
						Type, Text string
						Resource   struct{ URI string }
					}
				}
			}
			s.result(s.request(rev, "prompts/get", map[string]any{"name": "inner__show", "arguments": map[string]any{"topic": "x"}}), &p)
			if len(p.Messages) != 2 || p.Messages[0].Content.Text != "topic: x" || p.Messages[1].Content.Resource.URI != "mcp-upstream://inner/docs://readme" {
				t.Errorf("prompts/get inner__show: %+v", p)
			}
			var comp struct{ Completion struct{ Values []string } }
			s.result(s.request(rev, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "inner__review"}, "argument": map[string]any{"name": "focus", "value": "s"}}), &comp)
			if strings.Join(comp.Completion.Values, ",") != "security,speed,style" {
				t.Errorf("completion: %+v", comp)
			}
			e := s.rpcError(s.request(rev, "resources/read", map[string]any{"uri": "mcp-upstream://other/docs://readme"}))
			if e.Code != codec.CodeInvalidParams || !strings.Contains(e.Message, "names no upstream") {
				t.Errorf("read of an unknown upstream: %d %s", e.Code, e.Message)
			}
		})
	}
}
