package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is what a confined process may touch. Paths may be relative
// (to the working directory) and may be symlinks: each is resolved once,
// when the rules are built, and the rule applies to what it resolved to.
// The system directories and devices are added by the package.
type Policy struct {
	// Root is read-write (read-only when ReadOnlyRoot); it is also the
	// working directory of Exec.
	Root         string
	ReadOnlyRoot bool
	// TempDir is read-write: the private TMPDIR of the server. Optional.
	TempDir string
	// ReadExec are read and execute: tool directories, the targets of
	// their symlinks (files or directories), extra executables.
	ReadExec []string
	// AllowRead are read-only (--allow-read).
	AllowRead []string
	// AllowWrite are read-write (--allow-write).
	AllowWrite []string
	// AllowExec are read and execute (--allow-exec). Each must lie
	// outside Root and every AllowWrite (a client could write an
	// executable there): Plan and Check refuse it with a
	// *WritableExecError.
	AllowExec []string
	// Grants are more places, each with its access (AccessRead or
	// AccessReadExec) and its Source label, for callers that derive
	// them (a tool's interpreter and its installation). A read+exec
	// grant must lie outside the writable places, as AllowExec.
	Grants []Grant
	// NoNetwork denies TCP bind and connect (Landlock ABI >= 4), and by
	// the seccomp filter UDP, raw, packet and other non-TCP sockets but
	// Unix and netlink ones, MPTCP, TCP Fast Open and io_uring (see the
	// package doc).
	NoNetwork bool
}

// Grant is one place of Policy.Grants.
type Grant struct {
	Path   string
	Access string // AccessRead or AccessReadExec
	Source string // the Rule.Source label, e.g. "interpreter"
}

// Devices are the device files every policy can read and write. Not
// /dev/tty: through it a confined process reaches the terminal of whoever
// started mcp-route (mcp-call in a shell), and TIOCSTI types a command
// into that shell, to run unconfined once the session ends; it could also
// read what is typed there.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"}

// Access names used in Rule.Access.
const (
	AccessReadExec  = "read+exec"
	AccessRead      = "read"
	AccessReadWrite = "read+write"
	AccessDevice    = "device"
)

// Rule is one path the policy opens, as resolved on this machine.
type Rule struct {
	Path   string // absolute, symlinks resolved
	Access string // AccessReadExec, AccessRead, AccessReadWrite or AccessDevice
	File   bool   // the path is not a directory: only file rights apply
	// Source is why it is there: "system" (SystemReadExec), "etc"
	// (SystemRead), "proc" (ProcRead), "device", "root", "tmp", "tool",
	// "allow-read", "allow-write", "allow-exec", or a Grant's Source; a
	// path named more than once has one rule, with every reason joined
	// by '+' ("root+tool").
	Source string
}

// Report is what is (Spawner.Report) or would be (Policy.Plan) enforced on
// this kernel.
type Report struct {
	ABI   int    // Landlock ABI version in use; 0: none
	Rules []Rule // every path opened, in order: system, devices, policy
	// NoNetwork: TCP bind and connect are denied.
	NoNetwork bool
	// NoCapabilities: the confined processes hold no capability (every
	// set empty, the bounding set too when mcp-route could drop it),
	// even when mcp-route runs as root.
	NoCapabilities bool
	// Seccomp: the system call filter is in force (mount, unshare,
	// chroot, bpf, namespaces... refused; with NoNetwork also raw,
	// packet and UDP sockets).
	Seccomp bool
	// ScopedSignals: a confined process cannot signal processes outside
	// its domain. ScopedAbstractSockets: nor connect to abstract Unix
	// sockets created outside it. Both need ABI 6 (and the kernel fix
	// Landlock calls erratum 2).
	ScopedSignals, ScopedAbstractSockets bool
	// Missing lists what the policy asks and this kernel cannot enforce,
	// e.g. "no-network needs Landlock ABI 4 (Linux 6.7)". A report with
	// ABI 0 or anything Missing is not Complete.
	Missing []string
	// Limits lists protections this kernel lacks that the policy does
	// not ask for by name (informational).
	Limits []string
	// Skipped lists policy paths that do not exist, with the reason; no
	// rule was made for them.
	Skipped []string
	// Verified is set by NewSpawner once the effect was seen on its
	// thread (Probe then checks a real child); a Plan is never verified.
	Verified bool
}

// Complete reports whether everything the policy asks is enforceable on
// this kernel: the test for mcp-route --confine require.
func (r Report) Complete() bool { return r.ABI > 0 && len(r.Missing) == 0 }

// String is the report on one line, for a start-up log.
func (r Report) String() string {
	if r.ABI == 0 {
		return "not confined: " + strings.Join(r.Missing, "; ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "landlock ABI %d", r.ABI)
	if r.Verified {
		b.WriteString(" (verified)")
	}
	for _, a := range []string{AccessReadExec, AccessRead, AccessReadWrite, AccessDevice} {
		var ps []string
		for _, rl := range r.Rules {
			if rl.Access == a {
				ps = append(ps, rl.Path)
			}
		}
		if len(ps) > 0 {
			fmt.Fprintf(&b, "; %s %s", a, strings.Join(ps, " "))
		}
	}
	b.WriteString("; everything else denied")
	if r.NoNetwork {
		b.WriteString("; tcp bind+connect denied")
	}
	if r.NoCapabilities {
		b.WriteString("; no capabilities")
	}
	if r.Seccomp {
		b.WriteString("; syscall filter")
	}
	if r.ScopedSignals {
		b.WriteString("; signals scoped")
	}
	if r.ScopedAbstractSockets {
		b.WriteString("; abstract sockets scoped")
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "; NOT ENFORCED: %s", strings.Join(r.Missing, "; "))
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "; skipped: %s", strings.Join(r.Skipped, "; "))
	}
	return b.String()
}

// Detail is the report one item per line, for mcp-route --confine-check.
func (r Report) Detail() string {
	var b strings.Builder
	if r.ABI == 0 {
		b.WriteString("landlock: not available\n")
	} else {
		fmt.Fprintf(&b, "landlock: ABI %d\n", r.ABI)
	}
	for _, rl := range r.Rules {
		kind := ""
		if rl.File {
			kind = " (file)"
		}
		fmt.Fprintf(&b, "allow %-10s %s%s  [%s]\n", rl.Access, rl.Path, kind, rl.Source)
	}
	b.WriteString("deny everything else on the file system\n")
	for _, rl := range r.Rules {
		if strings.Contains(rl.Source, "proc") {
			// The private pid namespace (a /proc of its own) is not used:
			// it costs an exec per start (see mcp-route's README). Say
			// what of the host's /proc is open.
			b.WriteString("proc: the host's /proc, its global files above only; /proc/self and every /proc/<pid> denied (no private pid namespace: it would cost an exec per tool start)\n")
			break
		}
	}
	yes := func(ok bool, what string) {
		if ok {
			fmt.Fprintf(&b, "deny %s\n", what)
		}
	}
	yes(r.NoNetwork, "tcp bind and connect; udp, raw and packet sockets")
	yes(r.NoCapabilities, "every capability (bounding, effective, permitted, inheritable, ambient)")
	yes(r.Seccomp, "mount, unshare, setns, chroot, pivot_root, bpf, perf_event_open, keyctl, kexec, modules, clone with namespace flags (clone3: ENOSYS) and the like (seccomp)")
	yes(r.ScopedSignals, "signals to processes outside the domain")
	yes(r.ScopedAbstractSockets, "abstract unix sockets outside the domain")
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "NOT ENFORCED: %s\n", m)
	}
	for _, m := range r.Limits {
		fmt.Fprintf(&b, "limit: %s\n", m)
	}
	for _, m := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", m)
	}
	return b.String()
}

// Plan returns what would be enforced for p on this kernel. It touches
// the file system only to resolve paths; it applies nothing.
func (p Policy) Plan() Report {
	pl, err := p.plan(ABI(), errata())
	if err != nil {
		r := pl.report
		r.Missing = append(r.Missing, err.Error())
		return r
	}
	return pl.report
}

// plan is a Report plus the Landlock masks that implement it.
type plan struct {
	report     Report
	handledFS  uint64
	handledNet uint64
	// filter: install the seccomp filter; filterErr: why it could not
	// be installed on the thread (set by restrictThread).
	filter    bool
	filterErr error
	// dropCaps: drop every capability on the thread.
	dropCaps bool
	scoped   uint64
	masks    []uint64 // one per report.Rules entry
	// root: Policy.Root got a rule, its own or one shared with another
	// name of the same place.
	root bool
}

// Rights per ABI version; only what the kernel knows may be asked.
const (
	fsRead     = accessFSReadFile | accessFSReadDir
	fsReadExec = fsRead | accessFSExecute
	fsFile     = accessFSExecute | accessFSWriteFile | accessFSReadFile | accessFSTruncate | accessFSIoctlDev
	fsDevice   = accessFSReadFile | accessFSWriteFile | accessFSIoctlDev
	// fsMakeDevice is never granted: a device node made in a writable
	// place opens by its path there, so root (CAP_MKNOD) could make one
	// for the disk or /dev/kmsg in the root and read or write it.
	fsMakeDevice = accessFSMakeChar | accessFSMakeBlock
)

// fsAll is every file-system right ABI abi knows. Newer rights (ABI 9
// and later) are left unhandled, so they stay allowed as before.
func fsAll(abi int) uint64 {
	switch {
	case abi <= 0:
		return 0
	case abi == 1:
		return 1<<13 - 1
	case abi == 2:
		return 1<<14 - 1
	case abi <= 4:
		return 1<<15 - 1
	default:
		return 1<<16 - 1
	}
}

// errScopeFix is Landlock erratum 2: signals between threads of one
// process are always allowed. Without it a scoped thread of ours could
// not signal the rest of this process, so scoping is not used.
const errScopeFix = 0x2

// accessRank orders the Access labels by how much they grant, to label a
// rule that merges two grants neither of which holds the other.
var accessRank = map[string]int{AccessRead: 1, AccessReadExec: 2, AccessDevice: 3, AccessReadWrite: 4}

var errRootAll = errors.New(`a policy that opens "/" opens everything; confinement could not be proven`)

func (p Policy) plan(abi, errata int) (*plan, error) {
	pl := &plan{filter: true, dropCaps: true}
	r := &pl.report
	r.ABI = abi
	if abi <= 0 {
		r.Missing = append(r.Missing, "Landlock is not available on this kernel (Linux 5.13 or later with landlock in the lsm= list)")
	}
	all := fsAll(abi)
	pl.handledFS = all
	writable := all &^ fsMakeDevice
	seen := map[string]int{}
	never := neverPlaces()
	add := func(path, access, source string, mask uint64, missingOK bool) error {
		if path == "" {
			return nil
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return fmt.Errorf("%s %s: %v", source, path, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			if !missingOK || !errors.Is(err, os.ErrNotExist) {
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s %s: %v", source, path, err))
			}
			return nil
		}
		if real == "/" {
			return fmt.Errorf("%s %s: %w", source, path, errRootAll)
		}
		builtin := source == "system" || source == "etc" || source == "proc"
		if n := overlap(real, never); n != "" {
			if builtin {
				// A distribution whose curated file leads to a secret:
				// left out, and said.
				r.Skipped = append(r.Skipped, fmt.Sprintf("%s %s: leads to %s, which is never granted", source, path, n))
				return nil
			}
			return &NeverError{Source: source, Path: path, Secret: n}
		}
		fi, err := os.Stat(real)
		if err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s %s: %v", source, path, err))
			return nil
		}
		file := !fi.IsDir()
		mask &= all
		if file {
			mask &= fsFile
		}
		if builtin && pl.covered(real, mask) {
			// /bin is /usr/bin on a merged /usr, /etc/localtime leads
			// into /usr/share/zoneinfo: the wider rule covers it.
			return nil
		}
		if source == "root" {
			pl.root = true
		}
		if i, ok := seen[real]; ok {
			// The same place named twice (the root also a tool
			// directory, or an --allow-write): one rule with both
			// grants, labelled by the wider, and both reasons.
			rl, old := &r.Rules[i], pl.masks[i]
			pl.masks[i] |= mask
			switch {
			case mask&^old == 0: // nothing new: keep the label
			case old&^mask == 0 || accessRank[access] > accessRank[rl.Access]:
				rl.Access = access
			}
			if !slices.Contains(strings.Split(rl.Source, "+"), source) {
				rl.Source += "+" + source
			}
			return nil
		}
		seen[real] = len(r.Rules)
		r.Rules = append(r.Rules, Rule{Path: real, Access: access, File: file, Source: source})
		pl.masks = append(pl.masks, mask)
		return nil
	}
	var err error
	try := func(e error) {
		if err == nil {
			err = e
		}
	}
	try(p.checkExec())
	for _, d := range SystemReadExec {
		try(add(d, AccessReadExec, "system", fsReadExec, true))
	}
	for _, d := range expand(SystemRead) {
		try(add(d, AccessRead, "etc", fsRead, true))
	}
	for _, d := range ProcRead {
		try(add(d, AccessRead, "proc", fsRead, true))
	}
	for _, d := range Devices {
		try(add(d, AccessDevice, "device", fsDevice, true))
	}
	if p.ReadOnlyRoot {
		try(add(p.Root, AccessRead, "root", fsRead, false))
	} else {
		try(add(p.Root, AccessReadWrite, "root", writable, false))
	}
	try(add(p.TempDir, AccessReadWrite, "tmp", writable, false))
	for _, d := range p.ReadExec {
		try(add(d, AccessReadExec, "tool", fsReadExec, false))
	}
	for _, d := range p.AllowRead {
		try(add(d, AccessRead, "allow-read", fsRead, false))
	}
	for _, d := range p.AllowWrite {
		try(add(d, AccessReadWrite, "allow-write", writable, false))
	}
	for _, d := range p.AllowExec {
		try(add(d, AccessReadExec, "allow-exec", fsReadExec, false))
	}
	for _, g := range p.Grants {
		mask := uint64(fsRead)
		if g.Access == AccessReadExec {
			mask = fsReadExec
		}
		try(add(g.Path, g.Access, g.Source, mask, false))
	}

	if abi > 0 {
		if abi < 3 {
			r.Missing = append(r.Missing, "truncate(2) of files outside the policy is denied from Landlock ABI 3 (Linux 6.2)")
		}
		if abi < 5 {
			r.Limits = append(r.Limits, "ioctl on devices is not restricted before ABI 5 (Linux 6.10)")
		}
	}
	if p.NoNetwork {
		switch {
		case abi >= 4:
			pl.handledNet = accessNetBindTCP | accessNetConnectTCP
			r.NoNetwork = true
			r.Limits = append(r.Limits, "no-network does not cover pathname Unix sockets (abstract ones are scoped from ABI 6) nor a TCP listen without bind (inbound only, on a port the kernel picks)")
		default:
			r.Missing = append(r.Missing, "no-network needs Landlock ABI 4 (Linux 6.7)")
		}
	}
	switch {
	case abi >= 6 && errata&errScopeFix != 0:
		pl.scoped = scopeSignal | scopeAbstractUnixSocket
		r.ScopedSignals, r.ScopedAbstractSockets = true, true
	case abi >= 6:
		r.Limits = append(r.Limits, "signal and abstract-socket scoping left off: this kernel lacks the fix for Landlock erratum 2")
	case abi > 0:
		r.Limits = append(r.Limits, "signals and abstract unix sockets outside the domain are scoped from ABI 6 (Linux 6.12)")
	}
	return pl, err
}

// NeverError is the refusal of a policy path that would open one of the
// places of Never: the path is at or below it, or above it (a rule
// grants the whole hierarchy below a directory).
type NeverError struct {
	Source string // "allow-read", "root", ... as in Rule.Source
	Path   string // as given
	Secret string // the place of Never it would open, resolved
}

func (e *NeverError) Error() string {
	return fmt.Sprintf("%s %s: would let confined programs read %s, which holds secrets and is never granted; name the files that are needed instead", e.Source, e.Path, e.Secret)
}

// WritableExecError is the refusal of a read+exec path (AllowExec, or a
// Grant with AccessReadExec) inside a place the confined programs can
// write: they could put a program there and run it.
type WritableExecError struct {
	Source, Path string // the exec path, as given
	Place        string // the writable place, as given
	PlaceSource  string // "root" or "allow-write"
}

func (e *WritableExecError) Error() string {
	return fmt.Sprintf("%s %s: inside %s %s, which confined programs can write: a client could put a program there and run it; name a directory outside it", e.Source, e.Path, e.PlaceSource, e.Place)
}

// Check refuses what no kernel would make acceptable: a path that opens a
// place of Never (*NeverError), a read+exec path inside a writable place
// (*WritableExecError), a policy that opens "/". Paths that do not exist
// are not an error here (the Report lists them as Skipped). It is what
// Plan, NewSpawner and Exec refuse first; a caller can run it to fail at
// start-up with one clear error, whatever the kernel.
func (p Policy) Check() error {
	_, err := p.plan(0, 0)
	return err
}

// checkExec refuses AllowExec and read+exec Grants inside Root or an
// AllowWrite, by the path as given and as resolved.
func (p Policy) checkExec() error {
	type place struct{ source, path string }
	var writable []place
	if p.Root != "" {
		writable = append(writable, place{"root", p.Root})
	}
	for _, w := range p.AllowWrite {
		writable = append(writable, place{"allow-write", w})
	}
	type exe struct{ source, path string }
	var exes []exe
	for _, d := range p.AllowExec {
		exes = append(exes, exe{"allow-exec", d})
	}
	for _, g := range p.Grants {
		if g.Access == AccessReadExec {
			exes = append(exes, exe{g.Source, g.Path})
		}
	}
	for _, x := range exes {
		for _, w := range writable {
			if inPlace(x.path, w.path) {
				return &WritableExecError{Source: x.source, Path: x.path, Place: w.path, PlaceSource: w.source}
			}
		}
	}
	return nil
}

// InWritable returns the place of p confined programs can write (Root,
// AllowWrite) that path lies in, by the path as given or as resolved; ""
// when none. Callers that derive read+exec grants use it to leave out
// what Check would refuse.
func (p Policy) InWritable(path string) string {
	places := p.AllowWrite
	if p.Root != "" {
		places = append([]string{p.Root}, places...)
	}
	for _, w := range places {
		if inPlace(path, w) {
			return w
		}
	}
	return ""
}

// inPlace reports whether path, as given (made absolute) or with its
// symlinks resolved, is place or lies below it, place taken both ways too.
func inPlace(path, place string) bool {
	forms := func(p string) []string {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil
		}
		out := []string{abs}
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			out = append(out, real)
		}
		return out
	}
	for _, a := range forms(path) {
		for _, b := range forms(place) {
			if within(a, b) {
				return true
			}
		}
	}
	return false
}

// overlap returns the first of places (resolved paths) that real is at,
// below or above; "" when none.
func overlap(real string, places []string) string {
	for _, n := range places {
		if within(real, n) || within(n, real) {
			return n
		}
	}
	return ""
}

// within reports whether p is dir or lies below it (both clean and
// absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// covered reports whether path is at or beneath a rule of pl.
func (pl *plan) covered(path string, need uint64) bool {
	for i, rl := range pl.report.Rules {
		if pl.masks[i]&need != need {
			continue
		}
		if path == rl.Path || (!rl.File && strings.HasPrefix(path, strings.TrimSuffix(rl.Path, "/")+"/")) {
			return true
		}
	}
	return false
}

// LookPath finds file the way execvp would after a chdir to dir: a name
// with a slash is taken as is, others are searched in env's PATH (ours
// if env has none); relative results are relative to dir ("" is the
// current directory). It is what Exec will run.
func LookPath(dir, file string, env []string) (string, error) {
	in := func(p string) string {
		if dir != "" && !filepath.IsAbs(p) {
			return filepath.Join(dir, p)
		}
		return p
	}
	if strings.Contains(file, "/") {
		return checkExecutable(in(file))
	}
	pathVar, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar, found = v, true
		}
	}
	if !found {
		pathVar = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		if p, err := checkExecutable(in(filepath.Join(d, file))); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("confine: %s: not found in PATH", file)
}

func checkExecutable(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("confine: %w", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("confine: %s: not an executable file", p)
	}
	return filepath.Abs(p)
}

// ExecError is Exec's error when the domain was in force and execve of
// Path failed: the command, not the confinement, is at fault.
type ExecError struct {
	Path string
	Err  error
}

func (e *ExecError) Error() string { return "confine: exec " + e.Path + ": " + e.Err.Error() }

func (e *ExecError) Unwrap() error { return e.Err }

// IncompleteError is Exec's error when the confinement, as checked, does
// not enforce all the policy asks and the caller did not accept that;
// nothing was exec'd.
type IncompleteError struct {
	Missing []string // as in Report.Missing
}

func (e *IncompleteError) Error() string {
	return "confine: not enforced: " + strings.Join(e.Missing, "; ")
}
