// Package buildcheck keeps the repository's three descriptions of its Go
// dependencies in step: go.mod (what `go build` uses), deps.bzl (what the
// WORKSPACE build on Bazel 4 uses, written by `bazel run
// //:gazelle-update-repos`) and MODULE.bazel (what Bazel >= 7 with bzlmod
// uses). Bazel 4 cannot read MODULE.bazel, so nothing in our own build would
// notice it drifting; the tests in this package do.
//
// The package has no code of its own beyond the helpers its tests share: it
// parses the files with github.com/bazelbuild/buildtools/build and
// golang.org/x/mod/modfile, the parsers Bazel's and Go's own tools use.
package buildcheck

import (
	"strings"
)

// RepoName returns the Bazel repository name gazelle gives a Go module path,
// e.g. "github.com/mattn/go-shellwords" → "com_github_mattn_go_shellwords".
// It follows gazelle's rule: the host's labels reversed, then the path
// segments, with every character outside [A-Za-z0-9_] turned into "_" and
// the result lower-cased.
func RepoName(modulePath string) string {
	segments := strings.Split(modulePath, "/")
	host := strings.Split(segments[0], ".")
	for i, j := 0, len(host)-1; i < j; i, j = i+1, j-1 {
		host[i], host[j] = host[j], host[i]
	}
	parts := append(host, segments[1:]...)
	name := strings.Join(parts, "_")
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
