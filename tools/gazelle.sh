#!/usr/bin/env bash
# Regenerates every BUILD file: gazelle, then the data/env attributes of
# tests that run our binaries or read the MCP schemas (tools/testdata.py,
# which lists on stderr what it wrote), then gazelle again so the attributes
# sit in gazelle's order. Idempotent: a second run changes nothing.
#
#   tools/gazelle.sh           rewrite the BUILD files
#   tools/gazelle.sh --check   fail, showing the diff, if they are not up to date
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
snapshot() { git ls-files -co --exclude-standard -- '*.bazel' '*.bzl' WORKSPACE | sort | xargs sha256sum; }
before=$(snapshot)
# MCPIPE_BAZEL_CONFIG (test.sh sets it): build gazelle in the configuration
# the tests use next, so that their shared dependencies build once.
config=(); [[ -n ${MCPIPE_BAZEL_CONFIG:-} ]] && config=(--config="$MCPIPE_BAZEL_CONFIG")
./bazelw run "${config[@]}" //:gazelle
python3 tools/testdata.py
./bazelw run "${config[@]}" //:gazelle
if [[ ${1:-} == --check ]]; then
  if [[ $(snapshot) != "$before" ]]; then
    git diff --stat -- '*.bazel' '*.bzl' WORKSPACE >&2
    echo "gazelle.sh: BUILD files were not up to date (now rewritten): commit the result" >&2
    exit 1
  fi
fi
