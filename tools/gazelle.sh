#!/usr/bin/env bash
# Regenerates every BUILD file: gazelle, then the data/env attributes of
# tests that run our binaries (tools/testdata.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./bazelw run //:gazelle
python3 tools/testdata.py
