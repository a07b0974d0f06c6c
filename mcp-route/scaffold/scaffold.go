// Package scaffold writes the skeleton of a new mcp-route tool: the library
// behind `mcp-route new NAME [--lang sh|go|python|node] [--dir DIR]`.
//
// Write is the whole API. Each skeleton is a working tool (it greets whoever
// its "name" argument names) with its definition, ready to edit:
//
//	sh      DIR/NAME (a #!/bin/sh script, mode 0755) and DIR/NAME.json, the
//	        sidecar definition
//	python  DIR/NAME (#!/usr/bin/env python3, mode 0755) that answers
//	        --mcp-describe itself and declares run.mode "worker": with
//	        MCP_WORKER=1 it serves calls one request line at a time, else
//	        it runs one call
//	node    DIR/NAME (#!/usr/bin/env node, mode 0755), the same as python
//	go      DIR/src/NAME/main.go using package mcp-route/tool, to be built
//	        into DIR/NAME (see Hint: Module is not on the module proxy, so
//	        it builds inside a checkout or a module that replaces Module by
//	        one); a source directory is not an executable file, so
//	        mcp-route skips it
//
// Write refuses a name that the MCP tool-name rules reject (codec.ValidateToolName)
// or that starts with "." (mcp-route ignores hidden files), an unknown
// language, and a name already taken in DIR: by a tool file DIR/NAME, a
// sidecar DIR/NAME.json or Go sources DIR/src/NAME, whatever the language of
// the new skeleton. It never overwrites, and it checks before writing the
// first file, so a refusal leaves DIR as it was. It creates DIR when missing. It is safe for concurrent use
// on different names.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// Languages lists the values Write accepts for lang, the default first.
var Languages = []string{"sh", "go", "python", "node"}

// ErrExists is returned (wrapped, with the path) when a file Write would
// create is already there.
var ErrExists = errors.New("scaffold: file exists")

//go:embed templates/*.tmpl
var templates embed.FS

// file is one file of a skeleton: its path relative to DIR, its template and
// its mode.
type file struct {
	path string
	tmpl string
	mode fs.FileMode
}

func plan(name, lang string) ([]file, error) {
	switch lang {
	case "sh", "":
		return []file{
			{name, "sh.tmpl", 0o755},
			{name + ".json", "sidecar.tmpl", 0o644},
		}, nil
	case "python":
		return []file{{name, "python.tmpl", 0o755}}, nil
	case "node":
		return []file{{name, "node.tmpl", 0o755}}, nil
	case "go":
		return []file{{filepath.Join("src", name, "main.go"), "go.tmpl", 0o644}}, nil
	}
	return nil, fmt.Errorf("scaffold: unknown language %q (want one of %s)", lang, strings.Join(Languages, ", "))
}

// ValidateName reports whether name can be a tool's name and its file name.
func ValidateName(name string) error {
	if strings.HasPrefix(name, ".") {
		return fmt.Errorf("scaffold: invalid tool name %q: must not start with \".\" (mcp-route skips hidden files)", name)
	}
	if err := codec.ValidateToolName(name); err != nil {
		return fmt.Errorf("scaffold: invalid tool name %q: %w", name, err)
	}
	return nil
}

// Write writes the skeleton of tool name in language lang ("" means "sh")
// into dir, and returns the paths it wrote (dir joined with each file's
// relative path), in order.
func Write(dir, name, lang string) ([]string, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	files, err := plan(name, lang)
	if err != nil {
		return nil, err
	}
	contents := make([][]byte, len(files))
	for i, f := range files {
		if contents[i], err = render(f.tmpl, name); err != nil {
			return nil, err
		}
	}
	// Whatever the language, the name is taken when DIR holds a tool, a
	// sidecar or Go sources of that name: a new sidecar would override a
	// script's own --mcp-describe, and a Go build would overwrite a script.
	for _, rel := range []string{name, name + ".json", filepath.Join("src", name)} {
		p := filepath.Join(dir, rel)
		if _, err := os.Lstat(p); err == nil {
			return nil, fmt.Errorf("%w: %s", ErrExists, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("scaffold: %w", err)
		}
	}
	var written []string
	for i, f := range files {
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("scaffold: %w", err)
		}
		if err := create(p, contents[i], f.mode); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// create writes a new file; O_EXCL keeps the no-overwrite promise even when
// the file appeared after Write's check.
func create(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrExists, path)
	}
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	_, werr := f.Write(data)
	// The umask may have cleared execute bits that a tool needs.
	cerr := f.Chmod(mode)
	if err := errors.Join(werr, cerr, f.Close()); err != nil {
		return fmt.Errorf("scaffold: %s: %w", path, err)
	}
	return nil
}

func render(tmpl, name string) ([]byte, error) {
	// The templates only ever say {{.Name}}: text/template would do the
	// same, but its reflection keeps every exported method of every type
	// in the binary (2.2 MB of mcp-route).
	t, err := templates.ReadFile("templates/" + tmpl)
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	return bytes.ReplaceAll(t, []byte("{{.Name}}"), []byte(name)), nil
}

// Module is the Go module the Go skeleton imports. It is not on the Go
// module proxy: a skeleton builds inside a checkout of it, or in a module of
// its own whose go.mod replaces it with such a checkout.
const Module = "github.com/mcpipe/mcpipe"

// Hint returns what to do next with the skeleton Write just wrote, in a few
// lines for a person. For Go it is how to build it, and it looks at the
// files: when DIR is inside a module that can build it (github.com/mcpipe/mcpipe
// itself, or one whose go.mod replaces it), one go build command; else the
// commands that make DIR/src/NAME such a module (go mod init, a replace of
// Module by a checkout, go mod tidy), since `go get` cannot fetch it.
func Hint(dir, name, lang string) string {
	switch lang {
	case "go":
		return goHint(dir, name)
	case "python", "node":
		return fmt.Sprintf("edit %s (DEFINITION and call), then serve it with: mcp-route --tools %s --root DIR (a DIR that does not hold the tools)",
			filepath.Join(dir, name), dir)
	default:
		return fmt.Sprintf("edit %s and its definition %s.json, then serve them with: mcp-route --tools %s --root DIR (a DIR that does not hold the tools)",
			filepath.Join(dir, name), filepath.Join(dir, name), dir)
	}
}

func goHint(dir, name string) string {
	src := filepath.Join(dir, "src", name)
	out := filepath.Join(dir, name)
	absDir, err := filepath.Abs(dir)
	if err != nil {
		absDir = dir
	}
	if root := buildingModule(absDir); root != "" {
		if wd, err := os.Getwd(); err == nil && within(root, wd) {
			if !filepath.IsAbs(src) {
				// go build takes a bare relative path for an import path.
				src = "." + string(filepath.Separator) + src
			}
			return fmt.Sprintf("build it into %s with: go build -o %s %s", dir, out, src)
		}
		rel, err := filepath.Rel(root, filepath.Join(absDir, "src", name))
		if err != nil {
			rel = filepath.Join(absDir, "src", name)
		}
		return fmt.Sprintf("build it into %s from the module at %s with: cd %s && go build -o %s .%c%s",
			dir, root, root, filepath.Join(absDir, name), filepath.Separator, rel)
	}
	absSrc := filepath.Join(absDir, "src", name)
	return fmt.Sprintf(`build it with Go: %s is not on the module proxy (go get cannot fetch it), so make
%s a module that uses a checkout of the mcpipe repository (/path/to/mcpipe below):
  cd %s
  go mod init %s
  go mod edit -replace %s=/path/to/mcpipe
  go mod tidy
  go build -o %s .`, Module, absSrc, absSrc, name, Module, filepath.Join(absDir, name))
}

// buildingModule returns the root of the module enclosing dir when it can
// build the skeleton (it is Module, or its go.mod replaces Module), else "".
// Only the nearest go.mod counts: that is the module go build would use.
func buildingModule(dir string) string {
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			if providesModule(string(b)) {
				return d
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// providesModule reports whether a go.mod is Module's own or replaces it
// (a single replace line or one inside a replace block).
func providesModule(gomod string) bool {
	for line := range strings.Lines(gomod) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" && strings.Trim(f[1], `"`) == Module {
			return true
		}
		if len(f) > 0 && f[0] == "replace" {
			f = f[1:]
		}
		if len(f) >= 2 && strings.Trim(f[0], `"`) == Module && (f[1] == "=>" || (len(f) >= 3 && f[2] == "=>")) {
			return true
		}
	}
	return false
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
