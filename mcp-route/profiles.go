package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/mcp-route/confinement"
	"github.com/mcpipe/mcpipe/mcp-route/upstream"
)

// profiled is a stdio upstream started through a launcher (npx, uvx), and
// what its launcher profile adds to the tools' policy for it alone.
type profiled struct {
	spec *upstream.Spec
	prof *upstream.Profile
}

// parseProfiles reads --upstream-profile NAME=PROFILE: NAME an --upstream
// with a command, PROFILE npx, uvx or none, once per NAME.
func parseProfiles(vals []string, specs []upstream.Spec) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		name, prof, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--upstream-profile %q: want NAME=npx, NAME=uvx or NAME=none", v)
		}
		i := slices.IndexFunc(specs, func(s upstream.Spec) bool { return s.Name == name })
		if i < 0 || specs[i].URL != "" {
			return nil, fmt.Errorf("--upstream-profile %s: no --upstream %s=COMMAND (a profile is for a server mcp-route starts)", v, name)
		}
		switch prof {
		case upstream.ProfileNpx, upstream.ProfileUvx, upstream.ProfileNone:
		default:
			return nil, fmt.Errorf("--upstream-profile %s: profile %q: want npx, uvx or none", v, prof)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--upstream-profile %s: %s is given a profile twice", v, name)
		}
		out[name] = prof
	}
	return out, nil
}

// loadProfiles computes the launcher profile of every stdio upstream that
// has one (chosen from its program, or by --upstream-profile), for env,
// its environment, within b. The error names the upstream.
func loadProfiles(specs []upstream.Spec, chosen map[string]string, env []string, b upstream.Bounds) ([]profiled, error) {
	var out []profiled
	for i := range specs {
		sp := &specs[i]
		if sp.URL != "" {
			continue
		}
		name, ok := chosen[sp.Name]
		if !ok {
			name = upstream.Launcher(sp.Argv)
		}
		if name == "" || name == upstream.ProfileNone {
			continue
		}
		p, err := upstream.LoadProfile(name, sp.Argv, env, b)
		if err != nil {
			return nil, fmt.Errorf("--upstream %s: %v (--upstream-profile %s=none starts it without one)", sp.Name, err, sp.Name)
		}
		out = append(out, profiled{spec: sp, prof: p})
	}
	return out, nil
}

// places are the paths the profile makes readable, for the secret check.
func (p profiled) places() []place {
	var out []place
	for _, g := range p.prof.Grants {
		out = append(out, place{fmt.Sprintf("--upstream %s (%s profile: %s)", p.spec.Name, p.prof.Name, g.Why), g.Path})
	}
	return out
}

// config is base (the tools' policy) with the profile's grants and the
// upstream's program, for the upstream's own confinement.
func (p profiled) config(base confinement.Config) confinement.Config {
	c := base
	c.Programs = slices.Concat(base.Programs, programPaths(p.spec.Argv), p.prof.Paths(confine.AccessReadExec))
	c.AllowRead = slices.Concat(base.AllowRead, p.prof.Paths(confine.AccessRead))
	c.AllowWrite = slices.Concat(base.AllowWrite, p.prof.Paths(confine.AccessReadWrite))
	return c
}

// programPaths is where argv's program is, absolute, and the file its
// symlinks lead to (the kernel checks that one).
func programPaths(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	p, err := exec.LookPath(argv[0])
	if err != nil {
		return nil
	}
	var out []string
	if abs, err := filepath.Abs(p); err == nil {
		out = append(out, abs)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		if abs, err := filepath.Abs(real); err == nil {
			out = append(out, abs)
		}
	}
	return out
}
