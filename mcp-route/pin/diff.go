package pin

import (
	"fmt"
	"strings"
)

// clipWidth is how many characters of each side a diff shows, from a
// little before the first difference.
const (
	clipWidth  = 120
	clipBefore = 30
)

// compare names the fields that differ between two pins of a tool, in
// Fields order, and shows them old against new on one line:
//
//	description: "…old text…" -> "…new text…"; inputSchema: {"type":…} -> …
//
// Text fields are shown as JSON strings, the others as canonical JSON,
// both in ASCII: a character swapped for a look-alike (Cyrillic 'а' for
// 'a') or an invisible one shows as its \u escape. A pin kept without its
// definition (over MaxKept) can only name the field.
func compare(was, now *entry) (fields []string, diff string) {
	var parts []string
	for _, f := range Fields {
		if was.fields[f] == now.fields[f] {
			continue
		}
		fields = append(fields, f)
		if was.def == nil || now.def == nil {
			parts = append(parts, f+": changed (the definition is too large to keep for a diff)")
			continue
		}
		a, b := clip(show(was.def, f), show(now.def, f))
		parts = append(parts, fmt.Sprintf("%s: %s -> %s", f, a, b))
	}
	return fields, strings.Join(parts, "; ")
}

// shown is a field's value as a diff shows it.
type shown struct {
	text   []rune
	str    bool // a text field: text is the string, to be quoted
	absent bool
}

func show(def map[string]any, f string) shown {
	v, ok := def[f]
	if !ok {
		return shown{absent: true}
	}
	if s, ok := v.(string); ok {
		return shown{text: []rune(s), str: true}
	}
	return shown{text: []rune(string(canonical(nil, v)))}
}

// clip renders both sides, cut to clipWidth characters from a little
// before their first difference.
func clip(old, new shown) (string, string) {
	first := 0
	for first < len(old.text) && first < len(new.text) && old.text[first] == new.text[first] {
		first++
	}
	start := 0
	if !old.absent && !new.absent {
		start = max(0, first-clipBefore)
	}
	return old.window(start), new.window(start)
}

func (s shown) window(start int) string {
	if s.absent {
		return "(absent)"
	}
	start = min(start, len(s.text))
	end := min(len(s.text), start+clipWidth)
	var b []byte
	if s.str {
		b = quote(nil, string(s.text[start:end]), escapeASCII)
	} else {
		b = asciiOnly(nil, string(s.text[start:end]))
	}
	out := string(b)
	if start > 0 {
		out = "…" + out
	}
	if end < len(s.text) {
		out += fmt.Sprintf("…(%d characters in all)", len(s.text))
	}
	return out
}

// asciiOnly appends JSON text s with every character beyond ASCII, and
// DEL, as a \u escape: inside a JSON string that is the same string.
func asciiOnly(b []byte, s string) []byte {
	for _, r := range s {
		if r < 0x7f {
			b = append(b, byte(r))
			continue
		}
		b = appendUEscape(b, r)
	}
	return b
}
