#!/usr/bin/env bash
# Checks that mcpipe builds and vets on the platforms it promises (the
# README's platform table), and that staticcheck is clean:
#
#   darwin/amd64, darwin/arm64, freebsd/amd64   go build + go vet ./...
#                                               (vet covers the test files)
#   windows/amd64                               go build of mcp-call and
#                                               mcp-frame, go vet of them and
#                                               of our packages they import
#   linux (this machine)                        tools/staticcheck.sh ./...
#
#   tools/crossbuild.sh
#
# Prints one line per failure, "PLATFORM STEP: file:line:col: message"
# (staticcheck's as "staticcheck: ..."), then a summary; exits 1 if anything
# failed. Linux itself is built, vetted and tested by test.sh. Nothing runs
# the binaries it builds: this only proves they compile and vet.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0
start=$SECONDS
failures=0

# run LABEL CMD...: runs CMD, printing each failure as one line prefixed by
# LABEL, and returns 1 if it failed. The go command's "# package" headers
# are dropped, an indented continuation ("\timports x: ...") is joined to the
# line it continues, and a line repeated (a package and its test variant)
# is printed once.
run() {
  local label=$1 out
  shift
  out=$("$@" 2>&1) && return 0
  local lines
  lines=$(awk -v label="$label" '
    function emit() { if (line != "" && !seen[line]++) print label ": " line }
    /^#/ { next }
    /^[ \t]/ { if (line != "") { sub(/^[ \t]+/, ""); line = line " " $0 }; next }
    { emit(); line = $0; sub(/^vet: /, "", line) }
    END { emit() }' <<<"$out")
  [[ -n $lines ]] || lines="$label: failed without output"
  printf '%s\n' "$lines" >&2
  failures=$((failures + $(wc -l <<<"$lines")))
  return 1
}

for platform in darwin/amd64 darwin/arm64 freebsd/amd64; do
  export GOOS=${platform%/*} GOARCH=${platform#*/}
  # vet would repeat a build's errors: it runs on what builds.
  run "$platform build" go build ./... && run "$platform vet" go vet ./...
done
export GOOS=windows GOARCH=amd64
run "windows/amd64 build" go build ./mcp-call/... ./mcp-frame/... &&
  run "windows/amd64 vet" go vet $(go list -deps ./mcp-call/... ./mcp-frame/... | grep '^github.com/mcpipe/mcpipe/')
unset GOOS GOARCH
run staticcheck tools/staticcheck.sh ./...

if ((failures)); then
  echo "crossbuild: $failures failure(s) in $((SECONDS - start))s" >&2
  exit 1
fi
echo "crossbuild: darwin/amd64 darwin/arm64 freebsd/amd64 windows/amd64 build and vet, staticcheck: ok in $((SECONDS - start))s"
