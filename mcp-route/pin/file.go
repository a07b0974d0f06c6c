package pin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mcpipe/mcpipe/codec"
)

// format names the file's layout; a file of another one is refused.
const format = "mcpipe-pin/1"

// isDigest reports whether s is a SHA-256 digest in lowercase hex. (A
// loop, not a regexp: {64} compiles into 64 copies at every start.)
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// encodeFile is the pin file for set.
func encodeFile(set pinSet) []byte {
	ups := map[string]any{}
	surf := map[string]any{}
	for up, pins := range set {
		tools := map[string]any{}
		for name, e := range pins {
			m := map[string]any{"sha256": e.digest}
			if !e.noMeta {
				m["coversMeta"] = true
			}
			if e.def != nil {
				m["definition"] = e.def
			} else {
				fields := map[string]any{}
				for f, d := range e.fields {
					fields[f] = d
				}
				m["fields"] = fields
			}
			tools[name] = m
		}
		if name, ok := strings.CutPrefix(up, "surface:"); ok {
			for _, m := range tools {
				delete(m.(map[string]any), "coversMeta")
			}
			surf[name] = tools
			continue
		}
		ups[up] = tools
	}
	top := map[string]any{"format": format, "upstreams": ups}
	if len(surf) > 0 {
		top["surface"] = surf
	}
	return append(pretty(nil, top), '\n')
}

// decodeFile is the set a pin file holds, or what is wrong with it.
func decodeFile(data []byte) (pinSet, error) {
	v, err := parseJSON(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(data[:se.offset], []byte("\n"))
			col := se.offset - bytes.LastIndexByte(data[:se.offset], '\n')
			return nil, fmt.Errorf("line %d, column %d: %s", line, col, se.msg)
		}
		return nil, err
	}
	top, err := object(v, "the file", "format", "upstreams", "surface")
	if err != nil {
		return nil, err
	}
	if top["format"] != format {
		return nil, fmt.Errorf("format %s, want %q (is it a pin file?)", valueText(top, "format"), format)
	}
	ups, err := object(top["upstreams"], `"upstreams"`)
	if err != nil {
		return nil, err
	}
	set := pinSet{}
	for up, tv := range ups {
		if err := ValidateUpstream(up); err != nil {
			return nil, err
		}
		tools, err := object(tv, fmt.Sprintf("upstream %q", up))
		if err != nil {
			return nil, err
		}
		pins := map[string]*entry{}
		for name, ev := range tools {
			e, err := decodeEntry(name, ev)
			if err != nil {
				return nil, fmt.Errorf("upstream %q, tool %q: %w", up, name, err)
			}
			pins[name] = e
		}
		set[up] = pins
	}
	if sv, ok := top["surface"]; ok {
		if err := decodeSurface(sv, set); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func decodeEntry(name string, v any) (*entry, error) {
	if err := codec.ValidateToolName(name); err != nil {
		return nil, err
	}
	m, err := object(v, "the entry", "sha256", "definition", "fields", "coversMeta")
	if err != nil {
		return nil, err
	}
	covers, hasCovers := m["coversMeta"]
	if hasCovers && covers != true {
		return nil, fmt.Errorf(`"coversMeta" is %s, want true or no key`, valueText(m, "coversMeta"))
	}
	noMeta := !hasCovers
	sum, _ := m["sha256"].(string)
	if !isDigest(sum) {
		return nil, fmt.Errorf(`"sha256" is %s, want 64 lowercase hex digits`, valueText(m, "sha256"))
	}
	_, hasDef := m["definition"]
	_, hasFields := m["fields"]
	if hasDef == hasFields {
		return nil, errors.New(`want one of "definition" and "fields"`)
	}
	if hasFields {
		fv, err := object(m["fields"], `"fields"`, Fields...)
		if err != nil {
			return nil, err
		}
		e := &entry{digest: sum, fields: map[string]string{}, noMeta: noMeta}
		for f, d := range fv {
			s, _ := d.(string)
			if !isDigest(s) {
				return nil, fmt.Errorf(`"fields": %q is %s, want 64 lowercase hex digits`, f, valueText(fv, f))
			}
			e.fields[f] = s
		}
		return e, nil
	}
	def, err := object(m["definition"], `"definition"`, Fields...)
	if err != nil {
		return nil, err
	}
	if def["name"] != name {
		return nil, fmt.Errorf(`"definition" has name %s, not the tool's`, valueText(def, "name"))
	}
	for _, f := range []string{"title", "description"} {
		if v, ok := def[f]; ok {
			if _, isString := v.(string); !isString {
				return nil, fmt.Errorf(`"definition": %q is not a string`, f)
			}
		}
	}
	e := newEntry(def)
	if e.digest != sum {
		return nil, errors.New(`"sha256" does not match "definition" (edited by hand? pin the upstream again with mcp-route pin)`)
	}
	e.def = def // even over MaxKept: it is there
	e.noMeta = noMeta
	return e, nil
}

// object is v as a JSON object, or an error naming what; with keys, no
// other key is allowed.
func object(v any, what string, keys ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	if len(keys) > 0 {
		for k := range m {
			if !contains(keys, k) {
				return nil, fmt.Errorf("%s has unknown key %q", what, k)
			}
		}
	}
	return m, nil
}

// valueText is m[k] for an error message: a string quoted, with what a
// terminal would hide escaped, and clipped; else the value's kind.
func valueText(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		if r := []rune(v); len(r) > 60 {
			v = string(r[:60]) + "…"
		}
		return string(quote(nil, v, escapeHidden))
	case nil:
		if _, ok := m[k]; !ok {
			return "missing"
		}
		return "null"
	case bool:
		return "a boolean"
	case number:
		return "a number"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// readFile reads the pin file at path: its set and its stat, or an empty
// set and nil when there is none.
func readFile(path string) (pinSet, os.FileInfo, error) {
	// O_NONBLOCK: a FIFO planted there must not hang the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		return pinSet{}, nil, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, fmt.Errorf("pin file %s is a symbolic link; give the path of the file it points to", path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("pin file %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("pin file %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("pin file %s is not a regular file (%s)", path, fi.Mode().Type())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("pin file %w", err)
	}
	set, err := decodeFile(data)
	if err != nil {
		return nil, nil, fmt.Errorf("pin file %s: %w", path, err)
	}
	return set, fi, nil
}

// writeFile replaces the file at path by data atomically and returns the
// new file's stat. A new file is 0600; an existing one keeps its mode.
func writeFile(path string, data []byte) (os.FileInfo, error) {
	mode := os.FileMode(0o600)
	switch fi, err := os.Lstat(path); {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return nil, errors.New("it is a symbolic link; give the path of the file it points to")
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // O_EXCL: never through a link
	if err != nil {
		return nil, err
	}
	_, err = tmp.Write(data)
	for _, step := range []func() error{func() error { return tmp.Chmod(mode) }, tmp.Sync, tmp.Close} {
		if err == nil {
			err = step()
		}
	}
	tmp.Close()
	if err == nil {
		// rename replaces whatever is at path, a link planted since the
		// Lstat included, and never writes through it.
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	// The rename itself must survive a crash.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return os.Lstat(path)
}

// lockDir takes an exclusive flock(2) on dir until unlock is called.
func lockDir(dir string) (unlock func(), err error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "lock", Path: dir, Err: err}
	}
	return func() { unix.Close(fd) }, nil
}
