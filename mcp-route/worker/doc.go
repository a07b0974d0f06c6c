// Package worker runs mcp-route's persistent tool workers: long-lived tool
// processes that serve many tools/call requests each, for tools whose
// definition says "run": {"mode": "worker"}. A Go, Python or Node tool then
// pays its runtime start once per worker instead of once per call, and a
// worker is still a process of its own: when it crashes, only its calls in
// flight fail.
//
// # The worker protocol
//
// A worker is started like an exec'd call of the tool (runner.Command: the
// same executable and argv, working directory --root, process group,
// limits, launcher), through internal/proc.Start, with the tool's
// environment minus everything per call (toolenv.Call.Worker: no MCP_ARG_*,
// MCP_TOOL or MCP_PROTOCOL_VERSION) plus MCP_WORKER=1. Its stderr is kept
// (a tail, for error texts) and logged; it gets no fd 3.
//
// Requests, one JSON object per line on the worker's stdin:
//
//	{"id":7,"tool":"fs_read","arguments":{...},"protocolVersion":"2025-06-18","progress":true}
//	{"cancel":7}
//	{"answer":7,"line":{"id":1,"result":{...}}}
//
// id is a positive integer, unique per worker, chosen by mcp-route; tool
// is the name of the tool called (workers of one executable are shared by
// every tool linked to it); progress is true when the client asked for
// progress. A cancel asks the worker to give up call 7; it may still
// answer it.
//
// Answers and progress, one JSON object per line on the worker's stdout:
//
//	{"id":7,"output":"..."}
//	{"id":7,"error":"message"}
//	{"id":7,"progress":{"progress":1,"total":4,"message":"..."}}
//	{"id":7,"channel":{"level":"info","data":"..."}}
//
// output is exactly what the exec'd tool would have written on stdout:
// mcp-route applies run.result (text, json, mcp) and run.maxOutput to it
// as it does for exec. error is the text of an isError result, what a
// non-zero exit with that stderr would have given. progress is the object
// of an fd-3 progress line; it becomes notifications/progress when the
// client asked for it. channel is a line of the tool channel, as an exec'd
// call writes it on fd 3 (mcp-route/router: log records, questions, and
// progress too), sent whether or not the client asked for progress; the
// answer to a question comes on stdin as {"answer":7,"line":ANSWER},
// ANSWER being the line an exec'd call reads on fd 4. Anything else on
// stdout — a line that is not one JSON object with a positive id and
// exactly one of output, error, progress and channel, an id not in flight (an answer for an id already answered
// included), a line longer than Spec.MaxLine — is junk: the worker is
// killed, its calls in flight get isError, and the log names the tool and
// the first bytes of the junk (escaped, capped). EOF on stdin asks the
// worker to exit.
//
// # The pool
//
// Workers are pooled by their start: the executable with symlinks
// resolved, the working directory, the environment and the worker settings
// (Limits, Spec.MaxLine). So the tools that link to one executable (the 32
// stock tools link to one mcp-stock) share their workers when their
// environment and settings agree.
//
//   - A pool has at most Limits.Workers workers taking calls, each taking
//     at most Limits.Concurrency calls at once; a call goes to the least
//     busy worker, a new worker is started when all are full and there is
//     room, else the call waits (bounded by its timeout and its context).
//   - A worker with no call for Limits.Idle is stopped (stdin closed, then
//     the SIGTERM → SIGKILL ladder of proc.Process.Stop).
//   - A worker is retired after Limits.MaxCalls calls, or after a call that
//     leaves its RSS (/proc/PID/statm; Linux only, elsewhere the RSS cap
//     is not enforced) over Limits.MaxRSS: it takes no new
//     call and is stopped when its calls in flight are answered.
//   - Hot reload: a call whose Spec.Stamp differs from the pool's (the
//     executable was rebuilt or replaced) retires every worker of the
//     pool; the calls in flight finish on them, new calls go to new
//     workers. Retired workers do not count against Limits.Workers.
//
// # Failures
//
//   - Timeout (Call.Timeout, from when the call reaches its pool): the
//     worker is killed (SIGTERM to its group, SIGKILL Options.Grace later)
//     and replaced; the call gets "timed out after 30s", as for exec.
//   - Cancel (the context is done): {"cancel":id} is sent; when the call
//     is still unanswered Options.Grace later the worker is killed.
//   - Crash: a worker that exits or is killed without mcp-route asking
//     fails its calls in flight, and only those, with "worker died: killed
//     by SIGKILL" (proc.Outcome's wording) plus its stderr tail. A worker
//     mcp-route kills (a timeout, a cancel past grace, junk) fails its
//     other calls in flight with "worker killed: " and why.
//   - Backoff: the next call starts a new worker at once after a crash.
//     After the second crash in a row (junk and a start that fails count;
//     timeouts and cancels do not; any answer resets the count) the next
//     start waits BackoffMin, doubling with every further crash up to
//     BackoffMax, and the log says so. A call meanwhile waits for the
//     start when it comes before the call's timeout; otherwise it is
//     answered at once with "worker restarting after N crashes in a row".
//   - A call whose request the dead worker never read (never written, or
//     still in the pipe when it died: Process.StdinConsumed) goes to
//     another worker, up to 3 times: it cannot have had an effect. A call
//     the worker may have read is never sent again.
//
// Close stops every worker and returns when all are reaped: no zombie, no
// descriptor and no process left (proc kills a worker's whole group).
//
// # Cost per call
//
// The per-call path allocates no timer and no channel: one watchdog timer
// per Pools, armed for the earliest deadline of the calls in flight,
// enforces every Call.Timeout; reply channels are recycled; a worker's idle
// timer is armed once and re-armed when it fires early. Calls waiting for
// room queue in order: an answer wakes the oldest one only (it passes the
// wake-up on when it gives up, or when room is left after it took its
// place); what changes every place at once (a worker dies, retires or
// stops) wakes them all. A call that has to wait for a worker, or is
// cancelled, gets a timer and a channel for that wait. The request line is built by
// appends outside the pool's lock.
//
// # Security
//
// A worker is a child of one mcp-route over pipes: it serves that server
// only. Every call is followed by proc.Sweep before it is answered: what
// the call left outside the worker's own children (a daemon; a process
// that joined the worker's process group and lost its parent) has been
// reparented to mcp-route, the subreaper, and is killed; the worker's own
// children are its business and die with its group. Per-call state reaches it only in its request, so nothing of one
// call's arguments or progress wish is in its environment when the next
// call comes; a tool that keeps state between requests is the tool's
// business (mcp-route/tool keeps none).
package worker
