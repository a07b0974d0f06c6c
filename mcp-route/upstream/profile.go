package upstream

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// Launcher profiles: the places a package launcher (npx, uvx) needs beside
// what a tool may touch, so that an upstream started through one works
// under the default confinement. See the package doc, "Launcher profiles".

// Profile names.
const (
	ProfileNone = "none"
	ProfileNpx  = "npx"
	ProfileUvx  = "uvx"
)

// The first-start allowance of a launcher upstream (see the package doc):
// a cold npx -y @modelcontextprotocol/server-filesystem took 26-32 s to
// its tools/list on a 2-core machine at load 15, 49-81 s in the e2e test
// at load 15-48, npm fetching some 60 MB of packages, against 30 s of
// DefaultConnectTimeout; a warm one 6-7 s at load 15 (node on the package
// directly: 3.4 s), against DefaultListTimeout's 3 s. The allowances are
// about twice the typical worst figures.
const (
	LauncherFirstConnect = 3 * time.Minute
	LauncherFirstList    = 15 * time.Second
)

// Grant is one place a profile opens.
type Grant struct {
	Path   string // absolute, symlinks resolved
	Access string // confine.AccessReadExec, AccessRead or AccessReadWrite
	Why    string // what it is to the launcher, e.g. "npm cache"
}

// Profile is what a launcher needs: Grants, and the Dropped ones (a
// place the operator's flags already decide, or one too wide to open),
// each with the reason.
type Profile struct {
	Name    string // ProfileNpx, ProfileUvx
	Grants  []Grant
	Dropped []string
	// Env is what the profile adds to the upstream's environment: under
	// Bounds.NoNetwork the launcher's offline mode (npm_config_offline,
	// UV_OFFLINE), unless the environment sets it already. npm would
	// otherwise retry the registry it cannot reach for over a minute at
	// every start before it falls back to its cache.
	Env []string
}

// Paths returns the grants of access a.
func (p *Profile) Paths(access string) []string {
	var out []string
	for _, g := range p.Grants {
		if g.Access == access {
			out = append(out, g.Path)
		}
	}
	return out
}

// String is the profile on one line, for --confine-check and the log.
func (p *Profile) String() string {
	var b strings.Builder
	b.WriteString(p.Name + " profile:")
	for _, g := range p.Grants {
		fmt.Fprintf(&b, " %s %s (%s);", g.Access, g.Path, g.Why)
	}
	for _, d := range p.Dropped {
		fmt.Fprintf(&b, " not granted: %s;", d)
	}
	for _, kv := range p.Env {
		fmt.Fprintf(&b, " environment %s;", kv)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Launcher returns the profile Argv's program asks for: ProfileNpx for
// npx and npm exec (npm x), ProfileUvx for uvx and uv tool run (uv tool
// x); "" for any other program.
func Launcher(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	args := nonFlags(argv[1:])
	switch filepath.Base(argv[0]) {
	case "npx":
		return ProfileNpx
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			return ProfileNpx
		}
	case "uvx":
		return ProfileUvx
	case "uv":
		if len(args) > 1 && args[0] == "tool" && (args[1] == "run" || args[1] == "x") {
			return ProfileUvx
		}
	}
	return ""
}

// nonFlags is args up to the first non-flag word and after, flags left
// out: enough to find npm's or uv's subcommand.
func nonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// Bounds are the operator's places a profile must not widen.
type Bounds struct {
	Root       string   // --root
	ReadOnly   bool     // --readonly
	AllowWrite []string // --allow-write
	ToolDirs   []string // --tools
	TempDir    string   // the private TMPDIR
	NoNetwork  bool     // --no-network: the launcher runs offline
}

// LoadProfile computes the profile name for a process started with env
// (its whole environment: KEY=VALUE) and argv, the way the launcher
// itself finds its places: npm from its environment (npm_config_*), its
// user and global npmrc and the node it runs on; uv from UV_* and XDG_*
// variables. Places that do not exist are left out, except the cache,
// which is made (0700) as the launcher would make it, so that a rule can
// hold it. A place inside b's root or an --allow-write path is left to
// the operator's grant; a writable place that holds the home directory,
// a tool directory or a system directory, or "/", is never granted.
func LoadProfile(name string, argv, env []string, b Bounds) (*Profile, error) {
	e := envMap(env)
	var p *Profile
	var cache string
	var err error
	switch name {
	case ProfileNpx:
		p, cache, err = npxProfile(argv, e)
	case ProfileUvx:
		p, cache, err = uvxProfile(argv, e)
	default:
		return nil, fmt.Errorf("no launcher profile %q: want npx, uvx or none", name)
	}
	if err != nil {
		return nil, err
	}
	why := "npm cache"
	if p.Name == ProfileUvx {
		why = "uv cache"
	}
	// The cache is made only where it would be granted: not inside the
	// root, nor as a place holding the home directory.
	if _, err := os.Lstat(cache); os.IsNotExist(err) {
		probe := &Profile{Grants: []Grant{{Path: cache, Access: confine.AccessReadWrite, Why: why}}}
		probe.bound(b, home(e))
		if len(probe.Grants) == 0 {
			p.Dropped = append(p.Dropped, probe.Dropped...)
		} else if err := os.MkdirAll(cache, 0o700); err != nil {
			return nil, fmt.Errorf("%s profile: %s %s: %v", p.Name, why, cache, err)
		}
	}
	p.add(cache, confine.AccessReadWrite, why)
	p.bound(b, home(e))
	if b.NoNetwork {
		if _, set := npmEnv(e, "offline"); p.Name == ProfileNpx && !set {
			p.Env = append(p.Env, "npm_config_offline=true")
		}
		if _, set := e["UV_OFFLINE"]; p.Name == ProfileUvx && !set {
			p.Env = append(p.Env, "UV_OFFLINE=1")
		}
	}
	return p, nil
}

// envMap is env as a map, later entries winning as execve's consumers
// read them (getenv finds the first; toolenv.Base never repeats a key).
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, seen := m[k]; !seen {
				m[k] = v
			}
		}
	}
	return m
}

// home is the home directory the launcher sees: $HOME, else the passwd
// entry (Node's os.homedir and Rust's home_dir do the same).
func home(e map[string]string) string {
	if h := e["HOME"]; filepath.IsAbs(h) {
		return filepath.Clean(h)
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return filepath.Clean(u.HomeDir)
	}
	return ""
}

// lookPath finds prog in e's PATH, as the launcher's exec would; the
// result is resolved (symlinks followed).
func lookPath(prog string, e map[string]string) string {
	cands := []string{prog}
	if !strings.Contains(prog, "/") {
		cands = nil
		for _, d := range filepath.SplitList(e["PATH"]) {
			if filepath.IsAbs(d) {
				cands = append(cands, filepath.Join(d, prog))
			}
		}
	}
	for _, c := range cands {
		fi, err := os.Stat(c)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		if real, err := filepath.EvalSymlinks(c); err == nil {
			if abs, err := filepath.Abs(real); err == nil {
				return abs
			}
		}
	}
	return ""
}

// npmEnv returns npm_config_KEY from e, any case (npm matches the prefix
// case-insensitively and takes the last one set; toolenv has one).
func npmEnv(e map[string]string, key string) (string, bool) {
	for k, v := range e {
		if strings.EqualFold(k, "npm_config_"+key) {
			return v, true
		}
	}
	return "", false
}

var npmrcVar = regexp.MustCompile(`\$\{([^${}]+)\}`)

// readNpmrc reads the key=value lines of an npmrc (ini: ; and # comments,
// quoted values, ${VAR} from e), or nil when it cannot be read.
func readNpmrc(path string, e map[string]string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		v = npmrcVar.ReplaceAllStringFunc(v, func(m string) string { return e[m[2:len(m)-1]] })
		out[strings.TrimSpace(k)] = v
	}
	return out
}

// npmPath is a path-typed npm setting as npm reads it: ~/ is the home
// directory; a relative one is not followed (npm would take it against
// the working directory, the client-writable root).
func npmPath(v, home string) string {
	if v == "~" || strings.HasPrefix(v, "~/") {
		if home == "" {
			return ""
		}
		v = filepath.Join(home, v[1:])
	}
	if !filepath.IsAbs(v) {
		return ""
	}
	return filepath.Clean(v)
}

// npxProfile follows @npmcli/config: the global prefix is $PREFIX, else
// two levels above the node executable; settings come from the
// environment (npm_config_*), the user npmrc ($npm_config_userconfig,
// else ~/.npmrc), the global one ($npm_config_globalconfig, else
// PREFIX/etc/npmrc) and npm's builtin npmrc, in that order. The project
// .npmrc in the working directory is not read: that is --root, which
// clients may write.
func npxProfile(argv []string, e map[string]string) (p *Profile, cache string, err error) {
	p = &Profile{Name: ProfileNpx}
	h := home(e)
	node := lookPath("node", e)
	if node == "" {
		return nil, "", fmt.Errorf("npx profile: no node in the upstream's PATH (%s)", e["PATH"])
	}
	p.add(node, confine.AccessReadExec, "node")
	prefix := npmPath(e["PREFIX"], h)
	if prefix == "" {
		prefix = filepath.Dir(filepath.Dir(node))
	}
	// npm itself: the package the launcher's script belongs to (npx and
	// npm are links into PREFIX/lib/node_modules/npm/bin).
	npmDir := ""
	if launcher := lookPath(argv[0], e); launcher != "" {
		if i := strings.LastIndex(launcher, "/node_modules/npm/"); i >= 0 {
			npmDir = launcher[:i+len("/node_modules/npm")]
		}
	}
	userrc, ok := npmEnv(e, "userconfig")
	if userrc = npmPath(userrc, h); !ok || userrc == "" {
		userrc = ""
		if h != "" {
			userrc = filepath.Join(h, ".npmrc")
		}
	}
	user := readNpmrc(userrc, e)
	if v := npmPath(user["prefix"], h); v != "" {
		prefix = v
	}
	if v, ok := npmEnv(e, "prefix"); ok && npmPath(v, h) != "" {
		prefix = npmPath(v, h)
	}
	globalrc := npmPath(user["globalconfig"], h)
	if v, ok := npmEnv(e, "globalconfig"); ok {
		globalrc = npmPath(v, h)
	}
	if globalrc == "" {
		globalrc = filepath.Join(prefix, "etc", "npmrc")
	}
	global := readNpmrc(globalrc, e)
	var builtin map[string]string
	if npmDir != "" {
		builtin = readNpmrc(filepath.Join(npmDir, "npmrc"), e)
	}
	if v, ok := npmEnv(e, "cache"); ok {
		cache = npmPath(v, h)
	} else {
		for _, rc := range []map[string]string{user, global, builtin} {
			if v, ok := rc["cache"]; ok {
				cache = npmPath(v, h)
				break
			}
		}
		if cache == "" && h != "" {
			cache = filepath.Join(h, ".npm")
		}
	}
	if cache == "" {
		return nil, "", fmt.Errorf("npx profile: no npm cache: no home directory and no npm_config_cache")
	}
	p.add(filepath.Join(prefix, "lib", "node_modules"), confine.AccessReadExec, "node global modules")
	if npmDir != "" {
		p.add(npmDir, confine.AccessReadExec, "npm")
	}
	if userrc != "" {
		p.add(userrc, confine.AccessRead, "user npmrc")
	}
	p.add(globalrc, confine.AccessRead, "global npmrc")
	return p, cache, nil
}

// uvxProfile follows uv's documented places: the cache is $UV_CACHE_DIR,
// else $XDG_CACHE_HOME/uv, else ~/.cache/uv; tools $UV_TOOL_DIR, else
// $XDG_DATA_HOME/uv/tools, else ~/.local/share/uv/tools; managed Pythons
// $UV_PYTHON_INSTALL_DIR, else $XDG_DATA_HOME/uv/python, else
// ~/.local/share/uv/python; the user's uv.toml in $XDG_CONFIG_HOME/uv,
// else ~/.config/uv. uvx runs the uv binary beside it.
func uvxProfile(argv []string, e map[string]string) (p *Profile, cache string, err error) {
	p = &Profile{Name: ProfileUvx}
	h := home(e)
	xdg := func(v, def string) string {
		if d := e[v]; filepath.IsAbs(d) {
			return filepath.Clean(d)
		}
		if h == "" {
			return ""
		}
		return filepath.Join(h, def)
	}
	if d := e["UV_CACHE_DIR"]; d != "" {
		cache = npmPath(d, h)
	} else if c := xdg("XDG_CACHE_HOME", ".cache"); c != "" {
		cache = filepath.Join(c, "uv")
	}
	if cache == "" {
		return nil, "", fmt.Errorf("uvx profile: no uv cache: no home directory and no UV_CACHE_DIR")
	}
	data := xdg("XDG_DATA_HOME", ".local/share")
	tools, pythons := npmPath(e["UV_TOOL_DIR"], h), npmPath(e["UV_PYTHON_INSTALL_DIR"], h)
	if tools == "" && data != "" {
		tools = filepath.Join(data, "uv", "tools")
	}
	if pythons == "" && data != "" {
		pythons = filepath.Join(data, "uv", "python")
	}
	if exe := lookPath(argv[0], e); exe != "" {
		p.add(exe, confine.AccessReadExec, "uv")
		p.add(filepath.Join(filepath.Dir(exe), "uv"), confine.AccessReadExec, "uv")
	}
	if exe := lookPath("uv", e); exe != "" {
		p.add(exe, confine.AccessReadExec, "uv")
	}
	if tools != "" {
		p.add(tools, confine.AccessReadExec, "uv tools")
	}
	if pythons != "" {
		p.add(pythons, confine.AccessReadExec, "uv pythons")
	}
	if c := xdg("XDG_CONFIG_HOME", ".config"); c != "" {
		p.add(filepath.Join(c, "uv", "uv.toml"), confine.AccessRead, "uv config")
	}
	return p, cache, nil
}

// add grants path (resolved; left out when it does not exist) once.
func (p *Profile) add(path, access, why string) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	for _, g := range p.Grants {
		if g.Path == real {
			return
		}
	}
	p.Grants = append(p.Grants, Grant{Path: real, Access: access, Why: why})
}

// bound drops the grants b's places already decide, and the writable ones
// too wide to open; see LoadProfile.
func (p *Profile) bound(b Bounds, home string) {
	resolve := func(ps ...string) []string {
		var out []string
		for _, q := range ps {
			if q == "" {
				continue
			}
			if r, err := filepath.EvalSymlinks(q); err == nil {
				out = append(out, r)
			}
		}
		return out
	}
	operator := resolve(append([]string{b.Root, b.TempDir}, b.AllowWrite...)...)
	guarded := resolve(b.ToolDirs...)
	guarded = append(guarded, resolve(confine.SystemReadExec...)...)
	guarded = append(guarded, resolve(home)...)
	if h, err := os.UserHomeDir(); err == nil {
		guarded = append(guarded, resolve(h)...)
	}
	p.Grants = slices.DeleteFunc(p.Grants, func(g Grant) bool {
		for _, o := range operator {
			if within(g.Path, o) {
				p.Dropped = append(p.Dropped, fmt.Sprintf("%s %s (%s): inside %s, which the operator's flags grant", g.Access, g.Path, g.Why, o))
				return true
			}
		}
		if g.Path == "/" {
			p.Dropped = append(p.Dropped, fmt.Sprintf("%s / (%s): the whole file system", g.Access, g.Why))
			return true
		}
		if g.Access != confine.AccessReadWrite {
			return false
		}
		for _, q := range append(guarded, operator...) {
			if within(q, g.Path) {
				p.Dropped = append(p.Dropped, fmt.Sprintf("%s %s (%s): it holds %s", g.Access, g.Path, g.Why, q))
				return true
			}
		}
		return false
	})
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
