package pin

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/codec"
)

// Served is the name a client calls upstream's tool by: NAME__TOOL, the
// name `mcp-route pin --accept` takes.
func Served(upstream, tool string) string { return upstream + "__" + tool }

// Plan is what PinAll(lists) would change, computed on the file as it is
// now on disk, without writing anything: `mcp-route pin --dry-run`.
func (f *File) Plan(lists map[string][]codec.Tool) ([]Change, error) {
	return recordAll(f, lists, record, false)
}

// Pending reports whether c needs a decision: a tool added, changed or
// removed. Unchanged and refused tools do not (a refused one cannot be
// accepted).
func (c Change) Pending() bool {
	return c.Action == Added || c.Action == Changed || c.Action == Removed
}

// Accept pins, of what lists holds, only the tools accept names (NAME__TOOL
// → "sha256:HEX" or ""), in one write, and returns their changes: an added
// or changed tool gets its new definition's pin, a removed one loses its
// pin; every other pin stays as it is, so a changed tool not named stays
// withheld. A digest, when given, must be the one the upstream lists now:
// the definition reviewed (with Plan) is the one accepted, even if the
// upstream changed it in between. Nothing is written, and the error names
// the tool, when a name is no tool of lists' upstreams nor a pin of them,
// when its definition cannot be pinned, or when its digest differs.
func (f *File) Accept(lists map[string][]codec.Tool, accept map[string]string) ([]Change, error) {
	ups := slices.Sorted(maps.Keys(lists))
	for _, up := range ups {
		if err := ValidateUpstream(up); err != nil {
			return nil, err
		}
	}
	return f.updateOrFail(func(set pinSet) ([]Change, error) {
		trial := maps.Clone(set) // record replaces an upstream's map, never edits it
		plan := map[string]Change{}
		for _, up := range ups {
			for _, c := range record(trial, up, lists[up]) {
				plan[Served(c.Upstream, c.Tool)] = c
			}
		}
		var done []Change
		for _, name := range slices.Sorted(maps.Keys(accept)) {
			c, ok := plan[name]
			if !ok {
				return nil, fmt.Errorf("--accept %s: no such tool: want NAME__TOOL of a tool an --upstream NAME lists or a pin holds (mcp-route pin --dry-run lists the changes)", name)
			}
			if c.Action == Refused {
				return nil, fmt.Errorf("--accept %s: cannot be pinned: %s", name, c.Reason)
			}
			if want := accept[name]; want != "" && want != c.Digest {
				now := c.Digest
				if c.Action == Removed {
					now = "nothing (the upstream no longer lists it)"
				}
				return nil, fmt.Errorf("--accept %s=%s: the upstream now lists %s: it changed since the review; review it again with mcp-route pin --dry-run", name, want, now)
			}
			pins := maps.Clone(set[c.Upstream])
			if pins == nil {
				pins = map[string]*entry{}
			}
			if c.Action == Removed {
				delete(pins, c.Tool)
			} else {
				pins[c.Tool] = c.now
			}
			set[c.Upstream] = pins
			done = append(done, c)
		}
		return done, nil
	})
}

// Review shows c to a person deciding whether to accept it: a first line
//
//	ACTION NAME__TOOL sha256:NEW [was sha256:OLD]
//
// (refused: the reason instead of a digest), then, for an added or
// changed tool, each field that differs as lines of its indented JSON,
// old ones marked "-", new ones "+", unchanged ones around them as
// context. Every character beyond printable ASCII is a \u escape, so a
// look-alike or an invisible character cannot pass unseen. A field whose
// old value was too large to keep (over MaxKept) shows its new value
// whole.
func (c Change) Review() string {
	var b strings.Builder
	name := Served(c.Upstream, c.Tool)
	if codec.ValidateToolName(c.Tool) != nil {
		name = string(quote(nil, name, escapeASCII))
	}
	switch c.Action {
	case Refused:
		fmt.Fprintf(&b, "refused %s: %s\n", name, c.Reason)
		return b.String()
	case Removed:
		fmt.Fprintf(&b, "removed %s was %s (the upstream no longer lists it)\n", name, c.Digest)
		return b.String()
	case Changed:
		fmt.Fprintf(&b, "changed %s %s was %s\n", name, c.Digest, c.Was)
	default:
		fmt.Fprintf(&b, "%s %s %s\n", c.Action, name, c.Digest)
	}
	if c.Action == Unchanged {
		return b.String()
	}
	for _, f := range Fields {
		var was map[string]any
		if c.was != nil {
			if c.was.fields[f] == c.now.fields[f] {
				continue
			}
			was = c.was.def
		}
		_, inOld := was[f]
		_, inNew := c.def[f]
		if c.was == nil && !inNew {
			continue
		}
		fmt.Fprintf(&b, "  %s:", f)
		switch {
		case c.was == nil:
		case c.was.def == nil:
			b.WriteString(" (the pinned value was too large to keep; the new one whole)")
		case !inOld:
			b.WriteString(" (absent before)")
		case !inNew:
			b.WriteString(" (absent now)")
		}
		b.WriteByte('\n')
		var old, now []string
		if inOld {
			old = jsonLines(was[f])
		}
		if inNew {
			now = jsonLines(c.def[f])
		}
		writeDiff(&b, old, now)
	}
	return b.String()
}

// jsonLines is v as indented JSON in ASCII, line by line.
func jsonLines(v any) []string {
	return strings.Split(string(encode(nil, v, true, escapeASCII, "")), "\n")
}

// diffContext is how many unchanged lines a review shows around a change.
const diffContext = 3

// maxDiffCells bounds the line diff's table; past it a review shows all
// of the old value, then all of the new.
const maxDiffCells = 4 << 20

// writeDiff writes old against new, line by line: a longest common
// subsequence of lines, unchanged runs cut to diffContext lines on each
// side of a change.
func writeDiff(b *strings.Builder, old, now []string) {
	type line struct {
		mark byte
		text string
	}
	var lines []line
	if len(old)*len(now) > maxDiffCells {
		for _, l := range old {
			lines = append(lines, line{'-', l})
		}
		for _, l := range now {
			lines = append(lines, line{'+', l})
		}
	} else {
		// lcs[i][j]: the longest common subsequence of old[i:] and now[j:].
		lcs := make([][]int, len(old)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(now)+1)
		}
		for i := len(old) - 1; i >= 0; i-- {
			for j := len(now) - 1; j >= 0; j-- {
				if old[i] == now[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(old) || j < len(now) {
			switch {
			case i < len(old) && j < len(now) && old[i] == now[j]:
				lines = append(lines, line{' ', old[i]})
				i, j = i+1, j+1
			case i < len(old) && (j == len(now) || lcs[i+1][j] >= lcs[i][j+1]):
				lines = append(lines, line{'-', old[i]})
				i++
			default:
				lines = append(lines, line{'+', now[j]})
				j++
			}
		}
	}
	// Show a line when a change is within diffContext lines of it.
	show := make([]bool, len(lines))
	for k, l := range lines {
		if l.mark == ' ' {
			continue
		}
		for m := max(0, k-diffContext); m <= min(len(lines)-1, k+diffContext); m++ {
			show[m] = true
		}
	}
	skipped := false
	for k, l := range lines {
		if !show[k] {
			skipped = true
			continue
		}
		if skipped {
			b.WriteString("    ...\n")
			skipped = false
		}
		fmt.Fprintf(b, "    %c %s\n", l.mark, l.text)
	}
	if skipped {
		b.WriteString("    ...\n")
	}
}
