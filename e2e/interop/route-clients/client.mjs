// client.mjs: drive mcp-route with an official TypeScript MCP SDK client, for
// the e2e interop tests (e2e/interop_route_test.go).
//
// Usage:
//   MCP_INTEROP_NODE_DIR=DIR node client.mjs [--sdk v1|v2] [--mode auto|legacy]
//       [--list-changed] [--route-arg ARG]... ROUTE TOOLSDIR < plan.json
//   MCP_INTEROP_NODE_DIR=DIR node client.mjs [--sdk v1|v2] [--mode auto|legacy]
//       --url URL [TOOLSDIR] < plan.json
//
// DIR is the npm prefix filled by e2e/interop/setup-node.sh. --sdk v1 is @modelcontextprotocol/sdk
// (Client + StdioClientTransport, always the legacy handshake); --sdk v2 is
// @modelcontextprotocol/client, whose versionNegotiation --mode auto probes
// with server/discover first. --list-changed registers a tools listChanged
// handler, as hosts do (on a modern connection v2 then opens
// subscriptions/listen). The client launches `ROUTE --tools TOOLSDIR [ARG...]`
// with the SDK's default environment, and cwd the parent of TOOLSDIR.
// --url URL instead connects to a running server over the SDK's
// StreamableHTTPClientTransport (TOOLSDIR is then only for rename steps, and
// "closed" carries no stderr).
//
// The plan on stdin is a JSON array of steps, run in order on one connection:
//   {"call": NAME, "arguments": {...}}      one tools/call; with
//       "progress": true                     it asks for progress (onprogress),
//       "cancelOnProgress": true             and aborts the call (the SDK sends
//                                            notifications/cancelled) at the
//                                            first progress notification
//   {"ping": true}                           ping
//   {"parallel": [{"call":..., "arguments":...}, ...]}  calls in flight at once
//   {"list": true}                           tools/list again
//   {"listAll": true}                        every page of tools/list, following
//                                            nextCursor
//   {"rename": [FROM, TO]}                   rename a file (paths relative to
//                                            TOOLSDIR): how a test adds a tool
//   {"waitListChanged": MS}                  wait up to MS for the listChanged
//                                            handler (needs --list-changed)
//   {"listUntil": NAME, "timeoutMs": MS}     tools/list until NAME is listed
//
// Output: JSON lines on stdout, which the Go test asserts on:
//   {"connected": {"era", "protocolVersion", "serverInfo", "capabilities", "discover"}}
//   {"tools": [Tool, ...]}                   after connect
//   {"step": i, "result": CallToolResult}    or "error": {"code","message"},
//                                            and "progress": [Progress, ...]
//   {"step": i, "pong": true}
//   {"step": i, "results": [{"result"|"error"}, ...]}  for parallel steps
//   {"step": i, "tools": [...]}              for list and listUntil steps
//   {"step": i, "tools": [...], "pages": n}  for listAll
//   {"step": i, "renamed": true}
//   {"step": i, "changed": true|false, "tools": [...]}  for waitListChanged
//                                            (tools: what the handler got)
//   {"wire": "in"|"out", "message": {...}}   every message on the session
//                                            connection, in order (not the v2
//                                            probe sibling's)
//   {"clientError": "message"}               an error the SDK reported through
//                                            onerror (no request failed)
//   {"closed": true, "stderr": "..."}        mcp-route's stderr
// A failure to connect or a client exception: {"fatal": "message"}, exit 1.
import { rename } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

function usage(msg) {
	process.stderr.write(`client.mjs: ${msg}\n`);
	process.exit(2);
}

const opts = { sdk: 'v1', mode: 'auto', listChanged: false, routeArgs: [], url: '' };
const rest = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	const a = argv[i];
	if (a === '--sdk') opts.sdk = argv[++i];
	else if (a === '--mode') opts.mode = argv[++i];
	else if (a === '--list-changed') opts.listChanged = true;
	else if (a === '--route-arg') opts.routeArgs.push(argv[++i]);
	else if (a === '--url') opts.url = argv[++i];
	else if (a.startsWith('--')) usage(`unknown flag ${a}`);
	else rest.push(a);
}
if (opts.url && rest.length > 1) usage('with --url, want at most TOOLSDIR');
if (!opts.url && rest.length !== 2) usage('want ROUTE TOOLSDIR');
if (!['v1', 'v2'].includes(opts.sdk)) usage(`--sdk ${opts.sdk}: want v1 or v2`);
if (!['auto', 'legacy'].includes(opts.mode)) usage(`--mode ${opts.mode}: want auto or legacy`);
const [route, tools] = opts.url ? ['', rest[0] ?? '.'] : rest;
const nodeDir = process.env.MCP_INTEROP_NODE_DIR;
if (!nodeDir) usage('MCP_INTEROP_NODE_DIR is not set');

// The SDKs live in the npm prefix, not beside this script: resolve them
// from there (ESM import ignores NODE_PATH). Both ship CommonJS builds.
const require = createRequire(path.join(path.resolve(nodeDir), 'node_modules', 'noop.js'));

function out(obj) {
	process.stdout.write(JSON.stringify(obj) + '\n');
}

function errorOf(e) {
	return { code: typeof e?.code === 'number' ? e.code : null, message: String(e?.message ?? e) };
}

async function readStdin() {
	const chunks = [];
	for await (const c of process.stdin) chunks.push(c);
	const text = Buffer.concat(chunks).toString('utf8').trim();
	return text === '' ? [] : JSON.parse(text);
}

// tap records every message of the session connection. Protocol.connect
// assigns transport.onmessage, so the setter wraps whatever it is given;
// the instance keeps its class, so v2 still treats it as the SDK's own
// StdioClientTransport (and probes on a sibling process).
let wireVersion; // protocolVersion of the last initialize result seen

function tap(transport) {
	const send = transport.send.bind(transport);
	transport.send = (message, ...more) => {
		out({ wire: 'out', message });
		return send(message, ...more);
	};
	let handler;
	Object.defineProperty(transport, 'onmessage', {
		configurable: true,
		get: () => handler,
		set: (fn) => {
			handler = fn && ((message, ...more) => {
				out({ wire: 'in', message });
				if (typeof message?.result?.protocolVersion === 'string') wireVersion = message.result.protocolVersion;
				return fn(message, ...more);
			});
		},
	});
}

async function main() {
	const plan = await readStdin();
	let Client, StdioClientTransport, StreamableHTTPClientTransport;
	if (opts.sdk === 'v1') {
		({ Client } = require('@modelcontextprotocol/sdk/client/index.js'));
		({ StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js'));
		({ StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js'));
	} else {
		({ Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client'));
		({ StdioClientTransport } = require('@modelcontextprotocol/client/stdio'));
	}
	const transport = opts.url
		? new StreamableHTTPClientTransport(new URL(opts.url))
		: new StdioClientTransport({
			command: route,
			args: ['--tools', tools, ...opts.routeArgs],
			cwd: path.dirname(path.resolve(tools)),
			stderr: 'pipe',
		});
	let stderr = '';
	transport.stderr?.on('data', (d) => { stderr += d.toString('utf8'); });
	tap(transport);

	const clientOpts = {};
	if (opts.sdk === 'v2') clientOpts.versionNegotiation = { mode: opts.mode };
	if (opts.listChanged) {
		clientOpts.listChanged = {
			tools: {
				onChanged: (err, items) => {
					changes.push(err ? { error: String(err) } : { tools: items });
					wake?.();
				},
			},
		};
	}
	const client = new Client({ name: `interop-${opts.sdk}`, version: '1.0.0' }, clientOpts);
	// What the SDK reports without failing a request: unparsable lines,
	// unexpected messages, errors in handlers.
	client.onerror = (e) => out({ clientError: String(e?.message ?? e) });
	try {
		await client.connect(transport);
	} catch (e) {
		out({ fatal: `connect: ${e?.message ?? e}`, stderr });
		process.exit(1);
	}
	out({
		connected: {
			era: typeof client.getProtocolEra === 'function' ? client.getProtocolEra() : 'legacy',
			// v1 keeps the negotiated version to itself: it is read off the wire.
			protocolVersion: typeof client.getNegotiatedProtocolVersion === 'function'
				? client.getNegotiatedProtocolVersion() : wireVersion,
			serverInfo: client.getServerVersion(),
			capabilities: client.getServerCapabilities(),
			discover: typeof client.getDiscoverResult === 'function' ? client.getDiscoverResult() : undefined,
		},
	});
	try {
		out({ tools: (await client.listTools()).tools });
		for (const [i, step] of plan.entries()) {
			if (step.call !== undefined) {
				out({ step: i, ...(await call(client, step)) });
			} else if (step.parallel !== undefined) {
				out({ step: i, results: await Promise.all(step.parallel.map((s) => call(client, s))) });
			} else if (step.ping) {
				await client.ping();
				out({ step: i, pong: true });
			} else if (step.listAll) {
				out({ step: i, ...(await listAll(client)) });
			} else if (step.list) {
				out({ step: i, tools: (await client.listTools()).tools });
			} else if (step.rename !== undefined) {
				await rename(path.resolve(tools, step.rename[0]), path.resolve(tools, step.rename[1]));
				out({ step: i, renamed: true });
			} else if (step.waitListChanged !== undefined) {
				out({ step: i, ...(await waitChange(step.waitListChanged)) });
			} else if (step.listUntil !== undefined) {
				out({ step: i, tools: await listUntil(client, step.listUntil, step.timeoutMs) });
			} else {
				throw new Error(`plan step ${i}: unknown kind`);
			}
		}
	} catch (e) {
		out({ fatal: String(e?.stack ?? e), stderr });
		await client.close().catch(() => {});
		process.exit(1);
	}
	await client.close();
	out({ closed: true, stderr });
}

// Calls of the listChanged handler not yet reported, and the wake-up of a
// waitChange in progress.
const changes = [];
let wake;

function waitChange(ms) {
	return new Promise((resolve) => {
		const done = (v) => { clearTimeout(timer); wake = undefined; resolve(v); };
		const timer = setTimeout(() => done({ changed: false }), ms);
		wake = () => done({ changed: true, ...changes.shift() });
		if (changes.length > 0) wake();
	});
}

// listUntil lists the tools until one is called name, or until timeoutMs.
// It has to poll: a modern client sees a changed list only by asking again
// (and the v2 client serves tools/list from its cache for the server's
// ttlMs). The pause between tries only spaces them out.
async function listUntil(client, name, timeoutMs) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const { tools } = await client.listTools();
		if (tools.some((t) => t.name === name) || Date.now() > deadline) return tools;
		await new Promise((r) => setTimeout(r, 100));
	}
}

// listAll follows nextCursor. (v2's listTools() without a cursor already
// gathers every page; v1's returns one.)
async function listAll(client) {
	const tools = [];
	let cursor;
	let pages = 0;
	do {
		const r = await client.listTools(cursor === undefined ? undefined : { cursor });
		tools.push(...r.tools);
		cursor = r.nextCursor;
		pages++;
	} while (cursor !== undefined && pages < 100);
	return { tools, pages };
}

async function call(client, step) {
	const progress = [];
	const options = {};
	if (step.progress || step.cancelOnProgress) {
		const abort = new AbortController();
		options.onprogress = (p) => {
			progress.push(p);
			if (step.cancelOnProgress) abort.abort(new Error('cancelled by the test'));
		};
		options.signal = abort.signal;
	}
	const params = { name: step.call, arguments: step.arguments ?? {} };
	try {
		// v1 takes a result schema before the options; undefined is its default.
		const result = opts.sdk === 'v1'
			? await client.callTool(params, undefined, options)
			: await client.callTool(params, options);
		return { result, progress };
	} catch (e) {
		return { error: errorOf(e), progress };
	}
}

main().catch((e) => {
	out({ fatal: String(e?.stack ?? e) });
	process.exit(1);
});
