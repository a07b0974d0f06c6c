package main

// The config file: `mcp-route --config FILE` and `mcp-route config print`.
//
// A TOML file whose keys are the flags' names, built over the FlagSet so
// that every flag has a key without a line here: booleans take true or
// false, numbers integers, durations and other scalars strings ("30s"),
// repeatable flags a string or an array of strings (each element as one
// use of the flag), and the repeatable NAME=VALUE flags (--upstream, --env,
// --upstream-header...) a table as well:
//
//	max-procs = 4
//	allow-read = ["/srv/data"]
//	[upstream]
//	fs = "npx -y @modelcontextprotocol/server-filesystem ."
//
// A flag on the command line replaces the file's value of that key (a
// repeatable one's whole list). Relative paths in the file (the values of
// the flags whose placeholder is DIR, DIRS, FILE or PATH, or whose name
// ends in -file, and --root) are relative to the file's directory, and ~/
// is the home directory; on the command line they stay relative to the
// working directory. A bad key or value is a usage error naming the file,
// the line and what is expected; an unknown key names the nearest known.
//
// The file configures the server, and tools must not: a file inside a
// place tools or upstreams can write (--root without --readonly, an
// --allow-write path, a launcher profile's cache) or inside a --tools
// directory is refused, and one holding a secret not meant for the tools
// (an --upstream-header value, an upstream URL with user info or a query)
// is checked as the secret files are: out of the tools' reach.
// `config print` prints every key with its effective value (those left at
// their defaults commented out), all paths absolute, in the same format;
// values that may be secrets (--env values, --upstream-header values, an
// upstream URL with user info or a query) are withheld, as comments.

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// commandOnly are flags that ask for one run's action, not configuration:
// no key in the file (`mcp-route pin`'s choices among them: a file saying
// all = true would accept every change without review).
var commandOnly = map[string]bool{"config": true, "version": true, "confine-check": true, "dry-run": true, "accept": true, "all": true}

// secretTables are the NAME=VALUE flags whose values config print withholds:
// a tool's environment holds API keys, a header bearer tokens.
var secretTables = map[string]bool{"env": true, "upstream-header": true}

// configFlag registers --config on fs.
func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "", "read flags from the TOML `FILE`: each key a flag's name (e.g. max-procs = 4, allow-read = [\"/srv\"], [upstream] fs = \"npx ...\"); flags on the command line override it; relative paths in it are relative to its directory; refused where tools can write (see README's Config file)")
}

// configCommand strips `config print` from args: printing is true then.
// Any other word after config is a usage error.
func configCommand(args []string) (rest []string, printing bool, err error) {
	if len(args) == 0 || args[0] != "config" {
		return args, false, nil
	}
	if len(args) < 2 || args[1] != "print" {
		return nil, false, errors.New("config: want `mcp-route config print [--config FILE] [flags]`")
	}
	return args[2:], true, nil
}

// configFile is a --config file applied to the flags.
type configFile struct {
	path string              // absolute
	from map[string]int      // flag name → line, for the keys the file set
	raw  map[string][]string // flag name → the values the file set
	// lineOf is the line of each value: flag name + "\x00" + value.
	lineOf map[string]int
	// secret says the file holds a secret tools must not read: an
	// --upstream-header value, an upstream URL with user info or a query.
	secret bool
}

// configError is a --config problem: usage (a bad key or value, exit 2)
// or not (the file unreadable, exit 1).
type configError struct {
	msg   string
	usage bool
}

func (e *configError) Error() string { return e.msg }

// exit is the status for err: 2 for a usage error, else 1.
func configExit(err error) int {
	var ce *configError
	if errors.As(err, &ce) && ce.usage {
		return 2
	}
	return 1
}

// flagKind is what a flag's key takes.
type flagKind int

const (
	kindString flagKind = iota
	kindBool
	kindInt
	kindUint
	kindFloat
	kindDuration
	// kindList is a repeatable flag, and any Value that is none of the
	// flag package's own (flag.Func, a type of ours): each element of an
	// array is one use of the flag, as on the command line.
	kindList
)

func kindOf(f *flag.Flag) flagKind {
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case bool:
			return kindBool
		case int, int64:
			return kindInt
		case uint, uint64:
			return kindUint
		case float64:
			return kindFloat
		case time.Duration:
			return kindDuration
		case string:
			return kindString
		}
	}
	if isBoolFlag(f) {
		return kindBool
	}
	return kindList
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// recorder is a flag.Value that keeps what it was set to, for a Value
// whose String cannot say it (flag.Func's is always "").
type recorder struct {
	name    string
	boolean bool
	got     map[string][]string
}

func (r *recorder) String() string   { return "" }
func (r *recorder) IsBoolFlag() bool { return r.boolean }
func (r *recorder) Set(v string) error {
	r.got[r.name] = append(r.got[r.name], v)
	return nil
}

// commandLine is each flag's values as given in args (which fs parsed).
func commandLine(fs *flag.FlagSet, args []string) map[string][]string {
	shadow := flag.NewFlagSet(prog, flag.ContinueOnError)
	shadow.SetOutput(io.Discard)
	got := map[string][]string{}
	fs.VisitAll(func(f *flag.Flag) {
		shadow.Var(&recorder{name: f.Name, boolean: isBoolFlag(f), got: got}, f.Name, "")
	})
	shadow.Parse(args) // fs took them: no error
	return got
}

// placeholder is the flag's `NAME` in its usage ("FILE", "NAME=CMD").
func placeholder(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	return name
}

// tableOf says whether f's values are NAME=VALUE (a table in the file).
func tableOf(f *flag.Flag) bool {
	return kindOf(f) == kindList && strings.HasPrefix(placeholder(f), "NAME=")
}

// pathOf says how f's values are paths: "" none, "path" the whole value,
// "list" ':'-separated paths, "value" the VALUE of NAME=VALUE.
func pathOf(f *flag.Flag) string {
	ph := placeholder(f)
	isPath := func(s string) bool { return s == "DIR" || s == "FILE" || s == "PATH" }
	switch {
	case kindOf(f) != kindString && kindOf(f) != kindList:
		return ""
	case tableOf(f):
		if isPath(strings.TrimPrefix(ph, "NAME=")) {
			return "value"
		}
		return ""
	case ph == "DIRS":
		return "list"
	case isPath(ph), f.Name == "root", strings.HasSuffix(f.Name, "-file"):
		return "path"
	}
	return ""
}

// resolvePath makes a path of the file absolute: ~/ is the home
// directory, a relative path is under dir. Without a home directory (HOME
// unset, as under some service managers) ~/ is refused rather than taken
// as a directory named "~".
func resolvePath(dir, p string) (string, error) {
	if p == "" {
		return p, nil
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return p, fmt.Errorf("~ stands for the home directory, and there is none here (%v): write the path in full", err)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(dir, p), nil
}

// resolveValue resolves the paths in one value of f (how: pathOf).
func resolveValue(how, v string, abs func(string) string) string {
	switch how {
	case "path":
		return abs(v)
	case "list":
		parts := strings.Split(v, ":")
		for i, p := range parts {
			parts[i] = abs(p)
		}
		return strings.Join(parts, ":")
	case "value":
		if name, val, ok := strings.Cut(v, "="); ok {
			return name + "=" + abs(val)
		}
	}
	return v
}

// applyConfig reads the TOML file at path and sets every flag of fs it
// names that the command line left unset (fs is parsed). Nil, nil when
// path is "".
func applyConfig(fs *flag.FlagSet, path string) (*configFile, error) {
	if path == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("--config %s: %v", path, err)}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("--config: %v", err)}
	}
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, &configError{msg: fmt.Sprintf("%s:%d:%d: %s (not valid TOML)", abs, row, col, strings.TrimPrefix(de.Error(), "toml: ")), usage: true}
		}
		return nil, &configError{msg: fmt.Sprintf("%s: %s", abs, strings.TrimPrefix(err.Error(), "toml: ")), usage: true}
	}
	lines := keyLines(data)
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })

	c := &configFile{path: abs, from: map[string]int{}, raw: map[string][]string{}, lineOf: map[string]int{}}
	dir := filepath.Dir(abs)
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return lines[a] - lines[b] })
	for _, k := range keys {
		line := lines[k]
		at := func(format string, args ...any) error {
			return &configError{msg: fmt.Sprintf("%s:%d: ", abs, line) + fmt.Sprintf(format, args...), usage: true}
		}
		f := fs.Lookup(k)
		if f == nil || commandOnly[k] {
			if f != nil {
				return nil, at("%s is not a configuration key: give --%s on the command line", k, k)
			}
			if near := nearestKey(fs, k); near != "" {
				return nil, at("unknown key %q: did you mean %q? (the keys are the flags of mcp-route --help)", k, near)
			}
			return nil, at("unknown key %q: the keys are the flags of mcp-route --help, without the dashes", k)
		}
		items, err := configValues(f, k, doc[k], lines)
		if err != nil {
			var ie *itemError
			if errors.As(err, &ie) && ie.line > 0 {
				line = ie.line
			}
			return nil, at("%v", err)
		}
		if onCommandLine[k] {
			continue // the flag wins; its value here was still checked
		}
		how := pathOf(f)
		for _, it := range items {
			var homeErr error
			v := resolveValue(how, it.val, func(p string) string {
				abs, err := resolvePath(dir, p)
				homeErr = cmp.Or(homeErr, err)
				return abs
			})
			if homeErr != nil {
				line = it.line
				return nil, at("%s = %q: %v", k, it.val, homeErr)
			}
			if err := fs.Set(k, v); err != nil {
				line = it.line
				return nil, at("%s = %q: %s", k, it.val, setError(f, err))
			}
			c.raw[k] = append(c.raw[k], v)
			c.lineOf[k+"\x00"+v] = it.line
			if _, val, _ := strings.Cut(v, "="); k == "upstream-header" || k == "upstream" && withhold(k, []string{val}) != "" {
				c.secret = true
			}
		}
		c.from[k] = lines[k]
	}
	return c, nil
}

// setError says why f refused a value. The flag package's own types
// answer only "parse error" or "value out of range": the kind wanted is
// said instead.
func setError(f *flag.Flag, err error) string {
	msg := err.Error()
	if msg != "parse error" && msg != "value out of range" {
		return msg
	}
	switch kindOf(f) {
	case kindDuration:
		return "want a duration such as \"30s\", \"1m30s\" or \"500ms\""
	case kindInt, kindUint:
		return "want an integer in range"
	}
	return msg
}

// item is one value of a key, as a flag would take it, and its line.
type item struct {
	val  string
	line int
}

// itemError is a bad value, at line when known.
type itemError struct {
	msg  string
	line int
}

func (e *itemError) Error() string { return e.msg }

// configValues turns the key k's TOML value into the flag's values.
func configValues(f *flag.Flag, k string, v any, lines map[string]int) ([]item, error) {
	line := lines[k]
	bad := func(want string) error {
		return &itemError{msg: fmt.Sprintf("%s: want %s, not %s", k, want, tomlType(v)), line: line}
	}
	switch kindOf(f) {
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return nil, bad(fmt.Sprintf("true or false (%s = true)", k))
		}
		return []item{{strconv.FormatBool(b), line}}, nil
	case kindInt, kindUint:
		n, ok := v.(int64)
		if !ok {
			return nil, bad(fmt.Sprintf("an integer (%s = %s)", k, cmp.Or(f.DefValue, "1")))
		}
		return []item{{strconv.FormatInt(n, 10), line}}, nil
	case kindFloat:
		switch n := v.(type) {
		case float64:
			return []item{{strconv.FormatFloat(n, 'g', -1, 64), line}}, nil
		case int64:
			return []item{{strconv.FormatInt(n, 10), line}}, nil
		}
		return nil, bad("a number")
	case kindDuration:
		s, ok := v.(string)
		if !ok {
			return nil, bad(fmt.Sprintf("a duration as a string (%s = %q)", k, cmp.Or(f.DefValue, "30s")))
		}
		return []item{{s, line}}, nil
	case kindString:
		s, ok := v.(string)
		if !ok {
			return nil, bad(fmt.Sprintf("a string (%s = %q)", k, example(f)))
		}
		return []item{{s, line}}, nil
	}
	table := tableOf(f)
	wantList := fmt.Sprintf("a string or an array of strings (%s = [%q])", k, example(f))
	if table {
		wantList = fmt.Sprintf("a table of NAME = %q (or an array of %q strings)", strings.TrimPrefix(example(f), "NAME="), example(f))
	}
	switch x := v.(type) {
	case string:
		return []item{{x, line}}, nil
	case []any:
		var out []item
		for i, e := range x {
			s, ok := e.(string)
			at := cmp.Or(lines[fmt.Sprintf("%s#%d", k, i)], line)
			if !ok {
				return nil, &itemError{msg: fmt.Sprintf("%s: element %d: want a string, not %s", k, i+1, tomlType(e)), line: at}
			}
			out = append(out, item{s, at})
		}
		return out, nil
	case map[string]any:
		if !table {
			return nil, bad(wantList)
		}
		names := make([]string, 0, len(x))
		for n := range x {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int { return cmp.Or(lines[k+"."+a]-lines[k+"."+b], strings.Compare(a, b)) })
		var out []item
		for _, n := range names {
			at := cmp.Or(lines[k+"."+n], line)
			if n == "" || strings.Contains(n, "=") {
				return nil, &itemError{msg: fmt.Sprintf("%s: name %q: want a NAME without '='", k, n), line: at}
			}
			vals := []any{x[n]}
			if arr, ok := x[n].([]any); ok {
				vals = arr
			}
			for _, e := range vals {
				s, ok := e.(string)
				if !ok {
					return nil, &itemError{msg: fmt.Sprintf("%s.%s: want a string (or an array of strings), not %s", k, n, tomlType(e)), line: at}
				}
				out = append(out, item{n + "=" + s, at})
			}
		}
		return out, nil
	}
	return nil, bad(wantList)
}

// example is a value of f for an error message: its placeholder.
func example(f *flag.Flag) string {
	ph := placeholder(f)
	if ph == "" || ph == "value" || ph == "string" {
		return "..."
	}
	return ph
}

// tomlType names v's TOML type, for "want X, not Y".
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// keyLines maps each key of the document to the line it is on: "a" and
// "a.b" for tables and their keys, "a#i" for an array's element i.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	lineOf := func(n *unstable.Node) int {
		if n == nil || n.Raw.Length == 0 {
			return 0
		}
		return p.Shape(n.Raw).Start.Line
	}
	record := func(path []string, line int) {
		for i := range path {
			k := strings.Join(path[:i+1], ".")
			if _, ok := lines[k]; !ok && line > 0 {
				lines[k] = line
			}
		}
	}
	keyOf := func(n *unstable.Node) (parts []string, line int) {
		it := n.Key()
		for it.Next() {
			if line == 0 {
				line = lineOf(it.Node())
			}
			parts = append(parts, string(it.Node().Data))
		}
		return parts, line
	}
	var value func(path []string, v *unstable.Node, line int)
	keyval := func(prefix []string, kv *unstable.Node) {
		parts, line := keyOf(kv)
		path := slices.Concat(prefix, parts)
		record(path, line)
		value(path, kv.Value(), line)
	}
	value = func(path []string, v *unstable.Node, line int) {
		switch v.Kind {
		case unstable.Array:
			i := 0
			for it := v.Children(); it.Next(); {
				e := it.Node()
				if e.Kind == unstable.Comment {
					continue
				}
				k := strings.Join(path, ".") + "#" + strconv.Itoa(i)
				lines[k] = cmp.Or(lineOf(e), line)
				i++
			}
		case unstable.InlineTable:
			for it := v.Children(); it.Next(); {
				if it.Node().Kind == unstable.KeyValue {
					keyval(path, it.Node())
				}
			}
		}
	}
	var prefix []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var line int
			prefix, line = keyOf(e)
			record(prefix, line)
		case unstable.KeyValue:
			keyval(prefix, e)
		}
	}
	return lines
}

// nearestKey is the configuration key closest to k (edit distance, '_'
// as '-'), "" when none is close.
func nearestKey(fs *flag.FlagSet, k string) string {
	best, bestD := "", 0
	want := strings.ReplaceAll(strings.ToLower(k), "_", "-")
	fs.VisitAll(func(f *flag.Flag) {
		if commandOnly[f.Name] {
			return
		}
		d := editDistance(want, f.Name)
		if best == "" || d < bestD {
			best, bestD = f.Name, d
		}
	})
	if bestD > max(2, len(k)/3) {
		return ""
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fromFile says where flag name's value came from, for an error about it:
// " (set in FILE:LINE)", or "" when not from the file.
func (c *configFile) fromFile(name string) string {
	if c == nil {
		return ""
	}
	if line, ok := c.from[name]; ok {
		return fmt.Sprintf(" (set in %s:%d)", c.path, line)
	}
	return ""
}

// about says where in the file the value an error names was set: "
// (set in FILE:LINE)" for the first flag from the file that msg names as
// --NAME (the line of the value msg quotes, when it does), else "".
func (c *configFile) about(msg string) string {
	if c == nil {
		return ""
	}
	best := ""
	for name := range c.from {
		i := strings.Index(msg, "--"+name)
		if i < 0 || i+2+len(name) < len(msg) && isNameByte(msg[i+2+len(name)]) {
			continue
		}
		if best == "" || len(name) > len(best) {
			best = name // --upstream-header, not --upstream
		}
	}
	if best == "" {
		return ""
	}
	line := c.from[best]
	for _, v := range c.raw[best] {
		name, _, _ := strings.Cut(v, "=") // a NAME=VALUE flag's entry, named
		if strings.Contains(msg, strconv.Quote(v)) || strings.Contains(msg, " "+v) || strings.Contains(msg, "--"+best+" "+name+":") {
			line = c.lineOf[best+"\x00"+v]
			break
		}
	}
	return fmt.Sprintf(" (set in %s:%d)", c.path, line)
}

func isNameByte(b byte) bool {
	return b == '-' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// secretFiles is the file as a secret file to keep out of the tools'
// reach, when it holds one (an --upstream-header value).
func (c *configFile) secretFiles() [][2]string {
	if c == nil || !c.secret {
		return nil
	}
	return [][2]string{{"--config (it holds an upstream's header or URL credentials)", c.path}}
}

// checkPlace refuses a config file that tools or upstreams can write, or
// inside a tool directory: whoever writes it chooses the next start's
// flags (--confine off, --allow-write /, an --upstream of theirs).
func (c *configFile) checkPlace(root string, readonly bool, writable, toolDirs []string, profiles []profiled) error {
	if c == nil {
		return nil
	}
	var places []place
	if !readonly {
		places = append(places, place{"--root", root})
	}
	for _, w := range writable {
		places = append(places, place{"--allow-write", w})
	}
	for _, d := range toolDirs {
		places = append(places, place{"--tools", d})
	}
	for _, p := range profiles {
		for _, g := range p.prof.Grants {
			if g.Access == confine.AccessReadWrite {
				places = append(places, place{fmt.Sprintf("--upstream %s (%s profile: %s)", p.spec.Name, p.prof.Name, g.Why), g.Path})
			}
		}
	}
	p, at, ok, err := placeOf(c.path, places)
	if err != nil {
		return fmt.Errorf("--config %s: %v", c.path, err)
	}
	if !ok {
		return nil
	}
	as := ""
	if at != c.path {
		as = " (as " + at + ")"
	}
	switch {
	case p.flag == "--root":
		return fmt.Errorf("--config %s is inside --root %s%s, where tools can write: a tool could rewrite the server's flags for its next start; move it out of the root, or add --readonly", c.path, p.path, as)
	case p.flag == "--tools":
		return fmt.Errorf("--config %s is inside --tools %s%s, where tool programs are installed: keep the server's configuration out of the tool directories", c.path, p.path, as)
	}
	return fmt.Errorf("--config %s is inside %s %s%s, where tools or upstreams can write: they could rewrite the server's flags for its next start; move it out, or narrow %s", c.path, p.flag, p.path, as, p.flag)
}

// printConfig is `mcp-route config print`: fs (parsed, the file applied)
// as a TOML file that --config loads back to the same flags.
func printConfig(fs *flag.FlagSet, args []string, cfg *configFile, stdout, stderr io.Writer) int {
	given := commandLine(fs, args)
	var top, tables strings.Builder
	withheld := 0
	fmt.Fprintf(&top, "# %s config print: the effective configuration", prog)
	if cfg != nil {
		fmt.Fprintf(&top, " (%s, then the command line)", cfg.path)
	}
	top.WriteString(".\n# Keys left at their defaults are commented out. Paths are absolute.\n# Values that may be secrets are withheld, as comments: keep them in your file.\n\n")
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var bad error
	cwdAbs := func(p string) string {
		if p == "" {
			return p
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	// An upstream withheld takes its other settings (header, token file,
	// profile) along: without it they would not load.
	gone := map[string]bool{}
	if l, ok := valueOf(fs, "upstream").(*listFlag); ok {
		for _, v := range l.vals {
			if n, val, _ := strings.Cut(v, "="); withhold("upstream", []string{val}) != "" {
				gone[n] = true
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if commandOnly[f.Name] || bad != nil {
			return
		}
		k := quoteKey(f.Name)
		kind := kindOf(f)
		if !set[f.Name] {
			def := f.DefValue
			switch {
			case tableOf(f):
				fmt.Fprintf(&top, "# %s = {}\n", k)
			case kind == kindList:
				fmt.Fprintf(&top, "# %s = []\n", k)
			default:
				fmt.Fprintf(&top, "# %s = %s\n", k, scalarTOML(kind, def))
			}
			return
		}
		how := pathOf(f)
		var vals []string
		if l, ok := f.Value.(*listFlag); ok {
			vals = slices.Clone(l.vals)
		} else if kind == kindList {
			vals = given[f.Name] // the command line replaced the file's
			if len(vals) == 0 && cfg != nil {
				vals = slices.Clone(cfg.raw[f.Name])
			}
		} else {
			vals = []string{f.Value.String()}
		}
		for i, v := range vals {
			if !utf8.ValidString(v) {
				bad = fmt.Errorf("config print: --%s: a value is not UTF-8, which TOML cannot hold", f.Name)
				return
			}
			vals[i] = resolveValue(how, v, cwdAbs)
		}
		switch {
		case tableOf(f):
			fmt.Fprintf(&tables, "\n[%s]\n", k)
			var names []string
			byName := map[string][]string{}
			for _, v := range vals {
				n, val, _ := strings.Cut(v, "=")
				if _, ok := byName[n]; !ok {
					names = append(names, n)
				}
				byName[n] = append(byName[n], val)
			}
			for _, n := range names {
				vs := byName[n]
				why := withhold(f.Name, vs)
				if why == "" && f.Name != "upstream" && strings.HasPrefix(f.Name, "upstream-") && gone[n] {
					why = "with its upstream"
				}
				if why != "" {
					fmt.Fprintf(&tables, "# %s = (withheld: %s)\n", quoteKey(n), why)
					withheld++
					continue
				}
				if len(vs) == 1 {
					fmt.Fprintf(&tables, "%s = %s\n", quoteKey(n), tomlString(vs[0]))
				} else {
					fmt.Fprintf(&tables, "%s = %s\n", quoteKey(n), tomlArray(vs))
				}
			}
		case kind == kindList:
			fmt.Fprintf(&top, "%s = %s\n", k, tomlArray(vals))
		default:
			fmt.Fprintf(&top, "%s = %s\n", k, scalarTOML(kind, vals[0]))
		}
	})
	if bad != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, bad)
		return 1
	}
	if _, err := io.WriteString(stdout, top.String()+tables.String()); err != nil {
		fmt.Fprintf(stderr, "%s: config print: %v\n", prog, err)
		return 1
	}
	if withheld > 0 {
		what := fmt.Sprintf("%d values", withheld)
		if withheld == 1 {
			what = "1 value"
		}
		fmt.Fprintf(stderr, "%s: config print: %s withheld (secrets, maybe): the printed file serves without them; keep them in your file\n", prog, what)
	}
	return 0
}

// valueOf is the Value of fs's flag name, nil when there is none.
func valueOf(fs *flag.FlagSet, name string) flag.Value {
	if f := fs.Lookup(name); f != nil {
		return f.Value
	}
	return nil
}

// withhold says why config print leaves out flag's values vs of one NAME,
// "" to print them.
func withhold(flag string, vs []string) string {
	if secretTables[flag] {
		return "--" + flag + " values may be secrets"
	}
	if flag == "upstream" {
		for _, v := range vs {
			// Trimmed as upstream.ParseSpec trims it: " https://u:p@h/" is
			// an HTTP upstream too.
			if u, err := url.Parse(strings.TrimSpace(v)); err == nil && u.Scheme != "" && u.Host != "" && (u.User != nil || u.RawQuery != "" || u.Fragment != "") {
				return "its URL has user info or a query, which may hold a secret"
			}
		}
	}
	return ""
}

// scalarTOML writes v (a flag's value as text) as TOML of the kind.
func scalarTOML(kind flagKind, v string) string {
	switch kind {
	case kindBool:
		if b, err := strconv.ParseBool(v); err == nil {
			return strconv.FormatBool(b)
		}
	case kindInt, kindUint, kindFloat:
		if _, err := strconv.ParseFloat(v, 64); err == nil && v != "" {
			return v
		}
	}
	return tomlString(v)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = tomlString(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// quoteKey writes k bare when TOML allows, else quoted.
func quoteKey(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) < 0 {
		return k
	}
	return tomlString(k)
}
