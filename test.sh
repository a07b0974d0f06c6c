#!/usr/bin/env bash
# test.sh: every test of the repository, as CI runs them.
#
#   ./test.sh
#
# 1. `./bazelw test //...`: unit, binary and end-to-end tests under Bazel
#    (bootstraps Bazel on a fresh machine; see BAZEL notes in the README).
# 2. `go test -race ./...`: the same tests under the race detector, plus the
#    fuzz seed corpora (Bazel 4 with rules_go 0.34 runs neither).
#
# Schema-conformance tests read the official MCP schemas vendored in
# third_party/mcp-spec; set MCP_SPEC_DIR to try other ones (it is passed on
# to Bazel only when set). They never skip: missing schemas fail them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$root"

export GOTOOLCHAIN=local
spec_env=()
if [[ -n ${MCP_SPEC_DIR:-} ]]; then
  export MCP_SPEC_DIR
  spec_env=(--test_env=MCP_SPEC_DIR)
fi
# MCPIPE_REQUIRE_LANDLOCK=1 (set by .ci/run) turns the confinement tests'
# skip on a kernel without Landlock into a failure.
if [[ -n ${MCPIPE_REQUIRE_LANDLOCK:-} ]]; then
  export MCPIPE_REQUIRE_LANDLOCK
  spec_env+=(--test_env=MCPIPE_REQUIRE_LANDLOCK)
fi

# Interoperability with servers and clients we did not write: the official
# TypeScript SDK (v1 and v2 clients, a server), the reference filesystem
# server, from npm, pinned. The Go SDK comes through go.mod.
export MCP_INTEROP_NODE_DIR="${MCP_INTEROP_NODE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/mcpipe-interop}"
echo "== npm packages for the interop tests into $MCP_INTEROP_NODE_DIR"
# One retry: a registry hiccup should not fail the whole run.
e2e/interop/setup-node.sh "$MCP_INTEROP_NODE_DIR" ||
  { sleep 5; e2e/interop/setup-node.sh "$MCP_INTEROP_NODE_DIR"; }

echo "== BUILD files up to date (gazelle)"
tools/gazelle.sh --check

echo "== bazel test //... (schemas: ${MCP_SPEC_DIR:-third_party/mcp-spec})"
./bazelw test //... "${spec_env[@]}" --test_env=MCP_INTEROP_NODE_DIR --test_env=PATH

echo "== go test -race ./..."
# -timeout only catches a hang: under the race detector, with other work
# loading the cores, e2e may need longer than go test's default 10 minutes.
go test -race -count=1 -timeout 30m ./...
