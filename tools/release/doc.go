// Package release holds no code: its tests check what a release ships.
//
//   - TestReleaseScript runs tools/release.sh twice, as CI does, and checks
//     the archives (each platform's, with the binaries, LICENSE, NOTICE and
//     README.md, owned by 0:0 and dated at the commit), that SHA256SUMS
//     verifies, that the host's binaries print the stamped version and
//     commit, that the Linux ones are static, and that the two runs gave
//     identical bytes. It builds every platform, which takes minutes;
//     MCPIPE_RELEASE_PLATFORMS="linux/amd64" (the script's own variable)
//     limits it to one. It needs the source tree, Go, git and GNU tar, so it
//     is skipped under Bazel's sandbox and with -short, saying so; run it
//     with go test -run TestReleaseScript ./tools/release/.
//   - TestDockerfile checks the Dockerfile's invariants: a build stage that
//     runs tools/release.sh for the target platform, a final stage from
//     scratch with a non-root USER, the stamped static binaries, CA
//     certificates, a tools volume, and no secret baked in.
//   - TestDeployUsesImage checks that the Kubernetes example runs that
//     image as it is made: its version, user, tools, root and a writable
//     /tmp.
//   - TestDockerImageFiles builds the final image's file tree as the
//     Dockerfile does (the build stage's commands, with the release script)
//     and runs mcp-route from it as the image's ENTRYPOINT and CMD would,
//     in a chroot of a user namespace: Docker cannot run in CI.
//   - TestServerJSON validates server.json against the vendored MCP
//     registry schema (third_party/mcp-registry) with internal/jsonschema,
//     and checks that what it says exists: the version, the release archive
//     names, the image's command line.
package release
