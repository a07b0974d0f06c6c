package release

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/version"
)

// A dockerfile is the instructions of each stage, continuation lines joined
// and comments dropped: enough of the format for the checks below, which
// fail on anything they do not understand rather than guess.
type dockerfile struct {
	stages []*stage
}

type stage struct {
	from, name string
	instrs     []instr
}

type instr struct {
	cmd  string // upper case: RUN, COPY...
	args string
	line int
}

func parseDockerfile(t *testing.T, path string) *dockerfile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	df := &dockerfile{}
	sc := bufio.NewScanner(f)
	var cur strings.Builder
	n, start := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSpace(strings.TrimSuffix(line, "\\")) + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		cur.Reset()
		in := instr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--platform=") })
			s := &stage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			df.stages = append(df.stages, s)
			continue
		}
		if len(df.stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before the first FROM", path, start, in.cmd)
			}
			continue
		}
		s := df.stages[len(df.stages)-1]
		s.instrs = append(s.instrs, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(df.stages) == 0 {
		t.Fatalf("%s: no FROM", path)
	}
	return df
}

func (df *dockerfile) stage(name string) *stage {
	for _, s := range df.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// all returns the arguments of every cmd instruction of the stage.
func (s *stage) all(cmd string) []instr {
	var out []instr
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// exec returns the JSON (exec) form of the stage's last cmd, failing on
// the shell form: a shell form ENTRYPOINT needs a shell the image lacks,
// and would not pass signals on.
func (s *stage) exec(t *testing.T, cmd string) []string {
	t.Helper()
	ins := s.all(cmd)
	if len(ins) == 0 {
		t.Fatalf("Dockerfile: the final stage has no %s", cmd)
	}
	var v []string
	if err := json.Unmarshal([]byte(ins[len(ins)-1].args), &v); err != nil {
		t.Fatalf("Dockerfile:%d: %s %s is not in exec (JSON) form: %v", ins[len(ins)-1].line, cmd, ins[len(ins)-1].args, err)
	}
	return v
}

// label returns the value of LABEL key in the stage.
func (s *stage) label(key string) string {
	for _, in := range s.all("LABEL") {
		for _, m := range regexp.MustCompile(`([A-Za-z0-9._-]+)=("(?:[^"\\]|\\.)*"|\S+)`).FindAllStringSubmatch(in.args, -1) {
			if m[1] == key {
				if v, err := strconv.Unquote(m[2]); err == nil {
					return v
				}
				return m[2]
			}
		}
	}
	return ""
}

// flag returns the value of --name=VALUE in the final stage's CMD.
func (s *stage) flag(t *testing.T, name string) string {
	t.Helper()
	for _, a := range s.exec(t, "CMD") {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func (s *stage) toolsDir(t *testing.T) string { return s.flag(t, "tools") }
func (s *stage) rootDir(t *testing.T) string  { return s.flag(t, "root") }

// user returns the uid and gid of the stage's last USER, failing unless
// there is one.
func (s *stage) user(t *testing.T) (uid, gid int) {
	t.Helper()
	us := s.all("USER")
	if len(us) == 0 {
		t.Fatal("Dockerfile: the final stage has no USER: the image would run as root")
	}
	uid, gid, err := parseUser(us[len(us)-1].args)
	if err != nil {
		t.Fatalf("Dockerfile:%d: %v", us[len(us)-1].line, err)
	}
	return uid, gid
}

// parseUser reads USER's UID:GID, refusing names: a name needs
// /etc/passwd to mean anything, and Kubernetes' runAsNonRoot can only
// check a number.
func parseUser(arg string) (uid, gid int, err error) {
	u, g, _ := strings.Cut(arg, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("USER %s: want numeric UID:GID", arg)
	}
	return uid, gid, nil
}

// secretName matches what looks like a secret in a name or a path.
var secretName = regexp.MustCompile(`(?i)(secret|token|passw|credential|private|api[_-]?key|session[_-]?key|\.key\b|\.pem\b|id_rsa|\.env\b)`)

// TestDockerfile: the image definition keeps its promises. A build stage
// runs tools/release.sh for the target platform; the final stage is
// scratch with a non-root numeric USER, runs mcp-route in exec form over
// --http on the port it EXPOSEs, wants bearer tokens from a file under
// /run (mounted at run time, never in the image), has volumes for the
// tools and the root, and copies only the build stage's file tree; no
// stage takes a secret in an ARG, ENV or COPY, or fetches with ADD.
func TestDockerfile(t *testing.T) {
	root := repoRoot(t)
	df := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	if len(df.stages) < 2 {
		t.Fatalf("Dockerfile has %d stage(s), want a build stage and the image", len(df.stages))
	}
	build := df.stage("build")
	if build == nil || !strings.HasPrefix(build.from, "golang:") {
		t.Fatalf("Dockerfile: no stage \"build\" FROM golang:...")
	}
	var release []instr
	for _, in := range build.all("RUN") {
		if strings.Contains(in.args, "tools/release.sh") {
			release = append(release, in)
		}
	}
	if len(release) != 1 || !strings.Contains(release[0].args, `MCPIPE_RELEASE_PLATFORMS="$TARGETOS/$TARGETARCH"`) {
		t.Errorf("Dockerfile: the build stage must run tools/release.sh once, for $TARGETOS/$TARGETARCH: %+v", release)
	}

	final := df.stages[len(df.stages)-1]
	if final.from != "scratch" {
		t.Errorf("Dockerfile: the image is FROM %s, want scratch (nothing but the binaries)", final.from)
	}
	if uid, gid := final.user(t); uid == 0 || gid == 0 {
		t.Errorf("Dockerfile: USER %d:%d: the image must not run as root", uid, gid)
	}
	if ep := final.exec(t, "ENTRYPOINT"); !slices.Equal(ep, []string{"/usr/local/bin/mcp-route"}) {
		t.Errorf("Dockerfile: ENTRYPOINT %q, want [/usr/local/bin/mcp-route]", ep)
	}
	addr := final.flag(t, "http")
	_, port, ok := strings.Cut(addr, ":")
	if !ok || port == "" {
		t.Fatalf("Dockerfile: CMD's --http=%q: want HOST:PORT", addr)
	}
	var exposed []string
	for _, in := range final.all("EXPOSE") {
		exposed = append(exposed, strings.Fields(in.args)...)
	}
	if !slices.Contains(exposed, port) && !slices.Contains(exposed, port+"/tcp") {
		t.Errorf("Dockerfile: CMD serves port %s, EXPOSE says %q", port, exposed)
	}
	tokens := final.flag(t, "http-token-file")
	if !strings.HasPrefix(tokens, "/run/secrets/") {
		t.Errorf("Dockerfile: CMD's --http-token-file=%q: want a file under /run/secrets, mounted at run time and out of the tools' reach", tokens)
	}
	if final.toolsDir(t) == "" || final.rootDir(t) == "" {
		t.Fatalf("Dockerfile: CMD lacks --tools= or --root=")
	}
	var volumes []string
	for _, in := range final.all("VOLUME") {
		if err := json.Unmarshal([]byte(in.args), &volumes); err != nil {
			t.Fatalf("Dockerfile:%d: VOLUME %s: want the JSON form", in.line, in.args)
		}
	}
	if !slices.Contains(volumes, final.toolsDir(t)) || !slices.Contains(volumes, final.rootDir(t)) {
		t.Errorf("Dockerfile: VOLUME %q, want the tools %s and the root %s", volumes, final.toolsDir(t), final.rootDir(t))
	}
	for _, in := range final.all("COPY") {
		f := strings.Fields(in.args)
		if !slices.Contains(f, "--from=build") || !strings.HasPrefix(f[len(f)-2], "/rootfs/") {
			t.Errorf("Dockerfile:%d: COPY %s: the image takes only the build stage's /rootfs tree", in.line, in.args)
		}
		if dest := f[len(f)-1]; strings.HasPrefix(dest, "/run") {
			t.Errorf("Dockerfile:%d: COPY into %s: secrets are mounted at run time, never baked in", in.line, dest)
		}
	}
	for _, s := range df.stages {
		for _, in := range s.instrs {
			switch in.cmd {
			case "ADD":
				t.Errorf("Dockerfile:%d: ADD %s: copy with COPY; fetch nothing unchecked at build time", in.line, in.args)
			case "ARG", "ENV":
				name, _, _ := strings.Cut(strings.Fields(in.args)[0], "=")
				if secretName.MatchString(name) {
					t.Errorf("Dockerfile:%d: %s %s: a secret in an %s stays in the image's history; mount it at run time", in.line, in.cmd, name, in.cmd)
				}
			case "COPY":
				for _, src := range strings.Fields(in.args) {
					if !strings.HasPrefix(src, "--") && secretName.MatchString(src) {
						t.Errorf("Dockerfile:%d: COPY %s looks like a secret", in.line, src)
					}
				}
			}
		}
	}
	if got := final.label("io.modelcontextprotocol.server.name"); got == "" {
		t.Errorf("Dockerfile: no LABEL io.modelcontextprotocol.server.name (the MCP registry checks it against server.json)")
	}
}

// TestDockerfileChecks: the checks above do catch a secret's name, a
// named USER and a shell-form ENTRYPOINT, and the parser joins continued
// lines: the repository's Dockerfile passes them, so this shows they are
// not vacuous.
func TestDockerfileChecks(t *testing.T) {
	for _, name := range []string{"SESSION_KEY", "HTTP_TOKEN", "tls.key", "secrets/http-tokens", "DB_PASSWORD"} {
		if !secretName.MatchString(name) {
			t.Errorf("%s is not taken for a secret", name)
		}
	}
	for _, name := range []string{"TARGETOS", "MCPIPE_COMMIT", "VERSION", "SOURCE_DATE_EPOCH", "/rootfs/", "ca-certificates.crt"} {
		if secretName.MatchString(name) {
			t.Errorf("%s is taken for a secret", name)
		}
	}
	for arg, want := range map[string]string{"root": "want numeric", "10001": "want numeric", "mcp:mcp": "want numeric", "0:0": "", "10001:10001": ""} {
		if _, _, err := parseUser(arg); (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("USER %s: %v, want %q", arg, err, want)
		}
	}
	bad := t.TempDir() + "/Dockerfile"
	if err := os.WriteFile(bad, []byte("# c\nARG X=1\nFROM --platform=$BUILDPLATFORM golang:1 AS build\nRUN a \\\n  b\nFROM scratch\nENTRYPOINT /usr/local/bin/mcp-route\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	df := parseDockerfile(t, bad)
	if len(df.stages) != 2 || df.stage("build") == nil || df.stage("build").from != "golang:1" {
		t.Fatalf("stages parsed as %+v", df.stages)
	}
	if r := df.stage("build").all("RUN"); len(r) != 1 || r[0].args != "a b" || r[0].line != 4 {
		t.Errorf("a continued RUN parsed as %+v", r)
	}
	var v []string
	if err := json.Unmarshal([]byte(df.stages[1].all("ENTRYPOINT")[0].args), &v); err == nil {
		t.Errorf("a shell-form ENTRYPOINT parsed as exec form")
	}
}

// TestDeployUsesImage: the Kubernetes example runs the image as the
// Dockerfile makes it: this version, its user, its tools and root, and a
// writable /tmp (mcp-route keeps the tools' TMPDIR there) beside the
// read-only root file system.
func TestDeployUsesImage(t *testing.T) {
	root := repoRoot(t)
	final := parseDockerfile(t, filepath.Join(root, "Dockerfile")).stages[1:]
	img := final[len(final)-1]
	yaml := string(readFile(t, filepath.Join(root, "examples", "deploy", "kubernetes", "mcp-route.yaml")))
	find := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(yaml); m != nil {
			return m[1]
		}
		return ""
	}
	if image := find(`(?m)^\s+image: (\S+)$`); !strings.HasSuffix(image, "/mcp-route:"+version.Number) {
		t.Errorf("kubernetes/mcp-route.yaml: image %q, want the Dockerfile's image, REGISTRY/mcp-route:%s", image, version.Number)
	}
	uid, gid := img.user(t)
	if find(`runAsUser: (\d+)`) != strconv.Itoa(uid) || find(`runAsGroup: (\d+)`) != strconv.Itoa(gid) {
		t.Errorf("kubernetes/mcp-route.yaml: runAsUser %s runAsGroup %s, the image's USER %d:%d", find(`runAsUser: (\d+)`), find(`runAsGroup: (\d+)`), uid, gid)
	}
	if tools, r := find(`--tools=(\S+)`), find(`--root=(\S+)`); tools != img.toolsDir(t) || r != img.rootDir(t) {
		t.Errorf("kubernetes/mcp-route.yaml: --tools=%s --root=%s, the image has %s and %s", tools, r, img.toolsDir(t), img.rootDir(t))
	}
	if find(`readOnlyRootFilesystem: (true)`) != "" && find(`mountPath: (/tmp)\}`) == "" {
		t.Errorf("kubernetes/mcp-route.yaml: a read-only root file system and no volume at /tmp: mcp-route cannot make the tools' TMPDIR")
	}
}
