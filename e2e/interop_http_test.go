package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mcp-call --url against the official Go SDK's Streamable HTTP server
// (interop/gosdk-server --http), stateful (sessions) and stateless, in both
// eras: the same commands and exit statuses as over stdio.

// startListener starts a server that prints "listening URL" on its first
// stdout line once it accepts, and returns the URL. The server is killed
// (its process group) and reaped when the test ends.
func startListener(t *testing.T, argv ...string) string {
	t.Helper()
	return startListenerWith(t, nil, argv...)
}

// startListenerWith is startListener that also tells started the pid.
func startListenerWith(t *testing.T, started func(pid int), argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = baseEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		url, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			t.Fatalf("%q: first stdout line %q, want \"listening URL\"", argv, s)
		}
		return url
	case <-time.After(waitLong):
		t.Fatalf("%q printed no listening line within %v", argv, waitLong)
	}
	return ""
}

func TestInteropGoSDKHTTP(t *testing.T) {
	bin := goSDKServer(t)
	for _, tc := range []struct {
		name       string
		serverArgs []string
		era        string
		wantEra    string
		wantProbe  string
	}{
		// The SDK's stateful handler speaks the legacy revisions only.
		{"stateful-auto", nil, "auto", "legacy", "fell back to initialize"},
		{"stateless-auto", []string{"--stateless"}, "auto", "modern", "server/discover answered"},
		{"stateless-legacy", []string{"--stateless"}, "legacy", "legacy", "no probe"},
		{"legacy-server-auto", []string{"-legacy"}, "auto", "legacy", "fell back to initialize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := startListener(t, append([]string{bin, "--http", "127.0.0.1:0"}, tc.serverArgs...)...)
			run := func(stdin string, argv ...string) callOut {
				return mcpCall(t, stdin, append([]string{"--url", url, "--era", tc.era}, argv...)...)
			}
			r := checkGoSDKServer(t, run, tc.wantEra, tc.wantProbe)
			if r = run("", "call", "nope"); r.code != 2 || !strings.Contains(r.stderr, `no tool named "nope"`) {
				t.Errorf("unknown tool: %+v", r)
			}
			// Progress arrives on the call's SSE stream, before the result.
			r = run("", "--progress", "call", "slow", "steps=3")
			if r.code != 0 || r.stdout != "done 3\n" || strings.Count(r.stderr, "mcp-call: progress ") != 3 ||
				!strings.Contains(r.stderr, "progress 3/3: step 3") {
				t.Errorf("progress: %+v", r)
			}
			// region's argument is mirrored into Mcp-Param-Region; in
			// 2026-07-28 the SDK refuses the call when the header is
			// missing or differs from the body, so a non-ASCII value
			// (sent base64-encoded) shows the encoding is right too.
			if r = run("", "call", "region", "region=eu-süd", "query=SELECT 1"); r.code != 0 || r.stdout != "eu-süd: SELECT 1\n" {
				t.Errorf("region: %+v", r)
			}
			// A call that outlives --timeout is abandoned (exit 3) and
			// the server goes on serving.
			r = run("", "--timeout", "1s", "call", "slow", "steps=100000")
			if r.code != 3 || !strings.Contains(r.stderr, "--timeout") {
				t.Errorf("timeout: %+v", r)
			}
			if r = run("", "ping"); r.code != 0 || r.stdout != "ok\n" {
				t.Errorf("ping: %+v", r)
			}
			r = run("greet name=Bo\nadd a=1 b=1\nfail\ngreet name=Cy\n", "script")
			if r.code != 1 || !strings.HasPrefix(r.stdout, "Hello, Bo!\n") || !strings.HasSuffix(r.stdout, "Hello, Cy!\n") {
				t.Errorf("script: %+v", r)
			}
		})
	}
}

// raw over --url: one POST per line, in order; the session the initialize
// line settles is used by the next lines; progress and the result are
// printed as they come; a line the server refuses is reported (2).
func TestCallRawHTTP(t *testing.T) {
	url := startListener(t, goSDKServer(t), "--http", "127.0.0.1:0")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2},"_meta":{"progressToken":7}}}
`
	r := mcpCall(t, in, "--url", url, "raw")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) ||
		!strings.Contains(lines[1], `"progress":1`) || !strings.Contains(lines[3], `"text":"done 2"`) {
		t.Errorf("raw: %+v", r)
	}
	r = mcpCall(t, in+"not json\n", "--url", url, "raw")
	if r.code != 2 || !strings.Contains(r.stderr, "stdin line 4: HTTP 400") || !strings.Contains(r.stdout, `"text":"done 2"`) {
		t.Errorf("raw with a bad line: %+v", r)
	}
}

// Errors a script can tell apart over HTTP: nothing listening is 3 (as a
// server that cannot be started), a wrong path is 2 (the server answered).
func TestCallHTTPErrors(t *testing.T) {
	url := startListener(t, goSDKServer(t), "--http", "127.0.0.1:0", "--stateless")
	if r := mcpCall(t, "", "--url", "http://127.0.0.1:1/mcp", "tools"); r.code != 3 || !strings.Contains(r.stderr, "server unreachable") {
		t.Errorf("nothing listening: %+v", r)
	}
	if r := mcpCall(t, "", "--url", strings.TrimSuffix(url, "/mcp")+"/elsewhere", "tools"); r.code != 2 || !strings.Contains(r.stderr, "HTTP 404") {
		t.Errorf("wrong path: %+v", r)
	}
	if r := mcpCall(t, "", "--url", url, "tools", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "exclude each other") {
		t.Errorf("--url with a server command: %+v", r)
	}
	if r := mcpCall(t, "", "--header", "X-A: b", "tools", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "need --url") {
		t.Errorf("--header without --url: %+v", r)
	}
	if r := mcpCall(t, "", "--url", url, "--header", "no colon", "tools"); r.code != 2 || !strings.Contains(r.stderr, "want 'Name: value'") {
		t.Errorf("bad --header: %+v", r)
	}
	// The harmless counterpart: a well-formed extra header changes nothing.
	if r := mcpCall(t, "", "--url", url, "--header", "X-Trace-Id: 42", "call", "greet", "name=Di"); r.code != 0 || r.stdout != "Hello, Di!\n" {
		t.Errorf("with --header: %+v", r)
	}
}
