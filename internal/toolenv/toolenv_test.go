package toolenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var server = map[string]string{"PATH": "/p", "SECRET": "s", "X": "x", "LANG": "", "RUNPASS": "rp"}

func TestBase(t *testing.T) {
	env, err := Base([]string{"A=1=2", "X=from-env"}, []string{"X", "UNSET"}, lookupIn(server))
	if err != nil {
		t.Fatal(err)
	}
	// LANG is set but empty: the default. --env wins over --pass-env, in
	// place. SECRET was not named: it stays out.
	if got, want := strings.Join(env, " "), "PATH=/p HOME=/tmp LANG=C.UTF-8 TMPDIR=/tmp X=from-env A=1=2"; got != want {
		t.Errorf("Base = %q, want %q", got, want)
	}
	env, _ = Base(nil, nil, lookupIn(map[string]string{"TMPDIR": "/t"}))
	if got, want := strings.Join(env, " "), "PATH="+DefaultPath+" HOME=/t LANG=C.UTF-8 TMPDIR=/t"; got != want {
		t.Errorf("empty environment: %q, want %q", got, want)
	}
}

func TestBaseRefusesBadNames(t *testing.T) {
	for _, tt := range []struct {
		sets, pass []string
		want       string
	}{
		{nil, []string{"A=B"}, `--pass-env "A=B": not a variable name`},
		{nil, []string{""}, `--pass-env "": not a variable name`},
		{[]string{"NOVALUE"}, nil, `--env "NOVALUE": want NAME=VALUE`},
		{[]string{"=v"}, nil, `--env "=v": want NAME=VALUE`},
		{[]string{"A\x00=v"}, nil, `--env "A\x00=v": want NAME=VALUE`},
	} {
		if _, err := Base(tt.sets, tt.pass, lookupIn(server)); err == nil || err.Error() != tt.want {
			t.Errorf("Base(%q, %q) error %v, want %q", tt.sets, tt.pass, err, tt.want)
		}
	}
}

func TestCallLayers(t *testing.T) {
	base := []string{"PATH=/p", "HOME=/tmp", "KEEP=base", "MCP_TOOL=forged"}
	env := Call{
		Tool: "t", Root: "/root", ProtocolVersion: "2025-06-18",
		Env:     map[string]string{"KEEP": "run.env", "MCP_ROOT": "forged", "MCP_ARG_N": "run.env"},
		PassEnv: []string{"RUNPASS", "UNSET"},
		Lookup:  lookupIn(server),
		Args:    []byte(`{"n":3,"mcp_root":"/elsewhere"}`),
	}.Build(base)
	want := []string{
		"HOME=/tmp", "KEEP=run.env", "MCP_ARG_MCP_ROOT=/elsewhere", "MCP_ARG_N=3",
		"MCP_PROTOCOL_VERSION=2025-06-18", "MCP_ROOT=/root", "MCP_TOOL=t", "PATH=/p", "RUNPASS=rp",
	}
	if !slices.Equal(env, want) {
		t.Errorf("Build =\n%q\nwant\n%q", env, want)
	}
	if env := (Call{Tool: "t", PassEnv: []string{"RUNPASS"}}).Build(nil); slices.Contains(env, "RUNPASS=rp") {
		t.Errorf("nil Lookup passed a variable: %q", env)
	}
}

// A worker serves many calls: its environment has the tool's layers and
// MCP_WORKER, and nothing that belongs to one call, even when the operator
// set it.
func TestWorkerLayers(t *testing.T) {
	base := []string{"PATH=/p", "HOME=/tmp", "KEEP=base", "MCP_TOOL=forged", "MCP_ARG_X=forged", "MCP_PROTOCOL_VERSION=forged"}
	env := Call{
		Tool: "t", Root: "/root", ProtocolVersion: "2025-06-18",
		Env:     map[string]string{"KEEP": "run.env", "MCP_ROOT": "forged", "MCP_WORKER": "0"},
		PassEnv: []string{"RUNPASS", "UNSET"},
		Lookup:  lookupIn(server),
		Args:    []byte(`{"n":3}`),
	}.Worker(base)
	want := []string{"HOME=/tmp", "KEEP=run.env", "MCP_ROOT=/root", "MCP_WORKER=1", "PATH=/p", "RUNPASS=rp"}
	if !slices.Equal(env, want) {
		t.Errorf("Worker =\n%q\nwant\n%q", env, want)
	}
}

func TestArgEnv(t *testing.T) {
	got := ArgEnv([]byte(`{"a-b":"x","C":1.5,"d":false,"e":null,"f":[1],"g":{},"h":"nul\u0000"}`))
	want := map[string]string{"MCP_ARG_A_B": "x", "MCP_ARG_C": "1.5", "MCP_ARG_D": "false"}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	big := strings.Repeat("x", MaxArgEnvValue+1)
	if got := ArgEnv([]byte(`{"big":"` + big + `","small":"s"}`)); got["MCP_ARG_BIG"] != "" || got["MCP_ARG_SMALL"] != "s" {
		t.Errorf("oversized value: %d variables, small %q", len(got), got["MCP_ARG_SMALL"])
	}
	if got := ArgEnv([]byte(`[1]`)); len(got) != 0 {
		t.Errorf("array arguments gave %v", got)
	}
}

// TestBuiltEnvironmentExecs runs a real process with a built environment:
// what Build returns is what the program sees, and the kernel takes it even
// with arguments at the MCP_ARG_* limits.
func TestBuiltEnvironmentExecs(t *testing.T) {
	base, err := Base([]string{"SET=1"}, nil, lookupIn(map[string]string{"PATH": "/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	var args strings.Builder
	args.WriteString(`{"q":"hello world"`)
	for i := range 20 {
		args.WriteString(`,"v` + strings.Repeat("x", i) + `":"` + strings.Repeat("y", MaxArgEnvValue-100) + `"`)
	}
	args.WriteString("}")
	env := Call{Tool: "t", Root: t.TempDir(), ProtocolVersion: "2025-06-18", Args: []byte(args.String())}.Build(base)
	script := filepath.Join(t.TempDir(), "show")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$MCP_TOOL|$MCP_ARG_Q|$SET|$HOME\"\n"), 0o755)
	cmd := exec.Command(script)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exec with %d variables: %v", len(env), err)
	}
	if got, want := strings.TrimSpace(string(out)), "t|hello world|1|/tmp"; got != want {
		t.Errorf("tool saw %q, want %q", got, want)
	}
}

// TestCommand: a program a tool runs gets PATH without entries under the
// root (also through a symlink) or relative ones, the no-terminal settings,
// the locale and temp variables the tool has, a HOME outside the root, and
// nothing else.
func TestCommand(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	tool := map[string]string{
		"PATH":   "rel:/usr/bin:" + root + "/bin:" + link + "/bin::/bin",
		"HOME":   link,
		"LANG":   "de_DE.UTF-8",
		"TZ":     "UTC",
		"TMPDIR": "",
		"SECRET": "s3cret",
	}
	got := Command(func(k string) string { return tool[k] }, root)
	want := []string{"PATH=/usr/bin:/bin", "TERM=dumb", "NO_COLOR=1", "PAGER=cat", "HOME=/nonexistent", "LANG=de_DE.UTF-8", "TZ=UTC"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Command =\n%q\nwant\n%q", got, want)
	}
	// The harmless counterpart: a HOME outside the root is kept, and no
	// PATH at all means DefaultPath.
	got = Command(func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }, root)
	want = []string{"PATH=" + DefaultPath, "TERM=dumb", "NO_COLOR=1", "PAGER=cat", "HOME=/home/u"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Command =\n%q\nwant\n%q", got, want)
	}
}
