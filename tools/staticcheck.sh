#!/usr/bin/env bash
# Runs staticcheck, at the version pinned in tools/staticcheck/go.mod (a
# module of its own, so that neither the root go.mod nor Bazel sees it; its
# go.sum pins the hashes), over the packages given (default ./...).
#
#   tools/staticcheck.sh [PACKAGES...]
#
# The first run builds staticcheck (about a minute of CPU, the module
# proxy needed once); later runs reuse it from Go's build cache. Upgrade:
#   (cd tools/staticcheck && GOSUMDB=off go get -tool honnef.co/go/tools/cmd/staticcheck@VERSION)
# Findings are file:line:col: message (check), one a line; the exit status
# is non-zero when there are any. A deliberate exception is a
# //lint:ignore CHECK reason comment on the line before.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
(($#)) || set -- ./...
exec go tool -modfile=tools/staticcheck/go.mod staticcheck "$@"
