// Package confinement applies mcp-route's --confine policy to its tools: it
// builds the Landlock policy (package internal/confine) from mcp-route's
// flags, proves it at start-up, and hands out the Spawn function through
// which every tool process starts (calls and --mcp-describe runs), so that
// each one is confined from its first instruction and everything it starts
// inherits the domain. mcp-route itself stays unconfined: the rules live on
// one locked OS thread (confine.Spawner) that does the forks.
//
// # The policy
//
// Read and execute: the system directories confine adds (/usr, /bin, /sbin,
// /lib*, /opt where present), every tool directory, the resolved
// target of every symlinked tool in them (mcp-stock install links to the
// mcp-stock binary elsewhere), AllowExec (--allow-exec), each tool's
// interpreter chain (see below), and Config.ProbeExe when set (the probe
// child is /bin/sh by default).
// Read only: the files of /etc and /proc confine lists (never /etc's
// secrets, never /proc/<pid>) and AllowRead.
// Read and write: the root (read only with ReadOnly) and the private
// TempDir; AllowWrite. Devices: the usual ones (confine). Nothing else:
// the rest of /etc and /proc, /run and the home directory included.
// NoNetwork denies TCP bind and connect. A tool's definition has no say:
// the policy is built from Config alone. Config.Policy().Check() is what
// no kernel makes acceptable (an AllowRead that opens /etc/shadow, an
// AllowExec inside the root): mcp-route runs it at start, in every mode.
//
// # Interpreter chains
//
// Chain (interp.go) finds, without running anything, what a tool needs
// besides its own file: its shebang interpreter, recursively (a pyenv
// shim is a bash script running pyenv, which execs the version's python),
// "#!/usr/bin/env NAME" (and env -S) looked up in the PATH the tool gets,
// symlinks followed; the installation an interpreter reads (PREFIX/lib
// of an interpreter in PREFIX/bin; a venv whole and the lib of its
// pyvenv.cfg home; pyenv's scripts and the prefix of the selected version
// only; the ELF loader and RUNPATH directories of a binary outside the
// system directories). Its grants go into Policy.ReadExec: those of every
// tool in the tool directories (with Config.Env's PATH) at start, and at
// each start of a tool whose chain was not resolved for its file, PATH,
// PYENV_VERSION and working directory (Spawn resolves it and widens the
// domain as for a new symlinked tool). The grants are the union across
// tools: all tools share one domain.
//
// Refused: any grant inside Root (read-only or not), AllowWrite or
// TempDir, where a client could write; and nothing there is read to decide
// a grant (a venv's pyvenv.cfg, a .python-version), so a client cannot
// steer one. Each refusal is logged (Warn, with the tool and path). What
// the chain cannot see statically (a program that execs another chosen at
// run time) stays denied, and explained:
//
// # Denials explained
//
// Explain (explain.go) reads a failed call's isError text for a path named
// on a "Permission denied" / "Operation not permitted" line (any path when
// the tool exited 126 or 127), and blames the confinement only when the
// policy in force does not grant the access there and the file's mode,
// checked by mcp-route itself, would: a plain permission error is left
// alone. The Denial names the flag that grants it (--allow-read,
// --allow-write or --allow-exec with the directory).
//
// # Start
//
// Start builds the policy and a spawner, then runs confine.Probe: a real
// child must be refused outside the root and allowed inside. Under Auto a
// kernel without Landlock, a spawner that cannot be built or a probe that
// fails gives a Confinement that is not in force (Enforced false, Spawn
// nil) and a Warning saying what is not enforced; a kernel that lacks only
// part of the policy (--no-network before ABI 4) gives one in force with a
// Warning naming the missing part. Under Require each of those is an
// error. Under Off nothing is built.
//
// # Reload: a tool outside the domain
//
// A domain is fixed once applied. When Spawn is asked to start a tool
// whose executable resolves outside every read-and-execute rule (a symlink
// added to a tool directory after start, pointing elsewhere), it builds a
// new spawner with that target added, probes it, and swaps it in; the old
// one is closed at once (a spawner's Start is only the fork, so nothing in
// flight still needs it). A target inside a directory the tools can write
// (the root without ReadOnly, AllowWrite, TempDir) is never added: the
// kernel then refuses the exec, and the call fails. A rebuild that fails
// keeps the old spawner: the tool cannot start, nothing is unconfined.
//
// A Confinement is safe for concurrent use.
package confinement

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpipe/mcpipe/internal/confine"
	"github.com/mcpipe/mcpipe/internal/proc"
)

var errClosed = errors.New("confinement closed: mcp-route is shutting down")

// Mode is the --confine value.
type Mode string

// The modes of --confine.
const (
	Auto    Mode = "auto"    // confine when the kernel can; otherwise say so and run unconfined
	Require Mode = "require" // confine in full, or refuse to start
	Off     Mode = "off"     // do not confine
)

// ParseMode parses a --confine value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, Require, Off:
		return m, nil
	}
	return "", fmt.Errorf("--confine %q: want auto, require or off", s)
}

// Config is what the policy is built from: mcp-route's flags.
type Config struct {
	Mode       Mode
	Root       string   // read-write, read-only with ReadOnly
	ReadOnly   bool     // --readonly: the root is read-only for the kernel too
	TempDir    string   // the tools' private TMPDIR, read-write
	ToolDirs   []string // read and execute, and the targets of their symlinks
	AllowRead  []string // --allow-read
	AllowWrite []string // --allow-write
	AllowExec  []string // --allow-exec
	NoNetwork  bool     // --no-network
	// ProbeExe is the shell confine.Probe runs as the probe child; ""
	// is /bin/sh. One outside the system directories is added to the read
	// and execute rules.
	ProbeExe string
	// Programs are files to read and execute besides ToolDirs: the
	// programs of the --upstream servers, which start on the same
	// confined spawner as the tools.
	Programs []string
	// Env is the tools' environment (their describe environment): its
	// PATH is how a "#!/usr/bin/env NAME" tool finds NAME, so the
	// interpreter chains granted up front are those the tools will run.
	Env []string
	// Logger receives routine events (Debug: a spawner rebuilt for a new
	// tool, the interpreter grants) and what an operator must see (Warn: a
	// tool the policy cannot take, a refused interpreter), with the tool,
	// exec and path as attributes; nil discards them.
	Logger *slog.Logger
}

// Policy returns the policy Config stands for on this machine now: the
// tool directories are scanned for symlinked tools, whose targets are
// added.
func (c Config) Policy() confine.Policy {
	readExec := append([]string(nil), c.ToolDirs...)
	for _, d := range c.ToolDirs {
		readExec = append(readExec, linkTargets(d)...)
	}
	for _, tc := range c.Chains() {
		for _, g := range tc.Grants {
			readExec = append(readExec, g.Path)
		}
	}
	if c.ProbeExe != "" {
		readExec = append(readExec, c.ProbeExe)
	}
	readExec = append(readExec, c.Programs...)
	return confine.Policy{
		Root:         c.Root,
		ReadOnlyRoot: c.ReadOnly,
		TempDir:      c.TempDir,
		ReadExec:     dedupe(readExec),
		AllowRead:    c.AllowRead,
		AllowWrite:   c.AllowWrite,
		AllowExec:    c.AllowExec,
		NoNetwork:    c.NoNetwork,
	}
}

// Chains returns the interpreter chain of every tool in the tool
// directories (see Chain), as it runs with Env in the root.
func (c Config) Chains() []ToolChain {
	unsafe := c.unsafe()
	var out []ToolChain
	for _, d := range c.ToolDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			p := filepath.Join(d, e.Name())
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
				continue
			}
			out = append(out, Chain(p, c.Env, c.Root, unsafe))
		}
	}
	return out
}

// unsafe are the places the tools can write, resolved: nothing there is
// granted to an interpreter chain, nor read to decide a grant. The root
// counts even when read-only: what a client wrote there before is not
// trusted either.
func (c Config) unsafe() []string {
	var out []string
	for _, p := range append([]string{c.Root, c.TempDir}, c.AllowWrite...) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// linkTargets returns the resolved targets of the symlinked executables
// directly in dir (names starting with "." are never tools).
func linkTargets(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type()&os.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		// Only an executable can be a tool: a symlink to a data file (in a
		// --resources directory, where one out of the directory is
		// refused) must not grant its target.
		if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			out = append(out, real)
		}
	}
	return out
}

func dedupe(ps []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Confinement is the confinement of one mcp-route: in force or not.
type Confinement struct {
	cfg Config
	// ready is closed once the confinement is proved or found wanting;
	// until then the fields below hold nothing to read.
	ready chan struct{}
	// warning: see Warning.
	warning string
	// unconfined: under Auto, proved not in force; tools start with
	// cmd.Start.
	unconfined bool

	// chains: the interpreter chain last resolved for each executable
	// started, with what it was resolved for (chainKey).
	chainMu sync.Mutex
	chains  map[string]chainEntry
	logged  map[string]bool // "tool\x00path" of each refusal and grant logged

	mu     sync.RWMutex
	policy confine.Policy
	sp     *confine.Spawner // nil: not in force
	report confine.Report
}

// Start builds and proves the confinement of cfg; see the package doc. The
// error (Require only) is one line saying what cannot be enforced.
//
// Under Require, Start returns once the probe has passed, so a failure is
// exit 1 before anything is served. Under Auto the spawner is built and
// probed in the background, so mcp-route's cold start to its first answer
// does not wait for the probe child: every tool start waits for the
// verdict instead (Spawn), and none starts before it. Enforced, Report,
// Warning and Close wait for it too.
func Start(cfg Config) (*Confinement, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Confinement{cfg: cfg, ready: make(chan struct{}), chains: map[string]chainEntry{}, logged: map[string]bool{}}
	if cfg.Mode == Off {
		close(c.ready)
		return c, nil
	}
	if cfg.Mode == Auto {
		// Even the plan (the tool directories scanned for links, the
		// system directories resolved) is off the start-up path.
		go func() {
			defer close(c.ready)
			c.planAndProve()
		}()
		return c, nil
	}
	err := c.planAndProve()
	close(c.ready)
	return c.orNil(err)
}

// planAndProve builds the policy and its plan, and proves it (prove);
// what cannot be enforced goes through fail.
func (c *Confinement) planAndProve() error {
	for _, tc := range c.cfg.Chains() {
		c.logChain(tc)
	}
	c.policy = c.cfg.Policy()
	plan := c.policy.Plan()
	if plan.ABI == 0 {
		why := "this kernel has no Landlock"
		if len(plan.Missing) > 0 {
			why = strings.Join(plan.Missing, "; ")
		}
		return c.fail(why)
	}
	if !plan.Complete() && c.cfg.Mode == Require {
		return c.fail("cannot be enforced in full: " + strings.Join(plan.Missing, "; "))
	}
	return c.prove()
}

func (c *Confinement) orNil(err error) (*Confinement, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// fail records that the confinement is not in force: an error under
// Require, a warning and unconfined tools under Auto.
func (c *Confinement) fail(what string) error {
	if c.cfg.Mode == Require {
		return fmt.Errorf("--confine require: %s", what)
	}
	c.unconfined = true
	c.warning = "tools are NOT confined (--confine auto): " + what +
		"; they can read and write whatever mcp-route's user can (--confine require refuses to start instead)"
	return nil
}

// prove builds the spawner and runs the probe through it.
func (c *Confinement) prove() error {
	sp, err := confine.NewSpawner(c.policy)
	if err != nil {
		return c.fail(err.Error())
	}
	if err := confine.Probe(sp, c.cfg.ProbeExe); err != nil {
		sp.Close()
		return c.fail("the start-up probe failed: " + err.Error())
	}
	c.mu.Lock()
	c.sp, c.report = sp, sp.Report()
	c.mu.Unlock()
	if len(c.report.Missing) > 0 {
		c.warning = "tools confined, but NOT enforced: " + strings.Join(c.report.Missing, "; ")
	}
	return nil
}

// Warning, when not "", is the one line an operator must see at start-up:
// what is not enforced (everything, under Auto without Landlock or when the
// probe fails; a part, such as --no-network, on an older kernel).
func (c *Confinement) Warning() string {
	<-c.ready
	return c.warning
}

// Enforced reports whether tools start confined.
func (c *Confinement) Enforced() bool {
	<-c.ready
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sp != nil
}

// Report is what the spawner enforces (zero when not in force).
func (c *Confinement) Report() confine.Report {
	<-c.ready
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.report
}

// Spawn is the function to pass as runner.Spec.Spawn, router.Options.Spawn
// and registry.Options.Spawn: nil when confinement is off or known not to
// be in force, so tools start with cmd.Start as before.
func (c *Confinement) Spawn() func(*exec.Cmd) error {
	select {
	case <-c.ready:
		if c.cfg.Mode == Off || c.unconfined {
			return nil
		}
	default: // Auto, still proving: start decides
	}
	return c.start
}

// start starts cmd on the confined thread, first widening the domain when
// cmd's executable lies outside it (see the package doc). It waits for the
// start-up verdict; under Auto a confinement found wanting starts cmd as
// is, as its warning says.
func (c *Confinement) start(cmd *exec.Cmd) error {
	<-c.ready
	if c.unconfined {
		if around := proc.ForkHook(cmd); around != nil {
			return around(cmd.Start)
		}
		return cmd.Start()
	}
	var need []string
	if target, ok := c.outside(cmd.Path); ok {
		need = append(need, target)
	}
	if chain := c.chainNeeds(cmd); len(chain) > 0 && c.anyOutside(chain) {
		need = append(need, chain...)
	}
	if len(need) > 0 {
		c.widen(need)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.sp == nil {
		return errClosed // never unconfined instead
	}
	// Start is only the fork: holding the read lock across it lets a
	// rebuild close the old spawner as soon as it has the lock.
	return c.sp.StartWith(cmd, proc.ForkHook(cmd))
}

// outside resolves path and reports whether it lies outside every read and
// execute rule of the current domain.
func (c *Confinement) outside(path string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false // the exec will say why
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return real, c.outsideLocked(real)
}

// anyOutside reports whether any of paths (resolved) lies outside every
// rule that allows execution: the usual answer, no, under the read lock,
// so that starts do not queue behind one another.
func (c *Confinement) anyOutside(paths []string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range paths {
		if c.outsideLocked(p) {
			return true
		}
	}
	return false
}

// outsideLocked reports whether real lies outside every rule that allows
// execution (read and execute, read and write); c.mu is held.
func (c *Confinement) outsideLocked(real string) bool {
	for _, r := range c.report.Rules {
		if (r.Access == confine.AccessReadExec || r.Access == confine.AccessReadWrite) && within(real, r.Path) {
			return false
		}
	}
	return true
}

// widen rebuilds the spawner with targets added to the read and execute
// rules, those the tools could write left out.
func (c *Confinement) widen(targets []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var add []string
	for _, t := range targets {
		if c.outsideLocked(t) {
			add = append(add, t)
		}
	}
	if len(add) == 0 {
		return // another call widened it meanwhile
	}
	target := strings.Join(add, " ")
	p := c.policy
	p.ReadExec = append(append([]string(nil), p.ReadExec...), add...)
	sp, err := confine.NewSpawner(p)
	if err == nil {
		if err = confine.Probe(sp, c.cfg.ProbeExe); err != nil {
			sp.Close()
		}
	}
	if err != nil {
		c.cfg.Logger.Warn("tool executable outside the confinement, and a new one could not be made: the kernel refuses to run it", slog.String("exec", target), slog.Any("error", err))
		return
	}
	if c.sp == nil { // closed meanwhile
		sp.Close()
		return
	}
	old := c.sp
	c.policy, c.sp, c.report = p, sp, sp.Report()
	old.Close()
	c.cfg.Logger.Debug("confinement rebuilt for a new tool executable", slog.String("exec", target), slog.String("report", c.report.String()))
}

// Close releases the spawner. Tools already started are not affected.
func (c *Confinement) Close() {
	<-c.ready
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sp != nil {
		c.sp.Close()
		c.sp = nil
	}
}

// Check is mcp-route --confine-check: what cfg would enforce on this
// kernel, one item per line (confine.Report.Detail), then each tool's
// interpreter chain and what it is granted or refused (ChainDetail), proved with a real
// spawner and probe, and whether --confine require would start (nil) or
// not (the reason).
func Check(cfg Config) (detail string, err error) {
	p := cfg.Policy()
	chains := ChainDetail(cfg.Chains())
	plan := p.Plan()
	if plan.ABI == 0 {
		return plan.Detail() + chains, errors.New("this kernel has no Landlock")
	}
	sp, err := confine.NewSpawner(p)
	if err != nil {
		return plan.Detail() + chains, err
	}
	defer sp.Close()
	if err := confine.Probe(sp, cfg.ProbeExe); err != nil {
		return plan.Detail() + chains, fmt.Errorf("the probe failed: %v", err)
	}
	rep := sp.Report()
	if !rep.Complete() {
		return rep.Detail() + chains, fmt.Errorf("cannot be enforced in full: %s", strings.Join(rep.Missing, "; "))
	}
	return rep.Detail() + chains, nil
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
