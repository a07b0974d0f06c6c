package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpipe/mcpipe/codec"
)

// The official SDK clients call a tool in worker mode, see its worker
// crash, and go on calling on the same connection: the crash costs the one
// call in flight, nothing else.

// interopWorkerTools writes a tools directory with the worker tool "tw"
// (internal/testbin/testworker) beside a root, as runRouteClient expects.
func interopWorkerTools(t *testing.T) (tools, root string) {
	t.Helper()
	d := t.TempDir()
	tools, root = filepath.Join(d, "tools"), filepath.Join(d, "root")
	for _, dir := range []string{tools, root} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	def := `{"name":"tw","description":"A test worker.","inputSchema":{"type":"object"},"run":{"mode":"worker","workers":2}}`
	if err := os.WriteFile(filepath.Join(tools, "tw.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testworkerBin(t), filepath.Join(tools, "tw")); err != nil {
		t.Fatal(err)
	}
	return tools, root
}

// interopWorkerCalls: a call, a call that kills its worker, a call that
// must work on a new worker.
var interopWorkerCalls = []map[string]any{
	{"n": 1},
	{"crash": "kill"},
	{"n": 2},
}

const interopWorkerParallel = 8

// checkWorkerOutcomes checks the outcomes of interopWorkerCalls and of the
// calls in flight at once afterwards.
func checkWorkerOutcomes(t *testing.T, got, parallel []outcome) {
	t.Helper()
	pid := func(o outcome) int {
		if o.result == nil || o.result.IsError {
			t.Errorf("call failed: %s", o)
			return 0
		}
		var w workerOut
		if err := json.Unmarshal([]byte(o.firstText()), &w); err != nil {
			t.Errorf("answer %s: %v", o, err)
		}
		return w.Pid
	}
	first := pid(got[0])
	if r := got[1].result; r == nil || !r.IsError || !strings.Contains(got[1].firstText(), "worker died: killed by SIGKILL") {
		t.Errorf("the crashing call: %s, want isError \"worker died: killed by SIGKILL\"", got[1])
	}
	if after := pid(got[2]); after == first && first != 0 {
		t.Errorf("the call after the crash ran on the dead worker %d", first)
	}
	if len(parallel) != interopWorkerParallel {
		t.Fatalf("%d parallel outcomes, want %d", len(parallel), interopWorkerParallel)
	}
	for i, o := range parallel {
		pid(o)
		if !strings.Contains(o.firstText(), fmt.Sprintf(`"n":%d`, 100+i)) {
			t.Errorf("parallel call %d answered %s", i, o)
		}
	}
}

func TestInteropWorkerGoSDK(t *testing.T) {
	for _, rev := range []string{"", codec.Rev20250618} {
		name := rev
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			tools, root := interopWorkerTools(t)
			ctx := ctxTimeout(t)
			cs, wire, stderr, err := goSDKRoute(t, ctx, tools, root, nil, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			var got []outcome
			for _, args := range interopWorkerCalls {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tw", Arguments: args})
				got = append(got, goSDKOutcome(t, res, err))
			}
			parallel := make([]outcome, interopWorkerParallel)
			var wg sync.WaitGroup
			for i := range parallel {
				wg.Go(func() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tw", Arguments: map[string]any{"n": 100 + i}})
					parallel[i] = goSDKOutcome(t, res, err)
				})
			}
			wg.Wait()
			checkWorkerOutcomes(t, got, parallel)
			if err := cs.Close(); err != nil {
				t.Errorf("close: mcp-route did not exit cleanly on EOF: %v\n%s", err, stderr.String())
			}
			checkWire(t, cs.InitializeResult().ProtocolVersion, goSDKWire(t, wire.String()))
		})
	}
}

func TestInteropWorkerTypeScript(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v2    bool
		flags []string
	}{
		{"sdk-v1", false, []string{"--sdk", "v1"}},
		{"client-v2-auto", true, []string{"--sdk", "v2", "--mode", "auto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, _ := interopWorkerTools(t)
			var plan []map[string]any
			for _, args := range interopWorkerCalls {
				plan = append(plan, map[string]any{"call": "tw", "arguments": args})
			}
			var par []map[string]any
			for i := range interopWorkerParallel {
				par = append(par, map[string]any{"call": "tw", "arguments": map[string]any{"n": 100 + i}})
			}
			plan = append(plan, map[string]any{"parallel": par})
			r := runRouteClient(t, tc.v2, tools, plan, tc.flags...)
			var got, parallel []outcome
			for i := range interopWorkerCalls {
				got = append(got, r.steps[i].outcome())
			}
			for _, s := range r.steps[len(interopWorkerCalls)].Results {
				parallel = append(parallel, s.outcome())
			}
			checkWorkerOutcomes(t, got, parallel)
			checkWire(t, r.connected.ProtocolVersion, r.wire)
		})
	}
}
