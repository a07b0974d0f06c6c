#!/usr/bin/env bash
# setup.sh DIR: install the official TypeScript MCP SDK clients that
# mcp-route's interop tests (e2e/interop_route_test.go, through client.mjs)
# run, into the npm prefix DIR (created if missing):
#   @modelcontextprotocol/sdk     v1: Client + StdioClientTransport (Node 18+)
#   @modelcontextprotocol/client  v2: versionNegotiation auto (Node 20+)
# Then run the tests with MCP_INTEROP_NODE_DIR=DIR. Versions are pinned (the
# v1 SDK at the version e2e/interop/setup-node.sh pins, as both scripts fill
# the same prefix), so a run is reproducible; a second run with everything
# in place installs nothing. Without Node and npm it says so and exits 0, so
# CI on a machine without them still passes (the tests skip); on Node 18-19
# only v1 is installed and the v2 tests skip.
set -euo pipefail

dir=${1:?usage: setup.sh DIR}
sdk_version=1.32.2
client_version=2.4.0

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "setup.sh: node or npm not found; mcp-route's Node interop tests will be skipped" >&2
	exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
	echo "setup.sh: Node $(node --version) is older than 18; mcp-route's Node interop tests will be skipped" >&2
	exit 0
fi
want=("@modelcontextprotocol/sdk@$sdk_version")
if [ "$major" -ge 20 ]; then
	want+=("@modelcontextprotocol/client@$client_version")
else
	echo "setup.sh: Node $(node --version) is older than 20: not installing @modelcontextprotocol/client (its tests will be skipped)" >&2
fi

# installed PKG: the version of PKG in the prefix, or nothing.
installed() {
	local pj="$dir/node_modules/$1/package.json"
	[ -f "$pj" ] && node -p 'require(process.argv[1]).version' "$pj" 2>/dev/null || true
}

missing=()
for spec in "${want[@]}"; do
	pkg=${spec%@*}
	[ "$(installed "$pkg")" = "${spec##*@}" ] || missing+=("$spec")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup.sh: already installed in $dir" >&2
	exit 0
fi

mkdir -p "$dir"
npm install --prefix "$dir" --save-exact --no-audit --no-fund --loglevel=error "${missing[@]}"
for spec in "${want[@]}"; do
	pkg=${spec%@*}
	if [ "$(installed "$pkg")" != "${spec##*@}" ]; then
		echo "setup.sh: $spec did not install into $dir" >&2
		exit 1
	fi
done
echo "setup.sh: installed into $dir; run the tests with MCP_INTEROP_NODE_DIR=$dir" >&2
