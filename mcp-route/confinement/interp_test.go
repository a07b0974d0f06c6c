package confinement

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEnvTarget(t *testing.T) {
	for _, c := range []struct{ arg, name, path string }{
		{"python3", "python3", ""},
		{"-S python3 -u", "python3", ""},
		{"-Spython3 -u", "python3", ""},
		{"-S PATH=/opt/x/bin:/usr/bin node --max-old-space-size=64", "node", "/opt/x/bin:/usr/bin"},
		{"-i -u HOME FOO=1 bash -e", "bash", ""},
		{"-- perl", "perl", ""},
		{"", "", ""},
	} {
		name, path := envTarget(c.arg)
		if name != c.name || path != c.path {
			t.Errorf("envTarget(%q) = %q, %q; want %q, %q", c.arg, name, path, c.name, c.path)
		}
	}
}

// writeExe writes an executable file, making its directory.
func writeExe(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

func grantPaths(tc ToolChain) []string {
	var out []string
	for _, g := range tc.Grants {
		out = append(out, g.Path)
	}
	return out
}

// TestChainVenvByPath: "#!/usr/bin/env python3" in a PATH whose first
// entry is a venv: the venv and the lib of the python its pyvenv.cfg names
// are granted, and nothing of a venv that is not on the PATH.
func TestChainVenvByPath(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "pythons", "3.12")
	writeExe(t, filepath.Join(home, "bin", "python3.12"), "#!/bin/sh\n")
	os.MkdirAll(filepath.Join(home, "lib", "python3.12"), 0o755)
	venv := filepath.Join(base, "venv")
	os.MkdirAll(filepath.Join(venv, "bin"), 0o755)
	os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("include-system-site-packages = false\nhome = "+filepath.Join(home, "bin")+"\n"), 0o644)
	if err := os.Symlink(filepath.Join(home, "bin", "python3.12"), filepath.Join(venv, "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "other")
	writeExe(t, filepath.Join(other, "bin", "python3"), "#!/bin/sh\n")
	tool := filepath.Join(base, "tools", "t")
	writeExe(t, tool, "#!/usr/bin/env python3\nprint(1)\n")

	tc := Chain(tool, []string{"PATH=" + venv + "/bin:" + other + "/bin:/usr/bin"}, filepath.Join(base, "root"), nil)
	got := grantPaths(tc)
	for _, want := range []string{filepath.Join(home, "bin", "python3.12"), venv, filepath.Join(home, "lib")} {
		if !slices.Contains(got, want) {
			t.Errorf("grants %v lack %s", got, want)
		}
	}
	for _, g := range got {
		if strings.HasPrefix(g, other) || g == home || g == base {
			t.Errorf("granted %s: wider than needed (%v)", g, got)
		}
	}
	if len(tc.Steps) < 2 || tc.Steps[0] != "/usr/bin/env" || tc.Steps[1] != filepath.Join(venv, "bin", "python3") {
		t.Errorf("steps %v: want /usr/bin/env then the venv's python3", tc.Steps)
	}
}

// TestChainRefusesWritable: an interpreter under a place the tools can
// write is refused, and its pyvenv.cfg (which names a directory the client
// wants) is not read; a .python-version there does not pick pyenv's
// version either.
func TestChainRefusesWritable(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	root := filepath.Join(base, "root")
	wanted := filepath.Join(base, "secret")
	os.MkdirAll(filepath.Join(wanted, "bin"), 0o755)
	os.MkdirAll(filepath.Join(wanted, "lib"), 0o755)
	writeExe(t, filepath.Join(root, "venv", "bin", "python3"), "#!/bin/sh\n")
	os.WriteFile(filepath.Join(root, "venv", "pyvenv.cfg"), []byte("home = "+filepath.Join(wanted, "bin")+"\n"), 0o644)
	tool := filepath.Join(base, "tools", "t")
	writeExe(t, tool, "#!"+filepath.Join(root, "venv", "bin", "python3")+"\n")

	tc := Chain(tool, nil, root, []string{root})
	if len(tc.Grants) != 0 {
		t.Errorf("granted %v from a venv under the root", grantPaths(tc))
	}
	if len(tc.Refused) != 1 || tc.Refused[0].Path != filepath.Join(root, "venv", "bin", "python3") {
		t.Errorf("refused %v, want the interpreter under the root", tc.Refused)
	}

	// pyenv: the version comes from PYENV_ROOT/version, not the root's
	// .python-version.
	pyenv := filepath.Join(base, "pyenv")
	writeExe(t, filepath.Join(pyenv, "libexec", "pyenv"), "#!/bin/sh\n")
	for _, v := range []string{"3.11.7", "3.9.0"} {
		writeExe(t, filepath.Join(pyenv, "versions", v, "bin", "python3"), "#!/bin/sh\n")
	}
	os.WriteFile(filepath.Join(pyenv, "version"), []byte("3.11.7\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".python-version"), []byte("3.9.0\n"), 0o644)
	shim := filepath.Join(pyenv, "shims", "python3")
	writeExe(t, shim, "#!/usr/bin/env bash\nset -e\nexport PYENV_ROOT=\""+pyenv+"\"\nexec \""+pyenv+"/libexec/pyenv\" exec \"$program\" \"$@\"\n")
	writeExe(t, tool, "#!"+shim+"\n")
	tc = Chain(tool, []string{"PATH=/usr/bin:/bin"}, root, []string{root})
	got := grantPaths(tc)
	for _, want := range []string{shim, filepath.Join(pyenv, "libexec"), filepath.Join(pyenv, "versions", "3.11.7")} {
		if !slices.Contains(got, want) {
			t.Errorf("pyenv grants %v lack %s", got, want)
		}
	}
	for _, g := range got {
		if g == pyenv || g == filepath.Join(pyenv, "versions") || strings.Contains(g, "3.9.0") {
			t.Errorf("pyenv granted %s (%v): the whole installation, or the version the root's .python-version names", g, got)
		}
	}
	// PYENV_VERSION picks the version, as pyenv does; a name that climbs
	// out of versions/ is not taken.
	tc = Chain(tool, []string{"PYENV_VERSION=3.9.0:../../etc"}, root, []string{root})
	got = grantPaths(tc)
	if !slices.Contains(got, filepath.Join(pyenv, "versions", "3.9.0")) || slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, "3.11.7") || strings.HasSuffix(g, "/etc") }) {
		t.Errorf("PYENV_VERSION=3.9.0:../../etc: grants %v", got)
	}
}
