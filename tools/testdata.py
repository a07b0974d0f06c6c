#!/usr/bin/env python3
"""Adds what each go_test reads at run time to its BUILD target.

Tests find a binary they run as a real process through internal/testbin,
which reads an environment variable such as MCP_ROUTE_BIN (see that
package); tests that import internal/spectest read the vendored MCP schemas,
//third_party/mcp-spec, from runfiles. This script greps each test package
for the variables and imports it uses and writes the matching `data` and
`env` attributes, which gazelle keeps. Run it after `bazel run //:gazelle`
(./tools/gazelle.sh does both).
"""
import os
import re
import sys

BINARIES = {
    "MCP_ROUTE_BIN": "//mcp-route",
    "MCP_CALL_BIN": "//mcp-call",
    "MCP_FRAME_BIN": "//mcp-frame",
    "MCP_JAIL_BIN": "//mcp-jail",
    "MCP_STOCK_BIN": "//mcp-stock",
    "MCP_GOSDK_SERVER_BIN": "//e2e/interop/gosdk-server",
    "EXAMPLE_PRIMES_BIN": "//examples/tools/src/primes",
    "MCP_TESTWORKER_BIN": "//internal/testbin/testworker",
    "MCP_NULL_SERVER_BIN": "//internal/testbin/nullserver",
    "MCP_RELAY_BIN": "//internal/testbin/relay",
}
# The official MCP schemas, for every test package using internal/spectest.
SPEC_IMPORT = '"github.com/mcpipe/mcpipe/internal/spectest"'
SPEC_DATA = "//third_party/mcp-spec"
# Plain data some test packages read from the source tree.
EXTRA_DATA = {
    "e2e": [
        "//examples/tools",
        "//examples/hosts",
        "//examples/demo:demo.sh",
        "//examples/deploy:nginx/mcp.conf.template",
        "//examples/deploy:systemd/mcp-route@.service",
        "//examples/deploy:kubernetes/mcp-route.yaml",
        "interop/route-clients/client.mjs",
        "interop/ts-server/server.cjs",
    ],
    "mcp-route/scaffold": ["//examples/tools/src/hello:main.go"],
    "mcp-route": ["README.md"],  # TestHelpSaysNoTTY: --help and README agree
    # TestDockerfile, TestDeployUsesImage and TestServerJSON; the tests that
    # run tools/release.sh need the source tree and skip under Bazel.
    "tools/release": [
        "//:Dockerfile",
        "//:server.json",
        "//third_party/mcp-registry:server.schema.json",
        "//examples/deploy:kubernetes/mcp-route.yaml",
    ],
    "internal/buildcheck": [
        "//:MODULE.bazel",
        "//:deps.bzl",
        "//:go.mod",
        "//tools:offline_deps.bzl",
    ],
}

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
for dirpath, dirnames, filenames in os.walk("."):
    dirnames[:] = [d for d in dirnames if not d.startswith((".", "bazel-")) and d not in ("third_party", "node_modules")]
    pkg = os.path.normpath(dirpath)
    tests = [f for f in filenames if f.endswith("_test.go")]
    if not tests or "BUILD.bazel" not in filenames:
        continue
    used = set()
    spec = pkg == "internal/spectest"
    for f in tests:
        text = open(os.path.join(dirpath, f)).read()
        used |= {v for v in BINARIES if '"%s"' % v in text}
        spec = spec or SPEC_IMPORT in text
    data = sorted(BINARIES[v] for v in used) + EXTRA_DATA.get(pkg, []) + ([SPEC_DATA] if spec else [])
    if not data:
        continue
    env = {v: "$(rootpath %s)" % BINARIES[v] for v in sorted(used)}
    build = os.path.join(dirpath, "BUILD.bazel")
    text = open(build).read()
    m = re.search(r'go_test\(\n    name = "[^"]+",\n', text)
    if not m:
        continue
    start = m.start()
    end = text.index("\n)\n", start)
    block = text[start:end]
    block = re.sub(r'\n    data = \[[^\]]*\],', "", block)
    block = re.sub(r'\n    data = glob\(\[[^\]]*\]\)( \+ \[[^\]]*\])?,', "", block)
    block = re.sub(r'\n    env = \{[^}]*\},', "", block)
    attrs = "    data = [\n" + "".join('        "%s",\n' % d for d in data) + "    ]"
    if os.path.isdir(os.path.join(dirpath, "testdata")):
        # gazelle's own data for test packages with a testdata directory
        attrs = '    data = glob(["testdata/**"]) + [\n' + attrs[len("    data = [\n"):]
    attrs += ",\n"
    if env:
        attrs += "    env = {\n" + "".join('        "%s": "%s",\n' % kv for kv in env.items()) + "    },\n"
    block = block[: m.end() - start] + attrs + block[m.end() - start:]
    text = text[:start] + block + text[end:]
    open(build, "w").write(text)
    print("%s: %s" % (build, ", ".join(data)), file=sys.stderr)
