// Command testworker is a tool for tests of mcp-route's worker mode
// (mcp-route/worker). It speaks the worker protocol itself, without
// mcp-route/tool, so tests see exactly what a worker does on the wire; and
// it misbehaves on request. With MCP_WORKER=1 it serves requests on stdin,
// each in its own goroutine; otherwise it runs one exec'd call (arguments
// on stdin), so the same tool can be timed both ways.
//
// The arguments of a call steer it (all optional):
//
//	pidfile  PATH   write the worker's pid to PATH when the call starts
//	stderr   TEXT   write TEXT and a newline to stderr
//	grow     N      allocate and touch N MiB, kept until the worker exits
//	progress N      report N progress steps (when the request asked for progress)
//	sleep    D      wait D (a Go duration); a cancel ends the wait with an error
//	wait     FILE   wait until FILE exists; a cancel ends the wait with an error
//	hang     true   wait forever, ignoring cancels
//	crash    HOW    "kill": SIGKILL itself; "exit": exit 4 after a line on stderr
//	junk     TEXT   write TEXT as a line on stdout before the answer
//	twice    true   answer twice
//	error    TEXT   answer an error
//	output   TEXT   answer TEXT as the output
//	exit     true   exit 0 after answering
//	fds      true   answer the descriptors it holds, one "FD -> TARGET" line each
//	spawn    CMD    run sh -c CMD in the worker's process group and wait for the
//	                shell: what CMD leaves in the background loses its parent
//	keep     CMD    start sh -c CMD as a child of the worker and do not wait for it
//
// spawn and keep give CMD TW_BIN (this executable) and TW_WORKER_PGID (the
// worker's process group) in its environment.
//
// Otherwise the output is a JSON object: the worker's pid, the tool, the
// arguments, protocolVersion, progress, the calls this worker served, and
// what its environment says (MCP_WORKER, MCP_TOOL, the MCP_ARG_* names).
//
// The environment steers the start: TW_STARTS=FILE appends the pid to
// FILE; TW_CRASH_ON_START=1 exits 3 at once with "boom on start" on stderr;
// TW_JOIN_PGID=PGID makes it no tool but a process that joins process
// group PGID (setpgid), writes its pid to TW_JOIN_PIDFILE and sleeps for
// five minutes.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type request struct {
	ID              int64          `json:"id"`
	Cancel          int64          `json:"cancel"`
	Tool            string         `json:"tool"`
	Arguments       map[string]any `json:"arguments"`
	ProtocolVersion string         `json:"protocolVersion"`
	Progress        bool           `json:"progress"`
}

var (
	outMu    sync.Mutex
	calls    atomic.Int64
	kept     [][]byte
	keptMu   sync.Mutex
	cancelMu sync.Mutex
	cancels  = map[int64]chan struct{}{}
)

func main() {
	if g := os.Getenv("TW_JOIN_PGID"); g != "" {
		join(g)
		return
	}
	if f := os.Getenv("TW_STARTS"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(fh, "%d\n", os.Getpid())
			fh.Close()
		}
	}
	if os.Getenv("TW_CRASH_ON_START") == "1" {
		fmt.Fprintln(os.Stderr, "boom on start")
		os.Exit(3)
	}
	if os.Getenv("MCP_WORKER") != "1" {
		execMode()
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var wg sync.WaitGroup
	for sc.Scan() {
		var r request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintf(os.Stderr, "testworker: bad request: %v\n", err)
			continue
		}
		if r.Cancel > 0 {
			cancelMu.Lock()
			if ch, ok := cancels[r.Cancel]; ok {
				close(ch)
				delete(cancels, r.Cancel)
			}
			cancelMu.Unlock()
			continue
		}
		ch := make(chan struct{})
		cancelMu.Lock()
		cancels[r.ID] = ch
		cancelMu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			serve(r, ch)
		}()
	}
	wg.Wait()
}

func send(v any) {
	b, _ := json.Marshal(v)
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func serve(r request, cancel chan struct{}) {
	out, errText := handle(r, cancel, func(i, n int) {
		send(map[string]any{"id": r.ID, "progress": map[string]any{"progress": i, "total": n, "message": fmt.Sprintf("step %d of %d", i, n)}})
	})
	if s, ok := r.Arguments["junk"].(string); ok {
		outMu.Lock()
		os.Stdout.WriteString(s + "\n")
		outMu.Unlock()
	}
	cancelMu.Lock()
	delete(cancels, r.ID)
	cancelMu.Unlock()
	answer := map[string]any{"id": r.ID, "output": out}
	if errText != "" {
		answer = map[string]any{"id": r.ID, "error": errText}
	}
	send(answer)
	if r.Arguments["twice"] == true {
		send(answer)
	}
	if r.Arguments["exit"] == true {
		os.Exit(0)
	}
}

// handle runs one call; progress reports a step.
func handle(r request, cancel <-chan struct{}, progress func(i, n int)) (output, errText string) {
	n := calls.Add(1)
	a := r.Arguments
	// stderr first: a test that kills the worker once the pid file is
	// there expects the line in the worker's stderr tail.
	if s, ok := a["stderr"].(string); ok {
		fmt.Fprintln(os.Stderr, s)
	}
	if p, ok := a["pidfile"].(string); ok {
		os.WriteFile(p, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
	}
	if mb, ok := a["grow"].(float64); ok {
		b := make([]byte, int(mb)<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		keptMu.Lock()
		kept = append(kept, b)
		keptMu.Unlock()
	}
	if steps, ok := a["progress"].(float64); ok && r.Progress {
		for i := 1; i <= int(steps); i++ {
			progress(i, int(steps))
		}
	}
	if d, ok := a["sleep"].(string); ok {
		dur, _ := time.ParseDuration(d)
		select {
		case <-time.After(dur):
		case <-cancel:
			return "", "cancelled"
		}
	}
	if f, ok := a["wait"].(string); ok {
		for {
			if _, err := os.Stat(f); err == nil {
				break
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-cancel:
				return "", "cancelled"
			}
		}
	}
	if a["hang"] == true {
		select {}
	}
	switch a["crash"] {
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "exit":
		fmt.Fprintln(os.Stderr, "crash on purpose")
		os.Exit(4)
	}
	if a["fds"] == true {
		ents, _ := os.ReadDir("/proc/self/fd")
		var lines []string
		for _, e := range ents {
			target, _ := os.Readlink("/proc/self/fd/" + e.Name())
			lines = append(lines, e.Name()+" -> "+target)
		}
		return strings.Join(lines, "\n"), ""
	}
	if c, ok := a["spawn"].(string); ok {
		if err := shell(c).Run(); err != nil {
			return "", "spawn: " + err.Error()
		}
	}
	if c, ok := a["keep"].(string); ok {
		if err := shell(c).Start(); err != nil {
			return "", "keep: " + err.Error()
		}
	}
	if e, ok := a["error"].(string); ok {
		return "", e
	}
	if o, ok := a["output"].(string); ok {
		return o, ""
	}
	var argEnv []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MCP_ARG_") {
			k, _, _ := strings.Cut(kv, "=")
			argEnv = append(argEnv, k)
		}
	}
	slices.Sort(argEnv)
	b, _ := json.Marshal(map[string]any{
		"pid": os.Getpid(), "tool": r.Tool, "args": a, "protocolVersion": r.ProtocolVersion,
		"progress": r.Progress, "calls": n,
		"worker": os.Getenv("MCP_WORKER"), "mcpTool": os.Getenv("MCP_TOOL"), "argEnv": argEnv,
	})
	return string(b), ""
}

// execMode runs one call the exec way: arguments on stdin, output on
// stdout, an error on stderr with exit 1.
func execMode() {
	var r request
	b, _ := io.ReadAll(os.Stdin)
	json.Unmarshal(b, &r.Arguments)
	r.Tool = os.Getenv("MCP_TOOL")
	r.ProtocolVersion = os.Getenv("MCP_PROTOCOL_VERSION")
	out, errText := handle(r, nil, func(int, int) {})
	if errText != "" {
		fmt.Fprintln(os.Stderr, errText)
		os.Exit(1)
	}
	os.Stdout.WriteString(out)
}

// shell is sh -c c in the worker's process group, stdio on /dev/null.
func shell(c string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", c)
	self, _ := os.Executable()
	cmd.Env = append(os.Environ(), "TW_BIN="+self, "TW_WORKER_PGID="+strconv.Itoa(syscall.Getpgrp()))
	return cmd
}

// join joins process group pgid, says so in TW_JOIN_PIDFILE and sleeps.
func join(pgid string) {
	g, err := strconv.Atoi(pgid)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testworker: TW_JOIN_PGID=%q: want a process group id\n", pgid)
		os.Exit(2)
	}
	if err := syscall.Setpgid(0, g); err != nil {
		fmt.Fprintf(os.Stderr, "testworker: setpgid(0, %d): %v\n", g, err)
		os.Exit(1)
	}
	if f := os.Getenv("TW_JOIN_PIDFILE"); f != "" {
		os.WriteFile(f, fmt.Appendf(nil, "%d\n", os.Getpid()), 0o644)
	}
	time.Sleep(5 * time.Minute)
}
