package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// allPlatforms is what tools/release.sh builds by default.
var allPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// repoRoot is the source tree: the runfiles under Bazel, else the directory
// holding go.mod above the package's.
func repoRoot(t *testing.T) string {
	t.Helper()
	if src, ws := os.Getenv("TEST_SRCDIR"), os.Getenv("TEST_WORKSPACE"); src != "" && ws != "" {
		return filepath.Join(src, ws)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// needSourceTree skips a test that builds from the checkout where it
// cannot: Bazel's sandbox has neither the tree nor a writable Go cache.
func needSourceTree(t *testing.T) {
	t.Helper()
	if os.Getenv("TEST_SRCDIR") != "" {
		t.Skip("builds the release from the source tree with go, git and tar, which Bazel's sandbox lacks: run go test -run " + t.Name() + " ./tools/release/")
	}
	if testing.Short() {
		t.Skip("builds the release (minutes): not with -short")
	}
	for _, c := range []string{"go", "git", "tar", "gzip"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s not found on PATH: tools/release.sh needs it", c)
		}
	}
}

// runRelease runs tools/release.sh OUT VERSION and returns its stderr and
// exit status.
func runRelease(t *testing.T, root, out string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "tools", "release.sh"), append([]string{out}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("tools/release.sh %s: %v, %s", strings.Join(append([]string{out}, args...), " "), err, time.Since(start).Round(time.Second))
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return stderr.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stderr.String(), 0
}

// gitHead is the commit release.sh stamps: HEAD, with -dirty when the tree
// has changes or files git does not ignore.
func gitHead(t *testing.T, root string) (commit string, epoch int64) {
	t.Helper()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	commit = git("rev-parse", "HEAD")
	if git("status", "--porcelain") != "" {
		commit += "-dirty"
	}
	epoch, err := strconv.ParseInt(git("log", "-1", "--format=%ct", "HEAD"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return commit, epoch
}

// TestReleaseScript: two runs of tools/release.sh give the archives of
// every platform asked for, a SHA256SUMS that verifies, binaries stamped
// with the version and commit, and the same bytes.
func TestReleaseScript(t *testing.T) {
	needSourceTree(t)
	root := repoRoot(t)
	platforms := allPlatforms
	if p := os.Getenv("MCPIPE_RELEASE_PLATFORMS"); p != "" {
		platforms = strings.Fields(strings.ReplaceAll(p, ",", " "))
	}
	commit, epoch := gitHead(t, root)
	const version = "9.8.7-test.1" // not internal/version's: the stamp must show
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	if stderr, code := runRelease(t, root, a, version); code != 0 {
		t.Fatalf("tools/release.sh exited %d:\n%s", code, stderr)
	}

	// Exactly the archives asked for, and SHA256SUMS.
	var want []string
	for _, p := range platforms {
		want = append(want, "mcpipe_"+version+"_"+strings.ReplaceAll(p, "/", "_")+".tar.gz")
	}
	slices.Sort(want)
	got := listDir(t, a)
	wantFiles := append(slices.Clone(want), "SHA256SUMS")
	slices.Sort(wantFiles)
	if !slices.Equal(got, wantFiles) {
		t.Fatalf("%s holds %q, want %q and SHA256SUMS", a, got, want)
	}

	// SHA256SUMS verifies, with every archive on it once.
	sums := readFile(t, filepath.Join(a, "SHA256SUMS"))
	var listed []string
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: line %q is not \"HASH  NAME\"", sc.Text())
		}
		h := sha256.Sum256(readFile(t, filepath.Join(a, name)))
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s: listed %s, is %x", name, sum, h)
		}
		listed = append(listed, name)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %q, want %q", listed, want)
	}

	// Each archive: one directory named after it, the binaries and the
	// legal files, owned by 0:0, dated at the commit.
	host := runtime.GOOS + "/" + runtime.GOARCH
	for _, p := range platforms {
		goos, _, _ := strings.Cut(p, "/")
		name := "mcpipe_" + version + "_" + strings.ReplaceAll(p, "/", "_")
		bins := []string{"mcp-call", "mcp-frame", "mcp-jail", "mcp-route", "mcp-stock"}
		exe := ""
		if goos == "windows" {
			bins, exe = []string{"mcp-call", "mcp-frame"}, ".exe"
		}
		wantNames := []string{name + "/", name + "/LICENSE", name + "/NOTICE", name + "/README.md"}
		for _, bin := range bins {
			wantNames = append(wantNames, name+"/"+bin+exe)
		}
		slices.Sort(wantNames)
		dest := filepath.Join(tmp, "x", name)
		names := untar(t, filepath.Join(a, name+".tar.gz"), dest, epoch)
		if !slices.Equal(names, wantNames) {
			t.Errorf("%s.tar.gz holds %q, want %q (in this order)", name, names, wantNames)
			continue
		}
		for _, f := range []string{"LICENSE", "NOTICE", "README.md"} {
			if !bytes.Equal(readFile(t, filepath.Join(dest, name, f)), readFile(t, filepath.Join(root, f))) {
				t.Errorf("%s/%s differs from the repository's", name, f)
			}
		}
		for _, bin := range bins {
			path := filepath.Join(dest, name, bin+exe)
			if goos == "linux" {
				checkStatic(t, path)
			}
			if p != host {
				continue
			}
			out, err := exec.Command(path, "--version").Output()
			if w := bin + " " + version + " (commit " + commit + ")\n"; err != nil || string(out) != w {
				t.Errorf("%s --version: %q (%v), want %q", bin, out, err, w)
			}
		}
	}

	// A second run: the same bytes.
	if stderr, code := runRelease(t, root, b, version); code != 0 {
		t.Fatalf("second run: tools/release.sh exited %d:\n%s", code, stderr)
	}
	if got := listDir(t, b); !slices.Equal(got, listDir(t, a)) {
		t.Fatalf("second run wrote %q, the first %q", got, listDir(t, a))
	}
	for _, f := range listDir(t, a) {
		if !bytes.Equal(readFile(t, filepath.Join(a, f)), readFile(t, filepath.Join(b, f))) {
			t.Errorf("%s differs between two runs: the release is not reproducible", f)
		}
	}
}

// TestReleaseScriptRefuses: what the script refuses, before it builds
// anything, with exit 2 and a line that says what to give.
func TestReleaseScriptRefuses(t *testing.T) {
	needSourceTree(t)
	root := repoRoot(t)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "old.tar.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{t.TempDir(), "v1.2.3"}, "", "VERSION v1.2.3 is not a semantic version: give 1.2.3"},
		{[]string{t.TempDir(), "1.2"}, "", "VERSION 1.2 is not a semantic version"},
		// The version goes into -ldflags: a space would add linker flags.
		{[]string{t.TempDir(), "1.2.3 -X main.evil=1"}, "", "is not a semantic version"},
		{[]string{"--help"}, "", "usage: tools/release.sh OUTDIR [VERSION]"},
		{[]string{full}, "", "is not empty: give a new or empty directory"},
		{[]string{t.TempDir()}, "MCPIPE_RELEASE_PLATFORMS=plan9/amd64", "platform plan9/amd64 is not released"},
		{[]string{t.TempDir()}, "MCPIPE_COMMIT=$(id)", "MCPIPE_COMMIT $(id) is not a git hash"},
		{[]string{t.TempDir()}, "SOURCE_DATE_EPOCH=yesterday", "SOURCE_DATE_EPOCH yesterday is not a number"},
		{nil, "", "usage: tools/release.sh OUTDIR [VERSION]"},
	} {
		cmd := exec.Command(filepath.Join(root, "tools", "release.sh"), c.args...)
		cmd.Dir = root
		if c.env != "" {
			cmd.Env = append(os.Environ(), c.env)
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.want) || strings.Count(string(out), "\n") != 1 {
			t.Errorf("release.sh %q %s: %v, %q; want exit 2 and one line with %q", c.args, c.env, err, out, c.want)
		}
	}
	if got := listDir(t, full); !slices.Equal(got, []string{"old.tar.gz"}) {
		t.Errorf("the non-empty OUTDIR was changed: %q", got)
	}
}

// untar extracts the archive into dest, checking each header, and returns
// the entry names in archive order.
func untar(t *testing.T, archive, dest string, epoch int64) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("%s: gzip header keeps name %q and time %v (want gzip -n)", archive, zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != epoch {
			t.Errorf("%s: %s: uid %d gid %d time %v, want 0 0 %v", archive, h.Name, h.Uid, h.Gid, h.ModTime, time.Unix(epoch, 0))
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || strings.Contains(filepath.Base(h.Name), "mcp-") {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: %s: mode %o, want %o", archive, h.Name, h.Mode, wantMode)
		}
		p := filepath.Join(dest, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, os.FileMode(h.Mode)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s: %s: type %c, want only directories and regular files", archive, h.Name, h.Typeflag)
		}
	}
	return names
}

// checkStatic fails unless path is an ELF executable that loads no shared
// library and names no interpreter.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v): want CGO_ENABLED=0", path, p.Type)
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
