package confinement

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// Interpreters: what a tool needs besides its own file. The kernel runs a
// script's shebang interpreter, which may be a script too (a pyenv shim is
// a bash script that runs pyenv, which execs the real python), and an
// interpreter reads its installation (python its stdlib, a venv its
// pyvenv.cfg and site-packages, node its lib). Chain finds these without
// running anything: it reads shebangs, follows symlinks, parses ELF headers
// (the loader and RUNPATH of a binary outside the system directories, as
// under /nix/store or linuxbrew) and reads the small files that decide
// where an installation lives (pyvenv.cfg, pyenv's version files).
//
// Nothing a tool could have written steers a grant: a file inside Unsafe
// (the root, the --allow-write places, the private TMPDIR) is neither
// granted nor read, so a client cannot point a venv's "home" at a
// directory it wants to read, nor pick what pyenv's .python-version names.

// Grant is one path an interpreter chain needs, read and execute.
type Grant struct {
	Path string // absolute, symlinks resolved
	Why  string // e.g. "interpreter (shebang of /tools/x)"
}

// ToolChain is what one tool's interpreter chain needs.
type ToolChain struct {
	Tool    string   // the tool's executable, as found
	Steps   []string // the chain as the kernel runs it: interpreter after interpreter
	Grants  []Grant  // granted read and execute
	Refused []Grant  // needed, but inside a place the tools can write: never granted
}

// maxInterp is the depth of interpreters the kernel follows (binfmt_script
// and the loader: BINPRM_MAX_RECURSION is 4).
const maxInterp = 4

// maxELF bounds the binaries and libraries read for one chain.
const maxELF = 64

// Chain resolves the interpreter chain of exe as it would run with env
// (its PATH, PYENV_VERSION) in directory dir. unsafe are places the tools
// can write, resolved: never granted, never read.
func Chain(exe string, env []string, dir string, unsafe []string) ToolChain {
	r := &chainer{
		tc:     ToolChain{Tool: exe},
		dir:    dir,
		unsafe: unsafe,
		seen:   map[string]bool{},
		elfs:   map[string]bool{},
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			r.path = v
		} else if v, ok := strings.CutPrefix(kv, "PYENV_VERSION="); ok {
			r.pyenvVersion = v
		}
	}
	r.script(exe, "", 0)
	return r.tc
}

type chainer struct {
	tc           ToolChain
	dir          string
	path         string // the tool's PATH, for #!/usr/bin/env NAME
	pyenvVersion string
	unsafe       []string
	seen         map[string]bool // granted or refused paths
	elfs         map[string]bool // ELF files read
}

// isSystem reports whether p lies in a directory every policy grants.
func isSystem(p string) bool {
	for _, d := range confine.SystemReadExec {
		if within(p, d) {
			return true
		}
		// /bin may be a link to /usr/bin: the resolved name is what
		// the kernel checks.
		if real, err := filepath.EvalSymlinks(d); err == nil && within(p, real) {
			return true
		}
	}
	return false
}

func (r *chainer) isUnsafe(p string) bool {
	for _, u := range r.unsafe {
		if u != "" && within(p, u) {
			return true
		}
	}
	return false
}

// grant adds p (resolved) unless the system directories hold it; one in
// an unsafe place is refused instead. It reports whether p may be read to
// decide further grants.
func (r *chainer) grant(p, why string) bool {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	if r.isUnsafe(real) || r.isUnsafe(p) {
		if !r.seen[real] {
			r.seen[real] = true
			r.tc.Refused = append(r.tc.Refused, Grant{real, why})
		}
		return false
	}
	if real == "/" || isSystem(real) || r.seen[real] {
		return true
	}
	for _, g := range r.tc.Grants { // already under a granted directory
		if within(real, g.Path) {
			return true
		}
	}
	r.seen[real] = true
	r.tc.Grants = append(r.tc.Grants, Grant{real, why})
	return true
}

// hops returns p and every symlink target on the way to the file it
// names, each absolute: a venv's python is a link whose own directory
// tells where the venv is.
func hops(p string) []string {
	out := []string{p}
	cur := p
	for range 40 {
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		t, err := os.Readlink(cur)
		if err != nil {
			break
		}
		if !filepath.IsAbs(t) {
			d, err := filepath.EvalSymlinks(filepath.Dir(cur))
			if err != nil {
				break
			}
			t = filepath.Join(d, t)
		}
		out = append(out, t)
		cur = t
	}
	return out
}

// script follows the shebang of exe, run as the interpreter of parent
// (exe is the tool itself at depth 0, which its tool directory grants).
func (r *chainer) script(exe, parent string, depth int) {
	if depth > maxInterp {
		return
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return
	}
	if depth > 0 {
		// Only what the kernel would run: an executable regular file. A
		// shebang naming a secret must not make it readable.
		if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return
		}
		r.tc.Steps = append(r.tc.Steps, exe)
		if !r.grant(exe, "interpreter of "+parent) {
			return
		}
		for _, h := range hops(exe) {
			r.installation(h)
		}
	}
	if r.isUnsafe(real) {
		return
	}
	head := readHead(real)
	if bytes.HasPrefix(head, []byte("\x7fELF")) {
		if depth > 0 {
			r.elf(real)
		}
		return
	}
	interp, args, ok := shebang(head)
	if !ok {
		return
	}
	if !filepath.IsAbs(interp) {
		interp = filepath.Join(r.dir, interp)
	}
	r.script(interp, exe, depth+1)
	if filepath.Base(interp) == "env" {
		if name, path := envTarget(args); name != "" {
			if path == "" {
				path = r.path
			}
			if p := lookPath(name, path, r.dir); p != "" {
				r.script(p, exe+" (env "+name+")", depth+1)
			}
		}
	}
	// A pyenv shim runs pyenv, which picks the version and execs it.
	if root := pyenvShim(head); root != "" {
		r.pyenv(root, filepath.Base(exe))
	}
}

// readHead reads what a shebang line or an ELF magic needs.
func readHead(p string) []byte {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 1024)
	n, _ := f.Read(b)
	return b[:n]
}

// shebang parses "#!INTERP [ARG]" as the kernel does: one optional
// argument, the rest of the line.
func shebang(head []byte) (interp, arg string, ok bool) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", "", false
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	s := strings.TrimSpace(string(line))
	interp, arg, _ = strings.Cut(s, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	return interp, strings.TrimSpace(arg), interp != ""
}

// envTarget finds the program env(1) runs from its shebang argument: the
// first word that is neither an option nor NAME=VALUE, with -S (split
// string) and a PATH=... assignment (the PATH it searches) understood.
func envTarget(arg string) (name, path string) {
	words := strings.Fields(arg)
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-S" || w == "--split-string" || w == "-" || w == "-i" || w == "--ignore-environment" || w == "--":
		case strings.HasPrefix(w, "-S"):
			// "-Spython3 -u": the rest of the word is the first word.
			words = slices.Insert(words, i+1, w[2:])
		case w == "-u" || w == "--unset" || w == "-C" || w == "--chdir":
			i++
		case strings.HasPrefix(w, "-"):
		case strings.Contains(w, "="):
			if v, ok := strings.CutPrefix(w, "PATH="); ok {
				path = v
			}
		default:
			return w, path
		}
	}
	return "", path
}

// lookPath finds name as execvp would in path.
func lookPath(name, path, dir string) string {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// installation grants what an interpreter at p needs from the prefix it
// lives in (PREFIX/bin/NAME): a venv whole (its pyvenv.cfg, site-packages)
// and the lib of the python it was made from; otherwise PREFIX/lib
// (python's stdlib, node's global modules, a ~/.local tool's packages).
func (r *chainer) installation(p string) {
	bin, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil || filepath.Base(bin) != "bin" {
		return
	}
	prefix := filepath.Dir(bin)
	if prefix == "/" || isSystem(prefix) {
		return
	}
	cfg := filepath.Join(prefix, "pyvenv.cfg")
	if _, err := os.Stat(cfg); err == nil {
		if !r.grant(prefix, "venv of "+p) {
			return
		}
		if home := venvHome(cfg); home != "" {
			if real, err := filepath.EvalSymlinks(home); err == nil && filepath.Base(real) == "bin" {
				base := filepath.Dir(real)
				if base != "/" && !isSystem(base) {
					r.grant(filepath.Join(base, "lib"), "stdlib of the venv "+prefix)
				}
			}
		}
		return
	}
	if lib := filepath.Join(prefix, "lib"); exists(lib) {
		r.grant(lib, "installation of "+p)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// venvHome returns the "home" of a pyvenv.cfg: the bin directory of the
// python the venv was made from.
func venvHome(cfg string) string {
	f, err := os.Open(cfg)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == "home" {
			if h := strings.TrimSpace(v); filepath.IsAbs(h) {
				return h
			}
		}
	}
	return ""
}

// elf grants what a binary outside the system directories loads: its
// loader (PT_INTERP) and the RUNPATH/RPATH directories where its libraries
// are found, following those libraries' own, as a /nix/store or linuxbrew
// binary needs.
func (r *chainer) elf(p string) {
	queue := []string{p}
	for len(queue) > 0 && len(r.elfs) < maxELF {
		cur := queue[0]
		queue = queue[1:]
		if r.elfs[cur] {
			continue
		}
		r.elfs[cur] = true
		deps, err := readELFDeps(cur)
		if err != nil {
			continue
		}
		if filepath.IsAbs(deps.interp) {
			r.grant(deps.interp, "loader of "+cur)
		}
		var dirs []string
		for _, v := range slices.Concat(deps.runpath, deps.rpath) {
			for _, d := range filepath.SplitList(v) {
				d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", "$ORIGIN"), "$ORIGIN", filepath.Dir(cur))
				if filepath.IsAbs(d) && exists(d) {
					dirs = append(dirs, d)
				}
			}
		}
		for _, d := range dirs {
			if !r.grant(d, "libraries of "+cur) {
				continue
			}
			for _, lib := range deps.needed {
				if l, err := filepath.EvalSymlinks(filepath.Join(d, lib)); err == nil && !isSystem(l) && !r.isUnsafe(l) {
					queue = append(queue, l)
				}
			}
		}
	}
}

// pyenvShimRoot matches the line of a pyenv shim that names its root.
var pyenvShimRoot = regexp.MustCompile(`(?m)^export PYENV_ROOT="([^"$` + "`" + `\\]+)"$`)

// pyenvShim returns PYENV_ROOT when head is a pyenv shim (a bash script
// that execs PYENV_ROOT/libexec/pyenv).
func pyenvShim(head []byte) string {
	if !bytes.Contains(head, []byte(`/libexec/pyenv" exec`)) {
		return ""
	}
	m := pyenvShimRoot.FindSubmatch(head)
	if m == nil || !filepath.IsAbs(string(m[1])) {
		return ""
	}
	// A pyenv installation: its pyenv program is there.
	if fi, err := os.Stat(filepath.Join(string(m[1]), "libexec", "pyenv")); err != nil || fi.Mode()&0o111 == 0 {
		return ""
	}
	return string(m[1])
}

// pyenv grants what `pyenv exec PROGRAM` reads and runs: pyenv's own
// scripts and hooks, and the prefix of the selected version (only that
// one, not every version installed), chosen as pyenv does: PYENV_VERSION,
// else the nearest .python-version from the working directory up (one in
// a place the tools can write is skipped: a client wrote it), else
// PYENV_ROOT/version.
func (r *chainer) pyenv(root, program string) {
	for _, d := range []string{"libexec", "plugins", "pyenv.d", "version"} {
		if p := filepath.Join(root, d); exists(p) {
			if !r.grant(p, "pyenv (shim "+program+")") {
				return
			}
		}
	}
	var names []string
	if r.pyenvVersion != "" {
		names = strings.Split(r.pyenvVersion, ":")
	} else {
		file := ""
		for d := r.dir; d != ""; d = filepath.Dir(d) {
			if f := filepath.Join(d, ".python-version"); !r.isUnsafe(d) && exists(f) {
				file = f
				break
			}
			if d == "/" {
				break
			}
		}
		if file == "" {
			file = filepath.Join(root, "version")
		}
		data, _ := os.ReadFile(file)
		for _, l := range strings.Split(string(data), "\n") {
			if w := strings.Fields(l); len(w) > 0 && !strings.HasPrefix(w[0], "#") {
				names = append(names, w[0])
			}
		}
	}
	versions, err := filepath.EvalSymlinks(filepath.Join(root, "versions"))
	if err != nil {
		return
	}
	for _, n := range names {
		if n == "" || n == "system" || filepath.IsAbs(n) || slices.Contains(strings.Split(n, "/"), "..") {
			continue
		}
		prefix, err := filepath.EvalSymlinks(filepath.Join(versions, n))
		if err != nil || !within(prefix, versions) || prefix == versions {
			continue
		}
		if !r.grant(prefix, "pyenv version "+n) {
			continue
		}
		if exe := filepath.Join(prefix, "bin", program); exists(exe) {
			r.tc.Steps = append(r.tc.Steps, exe)
			for _, h := range hops(exe) {
				r.installation(h)
			}
			if real, err := filepath.EvalSymlinks(exe); err == nil {
				r.grant(real, "python of pyenv version "+n)
				r.elf(real)
			}
		}
	}
}
