#!/usr/bin/env bash
# tools/release.sh OUTDIR [VERSION]: the release archives of mcpipe.
#
# Builds every binary statically (CGO_ENABLED=0) with -trimpath, stamped so
# that --version prints VERSION and the commit, for each platform:
#
#   linux/amd64 linux/arm64 darwin/amd64 darwin/arm64   all five binaries
#   windows/amd64                                       mcp-call, mcp-frame
#
# and writes into OUTDIR (made if missing; it must be empty) one archive per
# platform, mcpipe_VERSION_OS_ARCH.tar.gz (windows too: Windows 10 and later
# extract it with the tar.exe they ship), holding the directory
# mcpipe_VERSION_OS_ARCH/ with the binaries, LICENSE, NOTICE and README.md;
# and SHA256SUMS, in the format `sha256sum -c` checks. Nothing is published.
#
# VERSION defaults to internal/version's Number; it is 1.2.3 or 1.2.3-rc.1,
# without a leading v. MCPIPE_RELEASE_PLATFORMS="linux/amd64 ..." builds only
# those platforms (the Dockerfile builds one; tests build the host's).
#
# Reproducible: two runs on the same commit with the same Go give identical
# bytes. Every time in the archives is the commit's time (SOURCE_DATE_EPOCH,
# which overrides it when set), entries are sorted and owned by 0:0 with
# fixed modes, gzip stores no name or time (-n), the build is -trimpath with
# -buildvcs=false (the commit is stamped explicitly instead, so a tree
# without .git builds the same bytes given MCPIPE_COMMIT and
# SOURCE_DATE_EPOCH) and GOFLAGS, GOAMD64, GOARM64 and GOEXPERIMENT are
# fixed so the caller's environment cannot change the code generated. A
# tree with uncommitted changes or untracked files is stamped COMMIT-dirty,
# with a warning.
#
# Needs Go (the go.mod version), git (or MCPIPE_COMMIT and
# SOURCE_DATE_EPOCH), GNU tar, gzip and sha256sum or shasum.
#
# Exit status: 0 every archive written; 1 a platform failed to build (the
# others' archives and SHA256SUMS are still written, and each failure is
# named on stderr); 2 bad usage or a missing tool.
set -euo pipefail
export LC_ALL=C

prog=release.sh
die() { echo "$prog: $*" >&2; exit 2; }

[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || die "usage: tools/release.sh OUTDIR [VERSION] (VERSION like 1.2.3; MCPIPE_RELEASE_PLATFORMS=\"linux/amd64 ...\" limits the platforms)"
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
version=${2:-$(sed -n 's/^var Number = "\(.*\)"$/\1/p' "$root/internal/version/version.go")}
[[ -n $version ]] || die "no VERSION given and none found in internal/version/version.go"
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$ ]] ||
	die "VERSION $version is not a semantic version: give 1.2.3 or 1.2.3-rc.1 (no leading v)"

platforms=${MCPIPE_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
platforms=${platforms//,/ }
unix_bins="mcp-route mcp-call mcp-jail mcp-stock mcp-frame"
windows_bins="mcp-call mcp-frame"
for p in $platforms; do
	case $p in
	linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64 | windows/amd64) ;;
	*) die "platform $p is not released: MCPIPE_RELEASE_PLATFORMS takes linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64" ;;
	esac
done

command -v go >/dev/null || die "go not found on PATH: install the Go of go.mod"
tar --version 2>/dev/null | grep -q 'GNU tar' || die "tar is not GNU tar (needed for --sort and --owner): install it (macOS: brew install gnu-tar, then put gtar first on PATH as tar)"
command -v gzip >/dev/null || die "gzip not found on PATH"
if command -v sha256sum >/dev/null; then
	sha256() { sha256sum "$@"; }
elif command -v shasum >/dev/null; then
	sha256() { shasum -a 256 "$@"; }
else
	die "neither sha256sum nor shasum found on PATH"
fi

# The commit and its time, unless the caller gives them (a tree without
# .git, such as a Docker build context that left it out).
commit=${MCPIPE_COMMIT:-}
if [[ -z $commit ]]; then
	git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
		die "$root is not a git checkout: set MCPIPE_COMMIT=HASH and SOURCE_DATE_EPOCH=SECONDS (the commit's time) to build it"
	commit=$(git -C "$root" rev-parse HEAD)
	# Untracked files count: one in a package directory is compiled in.
	if [[ -n $(git -C "$root" status --porcelain) ]]; then
		commit=$commit-dirty
	fi
fi
[[ $commit =~ ^[0-9a-f]{7,64}(-dirty)?$ ]] || die "MCPIPE_COMMIT $commit is not a git hash"
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
	git -C "$root" rev-parse --git-dir >/dev/null 2>&1 || die "SOURCE_DATE_EPOCH is not set and $root is not a git checkout: set it to the commit's time in seconds"
	SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct HEAD)
fi
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH $SOURCE_DATE_EPOCH is not a number of seconds"
export SOURCE_DATE_EPOCH

mkdir -p "$out"
out=$(cd "$out" && pwd)
[[ -z $(ls -A "$out") ]] || die "OUTDIR $out is not empty: give a new or empty directory (SHA256SUMS lists everything in it)"
stage=$(mktemp -d "${TMPDIR:-/tmp}/mcpipe-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT
if [[ $commit == *-dirty && -z ${MCPIPE_COMMIT:-} ]]; then
	echo "$prog: warning: the tree has uncommitted changes: stamping $commit; release from a clean checkout" >&2
fi

# Fixed code generation whatever the caller's environment says.
export CGO_ENABLED=0 GOFLAGS=-mod=readonly GOWORK=off GOAMD64=v1 GOARM64=v8.0 GOEXPERIMENT=
unset GOARM GO386 GOMIPS GOPPC64 GORISCV64 2>/dev/null || true
pkg=github.com/mcpipe/mcpipe/internal/version
ldflags="-s -w -X $pkg.Number=$version -X $pkg.Commit=$commit"
echo "$prog: mcpipe $version, commit $commit, $(cd "$root" && go version), into $out" >&2

failed=()
for p in $platforms; do
	goos=${p%/*} goarch=${p#*/}
	name=mcpipe_${version}_${goos}_${goarch}
	dir=$stage/$name
	mkdir -p "$dir"
	bins=$unix_bins exe=
	if [[ $goos == windows ]]; then
		bins=$windows_bins exe=.exe
	fi
	ok=1
	for b in $bins; do
		if ! log=$(cd "$root" && GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$dir/$b$exe" "./$b" 2>&1); then
			echo "$prog: $p: $b does not build for $p, so there is no $name.tar.gz:" >&2
			printf '%s\n' "$log" | sed 's/^/    /' >&2
			ok=0
		fi
	done
	if [[ $ok == 0 ]]; then
		failed+=("$p")
		continue
	fi
	cp "$root/LICENSE" "$root/NOTICE" "$root/README.md" "$dir/"
	chmod 0755 "$dir" "$dir"/mcp-*
	chmod 0644 "$dir/LICENSE" "$dir/NOTICE" "$dir/README.md"
	# ustar: no pax headers with access times; names are short.
	(cd "$stage" && tar --format=ustar --sort=name --mtime="@$SOURCE_DATE_EPOCH" \
		--owner=0 --group=0 --numeric-owner -cf - "$name") | gzip -9 -n >"$out/$name.tar.gz"
	echo "$prog: $p: $name.tar.gz" >&2
done

(cd "$out" && shopt -s nullglob && files=(mcpipe_*.tar.gz) && if ((${#files[@]})); then sha256 "${files[@]}"; fi) >"$out/SHA256SUMS"
if ((${#failed[@]})); then
	echo "$prog: FAILED: no archive for ${failed[*]} (errors above); the other archives and SHA256SUMS are in $out" >&2
	exit 1
fi
echo "$prog: done: $out/SHA256SUMS" >&2
