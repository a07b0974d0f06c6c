// Package scaffold writes the skeleton of a new mcp-route tool: the library
// behind `mcp-route new NAME [--lang sh|go|python] [--dir DIR]`.
//
// Write is the whole API. Each skeleton is a working tool (it greets whoever
// its "name" argument names) with its definition, ready to edit:
//
//	sh      DIR/NAME (a #!/bin/sh script, mode 0755) and DIR/NAME.json, the
//	        sidecar definition
//	python  DIR/NAME (#!/usr/bin/env python3, mode 0755) that answers
//	        --mcp-describe itself
//	go      DIR/src/NAME/main.go using package mcp-route/tool, to be built
//	        into DIR with `go build -o NAME ./src/NAME` (see Hint); a source
//	        directory is not an executable file, so mcp-route skips it
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
	"text/template"

	"github.com/mcpipe/mcpipe/codec"
)

// Languages lists the values Write accepts for lang, the default first.
var Languages = []string{"sh", "go", "python"}

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
	t, err := template.ParseFS(templates, "templates/"+tmpl)
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct{ Name string }{name}); err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	return b.Bytes(), nil
}

// Hint returns what to do next with the skeleton Write just wrote, in a
// line or two for a person; for Go it is the build command.
func Hint(dir, name, lang string) string {
	switch lang {
	case "go":
		src := filepath.Join(dir, "src", name)
		if !filepath.IsAbs(src) {
			// go build takes a bare relative path for an import path.
			src = "." + string(filepath.Separator) + src
		}
		return fmt.Sprintf("build it into %s with: go build -o %s %s",
			dir, filepath.Join(dir, name), src)
	case "python":
		return fmt.Sprintf("edit %s (DEFINITION and call), then serve it with: mcp-route --tools %s",
			filepath.Join(dir, name), dir)
	default:
		return fmt.Sprintf("edit %s and its definition %s.json, then serve them with: mcp-route --tools %s",
			filepath.Join(dir, name), filepath.Join(dir, name), dir)
	}
}
