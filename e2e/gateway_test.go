package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
	"github.com/mcpipe/mcpipe/internal/proctest"
)

// mcp-route as a gateway: `--upstream NAME=CMD` mounts whole MCP servers
// behind one connection, each upstream tool listed as NAME__TOOL. The
// upstreams are servers we did not write: the official Go SDK's
// (interop/gosdk-server), always; the official TypeScript SDK's
// (interop/ts-server/server.cjs) and the reference
// @modelcontextprotocol/server-filesystem, from npm, when
// MCP_INTEROP_NODE_DIR names a prefix filled by interop/setup-node.sh
// (skipped otherwise, as the other interop tests are); and mcp-route itself,
// nested, composing by pipes.
//
// Downstream is the official Go SDK client, with every message mcp-route
// sent checked against the schema of the revision in use (checkWire); or
// mcp-call; or, where every answer must be seen and counted, the minimal
// JSON-RPC client of the benchmarks (benchConn), which fails on an answer
// to no request.
//
// Timings that the issue sets goals for (an in-flight call answered within
// 100 ms of its upstream's death; tools/list within --upstream-timeout of a
// hung upstream) are measured and logged; the assertions bound them far
// above the goal, so that a loaded machine cannot fail them, while a call
// that hangs until its own timeout still fails.

// gatewayTimeout is the per-call --timeout of the gateways under test: the
// bound a hanging call would reach. Fast failures are asserted to come well
// under it.
const gatewayTimeout = 30 * time.Second

// shellQuote quotes s for --upstream's shell-like split.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// upstreamFlag is "--upstream", "NAME=CMD" with every word quoted.
func upstreamFlag(name string, argv ...string) []string {
	var q []string
	for _, a := range argv {
		q = append(q, shellQuote(a))
	}
	return []string{"--upstream", name + "=" + strings.Join(q, " ")}
}

// gatewayDir is a fresh directory (symlinks resolved) for mcp-route's
// --root and working directory. Whatever an upstream reads goes inside it:
// mcp-route confines its upstreams as it does its tools.
func gatewayDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A gateway is an mcp-route with upstreams under the Go SDK client.
type gateway struct {
	t      *testing.T
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	stderr *proctest.Buffer
	wire   *proctest.Buffer
}

// startGateway runs mcp-route --root dir --timeout gatewayTimeout ARGS in
// dir under the Go SDK client, asking for revision rev ("" is the SDK's
// default, the modern era).
func startGateway(t *testing.T, ctx context.Context, dir, rev string, copts *mcp.ClientOptions, args ...string) *gateway {
	t.Helper()
	return startGatewayEnv(t, ctx, dir, baseEnv(), rev, copts, args...)
}

// startGatewayEnv is startGateway with mcp-route's environment env.
func startGatewayEnv(t *testing.T, ctx context.Context, dir string, env []string, rev string, copts *mcp.ClientOptions, args ...string) *gateway {
	t.Helper()
	base := []string{"--root", dir, "--timeout", gatewayTimeout.String(), "--grace", "500ms"}
	cmd := exec.Command(routeBin(t), append(base, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	g := &gateway{t: t, cmd: cmd, stderr: &proctest.Buffer{}, wire: &proctest.Buffer{}}
	cmd.Stderr = g.stderr
	transport := &mcp.LoggingTransport{
		Transport: &mcp.CommandTransport{Command: cmd, TerminateDuration: waitLong},
		Writer:    g.wire,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-e2e", Version: "1.0.0"}, copts)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if cmd.Process != nil {
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			}
			if t.Failed() || os.Getenv("E2E_LOG") != "" {
				t.Logf("mcp-route stderr:\n%s\nwire:\n%s", g.stderr.String(), g.wire.String())
			}
		})
	}
	if err != nil {
		t.Fatalf("connect to mcp-route %q: %v\nstderr:\n%s", args, err, g.stderr.String())
	}
	g.cs = cs
	return g
}

// close ends the session (EOF on mcp-route's stdin), which must make
// mcp-route exit 0, and checks every message it sent against the schema.
func (g *gateway) close() {
	g.t.Helper()
	if err := g.cs.Close(); err != nil {
		g.t.Errorf("close: mcp-route did not exit cleanly on EOF: %v", err)
	}
	checkWire(g.t, g.cs.InitializeResult().ProtocolVersion, goSDKWire(g.t, g.wire.String()))
}

// call calls tool and returns the outcome.
func (g *gateway) call(ctx context.Context, tool string, args map[string]any) outcome {
	g.t.Helper()
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	return goSDKOutcome(g.t, res, err)
}

// tools lists the tools, following cursors.
func (g *gateway) tools(ctx context.Context) []codec.Tool {
	g.t.Helper()
	var all []*mcp.Tool
	for tool, err := range g.cs.Tools(ctx, nil) {
		if err != nil {
			g.t.Fatalf("tools/list: %v", err)
		}
		all = append(all, tool)
	}
	return goSDKTools(g.t, all)
}

// toolNames lists the names, sorted.
func (g *gateway) toolNames(ctx context.Context) []string {
	g.t.Helper()
	n := names(g.tools(ctx))
	slices.Sort(n)
	return n
}

// waitTools lists until every name in want is listed (a gateway loads its
// upstreams in the background) and returns the last list.
func (g *gateway) waitTools(ctx context.Context, want ...string) []codec.Tool {
	g.t.Helper()
	for {
		tools := g.tools(ctx)
		got := names(tools)
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return slices.Contains(got, w) })
		if len(missing) == 0 {
			return tools
		}
		if ctx.Err() != nil {
			g.t.Fatalf("tools %v never listed (have %v)", missing, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// upstreamPID calls NAME__pid (gosdk-server's pid tool) and returns the
// process id, or 0 and the outcome when the call did not succeed.
func (g *gateway) upstreamPID(ctx context.Context, name string) (int, outcome) {
	g.t.Helper()
	o := g.call(ctx, name+"__pid", nil)
	if o.result == nil || o.result.IsError {
		return 0, o
	}
	var out struct{ PID int }
	if err := json.Unmarshal(o.result.StructuredContent, &out); err != nil || out.PID == 0 {
		g.t.Fatalf("%s__pid: %v", name, o)
	}
	return out.PID, o
}

func prefixed(name string, tools ...string) []string {
	var out []string
	for _, t := range tools {
		out = append(out, name+"__"+t)
	}
	return out
}

// gosdkTools are interop/gosdk-server's tools, sorted.
var gosdkTools = []string{"add", "addtool", "fail", "greet", "mixed", "pid", "region", "roots", "slow"}

func findTool(t *testing.T, tools []codec.Tool, name string) codec.Tool {
	t.Helper()
	i := slices.IndexFunc(tools, func(tool codec.Tool) bool { return tool.Name == name })
	if i < 0 {
		t.Fatalf("no tool %s in %v", name, names(tools))
	}
	return tools[i]
}

// checkGosdkThrough runs gosdk-server's calls through a gateway that mounts
// it as name: definitions kept, text, structured, every content type, a tool
// error, an unknown tool.
func checkGosdkThrough(t *testing.T, ctx context.Context, g *gateway, name string) {
	t.Helper()
	tools := g.waitTools(ctx, prefixed(name, gosdkTools...)...)
	add := findTool(t, tools, name+"__add")
	var in struct {
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if add.Description != "Add two integers." || json.Unmarshal(add.InputSchema, &in) != nil ||
		in.Properties["a"].Type != "integer" || in.Properties["a"].Description != "first addend" ||
		!strings.Contains(string(add.OutputSchema), `"sum"`) {
		t.Errorf("%s__add lost its definition: %+v in %s out %s", name, add, add.InputSchema, add.OutputSchema)
	}
	rev := g.cs.InitializeResult().ProtocolVersion
	if pid := findTool(t, tools, name+"__pid"); rev >= codec.Rev20250326 &&
		(pid.Annotations == nil || pid.Annotations.ReadOnlyHint == nil || !*pid.Annotations.ReadOnlyHint) {
		t.Errorf("%s__pid lost its readOnlyHint: %+v", name, pid)
	}
	if problem := wantText("Hello, Ann!")(g.call(ctx, name+"__greet", map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("greet: %s", problem)
	}
	o := g.call(ctx, name+"__add", map[string]any{"a": 2, "b": 40})
	var sum struct{ Sum *int }
	if o.result == nil || o.result.IsError || json.Unmarshal(o.result.StructuredContent, &sum) != nil || sum.Sum == nil || *sum.Sum != 42 {
		t.Errorf("add: want structuredContent {sum: 42}; got %v", o)
	}
	if problem := wantIsError("on purpose")(g.call(ctx, name+"__fail", map[string]any{"reason": "on purpose"})); problem != "" {
		t.Errorf("fail: %s", problem)
	}
	o = g.call(ctx, name+"__mixed", nil)
	var kinds []string
	if o.result != nil {
		for _, c := range o.result.Content {
			kinds = append(kinds, c.Type)
		}
	}
	if want := []string{"text", "image", "audio", "resource_link", "resource"}; o.result == nil || o.result.IsError ||
		!slices.Equal(kinds, want) || !strings.Contains(string(o.result.StructuredContent), `"kinds":5`) {
		t.Errorf("mixed: want content %v and structuredContent {kinds: 5}; got %v", want, o)
	} else if b, _ := json.Marshal(o.result.Content); !strings.Contains(string(b), `"data":"iVBORw0KGgo="`) ||
		!strings.Contains(string(b), `"uri":"file:///mixed.txt"`) || !strings.Contains(string(b), `"text":"embedded"`) {
		t.Errorf("mixed: content changed on the way: %s", b)
	}
	if o := g.call(ctx, name+"__nope", nil); o.result != nil || o.code != int(codec.CodeInvalidParams) {
		t.Errorf("unknown tool: want a JSON-RPC error -32602; got %v", o)
	}
	if problem := wantText("Hello, Bo!")(g.call(ctx, name+"__greet", map[string]any{"name": "Bo"})); problem != "" {
		t.Errorf("greet after the errors: %s", problem)
	}
}

// TestGatewayGoSDK: the Go SDK's server behind mcp-route, reached by a
// modern and a legacy client, the server itself modern or legacy-only.
func TestGatewayGoSDK(t *testing.T) {
	for _, tc := range []struct {
		name, rev  string
		serverArgs []string
	}{
		{"modern-client", "", nil},
		{"legacy-client", codec.Rev20251125, nil},
		{"legacy-server", "", []string{"-legacy"}},
		{"legacy-both", codec.Rev20250618, []string{"-legacy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			g := startGateway(t, ctx, dir, tc.rev, nil, upstreamFlag("gosdk", append([]string{goSDKServer(t)}, tc.serverArgs...)...)...)
			checkGosdkThrough(t, ctx, g, "gosdk")
			g.close()
		})
	}
}

// TestGatewayNodeUpstreams: the TypeScript SDK's server and
// server-filesystem behind one mcp-route, beside the Go SDK's.
func TestGatewayNodeUpstreams(t *testing.T) {
	node := nodeDir(t)
	// The real file: under Bazel the runfiles hold a symlink, and the
	// confinement's rule for the directory holding it would not cover
	// the file it points to.
	script, err := filepath.EvalSymlinks("interop/ts-server/server.cjs")
	if err == nil {
		script, err = filepath.Abs(script)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	modules := filepath.Join(node, "node_modules")
	args := slices.Concat(
		upstreamFlag("ts", "env", "NODE_PATH="+modules, "node", script),
		upstreamFlag("fs", filepath.Join(modules, ".bin", "mcp-server-filesystem"), files),
		upstreamFlag("gosdk", goSDKServer(t)),
		// The upstreams are confined to --root; node reads its modules
		// and the script from outside it.
		[]string{"--allow-read", node, "--allow-read", filepath.Dir(script)},
	)
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			g := startGateway(t, ctx, dir, rev, nil, args...)
			g.waitTools(ctx, "ts__shout", "ts__divide", "fs__read_text_file", "fs__write_file", "fs__list_directory", "gosdk__add")
			if problem := wantText("HEY")(g.call(ctx, "ts__shout", map[string]any{"text": "hey"})); problem != "" {
				t.Errorf("ts__shout: %s", problem)
			}
			o := g.call(ctx, "ts__divide", map[string]any{"a": 1, "b": 4})
			var q struct{ Quotient float64 }
			if o.result == nil || o.result.IsError || json.Unmarshal(o.result.StructuredContent, &q) != nil || q.Quotient != 0.25 {
				t.Errorf("ts__divide: want structuredContent {quotient: 0.25}; got %v", o)
			}
			if problem := wantIsError("division by zero")(g.call(ctx, "ts__divide", map[string]any{"a": 1, "b": 0})); problem != "" {
				t.Errorf("ts__divide by zero: %s", problem)
			}
			if problem := wantText("alpha\n")(g.call(ctx, "fs__read_text_file", map[string]any{"path": filepath.Join(files, "a.txt")})); problem != "" {
				t.Errorf("fs__read_text_file: %s", problem)
			}
			if o := g.call(ctx, "fs__read_text_file", map[string]any{"path": "/etc/passwd"}); o.result == nil || !o.result.IsError ||
				!strings.Contains(o.firstText(), "denied") {
				t.Errorf("fs__read_text_file outside its directory: want an isError saying denied; got %v", o)
			}
			b := filepath.Join(files, "b-"+cmpOr(rev, "modern")+".txt")
			if o := g.call(ctx, "fs__write_file", map[string]any{"path": b, "content": "beta"}); o.result == nil || o.result.IsError {
				t.Errorf("fs__write_file: %v", o)
			}
			if got, err := os.ReadFile(b); err != nil || string(got) != "beta" {
				t.Errorf("fs__write_file wrote %q (%v), want beta", got, err)
			}
			if problem := wantText("Hello, Cy!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Cy"})); problem != "" {
				t.Errorf("gosdk__greet: %s", problem)
			}
			g.close()
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// nestedRoute returns the upstream argv of an inner mcp-route serving the
// tools of interopRouteTools (under dir, so that the outer mcp-route's
// confinement lets the inner one read them), its tools directory and root.
func nestedRoute(t *testing.T, dir string, extra ...string) (argv []string, tools, root string) {
	t.Helper()
	tools, root = interopRouteTools(t)
	inner := filepath.Join(dir, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*string{&tools, &root} {
		moved := filepath.Join(inner, filepath.Base(*d))
		if err := os.Rename(*d, moved); err != nil {
			t.Fatal(err)
		}
		*d = moved
	}
	argv = append([]string{routeBin(t), "--tools", tools, "--root", root, "--poll", "100ms", "--name", "inner"}, extra...)
	return argv, tools, root
}

// TestGatewayNested: mcp-route mounted in mcp-route. The inner one's tools
// come through as inner__TOOL: text, structured, a crash as isError, a
// schema violation the inner one refuses.
func TestGatewayNested(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			argv, _, _ := nestedRoute(t, dir)
			g := startGateway(t, ctx, dir, rev, nil, upstreamFlag("inner", argv...)...)
			tools := g.waitTools(ctx, prefixed("inner", interopRouteToolNames...)...)
			if got := names(tools); !slices.Equal(got, prefixed("inner", interopRouteToolNames...)) {
				t.Errorf("tools %v, want %v", got, prefixed("inner", interopRouteToolNames...))
			}
			checkEchoToolAs(t, g.cs.InitializeResult().ProtocolVersion, tools, "inner__echo")
			for _, c := range interopRouteCalls() {
				if c.name == "nope" {
					continue // not a tool of the inner one: see TestGatewayGoSDK
				}
				if problem := c.check(g.call(ctx, "inner__"+c.name, c.args)); problem != "" {
					t.Errorf("inner__%s %v: %s", c.name, c.args, problem)
				}
			}
			// Calls in flight at once through both hops.
			var wg sync.WaitGroup
			out := make([]outcome, interopParallel)
			for i := range out {
				wg.Go(func() { out[i] = g.call(ctx, "inner__echo", map[string]any{"text": parallelText(i)}) })
			}
			wg.Wait()
			for i, o := range out {
				if problem := wantText(parallelText(i))(o); problem != "" {
					t.Errorf("call %d in flight: %s; got %v", i, problem, o)
				}
			}
			g.close()
		})
	}
}

// checkEchoToolAs is checkEchoTool for the echo tool listed as name.
func checkEchoToolAs(t *testing.T, rev string, tools []codec.Tool, name string) {
	t.Helper()
	var renamed []codec.Tool
	for _, tool := range tools {
		if tool.Name == name {
			tool.Name = "echo"
			renamed = append(renamed, tool)
		}
	}
	checkEchoTool(t, rev, renamed)
}

// TestGatewayMcpCall: mcp-call lists, describes and calls NAME__TOOL tools
// like any other.
func TestGatewayMcpCall(t *testing.T) {
	dir := gatewayDir(t)
	server := append([]string{"--server-stderr", "discard", "--", routeBin(t), "--root", dir}, upstreamFlag("gosdk", goSDKServer(t))...)
	run := func(stdin string, argv ...string) callOut { return mcpCall(t, stdin, append(argv, server...)...) }
	// The first tools/list may come before the upstream has answered; a
	// gateway serves what it has by then, so ask until it is there.
	var r callOut
	for range 100 {
		if r = run("", "tools"); r.code == 0 && strings.Contains(r.stdout, "gosdk__add") {
			break
		}
	}
	got := strings.Fields(r.stdout)
	slices.Sort(got)
	if r.code != 0 || !slices.Equal(got, prefixed("gosdk", gosdkTools...)) {
		t.Errorf("tools: want %v; got %+v", prefixed("gosdk", gosdkTools...), r)
	}
	r = run("", "describe", "gosdk__add")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "gosdk__add\n") || !strings.Contains(r.stdout, "Add two integers.") ||
		!strings.Contains(r.stdout, "a (integer, required)") || !strings.Contains(r.stdout, "first addend") || !strings.Contains(r.stdout, "sum (integer") {
		t.Errorf("describe gosdk__add: %+v", r)
	}
	r = run("", "--json", "describe", "gosdk__pid")
	var def struct {
		Name        string
		Annotations struct{ ReadOnlyHint bool }
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &def) != nil || def.Name != "gosdk__pid" || !def.Annotations.ReadOnlyHint {
		t.Errorf("describe --json gosdk__pid: %+v", r)
	}
	// Arguments are coerced by the upstream tool's schema, as kept.
	r = run("", "--structured", "call", "gosdk__add", "a=2", "b=40")
	var sum struct{ Sum int }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &sum) != nil || sum.Sum != 42 {
		t.Errorf("call gosdk__add: %+v", r)
	}
	if r = run("", "call", "gosdk__add", "a=two", "b=1"); r.code != 2 || !strings.Contains(r.stderr, `argument "a"`) {
		t.Errorf("call gosdk__add a=two: want exit 2 naming argument a; got %+v", r)
	}
	if r = run("", "call", "gosdk__fail", "reason=on purpose"); r.code != 1 || !strings.Contains(r.stderr, "on purpose") {
		t.Errorf("call gosdk__fail: %+v", r)
	}
	if r = run("greet name=Bo\nadd a=1 b=1\n", "script"); r.code != 2 || !strings.Contains(r.stderr, `no tool named "greet"`) {
		t.Errorf("script with the upstream's own names: want them refused; got %+v", r)
	}
	if r = run("gosdk__greet name=Bo\ngosdk__greet name=Cy\n", "script"); r.code != 0 || r.stdout != "Hello, Bo!\nHello, Cy!\n" {
		t.Errorf("script: %+v", r)
	}
}

// TestGatewayFlags: a bad --upstream stops mcp-route at once, exit 2, with
// an error naming the flag and what is wanted; the same NAME twice too.
func TestGatewayFlags(t *testing.T) {
	dir := gatewayDir(t)
	bin := goSDKServer(t)
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error, besides "--upstream"
	}{
		{"no-equals", []string{"--upstream", "gosdk"}, "NAME="},
		{"empty-name", []string{"--upstream", "=" + bin}, "NAME"},
		{"underscore", []string{"--upstream", "go_sdk=" + bin}, "go_sdk"},
		{"dot", []string{"--upstream", "go.sdk=" + bin}, "go.sdk"},
		{"too-long", []string{"--upstream", strings.Repeat("n", 33) + "=" + bin}, strings.Repeat("n", 33)},
		{"empty-cmd", []string{"--upstream", "gosdk="}, "gosdk"},
		{"unbalanced-quote", []string{"--upstream", "gosdk=" + bin + " 'open"}, "gosdk"},
		{"twice", []string{"--upstream", "gosdk=" + bin, "--upstream", "gosdk=" + bin}, "gosdk"},
		{"timeout", []string{"--upstream", "gosdk=" + bin, "--upstream-timeout", "0s"}, "upstream-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxTimeout(t)
			cmd := exec.CommandContext(ctx, routeBin(t), append([]string{"--root", dir}, tc.args...)...)
			cmd.Env = baseEnv()
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := exitStatus(cmd.ProcessState, err); code != 2 || stdout.Len() != 0 ||
				!strings.Contains(stderr.String(), "upstream") || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("mcp-route %q: exit %d, stdout %q, stderr %q; want exit 2 and an error naming --upstream and %q",
					tc.args, code, stdout.String(), stderr.String(), tc.want)
			}
		})
	}
	// The harmless counterpart: the longest NAME, with a dash and digits,
	// and a CMD with a quoted word.
	ctx := ctxTimeout(t)
	name := "Up-2" + strings.Repeat("x", 28)
	g := startGateway(t, ctx, dir, "", nil, "--upstream", name+"="+shellQuote(bin)+" '-legacy'")
	if problem := wantText("Hello, Ann!")(g.call(ctx, g.waitToolsName(ctx, name+"__greet"), map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("%s__greet: %s", name, problem)
	}
	g.close()
}

// waitToolsName is waitTools for one name, which it returns.
func (g *gateway) waitToolsName(ctx context.Context, name string) string {
	g.t.Helper()
	g.waitTools(ctx, name)
	return name
}

// TestGatewayNames: upstream tool names that cannot be served as they
// come. A local tool and an upstream tool of the same name clash, and the
// clash is reported; a NAME__TOOL that breaks the 2025-11-25 tool-name
// rules or is longer than 64 characters is left out with a log line, the
// longest allowed one served.
func TestGatewayNames(t *testing.T) {
	t.Run("local-clash", func(t *testing.T) {
		ctx := ctxTimeout(t)
		dir := gatewayDir(t)
		tools := filepath.Join(dir, "tools")
		if err := os.Mkdir(tools, 0o755); err != nil {
			t.Fatal(err)
		}
		root := filepath.Join(dir, "root")
		if err := os.Mkdir(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tools, "gosdk__add.json"), []byte(def("gosdk__add", "", "")), 0o644); err != nil {
			t.Fatal(err)
		}
		proctest.WriteExecutable(t, filepath.Join(tools, "gosdk__add"), []byte("#!/bin/sh\necho local\n"))
		g := startGateway(t, ctx, root, "", nil, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), []string{"--tools", tools})...)
		g.waitTools(ctx, "gosdk__greet")
		// Reported, and neither served: which one a client meant cannot
		// be known.
		proctest.Eventually(t, func() string {
			for l := range strings.Lines(g.stderr.String()) {
				if strings.Contains(l, "gosdk__add") && strings.Contains(l, "local tool") && strings.Contains(l, "neither is served") {
					return ""
				}
			}
			return "no log line reports the clash of the local gosdk__add with gosdk's add"
		})
		if got := names(g.tools(ctx)); slices.Contains(got, "gosdk__add") {
			t.Errorf("gosdk__add listed despite the clash: %v", got)
		}
		if o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2}); o.result != nil && !o.result.IsError {
			t.Errorf("a call to the clashing gosdk__add ran: %v", o)
		}
		if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
			t.Errorf("gosdk__greet beside the clash: %s", problem)
		}
		g.close()
	})
	t.Run("left-out", func(t *testing.T) {
		ctx := ctxTimeout(t)
		dir := gatewayDir(t)
		name := strings.Repeat("u", 32)
		longest := strings.Repeat("x", 64-len(name)-2) // NAME__xxx: 64 characters
		g := startGateway(t, ctx, dir, "", nil, upstreamFlag(name, goSDKServer(t))...)
		g.waitTools(ctx, name+"__addtool")
		for _, tool := range []string{"has space", "tab\tname", longest + "y", "ok-tool", longest} {
			if problem := wantText("added " + tool)(g.call(ctx, name+"__addtool", map[string]any{"name": tool})); problem != "" {
				t.Fatalf("addtool %q: %s", tool, problem)
			}
		}
		got := names(g.waitTools(ctx, name+"__"+longest, name+"__ok-tool"))
		for _, bad := range []string{"has space", "tab\tname", longest + "y"} {
			full := name + "__" + bad
			if slices.Contains(got, full) {
				t.Errorf("%q listed", full)
			}
			// The text log quotes the name: a tab is \t there. The line
			// may be written just after the list is served.
			logged := strings.ReplaceAll(bad, "\t", `\t`)
			n := 0
			proctest.Eventually(t, func() string {
				n = 0
				for l := range strings.Lines(g.stderr.String()) {
					if strings.Contains(l, "left out") && strings.Contains(l, logged) {
						n++
					}
				}
				if n == 0 {
					return fmt.Sprintf("no log line names the left-out %q:\n%s", full, g.stderr.String())
				}
				return ""
			})
			t.Logf("%q left out with %d log lines", full, n)
		}
		if problem := wantText(longest + " here")(g.call(ctx, name+"__"+longest, nil)); problem != "" {
			t.Errorf("the 64-character name: %s", problem)
		}
		g.close()
	})
	t.Run("readonly", func(t *testing.T) {
		ctx := ctxTimeout(t)
		dir := gatewayDir(t)
		g := startGateway(t, ctx, dir, "", nil, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), []string{"--readonly"})...)
		g.waitTools(ctx, "gosdk__pid")
		if got := g.toolNames(ctx); !slices.Equal(got, []string{"gosdk__pid"}) {
			t.Errorf("--readonly lists %v, want only gosdk__pid (the one tool annotated readOnlyHint)", got)
		}
		if o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2}); o.result != nil && !o.result.IsError {
			t.Errorf("--readonly: gosdk__add ran: %v", o)
		}
		if pid, o := g.upstreamPID(ctx, "gosdk"); pid == 0 {
			t.Errorf("--readonly: gosdk__pid: %v", o)
		}
		g.close()
	})
}
