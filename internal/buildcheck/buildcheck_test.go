package buildcheck

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/bazelbuild/buildtools/build"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
)

// repoFile returns the path of a file at the repository root. Under Bazel
// the test declares it as data and it sits in the runfiles tree; under plain
// `go test` the working directory is this package's directory.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	if srcdir := os.Getenv("TEST_SRCDIR"); srcdir != "" {
		return filepath.Join(srcdir, os.Getenv("TEST_WORKSPACE"), name)
	}
	return filepath.Join("..", "..", name)
}

func parseGoMod(t *testing.T) *modfile.File {
	t.Helper()
	path := repoFile(t, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func parseBuild(t *testing.T, name string) *build.File {
	t.Helper()
	path := repoFile(t, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := build.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// calls returns every call expression in f whose function is named fn
// (a plain name such as "bazel_dep", or a method such as "go_deps.from_file").
func calls(f *build.File, fn string) []*build.CallExpr {
	var out []*build.CallExpr
	build.Walk(f, func(e build.Expr, _ []build.Expr) {
		c, ok := e.(*build.CallExpr)
		if !ok {
			return
		}
		switch x := c.X.(type) {
		case *build.Ident:
			if x.Name == fn {
				out = append(out, c)
			}
		case *build.DotExpr:
			if id, ok := x.X.(*build.Ident); ok && id.Name+"."+x.Name == fn {
				out = append(out, c)
			}
		}
	})
	return out
}

func stringArg(c *build.CallExpr, key string) string {
	for _, a := range c.List {
		if as, ok := a.(*build.AssignExpr); ok {
			if id, ok := as.LHS.(*build.Ident); ok && id.Name == key {
				if s, ok := as.RHS.(*build.StringExpr); ok {
					return s.Value
				}
			}
		}
	}
	return ""
}

func TestModuleBazelMatchesGoMod(t *testing.T) {
	mod := parseGoMod(t)
	f := parseBuild(t, "MODULE.bazel")

	deps := map[string]bool{}
	for _, c := range calls(f, "bazel_dep") {
		deps[stringArg(c, "name")] = true
	}
	for _, want := range []string{"rules_go", "gazelle"} {
		if !deps[want] {
			t.Errorf("MODULE.bazel: no bazel_dep(name = %q)", want)
		}
	}

	fromFile := calls(f, "go_deps.from_file")
	if len(fromFile) != 1 || stringArg(fromFile[0], "go_mod") != "//:go.mod" {
		t.Errorf(`MODULE.bazel: want exactly one go_deps.from_file(go_mod = "//:go.mod")`)
	}

	var want []string
	for _, r := range mod.Require {
		if !r.Indirect {
			want = append(want, RepoName(r.Mod.Path))
		}
	}
	sort.Strings(want)
	var got []string
	for _, c := range calls(f, "use_repo") {
		if len(c.List) == 0 {
			continue
		}
		if id, ok := c.List[0].(*build.Ident); !ok || id.Name != "go_deps" {
			continue
		}
		for _, a := range c.List[1:] {
			if s, ok := a.(*build.StringExpr); ok {
				got = append(got, s.Value)
			}
		}
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MODULE.bazel use_repo(go_deps, ...) differs from go.mod's direct requirements (-go.mod +MODULE.bazel):\n%s", diff)
	}
}

// rulesGoPinned are the modules whose Bazel version must stay what rules_go
// 0.34 was released with, whatever go.mod says: golang.org/x/tools builds
// rules_go's own tools, so the WORKSPACE build keeps rules_go's release pin. go.mod needs
// a newer x/tools (golang.org/x/mod and the Go SDK require it); our code uses
// only x/tools/txtar, whose API is the same in both.
var rulesGoPinned = map[string]string{
	"golang.org/x/tools": "v0.1.10",
}

func TestDepsBzlMatchesGoMod(t *testing.T) {
	mod := parseGoMod(t)

	// deps.bzl is written by update-repos; tools/offline_deps.bzl declares,
	// by hand, the few modules rules_go itself needs (update-repos skips
	// those), and the WORKSPACE build uses its versions for them.
	got := map[string]string{}
	from := map[string]string{}
	for _, name := range []string{"deps.bzl", "tools/offline_deps.bzl"} {
		for _, c := range calls(parseBuild(t, name), "go_repository") {
			got[stringArg(c, "importpath")] = stringArg(c, "version")
			from[stringArg(c, "importpath")] = name
		}
	}
	for _, r := range mod.Require {
		if v, ok := got[r.Mod.Path]; !ok {
			t.Errorf("deps.bzl has no go_repository for %s (run: ./bazelw run //:gazelle-update-repos)", r.Mod.Path)
		} else if want, ok := rulesGoPinned[r.Mod.Path]; ok {
			if v != want {
				t.Errorf("%s pins %s at %s; rules_go 0.34 needs %s", from[r.Mod.Path], r.Mod.Path, v, want)
			}
		} else if v != r.Mod.Version {
			t.Errorf("%s pins %s at %s, go.mod at %s (run: ./bazelw run //:gazelle-update-repos, or edit tools/offline_deps.bzl)", from[r.Mod.Path], r.Mod.Path, v, r.Mod.Version)
		}
	}
}

func TestRepoName(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/mattn/go-shellwords":           "com_github_mattn_go_shellwords",
		"github.com/santhosh-tekuri/jsonschema/v6": "com_github_santhosh_tekuri_jsonschema_v6",
		"golang.org/x/sys":                         "org_golang_x_sys",
		"github.com/bmatcuk/doublestar/v4":         "com_github_bmatcuk_doublestar_v4",
		"github.com/BurntSushi/toml":               "com_github_burntsushi_toml",
	} {
		if got := RepoName(in); got != want {
			t.Errorf("RepoName(%q) = %q, want %q", in, got, want)
		}
	}
}
