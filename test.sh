#!/usr/bin/env bash
# test.sh: every test of the repository, as CI runs them.
#
#   ./test.sh
#
# `./bazelw test --config=race //...`: unit, binary and end-to-end tests under
# Bazel, once, every Go target (the binaries e2e starts included) built with
# the race detector; the fuzz targets' seed corpora run as tests. It
# bootstraps Bazel on a fresh machine (see BAZEL notes in the README). The
# gazelle check builds in the same configuration, so nothing is built twice.
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

export MCPIPE_BAZEL_CONFIG=race
echo "== BUILD files up to date (gazelle)"
tools/gazelle.sh --check

echo "== bazel test --config=race //... (schemas: ${MCP_SPEC_DIR:-third_party/mcp-spec})"
./bazelw test --config=race //... "${spec_env[@]}" --test_env=MCP_INTEROP_NODE_DIR --test_env=PATH

# What Bazel's race-built pass cannot show, each once:
echo "== mcp-stock links statically in a plain go build (as users install it)"
go test -count=1 -run '^TestStaticBinary$' ./mcp-stock

echo "== every platform builds and vets; staticcheck"
tools/crossbuild.sh

echo "== release archives, built twice and compared; the container image's tree, run"
go test -count=1 -run '^(TestReleaseScript|TestDockerImageFiles)$' -timeout 60m ./tools/release/
