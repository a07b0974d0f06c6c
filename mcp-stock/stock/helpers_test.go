package stock

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpipe/mcpipe/mcp-route/tool"
	"github.com/mcpipe/mcpipe/mcp-stock/shexec"
)

// result is one in-process call of a tool.
type result struct {
	Stdout, Stderr string
	Code           int
}

// call runs the tool name in-process with MCP_ROOT=root and the arguments
// args (a JSON object) and returns what it wrote and its exit status.
func call(t *testing.T, name, root, args string, env ...string) result {
	t.Helper()
	tl, ok := Lookup(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	e := map[string]string{"MCP_ROOT": root, "MCP_TOOL": name}
	if name == "sh_exec" {
		// These tests run sh_exec in the test process, which no kernel
		// confinement covers: they opt in, as an operator would
		// (TestShExecUnconfined shows the refusal without it).
		e[shexec.UnconfinedEnv] = "1"
	}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	var out, errb bytes.Buffer
	code := tool.Invoke(tl.Exec(), []byte(args), e, &out, &errb)
	return result{out.String(), errb.String(), code}
}

// ok calls the tool and fails the test unless it succeeded.
func ok(t *testing.T, name, root, args string, env ...string) string {
	t.Helper()
	r := call(t, name, root, args, env...)
	if r.Code != 0 {
		t.Fatalf("%s %s: exit %d, stderr %q", name, args, r.Code, r.Stderr)
	}
	return r.Stdout
}

// fails calls the tool, fails the test unless it failed with exit 1, and
// returns its stderr.
func fails(t *testing.T, name, root, args string, env ...string) string {
	t.Helper()
	r := call(t, name, root, args, env...)
	if r.Code != 1 {
		t.Fatalf("%s %s: exit %d, want 1; stdout %q stderr %q", name, args, r.Code, r.Stdout, r.Stderr)
	}
	if r.Stdout != "" {
		t.Errorf("%s %s: failed call wrote to stdout: %q", name, args, r.Stdout)
	}
	return r.Stderr
}

// failsWith is fails, and checks that stderr contains want.
func failsWith(t *testing.T, want, name, root, args string, env ...string) {
	t.Helper()
	if stderr := fails(t, name, root, args, env...); !strings.Contains(stderr, want) {
		t.Errorf("%s %s: stderr %q, want it to contain %q", name, args, stderr, want)
	}
}

// okJSON calls a json-result tool and decodes its output into v.
func okJSON(t *testing.T, v any, name, root, args string, env ...string) {
	t.Helper()
	out := ok(t, name, root, args, env...)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s %s: output %q: %v", name, args, out, err)
	}
}

// tree makes files under a new temporary root: "name" → contents; a
// name ending in "/" is a directory; contents starting with "->" make a
// symlink to the rest.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(content, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// argsJSON builds an arguments object from key, value pairs.
func argsJSON(t *testing.T, kv ...any) string {
	t.Helper()
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pathCase is what a "json" tool must return for {"path": path}.
type pathCase[T comparable] struct {
	path string
	want T
}

// okJSONPaths calls the "json" tool name with each case's path and checks
// that its output decodes (strictly, see okJSON) to the case's want.
func okJSONPaths[T comparable](t *testing.T, name, root string, cases []pathCase[T]) {
	t.Helper()
	for _, c := range cases {
		var got T
		okJSON(t, &got, name, root, argsJSON(t, "path", c.path))
		if got != c.want {
			t.Errorf("%s %s: %+v, want %+v", name, c.path, got, c.want)
		}
	}
}

// outputCase is the output a text tool must write for args.
type outputCase struct{ args, want string }

// okOutputs calls the text tool name with each case's arguments and checks
// its output.
func okOutputs(t *testing.T, name, root string, cases []outputCase) {
	t.Helper()
	for _, c := range cases {
		if got := ok(t, name, root, c.args); got != c.want {
			t.Errorf("%s %s: %q, want %q", name, c.args, got, c.want)
		}
	}
}
