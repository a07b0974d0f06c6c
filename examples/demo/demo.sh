#!/usr/bin/env bash
# demo.sh: the main job, end to end. It serves the example tools and the
# stock pack with mcp-route, jailed to a fresh demo directory, and drives
# the server with mcp-call as a user would: the tool list, a few calls and
# their results, a crashing tool answered as an error while the server goes
# on serving, and a jail escape refused.
#
#   ./bazelw run //examples/demo          (Bazel builds the binaries)
#   examples/demo/demo.sh                 (plain Go: builds them with go build)
#
# Under Bazel the binaries arrive as arguments:
#   demo.sh MCP_ROUTE MCP_CALL MCP_STOCK PRIMES EXAMPLE_TOOLS_DIR
set -euo pipefail

work="$(mktemp -d "${TMPDIR:-/tmp}/mcpipe-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT

abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }

if (($# == 5)); then
  route="$(abspath "$1")" call="$(abspath "$2")" stock="$(abspath "$3")"
  primes="$(abspath "$4")" examples="$(abspath "$5")"
else
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  echo "building with go build ..." >&2
  (cd "$repo" && go build -o "$work/build/" ./mcp-route ./mcp-call ./mcp-stock ./examples/tools/src/primes)
  route="$work/build/mcp-route" call="$work/build/mcp-call" stock="$work/build/mcp-stock"
  primes="$work/build/primes" examples="$repo/examples/tools"
fi

# The tools directory: the example tools, a Go tool, and the stock pack.
bin="$work/bin"
mkdir -p "$bin"
for f in "$examples"/*; do
  case $(basename "$f") in README* | src | BUILD* | *.bazel) continue ;; esac
  cp "$f" "$bin/"
done
cp "$primes" "$bin/primes"
"$stock" install "$bin" >/dev/null

# The demo directory every path is jailed to.
root="$work/demo-root"
mkdir -p "$root/notes" "$root/src"
printf 'buy milk\nfix the jail test\nwrite the README\n' > "$root/notes/todo.txt"
printf 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n' > "$root/src/main.go"
printf 'mcpipe demo directory\n' > "$root/README"
echo "a secret outside the jail" > "$work/secret.txt"

# The server logs to a file; a user would point --log wherever they like.
export MCP_SERVER="$route --tools $bin --root $root --timeout 5s --env MCP_SH_ALLOW=ls,wc --log $work/route.log"

# Commands in bold on a terminal, plain in a pipe or a log.
if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
show() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }
# shown: each word as a user would type it (key='a value' quoted, plain words bare)
shown() {
  local out="" w
  for w in "$@"; do
    case $w in
    *" "* | *"'"*) [[ $w == *=* ]] && w="${w%%=*}='${w#*=}'" || w="'$w'" ;;
    esac
    out+=" $w"
  done
  printf '%s' "${out# }"
}
run() { show "mcp-call $(shown "$@")"; "$call" "$@"; }

# Count what mcp-route counts as a tool: executable files, not sidecars.
tools=0
for f in "$bin"/*; do [[ -f $f && -x $f ]] && tools=$((tools + 1)); done
echo "mcp-route serving $tools executables from a tools directory, jailed to $root"
show 'mcp-call discover'
"$call" discover
show 'mcp-call tools'
"$call" tools | tr '\n' ' ' | fold -s -w 78; echo   # one per line, folded here to save room
run describe echo
run call echo text='hello from a shell script over MCP'
run call wordcount text='the quick brown fox jumps over the lazy dog'
run call primes below=30
run call fs_list path=.
run call fs_grep pattern=jail path=notes
run call sh_exec command='wc -l notes/todo.txt'

show "mcp-call call crash   # a tool that dies by SIGSEGV"
set +e
"$call" call crash
status=$?
set -e
echo "(exit status $status: the tool's isError result, text on stderr)"

show 'mcp-call call fs_read path=../secret.txt   # outside the jail'
set +e
"$call" call fs_read path=../secret.txt
status=$?
set -e
echo "(exit status $status: refused)"

show "mcp-call script   # one connection: a crash, then more calls on the same server"
set +e
"$call" script <<'CALLS'
crash how=exit
echo text="still serving after the crash"
fs_head path=notes/todo.txt lines=2
CALLS
status=$?
set -e
echo "(exit status $status: the worst of the three calls; the server answered all of them)"

show "tail -n 4 route.log   # what the server logged (never on stdout)"
tail -n 4 "$work/route.log"
