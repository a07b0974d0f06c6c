#!/usr/bin/env bash
# Regenerates every BUILD file: gazelle, then the data/env attributes of
# tests that run our binaries (tools/testdata.py), then gazelle again so the
# attributes sit in gazelle's order. Idempotent: a second run changes nothing.
#
#   tools/gazelle.sh           rewrite the BUILD files
#   tools/gazelle.sh --check   fail, showing the diff, if they are not up to date
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./bazelw run //:gazelle
python3 tools/testdata.py 2>/dev/null
./bazelw run //:gazelle
if [[ ${1:-} == --check ]]; then
  if ! git diff --exit-code -- '*.bazel' '*.bzl' WORKSPACE; then
    echo "gazelle.sh: BUILD files are not up to date: run tools/gazelle.sh and commit the result" >&2
    exit 1
  fi
fi
