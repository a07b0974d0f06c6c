package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// gatewayDir makes the directories of one gateway: dir (mcp-route's --root
// and working directory) with everything an upstream needs inside it, since
// mcp-route confines its upstreams to their root.
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
	base := []string{"--root", dir, "--timeout", gatewayTimeout.String(), "--grace", "500ms"}
	cmd := exec.Command(routeBin(t), append(base, args...)...)
	cmd.Dir = dir
	cmd.Env = baseEnv()
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

// TestGatewayUpstreamKilled: an upstream killed (SIGKILL) in the middle of a
// call. The call gets isError at once, naming the upstream and with its
// stderr tail; the upstream is restarted after its backoff, in its own
// process group, and serves again; the gateway and its other upstream
// never stop serving.
func TestGatewayUpstreamKilled(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			started := make(chan struct{}, 16)
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				if req.Params.ProgressToken == "doomed" {
					select {
					case started <- struct{}{}:
					default:
					}
				}
			}}
			g := startGateway(t, ctx, dir, rev, copts, slices.Concat(
				// -announce: a line on stderr, which the death notice
				// must carry (its stderr tail).
				upstreamFlag("gosdk", goSDKServer(t), "-announce"),
				upstreamFlag("other", goSDKServer(t)))...)
			g.waitTools(ctx, "gosdk__slow", "gosdk__pid", "other__greet")
			pid, o := g.upstreamPID(ctx, "gosdk")
			if pid == 0 {
				t.Fatalf("gosdk__pid: %v", o)
			}
			if p, ok := proctest.Lookup(pid); !ok || p.PGID != pid {
				t.Errorf("upstream %d is not the leader of its own process group: %+v", pid, p)
			}

			type answer struct {
				o  outcome
				at time.Time
			}
			done := make(chan answer, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 100000}}
				p.SetProgressToken("doomed")
				res, err := g.cs.CallTool(ctx, p)
				done <- answer{goSDKOutcome(t, res, err), time.Now()}
			}()
			select {
			case <-started: // the upstream is working on it
			case a := <-done:
				t.Fatalf("slow answered before it was killed: %v", a.o)
			case <-ctx.Done():
				t.Fatal("no progress from gosdk__slow")
			}
			killed := time.Now()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var a answer
			select {
			case a = <-done:
			case <-ctx.Done():
				t.Fatal("the call in flight was never answered after its upstream died")
			}
			took := a.at.Sub(killed)
			t.Logf("in-flight call answered %v after SIGKILL of its upstream (goal: 100ms)", took)
			if problem := wantIsError("upstream gosdk died", fmt.Sprintf("serving as %d", pid))(a.o); problem != "" {
				t.Errorf("the call in flight: %s; got %v", problem, a.o)
			}
			// Far above the goal, far below the call's own timeout: the
			// answer came from the death, not from the timeout.
			if took > gatewayTimeout/3 {
				t.Errorf("the call in flight took %v after its upstream died (timeout %v): it waited, not failed at once", took, gatewayTimeout)
			}
			// The other upstream never stopped.
			if problem := wantText("Hello, Ann!")(g.call(ctx, "other__greet", map[string]any{"name": "Ann"})); problem != "" {
				t.Errorf("other__greet while gosdk restarts: %s", problem)
			}
			// Until it is back, its calls fail fast; then it serves again,
			// as a new process in a new group.
			var newPID, fastFails int
			for newPID == 0 {
				start := time.Now()
				newPID, o = g.upstreamPID(ctx, "gosdk")
				if newPID != 0 {
					break
				}
				fastFails++
				if problem := wantIsError("upstream gosdk is restarting", "retry in")(o); problem != "" {
					t.Fatalf("a call while gosdk restarts: %s; got %v", problem, o)
				}
				if d := time.Since(start); d > gatewayTimeout/3 {
					t.Errorf("a call while gosdk restarts took %v: it waited, not failed at once", d)
				}
				if ctx.Err() != nil {
					t.Fatal("gosdk never came back")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("gosdk back as %d after %v; %d calls failed fast meanwhile", newPID, time.Since(killed), fastFails)
			if newPID == pid {
				t.Errorf("gosdk__pid still answers from the killed process %d", pid)
			}
			if p, ok := proctest.Lookup(newPID); !ok || p.PGID != newPID {
				t.Errorf("restarted upstream %d is not the leader of its own process group: %+v", newPID, p)
			}
			if problem := wantText("Hello, Bo!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Bo"})); problem != "" {
				t.Errorf("gosdk__greet after the restart: %s", problem)
			}
			g.close()
			proctest.WaitGroupGone(t, newPID)
		})
	}
}

// TestGatewayUpstreamDiesChildHoldsStdout: an upstream whose own child
// holds its stdin and stdout (gosdk-server -spawn-stdio, as a launcher's
// child does) dies by SIGKILL mid-call. Its stdout stays open, so only the
// process's exit tells that it died: the call must still get isError at
// once, not at its timeout, and the child must go with the upstream's
// group.
func TestGatewayUpstreamDiesChildHoldsStdout(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	started := make(chan struct{}, 1)
	copts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		select {
		case started <- struct{}{}:
		default:
		}
	}}
	g := startGateway(t, ctx, dir, "", copts, upstreamFlag("gosdk", goSDKServer(t), "-spawn-stdio")...)
	g.waitTools(ctx, "gosdk__slow")
	pid, o := g.upstreamPID(ctx, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %v", o)
	}
	if n := len(proctest.Group(t, pid)); n != 2 {
		t.Fatalf("want gosdk-server and its sleep in group %d; got %s", pid, proctest.Describe(proctest.Group(t, pid)))
	}
	type answer struct {
		o  outcome
		at time.Time
	}
	done := make(chan answer, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 100000}}
		p.SetProgressToken("doomed")
		res, err := g.cs.CallTool(ctx, p)
		done <- answer{goSDKOutcome(t, res, err), time.Now()}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("no progress from gosdk__slow")
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a := <-done
	took := a.at.Sub(killed)
	t.Logf("in-flight call answered %v after SIGKILL of its upstream, whose child holds its stdout: %v", took, a.o)
	if problem := wantIsError("upstream gosdk died")(a.o); problem != "" || took > gatewayTimeout/3 {
		t.Errorf("the call in flight: want isError \"upstream gosdk died\" at once (timeout %v); got %v after %v", gatewayTimeout, a.o, took)
	}
	proctest.WaitGroupGone(t, pid)
	g.close()
}

// TestGatewayUpstreamDown: an upstream that cannot start again. Its tools
// stay listed from the last good list, its calls fail fast, the log says
// why it is down, and once it can start it is back.
func TestGatewayUpstreamDown(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("gosdk", goSDKServer(t), "-require", ok)...)
	before := g.waitTools(ctx, prefixed("gosdk", gosdkTools...)...)
	pid, o := g.upstreamPID(ctx, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %v", o)
	}
	if err := os.Remove(ok); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The log says why (the failed start's stderr), once it has tried.
	proctest.Eventually(t, func() string {
		if !strings.Contains(g.stderr.String(), "cannot start: "+ok+" is missing") {
			return "the log never says why gosdk cannot start (its stderr: \"cannot start: ... is missing\")"
		}
		return ""
	})
	if got := names(g.tools(ctx)); !slices.Equal(got, names(before)) {
		t.Errorf("tools while gosdk is down: %v, want the last good list %v", got, names(before))
	}
	for range 3 {
		start := time.Now()
		o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2})
		if problem := wantIsError("upstream gosdk is restarting", "retry in")(o); problem != "" {
			t.Errorf("a call while gosdk is down: %s; got %v", problem, o)
		}
		if d := time.Since(start); d > gatewayTimeout/3 {
			t.Errorf("a call while gosdk is down took %v: it waited, not failed at once", d)
		}
	}
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		o := g.call(ctx, "gosdk__add", map[string]any{"a": 1, "b": 2})
		if o.result != nil && !o.result.IsError {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("gosdk never came back after it could start again: %v", o)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("gosdk back %v after it could start again", time.Since(back))
	g.close()
}

// TestGatewayHungUpstream: an upstream that never answers initialize (nor
// anything else; it ignores SIGTERM and EOF too) beside one that works.
// tools/list answers within --upstream-timeout with the working one's
// tools, calls to them go through, and shutdown kills the hung one's whole
// process group.
func TestGatewayHungUpstream(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	hung := filepath.Join(dir, "hung.sh")
	proctest.WriteExecutable(t, hung, []byte(`#!/bin/sh
trap '' TERM
echo $$ > "$1"
sleep 3600 &
sleep 3600
`))
	pidFile := filepath.Join(dir, "hung.pid")
	const bound = 500 * time.Millisecond
	start := time.Now()
	g := startGateway(t, ctx, dir, "", nil, slices.Concat(
		upstreamFlag("hung", hung, pidFile),
		upstreamFlag("gosdk", goSDKServer(t)),
		[]string{"--upstream-timeout", bound.String()})...)
	hungPID := proctest.WaitPIDFile(t, pidFile)
	// The first lists may come before gosdk has answered (a slow start on a
	// loaded machine); each must still come within the bound.
	var took time.Duration
	for {
		begin := time.Now()
		got := g.toolNames(ctx)
		took = time.Since(begin)
		if took > bound+10*time.Second {
			t.Errorf("tools/list took %v with a hung upstream (--upstream-timeout %v)", took, bound)
		}
		if slices.Contains(got, "gosdk__add") {
			if slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "hung__") }) {
				t.Errorf("tools of the hung upstream listed: %v", got)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("gosdk's tools never listed beside the hung upstream: %v", got)
		}
	}
	t.Logf("tools/list answered in %v (%v after start) with a hung upstream, --upstream-timeout %v", took, time.Since(start), bound)
	for i := range 3 {
		begin := time.Now()
		if problem := wantText(fmt.Sprintf("Hello, %d!", i))(g.call(ctx, "gosdk__greet", map[string]any{"name": strconv.Itoa(i)})); problem != "" {
			t.Errorf("gosdk__greet beside a hung upstream: %s", problem)
		}
		begin2 := time.Now()
		g.toolNames(ctx)
		t.Logf("call %v, tools/list %v", begin2.Sub(begin), time.Since(begin2))
	}
	if o := g.call(ctx, "hung__anything", nil); o.result == nil && o.code != int(codec.CodeInvalidParams) {
		t.Errorf("a call to the hung upstream: want an isError or -32602, got %v", o)
	} else if o.result != nil && !o.result.IsError {
		t.Errorf("a call to the hung upstream succeeded: %v", o)
	}
	g.close()
	proctest.WaitGroupGone(t, hungPID)
}

// TestGatewayServerRequests: a request from an upstream to its client
// (roots/list, which the Go SDK's server sends in a legacy session) gets a
// clean JSON-RPC error from mcp-route, which the upstream's tool reports as
// its isError result; the call does not hang and the next one is served.
func TestGatewayServerRequests(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("gosdk", goSDKServer(t), "-legacy")...)
	g.waitTools(ctx, "gosdk__roots")
	start := time.Now()
	o := g.call(ctx, "gosdk__roots", nil)
	t.Logf("gosdk__roots: %v after %v", o, time.Since(start))
	if problem := wantIsError("roots/list", "method not found", "no sampling, elicitation or roots")(o); problem != "" {
		t.Errorf("gosdk__roots: %s", problem)
	}
	if d := time.Since(start); d > gatewayTimeout/3 {
		t.Errorf("gosdk__roots took %v: its roots/list waited, not failed at once", d)
	}
	if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("gosdk__greet after roots/list: %s", problem)
	}
	g.close()
}

// TestGatewayCallTimeout: a call an upstream never answers times out on its
// own (the per-call --timeout), and the upstream serves the next call.
func TestGatewayCallTimeout(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	g := startGateway(t, ctx, dir, "", nil, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), []string{"--timeout", "1s"})...)
	g.waitTools(ctx, "gosdk__slow")
	o := g.call(ctx, "gosdk__slow", map[string]any{"steps": 100000})
	if problem := wantIsError("gosdk", "timed out after 1s")(o); problem != "" {
		t.Errorf("a call past its timeout: %s; got %v", problem, o)
	}
	if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
		t.Errorf("gosdk__greet after a timeout: %s", problem)
	}
	g.close()
}

// TestGatewayListChanged: a list change upstream reaches the client, for
// every pairing of eras: the upstream legacy (notifications/tools/list_changed)
// or modern (on its subscriptions/listen stream), and the client legacy or
// modern (the same, from mcp-route). The upstreams: the Go SDK's server,
// which adds a tool when asked (addtool), and a nested mcp-route, to which
// a tool is added on disk.
func TestGatewayListChanged(t *testing.T) {
	for _, up := range []string{"gosdk-modern", "gosdk-legacy", "nested"} {
		for _, rev := range []string{"", codec.Rev20251125} {
			t.Run(up+"/client-"+cmpOr(rev, "modern"), func(t *testing.T) {
				ctx := ctxTimeout(t)
				dir := gatewayDir(t)
				changed := make(chan struct{}, 16)
				copts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
					changed <- struct{}{}
				}}
				var args []string
				var tools string
				switch up {
				case "gosdk-modern":
					args = upstreamFlag("up", goSDKServer(t))
				case "gosdk-legacy":
					args = upstreamFlag("up", goSDKServer(t), "-legacy")
				case "nested":
					var argv []string
					argv, tools, _ = nestedRoute(t, dir)
					args = upstreamFlag("up", argv...)
				}
				g := startGateway(t, ctx, dir, rev, copts, args...)
				want := "up__hello"
				if up == "nested" {
					g.waitTools(ctx, "up__echo")
					if err := os.Rename(filepath.Join(tools, ".hello"), filepath.Join(tools, "hello")); err != nil {
						t.Fatal(err)
					}
				} else {
					g.waitTools(ctx, "up__addtool")
					if problem := wantText("added hello")(g.call(ctx, "up__addtool", map[string]any{"name": "hello"})); problem != "" {
						t.Fatalf("addtool: %s", problem)
					}
				}
				// Drain what the first load may have announced; then the
				// change must be announced.
				listed := false
				for !listed {
					select {
					case <-changed:
					case <-ctx.Done():
						t.Fatalf("no list change announced after %s gained a tool", up)
					}
					listed = slices.Contains(names(g.tools(ctx)), want)
				}
				wantHello := "hello\n"
				if up != "nested" {
					wantHello = "hello here"
				}
				if problem := wantText(wantHello)(g.call(ctx, want, nil)); problem != "" {
					t.Errorf("%s: %s", want, problem)
				}
				g.close()
			})
		}
	}
}

// TestGatewayProgressCancel: progress from an upstream reaches the client
// with the client's token, for two calls at once; a call the client cancels
// is cancelled upstream (the nested mcp-route kills the tool's process) and
// not answered; the connection goes on.
func TestGatewayProgressCancel(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20251125} {
		t.Run("client-"+cmpOr(rev, "modern"), func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			var mu sync.Mutex
			progress := map[any][]float64{}
			cancelCall := func() {} // of the call to cancel at its first progress
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				tok := req.Params.ProgressToken
				progress[tok] = append(progress[tok], req.Params.Progress)
				if tok == "hang" || tok == "slow-cancel" {
					cancelCall()
				}
			}}
			argv, _, innerRoot := nestedRoute(t, dir)
			// The inner hang tool says where it runs, so its end can be seen.
			hangPIDFile := filepath.Join(innerRoot, "hang.pid")
			hangScript := filepath.Join(filepath.Dir(innerRoot), "tools", "hang")
			proctest.WriteExecutable(t, hangScript, []byte("#!/bin/sh\necho $$ > \"$MCP_ROOT/hang.pid\"\n"+
				"if (: >&3) 2>/dev/null; then echo '{\"progress\":0,\"message\":\"started\"}' >&3; fi\nsleep 60\n"))
			g := startGateway(t, ctx, dir, rev, copts, slices.Concat(upstreamFlag("gosdk", goSDKServer(t)), upstreamFlag("inner", argv...))...)
			g.waitTools(ctx, "gosdk__slow", "inner__steps", "inner__hang")

			// Two calls with progress at once: each token gets its own.
			var wg sync.WaitGroup
			for _, tok := range []string{"a", "b"} {
				wg.Go(func() {
					p := &mcp.CallToolParams{Name: "gosdk__slow", Arguments: map[string]any{"steps": 3}}
					p.SetProgressToken(tok)
					res, err := g.cs.CallTool(ctx, p)
					if problem := wantText("done 3")(goSDKOutcome(t, res, err)); problem != "" {
						t.Errorf("gosdk__slow %s: %s", tok, problem)
					}
				})
			}
			wg.Wait()
			p := &mcp.CallToolParams{Name: "inner__steps"}
			p.SetProgressToken(7)
			res, err := g.cs.CallTool(ctx, p)
			if problem := wantText("done\n")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("inner__steps: %s", problem)
			}
			// Progress sent before an answer may be read after it: wait.
			proctest.Eventually(t, func() string {
				mu.Lock()
				defer mu.Unlock()
				for _, tok := range []any{"a", "b", float64(7)} {
					if !slices.Equal(progress[tok], []float64{1, 2, 3}) {
						return fmt.Sprintf("progress %v, want 1 2 3 for each of a, b, 7", progress)
					}
				}
				return ""
			})

			// Cancel through the hop: the Go SDK server's slow, and the
			// inner mcp-route's hang, whose process must end.
			for _, c := range []struct{ tool, token string }{{"gosdk__slow", "slow-cancel"}, {"inner__hang", "hang"}} {
				callCtx, cancel := context.WithCancel(ctx)
				mu.Lock()
				cancelCall = cancel
				mu.Unlock()
				p := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{}}
				if c.tool == "gosdk__slow" {
					p.Arguments = map[string]any{"steps": 100000}
				}
				p.SetProgressToken(c.token)
				if res, err := g.cs.CallTool(callCtx, p); !errors.Is(err, context.Canceled) {
					t.Errorf("%s: got %v %v, want the call cancelled", c.tool, goSDKOutcome(t, res, err), err)
				}
				cancel()
			}
			hangPID := proctest.WaitPIDFile(t, hangPIDFile)
			proctest.WaitGone(t, hangPID)
			if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
				t.Errorf("gosdk__greet after the cancellations: %s", problem)
			}
			if problem := wantText("after")(g.call(ctx, "inner__echo", map[string]any{"text": "after"})); problem != "" {
				t.Errorf("inner__echo after the cancellations: %s", problem)
			}
			g.close()
			msgs := goSDKWire(t, g.wire.String())
			checkCancelledToken(t, msgs, "slow-cancel")
			checkCancelledToken(t, msgs, "hang")
		})
	}
}

// checkCancelledToken is checkCancelled for the tools/call with progress
// token tok (a JSON string).
func checkCancelledToken(t *testing.T, msgs []wireMsg, tok string) {
	t.Helper()
	var id json.RawMessage
	for _, m := range msgs {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if !m.fromServer && json.Unmarshal(m.line, &req) == nil && req.Method == "tools/call" && req.Params.Meta.ProgressToken == tok {
			id = req.ID
		}
	}
	if id == nil {
		t.Fatalf("no tools/call with progress token %q on the wire", tok)
	}
	cancelled := false
	for _, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(m.line, &msg) != nil {
			continue
		}
		switch {
		case !m.fromServer && msg.Method == "notifications/cancelled" && string(msg.Params.RequestID) == string(id):
			cancelled = true
		case m.fromServer && msg.Method == "" && string(msg.ID) == string(id):
			t.Errorf("mcp-route answered the cancelled call %s (token %q): %s", id, tok, m.line)
		}
	}
	if !cancelled {
		t.Errorf("the client sent no notifications/cancelled for %s (token %q)", id, tok)
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
			// The text log quotes the name: a tab is \t there.
			logged := strings.ReplaceAll(bad, "\t", `\\t`)
			n := 0
			for l := range strings.Lines(g.stderr.String()) {
				if strings.Contains(l, "left out") && strings.Contains(l, logged) {
					n++
				}
			}
			if n == 0 {
				t.Errorf("no log line names the left-out %q:\n%s", full, g.stderr.String())
			}
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

// gatewayProcs lists the processes of the gateway whose mcp-route is pid:
// its descendants, zombies included (an unreaped child is a leak too), and
// every live process in a process group led by one of them or in groups
// (an upstream's own child that outlived it stays in the upstream's group,
// re-parented to init). It adds the groups it saw to groups.
func gatewayProcs(t *testing.T, pid int, groups map[int]bool) []proctest.Proc {
	t.Helper()
	all := proctest.List(t)
	children := map[int][]proctest.Proc{}
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p)
	}
	seen := map[int]bool{}
	var out []proctest.Proc
	for todo := children[pid]; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], children[p.PID]...)
		seen[p.PID] = true
		out = append(out, p)
		if p.PGID == p.PID {
			groups[p.PID] = true
		}
	}
	for _, p := range all {
		if groups[p.PGID] && !seen[p.PID] && p.State != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// TestGatewayManyCalls: 10,000 calls through the gateway, 16 in flight,
// from a client that sees every line: each answered exactly once, with the
// sum of its own arguments; the gateway's processes the same at the end as
// at the start; none left after it exits.
func TestGatewayManyCalls(t *testing.T) {
	const (
		calls    = 10000
		inFlight = 16
	)
	dir := gatewayDir(t)
	c, err := startBenchConn(append([]string{routeBin(t), "--root", dir}, upstreamFlag("gosdk", goSDKServer(t))...), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("mcp-route stderr:\n%s", c.stderr.String())
		}
	})
	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}`); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.notify("notifications/initialized"); err != nil {
		t.Fatal(err)
	}
	proctest.Eventually(t, func() string {
		res, err := c.call("tools/list", `{}`)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if !strings.Contains(string(res), `"gosdk__add"`) {
			return "gosdk__add never listed: " + string(res)
		}
		return ""
	})
	groups := map[int]bool{}
	before := gatewayProcs(t, c.cmd.Process.Pid, groups)
	var (
		next     atomic.Int64
		answered atomic.Int64
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range inFlight {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > calls {
					return
				}
				res, err := c.call("tools/call", fmt.Sprintf(`{"name":"gosdk__add","arguments":{"a":%d,"b":1}}`, i))
				var r struct {
					StructuredContent struct{ Sum *int64 }
					IsError           bool
				}
				if err != nil || json.Unmarshal(res, &r) != nil || r.IsError || r.StructuredContent.Sum == nil || *r.StructuredContent.Sum != i+1 {
					t.Errorf("call %d (a=%d b=1): %v %s", i, i, err, res)
					return
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d calls, %d in flight: %v (%.0f calls/s)", calls, inFlight, took, calls/took.Seconds())
	if n := answered.Load(); n != calls {
		t.Fatalf("%d of %d calls answered", n, calls)
	}
	// Nothing more may come: an answer to no request fails the reader, and
	// the next request with it.
	if _, err := c.call("ping", `{}`); err != nil {
		t.Errorf("after the calls: %v", err)
	}
	after := gatewayProcs(t, c.cmd.Process.Pid, groups)
	if len(after) != len(before) {
		t.Errorf("%d processes after %d calls, %d before: %s, then %s", len(after), calls, len(before),
			proctest.Describe(before), proctest.Describe(after))
	}
	if err := c.close(); err != nil {
		t.Errorf("mcp-route on EOF: %v\n%s", err, c.stderr.String())
	}
	for pgid := range groups {
		proctest.WaitGroupGone(t, pgid)
	}
}

// gatewayRestarts is how many times TestGatewayRestartsLeakNothing kills
// its upstream. The issue asks for 100, but mcp-route offers no way to
// shorten the restart backoff (500ms, doubled per restart up to 30s, reset
// only after a minute's run): 100 restarts would take about 48 minutes.
// Five take about 15 s (0.5+1+2+4+8), and a leak per restart shows in any
// of them.
const gatewayRestarts = 5

// TestGatewayRestartsLeakNothing: the leak check. An upstream that
// starts a child of its own (gosdk-server -spawn, as a server behind a
// launcher has one) is killed
// gatewayRestarts times, its leader only, by SIGKILL, with calls before and
// after each restart. At the end the gateway has as many processes as at
// the start, counting any left behind in the old upstreams' groups; after
// it exits, none.
func TestGatewayRestartsLeakNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := gatewayDir(t)
	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("gosdk", goSDKServer(t), "-spawn")...)
	g.waitTools(ctx, "gosdk__pid")
	pid, o := g.upstreamPID(ctx, "gosdk")
	if pid == 0 {
		t.Fatalf("gosdk__pid: %v", o)
	}
	groups := map[int]bool{}
	route := g.cmd.Process.Pid
	before := gatewayProcs(t, route, groups)
	t.Logf("at the start: %s", proctest.Describe(before))
	if len(before) < 2 {
		t.Fatalf("want gosdk-server and its sleep at the start; got %s", proctest.Describe(before))
	}
	start := time.Now()
	for i := range gatewayRestarts {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		old := pid
		for pid == 0 || pid == old {
			if pid, o = g.upstreamPID(ctx, "gosdk"); pid == 0 {
				if problem := wantIsError("upstream gosdk")(o); problem != "" {
					t.Fatalf("restart %d: a call while gosdk restarts: %s; got %v", i, problem, o)
				}
				if ctx.Err() != nil {
					t.Fatalf("restart %d: gosdk never came back", i)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		groups[pid] = true
		if problem := wantText("Hello, Ann!")(g.call(ctx, "gosdk__greet", map[string]any{"name": "Ann"})); problem != "" {
			t.Fatalf("restart %d: gosdk__greet: %s", i, problem)
		}
	}
	t.Logf("%d restarts in %v", gatewayRestarts, time.Since(start))
	// A killed upstream's group is killed after it: give the last one's
	// time to go, then count.
	var after []proctest.Proc
	proctest.Eventually(t, func() string {
		after = gatewayProcs(t, route, groups)
		if len(after) != len(before) {
			return fmt.Sprintf("%d processes after %d restarts, %d before: %s, then %s", len(after), gatewayRestarts, len(before),
				proctest.Describe(before), proctest.Describe(after))
		}
		return ""
	})
	g.close()
	for pgid := range groups {
		proctest.WaitGroupGone(t, pgid)
	}
}

// TestGatewayListChangedBeforeListen: a 2026-07-28 upstream that adds a
// tool after mcp-route's first tools/list but before mcp-route's
// subscriptions/listen takes effect (gosdk-server -late-tool) announces it
// on no stream mcp-route has. Only a list taken once the listen is
// acknowledged (notifications/subscriptions/acknowledged) can see it;
// without one the tool is never served. A nested mcp-route whose tool
// appeared right after the outer one listed it showed this as a lost list
// change on a loaded machine.
func TestGatewayListChangedBeforeListen(t *testing.T) {
	ctx := ctxTimeout(t)
	dir := gatewayDir(t)
	// The fixture's counterpart: a client of its own that lists again
	// after its listen is up sees the tool.
	direct := exec.Command(goSDKServer(t), "-late-tool", "late")
	direct.Env = baseEnv()
	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-e2e", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: direct}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for listed := false; !listed; time.Sleep(50 * time.Millisecond) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil || ctx.Err() != nil {
			t.Fatalf("gosdk-server -late-tool: tools/list: %v", err)
		}
		listed = slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "late" })
	}
	cs.Close()

	g := startGateway(t, ctx, dir, "", nil, upstreamFlag("up", goSDKServer(t), "-late-tool", "late")...)
	g.waitTools(ctx, "up__greet")
	// Far above what a re-list takes; the tool was added within 100ms of
	// the listen.
	deadline := time.Now().Add(15 * time.Second)
	for !slices.Contains(names(g.tools(ctx)), "up__late") {
		if time.Now().After(deadline) {
			t.Fatalf("up__late, added upstream before its listen took effect, not listed after 15s: %v", g.toolNames(ctx))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if problem := wantText("late here")(g.call(ctx, "up__late", nil)); problem != "" {
		t.Errorf("up__late: %s", problem)
	}
	g.close()
}

// TestGatewayHTTPUpstream: the Go SDK's server over Streamable HTTP
// (gosdk-server --http, with sessions and stateless) mounted as
// NAME=http://127.0.0.1:PORT/mcp: the same calls as over stdio, progress
// with the client's token, and a tool the server adds announced to the
// client. The SDK's server with sessions speaks only the legacy revisions,
// and sends notifications/tools/list_changed on the session's standalone
// GET stream (Streamable HTTP's channel for what belongs to no request);
// the stateless one is modern and sends it on the subscriptions/listen
// stream.
func TestGatewayHTTPUpstream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"stateful", nil},
		{"stateless", []string{"--stateless"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxTimeout(t)
			dir := gatewayDir(t)
			url := startListener(t, append([]string{goSDKServer(t), "--http", "127.0.0.1:0"}, tc.flags...)...)
			var mu sync.Mutex
			var steps []float64
			changed := make(chan struct{}, 16)
			copts := &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					if req.Params.ProgressToken == "web" {
						steps = append(steps, req.Params.Progress)
					}
				},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			}
			g := startGateway(t, ctx, dir, "", copts, "--upstream", "web="+url)
			checkGosdkThrough(t, ctx, g, "web")
			p := &mcp.CallToolParams{Name: "web__slow", Arguments: map[string]any{"steps": 3}}
			p.SetProgressToken("web")
			res, err := g.cs.CallTool(ctx, p)
			if problem := wantText("done 3")(goSDKOutcome(t, res, err)); problem != "" {
				t.Errorf("web__slow: %s", problem)
			}
			proctest.Eventually(t, func() string {
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(steps, []float64{1, 2, 3}) {
					return fmt.Sprintf("progress %v, want 1 2 3", steps)
				}
				return ""
			})
			if problem := wantText("added hello")(g.call(ctx, "web__addtool", map[string]any{"name": "hello"})); problem != "" {
				t.Fatalf("addtool: %s", problem)
			}
			for listed := false; !listed; {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatal("no list change announced after the HTTP upstream gained a tool")
				}
				listed = slices.Contains(names(g.tools(ctx)), "web__hello")
			}
			if problem := wantText("hello here")(g.call(ctx, "web__hello", nil)); problem != "" {
				t.Errorf("web__hello: %s", problem)
			}
			g.close()
		})
	}
}
