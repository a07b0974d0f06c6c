package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/internal/confine"
)

// TestDeploySecretsOutOfReach: the deploy examples keep the session key
// and the bearer tokens where no confined tool reads them: the systemd
// unit as a credential (its store and /run/credentials), the Kubernetes
// Secret mounted under /run. Each secret path the files name is checked
// against every rule the tools' policy has on this machine (the system
// directories and /etc's files included) and against the --root and
// --tools the files give; /run itself must not be granted, and each
// secret lies under /run or in /etc/credstore, which confine never grants
// (a directory of /etc such as /etc/mcp-route is one --allow-read away
// from the tools).
func TestDeploySecretsOutOfReach(t *testing.T) {
	type deploy struct {
		file        string
		secrets     []string // as the file names them, %d expanded
		root, tools string
	}
	unit := string(repoFile(t, "examples/deploy/systemd/mcp-route@.service"))
	// %d is $CREDENTIALS_DIRECTORY: /run/credentials/UNIT.
	credDir := "/run/credentials/mcp-route@8081.service"
	sd := deploy{file: "systemd/mcp-route@.service"}
	for _, m := range regexp.MustCompile(`(?m)^LoadCredential=([^:\s]+):(\S+)$`).FindAllStringSubmatch(unit, -1) {
		sd.secrets = append(sd.secrets, m[2], credDir+"/"+m[1])
	}
	for _, m := range regexp.MustCompile(`--(session-key-file|http-token-file|tls-key) (\S+)`).FindAllStringSubmatch(unit, -1) {
		sd.secrets = append(sd.secrets, strings.ReplaceAll(m[2], "%d", credDir))
	}
	if m := regexp.MustCompile(`--root (\S+)`).FindStringSubmatch(unit); m != nil {
		sd.root = m[1]
	}
	if m := regexp.MustCompile(`--tools (\S+)`).FindStringSubmatch(unit); m != nil {
		sd.tools = m[1]
	}
	if len(sd.secrets) < 3 || !strings.Contains(unit, "--session-key-file %d/") {
		t.Fatalf("%s: no LoadCredential= read through %%d found (%q)", sd.file, sd.secrets)
	}

	yaml := string(repoFile(t, "examples/deploy/kubernetes/mcp-route.yaml"))
	k8s := deploy{file: "kubernetes/mcp-route.yaml"}
	for _, m := range regexp.MustCompile(`--(session-key-file|http-token-file|tls-key)=(\S+)`).FindAllStringSubmatch(yaml, -1) {
		k8s.secrets = append(k8s.secrets, m[2])
	}
	if m := regexp.MustCompile(`\{name: secrets, mountPath: (\S+),`).FindStringSubmatch(yaml); m != nil {
		k8s.secrets = append(k8s.secrets, m[1])
		for _, s := range k8s.secrets[:len(k8s.secrets)-1] {
			if filepath.Dir(s) != m[1] {
				t.Errorf("%s: %s is not in the Secret's mount %s", k8s.file, s, m[1])
			}
		}
	}
	if m := regexp.MustCompile(`--root=(\S+)`).FindStringSubmatch(yaml); m != nil {
		k8s.root = m[1]
	}
	if m := regexp.MustCompile(`--tools=(\S+)`).FindStringSubmatch(yaml); m != nil {
		k8s.tools = m[1]
	}
	if len(k8s.secrets) < 3 {
		t.Fatalf("%s: the secret flags and the Secret's mount not found (%q)", k8s.file, k8s.secrets)
	}

	within := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/") }
	for _, d := range []deploy{sd, k8s} {
		if d.root == "" || d.tools == "" {
			t.Fatalf("%s: --root or --tools not found", d.file)
		}
		plan := confine.Policy{Root: t.TempDir(), ReadExec: []string{t.TempDir()}}.Plan()
		if len(plan.Rules) < 5 {
			t.Fatalf("the policy has %d rules here: %+v", len(plan.Rules), plan)
		}
		for _, s := range append(d.secrets, "/run/x") {
			for _, r := range plan.Rules {
				if within(s, r.Path) {
					t.Errorf("%s: %s is inside %s, which confined tools may %s [%s]", d.file, s, r.Path, r.Access, r.Source)
				}
			}
			// Where no policy grants: /run (tmpfs, per boot), or the
			// credential store, which confine never grants.
			if !within(s, "/run") && !within(s, "/etc/credstore") {
				t.Errorf("%s: %s is neither under /run nor in /etc/credstore", d.file, s)
			}
			for _, p := range []string{d.root, d.tools} {
				if within(s, p) {
					t.Errorf("%s: %s is inside %s, which its tools read", d.file, s, p)
				}
			}
		}
	}
}
