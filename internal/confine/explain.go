package confine

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Denials explained. A confined program that is refused a path sees EACCES
// or EPERM, the same errors a plain permission problem gives, and prints
// whatever its runtime makes of them ("Permission denied", a Python
// traceback, npm's "sudo chown" advice, exit 126 for an interpreter the
// kernel would not run). Explain reads such a failure for the paths it
// names and checks each against the rules in force and against the file's
// own permissions, checked by the caller (which is not confined): only a
// path the rules do not grant, and the file's mode would, is blamed on the
// confinement. One explainer serves the tools' calls and the upstreams'
// start failures, so both give the same advice.
//
// The advice is the narrowest grant that lets the refused access through,
// and never one Check would refuse:
//   - a read: the file itself (--allow-read FILE), or the directory when a
//     directory was refused;
//   - a write to an existing file: the file; a file to be made: the
//     directory it goes in, or, when directories are missing on the way,
//     the first missing one, to be made first (Denial.Mkdir);
//   - an executable: the file, when it runs on its own (a static binary,
//     one whose loader is granted and that names no library directory of
//     its own, a script whose interpreter is granted); otherwise its
//     installation (PREFIX for PREFIX/bin/NAME: a venv, an nvm version, a
//     /nix/store path), else the directory holding it;
//   - never a process's own /proc entry (/proc/self, /proc/PID): the
//     failure's other paths are tried instead;
//   - never "/", nor a place at, above or below one of Never
//     (OpensSecret): for a file of /etc the advice names the file, and a
//     secret itself (/etc/shadow) gets no advice at all.

// Denial is a path the confinement refused a failed program.
type Denial struct {
	Path string // as the program named it
	// Allowed is what the rules grant there: "" nothing, or AccessRead /
	// AccessReadExec.
	Allowed string
	// Flag is the mcp-route flag, with its argument, that grants what
	// was refused.
	Flag string
	// Mkdir, when set, is a directory to make before Flag can name it
	// (Flag's argument): the program would make it, and the grant
	// needs an existing path.
	Mkdir string
	// Lines are the lines of the failure that report the denial or name
	// Path: what is left once a launcher's misleading advice is cut.
	Lines string
}

// String is the sentence a caller adds to its error text.
func (d Denial) String() string {
	what := "tools are granted nothing there"
	if d.Allowed != "" {
		what = "tools may only " + strings.ReplaceAll(d.Allowed, "+", " and ") + " there"
	}
	grant := d.Flag + " grants it"
	if d.Mkdir != "" {
		grant = "mkdir -p " + d.Mkdir + ", then " + grant
	}
	return fmt.Sprintf("mcp-route's confinement refused %s (%s); %s", d.Path, what, grant)
}

// Attrs are the log attributes of d.
func (d Denial) Attrs() []slog.Attr {
	allowed := d.Allowed
	if allowed == "" {
		allowed = "nothing"
	}
	attrs := []slog.Attr{slog.String("path", d.Path), slog.String("allowed", allowed), slog.String("grant", d.Flag)}
	if d.Mkdir != "" {
		attrs = append(attrs, slog.String("mkdir", d.Mkdir))
	}
	return attrs
}

var (
	// deniedLine: a line reporting EACCES or EPERM, as the usual
	// runtimes word it.
	deniedLine = regexp.MustCompile(`(?i)permission denied|operation not permitted|\beacces\b|\beperm\b|errno 13\b|errno 1\b`)
	// pathIn: absolute paths in a line. A path starts a word (or
	// follows a quote, '=', ':', ',' or a bracket) and is not the // of
	// a URL; it ends at white space, a quote, ':' ',' ';' or a bracket.
	pathIn = regexp.MustCompile(`(?:^|[\s"'=(\[:,])(/[^/\s"'` + "`" + `:,;()\[\]{}<>][^\s"'` + "`" + `:,;()\[\]{}<>]*)`)
	// exitNoExec: the outcome of a program whose interpreter could not
	// be executed (126) or found (127).
	exitNoExec = regexp.MustCompile(`^exit status 12[67]\b`)
)

// Explain returns the denial a failure shows, when the rules caused it.
// failure is what the program left: a tool call's outcome and the end of
// its stderr, or an upstream's stderr. When a line reports EACCES or
// EPERM ("Permission denied", "Operation not permitted", errno 13), or
// the failure starts with "exit status 126" or 127, the paths of the
// failure are tried: those of the reporting lines first, the last of a
// line first (the path nearest the words is the one refused, not the
// program's own name before it), then those of the other lines (npm names
// the path on a line of its own). rules nil (nothing confined) explains
// nothing.
func Explain(failure string, rules []Rule) (Denial, bool) {
	if rules == nil {
		return Denial{}, false
	}
	noExec := exitNoExec.MatchString(failure)
	if !noExec && !deniedLine.MatchString(failure) {
		return Denial{}, false
	}
	lines := strings.Split(failure, "\n")
	try := func(line string) (Denial, bool) {
		ms := pathIn.FindAllStringSubmatch(line, -1)
		for i := len(ms) - 1; i >= 0; i-- {
			p := cleanNamed(ms[i][1])
			if p == "" || perProcess(p) {
				continue
			}
			if d, ok := denial(p, rules); ok {
				d.Lines = linesAbout(lines, p)
				return d, true
			}
		}
		return Denial{}, false
	}
	for _, reporting := range []bool{true, false} {
		for _, line := range lines {
			if (noExec && reporting) || deniedLine.MatchString(line) == reporting {
				if d, ok := try(line); ok {
					return d, true
				}
			}
		}
		if noExec {
			break // every line was tried
		}
	}
	return Denial{}, false
}

// cleanNamed is a path as a program printed it, made plain: npm writes a
// temporary file's name as "***", sentences end a path with '.'.
func cleanNamed(p string) string {
	p = strings.TrimRight(p, ".")
	for strings.HasSuffix(p, "*") {
		p = strings.TrimRight(strings.TrimRight(p, "*"), "/")
	}
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// perProcess reports whether p is a process's own /proc entry
// (/proc/self, /proc/thread-self, /proc/PID): tools never see one, no flag
// should grant it, and the explainer, not being the tool, would resolve
// /proc/self to itself. The search goes on to the failure's other paths.
func perProcess(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	if first == "self" || first == "thread-self" {
		return true
	}
	return first != "" && strings.Trim(first, "0123456789") == ""
}

// linesAbout are the lines that report the denial or name p.
func linesAbout(lines []string, p string) string {
	var keep []string
	for _, line := range lines {
		if deniedLine.MatchString(line) || strings.Contains(line, p) {
			keep = append(keep, strings.TrimSpace(line))
		}
	}
	return strings.Join(keep, "\n")
}

// Covering is the widest access rules grant at path (absolute, resolved):
// "" for none.
func Covering(path string, rules []Rule) string {
	best := ""
	for _, r := range rules {
		if within(path, r.Path) && rank(r.Access) > rank(best) {
			best = r.Access
		}
	}
	return best
}

func rank(access string) int {
	switch access {
	case AccessRead:
		return 1
	case AccessReadExec:
		return 2
	case AccessDevice:
		return 3
	case AccessReadWrite:
		return 4
	}
	return 0
}

// denial decides whether the rules, and not the file's mode, refused p:
// the access the rules grant at p is compared with what the caller's own
// user may do there.
func denial(p string, rules []Rule) (Denial, bool) {
	real, err := filepath.EvalSymlinks(p)
	var missing string // the first directory missing on the way to p, if any
	creating := false
	if errors.Is(err, os.ErrNotExist) {
		// A file to be made: the nearest directory that exists decides.
		real, missing, err = nearestExisting(p)
		creating = true
	}
	if err != nil || real == "/" {
		return Denial{}, false
	}
	if OpensSecret(real) != "" {
		// /etc/shadow and the like: no flag grants them (Never).
		return Denial{}, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return Denial{}, false
	}
	if creating && !fi.IsDir() {
		return Denial{}, false // a path through a file: ENOTDIR, not a denial
	}
	allowed := Covering(real, rules)
	d := Denial{Path: p, Allowed: allowed}
	executable := fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 && mayAccess(real, accessExec)
	switch {
	case allowed == AccessReadWrite || allowed == AccessDevice:
		return Denial{}, false // the rules allow it: a plain permission error
	case creating:
		if !mayAccess(real, accessWrite) {
			return Denial{}, false
		}
		target := real
		if missing != "" {
			target, d.Mkdir = missing, missing
		}
		d.Flag = grantFlag("--allow-write", target, "")
	case allowed == "" && executable, allowed == AccessRead && executable:
		d.Flag = grantFlag("--allow-exec", execTarget(real, rules), real)
	case allowed == "" && mayAccess(real, accessRead):
		d.Flag = grantFlag("--allow-read", real, "")
	case mayAccess(real, accessWrite):
		d.Flag = grantFlag("--allow-write", real, "")
	}
	if d.Flag == "" {
		return Denial{}, false
	}
	return d, true
}

// nearestExisting returns, for a path that does not exist, the nearest
// directory above it that does (resolved) and, when that is not p's own
// directory, the first directory missing below it.
func nearestExisting(p string) (existing, missing string, err error) {
	child := p
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		real, err := filepath.EvalSymlinks(d)
		if err == nil {
			if child != p {
				missing = filepath.Join(real, filepath.Base(child))
			}
			return real, missing, nil
		}
		if !errors.Is(err, os.ErrNotExist) || d == "/" {
			return "", "", err
		}
		child = d
	}
}

// grantFlag is flag with target, or with fallback where a rule on target
// would open a secret or "/": "" when neither may be named.
func grantFlag(flag, target, fallback string) string {
	for _, t := range []string{target, fallback} {
		if t != "" && t != "/" && OpensSecret(t) == "" {
			return flag + " " + t
		}
	}
	return ""
}

// execTarget is what to grant for the executable exe (resolved): exe
// itself when it runs on its own under rules, else its installation.
func execTarget(exe string, rules []Rule) string {
	if runsAlone(exe, rules) {
		return exe
	}
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "bin" {
		prefix := filepath.Dir(dir)
		home, _ := os.UserHomeDir()
		if prefix != "/" && prefix != filepath.Clean(home) && OpensSecret(prefix) == "" {
			return prefix
		}
	}
	return dir
}

// runsAlone reports whether exe needs nothing the rules do not give
// besides its own file: a script whose interpreter may be executed, an
// ELF binary that is static or whose loader may be executed and that
// names no library directory (RUNPATH, RPATH) of its own.
func runsAlone(exe string, rules []Rule) bool {
	f, err := os.Open(exe)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	head = head[:n]
	canExec := func(p string) bool {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return false
		}
		a := Covering(real, rules)
		return a == AccessReadExec || a == AccessReadWrite
	}
	if rest, ok := bytes.CutPrefix(head, []byte("#!")); ok {
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		fields := strings.Fields(string(line))
		return len(fields) > 0 && canExec(fields[0])
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return false
	}
	defer ef.Close()
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		if v, _ := ef.DynString(tag); len(v) > 0 {
			return false
		}
	}
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_INTERP {
			b := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(b, 0); err != nil {
				return false
			}
			return canExec(string(bytes.TrimRight(b, "\x00")))
		}
	}
	return true // static
}
