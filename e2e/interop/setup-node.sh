#!/usr/bin/env bash
# setup-node.sh DIR: install the Node MCP servers mcp-call's interop tests
# run against into the npm prefix DIR (created if missing):
#   @modelcontextprotocol/server-filesystem  (the reference filesystem server)
#   @modelcontextprotocol/sdk                (the TypeScript SDK, for ts-server/server.cjs)
# Then run the tests with MCP_INTEROP_NODE_DIR=DIR. Without Node and npm it
# says so and exits 0, so CI on a machine without them still passes (the
# tests skip). Needs Node 20 or later; the versions are pinned so a run is
# reproducible.
set -euo pipefail

dir=${1:?usage: setup-node.sh DIR}
fs_version=2026.8.31
sdk_version=1.32.2

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "setup-node.sh: node or npm not found; Node interop tests will be skipped" >&2
	exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
	echo "setup-node.sh: Node $(node --version) is older than 20; Node interop tests will be skipped" >&2
	exit 0
fi

mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
	"@modelcontextprotocol/server-filesystem@$fs_version" \
	"@modelcontextprotocol/sdk@$sdk_version"
test -x "$dir/node_modules/.bin/mcp-server-filesystem"
echo "setup-node.sh: installed into $dir; run the tests with MCP_INTEROP_NODE_DIR=$dir" >&2
