package pin

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// # Resources and prompts
//
// An upstream's resources, resource templates and prompts are pinned
// beside its tools, in the file's "surface" member (absent from files
// written before, which still load: an upstream whose surface the file
// has no entry for has it trusted on first use, as a new upstream's tools
// are):
//
//	"surface": {
//	  "fs": {
//	    "prompt review": {"definition": {...}, "sha256": "..."},
//	    "resource file:///srv/notes.txt": {...},
//	    "template greet://{who}": {...}
//	  }
//	}
//
// Each item is keyed by its kind and its own name, uri or uriTemplate. Its
// definition is the item as the upstream listed it but for what changes
// without changing what a client is told: size, icons and
// annotations.lastModified. Everything else (name, title, description,
// arguments, uri, uriTemplate, mimeType, annotations, _meta, and members a
// later revision adds) is covered.

// Item is one resource, resource template or prompt of an upstream: Kind
// "resource", "resource template" or "prompt", Key its uri, uriTemplate or
// name, Def its definition as the upstream listed it.
type Item struct {
	Kind, Key string
	Def       json.RawMessage
}

// itemKinds are the kinds and their word in the file.
var itemKinds = map[string]string{"resource": "resource", "resource template": "template", "prompt": "prompt"}

// itemName is an item's key in the file.
func itemName(kind, key string) string { return itemKinds[kind] + " " + key }

// surfaceKey is where an upstream's surface is kept in a pinSet: no
// upstream name holds a ':'.
func surfaceKey(upstream string) string { return "surface:" + upstream }

// surfaceDefinition is the part of an item a pin covers.
func surfaceDefinition(raw json.RawMessage) (map[string]any, error) {
	v, err := parseJSON(raw)
	if err != nil {
		return nil, err
	}
	def, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("its definition is not a JSON object")
	}
	delete(def, "size")
	delete(def, "icons")
	if a, ok := def["annotations"].(map[string]any); ok {
		delete(a, "lastModified")
		if len(a) == 0 {
			delete(def, "annotations")
		}
	}
	return def, nil
}

// KnownSurface reports whether the file has a surface entry for upstream.
func (f *File) KnownSurface(upstream string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	_, ok := f.set[surfaceKey(upstream)]
	return ok && f.err == nil
}

// CheckSurface is Check for an upstream's resource, template or prompt.
func (f *File) CheckSurface(upstream string, it Item) (ok bool, reason, diff string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refresh()
	if f.err != nil {
		return false, "the pin file cannot be read: " + f.err.Error(), ""
	}
	pins, known := f.set[surfaceKey(upstream)]
	if !known {
		return false, fmt.Sprintf("upstream %s has no pins of its resources and prompts yet; review them with mcp-route pin --dry-run, accept them with mcp-route pin --all", upstream), ""
	}
	def, err := surfaceDefinition(it.Def)
	if err != nil {
		return false, "its definition cannot be pinned: " + err.Error(), ""
	}
	now := newEntry(def)
	was, ok := pins[itemName(it.Kind, it.Key)]
	if !ok {
		return false, fmt.Sprintf("this %s is new since the upstream was pinned; review it with mcp-route pin --dry-run, accept it with mcp-route pin --all", it.Kind), ""
	}
	if was.digest == now.digest {
		return true, "", ""
	}
	fields, diff := compare(was, now)
	return false, fmt.Sprintf("its definition changed since it was pinned (%s); review it with mcp-route pin --dry-run, accept it with mcp-route pin --all", strings.Join(fields, ", ")), diff
}

// TrustFirstUseSurface pins items when the file has no surface entry for
// upstream, as TrustFirstUse does for tools. No items make an empty entry:
// an upstream first seen with no resources or prompts has those it lists
// later withheld as new, not trusted on a first use that was long past.
func (f *File) TrustFirstUseSurface(upstream string, items []Item) ([]Change, error) {
	if err := ValidateUpstream(upstream); err != nil {
		return nil, err
	}
	return f.update(func(set pinSet) []Change {
		if _, known := set[surfaceKey(upstream)]; known {
			return nil
		}
		return recordSurface(set, upstream, items)
	})
}

// PinAllSurface is PinAll for the upstreams' resources, templates and
// prompts: each upstream's surface entry replaced by its items.
func (f *File) PinAllSurface(lists map[string][]Item) ([]Change, error) {
	return recordAll(f, lists, recordSurface, true)
}

// PlanSurface is what PinAllSurface(lists) would change, writing nothing.
func (f *File) PlanSurface(lists map[string][]Item) ([]Change, error) {
	return recordAll(f, lists, recordSurface, false)
}

// recordSurface replaces upstream's surface pins by items; the changes
// name each item as "KIND KEY" in Tool.
func recordSurface(set pinSet, upstream string, items []Item) []Change {
	old := set[surfaceKey(upstream)]
	pins := map[string]*entry{}
	count := map[string]int{}
	for _, it := range items {
		count[itemName(it.Kind, it.Key)]++
	}
	var changes []Change
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b Item) int { return strings.Compare(itemName(a.Kind, a.Key), itemName(b.Kind, b.Key)) })
	for i, it := range sorted {
		name := itemName(it.Kind, it.Key)
		if i > 0 && itemName(sorted[i-1].Kind, sorted[i-1].Key) == name {
			continue
		}
		refuse := func(why string) {
			changes = append(changes, Change{Action: Refused, Upstream: upstream, Tool: name, Reason: why})
		}
		if count[name] > 1 {
			refuse(fmt.Sprintf("listed %d times", count[name]))
			continue
		}
		if len(pins) >= MaxTools {
			refuse(fmt.Sprintf("the upstream lists more than %d items, the most a pin file keeps for one", MaxTools))
			continue
		}
		def, err := surfaceDefinition(it.Def)
		if err != nil {
			refuse(err.Error())
			continue
		}
		now := newEntry(def)
		pins[name] = now
		c := Change{Action: Added, Upstream: upstream, Tool: name, Digest: "sha256:" + now.digest, now: now, def: def}
		if was, ok := old[name]; ok {
			c.Action, c.was = Unchanged, was
			if was.digest != now.digest {
				c.Action, c.Was = Changed, "sha256:"+was.digest
				c.Fields, c.Diff = compare(was, now)
			}
		}
		changes = append(changes, c)
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if count[name] == 0 {
			changes = append(changes, Change{Action: Removed, Upstream: upstream, Tool: name, Digest: "sha256:" + old[name].digest, was: old[name]})
		}
	}
	set[surfaceKey(upstream)] = pins
	return changes
}

// decodeSurface reads the file's "surface" member into set.
func decodeSurface(v any, set pinSet) error {
	ups, err := object(v, `"surface"`)
	if err != nil {
		return err
	}
	for up, iv := range ups {
		if err := ValidateUpstream(up); err != nil {
			return err
		}
		items, err := object(iv, fmt.Sprintf("surface of upstream %q", up))
		if err != nil {
			return err
		}
		pins := map[string]*entry{}
		for name, ev := range items {
			kind, _, _ := strings.Cut(name, " ")
			if !slices.Contains(slices.Collect(maps.Values(itemKinds)), kind) {
				return fmt.Errorf("surface of upstream %q: %s: want \"resource URI\", \"template URI\" or \"prompt NAME\"", up, clipKey(name))
			}
			m, err := object(ev, "the entry", "sha256", "definition", "fields")
			if err != nil {
				return fmt.Errorf("surface of upstream %q, %s: %w", up, clipKey(name), err)
			}
			sum, _ := m["sha256"].(string)
			if !isDigest(sum) {
				return fmt.Errorf("surface of upstream %q, %s: \"sha256\" is %s, want 64 lowercase hex digits", up, clipKey(name), valueText(m, "sha256"))
			}
			e := &entry{digest: sum, fields: map[string]string{}}
			if def, ok := m["definition"].(map[string]any); ok {
				ne := newEntry(def)
				if ne.digest != sum {
					return fmt.Errorf("surface of upstream %q, %s: \"sha256\" does not match \"definition\" (edited by hand? pin the upstream again with mcp-route pin)", up, clipKey(name))
				}
				e = ne
				e.def = def
			} else if fv, ok := m["fields"].(map[string]any); ok {
				for k, d := range fv {
					s, _ := d.(string)
					if !isDigest(s) {
						return fmt.Errorf("surface of upstream %q, %s: \"fields\": %q is not a digest", up, clipKey(name), k)
					}
					e.fields[k] = s
				}
			} else {
				return fmt.Errorf("surface of upstream %q, %s: want one of \"definition\" and \"fields\"", up, clipKey(name))
			}
			pins[name] = e
		}
		set[surfaceKey(up)] = pins
	}
	return nil
}
