# syntax=docker/dockerfile:1
#
# mcp-route over Streamable HTTP in an image that holds little else: the
# static mcpipe binaries of the release archive, the 32 stock tools
# (/srv/mcp/tools, links to mcp-stock), a static /bin/sh (busybox; no other
# command is linked), the CA certificates (for HTTPS upstreams), /tmp, and a
# user of its own. No package manager, no libc: your tools must be static
# executables or /bin/sh scripts (mount them over /srv/mcp/tools);
# examples/deploy/README.md shows how to add an interpreter.
#
# Build it from a clone of the repository (with its .git: the binaries are
# stamped with the commit):
#
#   docker build -t mcp-route:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/mcp-route:0.1.0 .
#   docker build --build-arg VERSION=1.2.3 -t mcp-route:1.2.3 .
#
# The build stage runs tools/release.sh for the target platform, so the
# binaries are those of mcpipe_VERSION_linux_ARCH.tar.gz byte for byte, and
# cross-compiles (no emulation for other platforms). Without .git in the
# context, pass --build-arg MCPIPE_COMMIT=HASH --build-arg
# SOURCE_DATE_EPOCH=SECONDS.
#
# Run it: examples/deploy/README.md ("Container image"). The default command
# serves http://0.0.0.0:8080/mcp and wants bearer tokens in
# /run/secrets/mcp-route/http-tokens: mount them, the image holds no secret.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=
ARG MCPIPE_COMMIT=
ARG SOURCE_DATE_EPOCH=
# /bin/sh for the image: mcp-route's start-up probe of the kernel
# confinement runs a POSIX shell script in a confined child (without one the
# tools run unconfined, with a warning), and sh_exec and #!/bin/sh tools need
# it. Debian's static busybox (GPL-2.0; its copyright file goes in the image,
# the source is Debian's busybox package), for the target's architecture
# (amd64 and arm64 are the same names in Go and Debian).
RUN set -e; \
    if [ "$TARGETARCH" != "$(dpkg --print-architecture)" ]; then dpkg --add-architecture "$TARGETARCH"; fi; \
    apt-get update; \
    cd /tmp && apt-get download "busybox-static:$TARGETARCH" && dpkg-deb -x busybox-static_*.deb /busybox; \
    rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN MCPIPE_RELEASE_PLATFORMS="$TARGETOS/$TARGETARCH" tools/release.sh /release $VERSION
# The image's file tree. The links are made by a build-platform mcp-stock
# (the target's may not run here) and point where the image has it.
RUN mkdir -p /rootfs/bin /rootfs/usr/local/bin /rootfs/usr/share/doc/mcpipe /rootfs/usr/share/doc/busybox-static /rootfs/srv/mcp/root /rootfs/tmp /rootfs/etc/ssl/certs \
 && cp /busybox/bin/busybox /rootfs/bin/sh \
 && cp /busybox/usr/share/doc/busybox-static/copyright /rootfs/usr/share/doc/busybox-static/copyright \
 && tar -xzf /release/mcpipe_*_"$TARGETOS"_"$TARGETARCH".tar.gz -C /rootfs/usr/local/bin --strip-components=1 --wildcards '*/mcp-*' \
 && tar -xzf /release/mcpipe_*_"$TARGETOS"_"$TARGETARCH".tar.gz -C /rootfs/usr/share/doc/mcpipe --strip-components=1 --wildcards '*/LICENSE' '*/NOTICE' '*/README.md' \
 && CGO_ENABLED=0 go run -trimpath -buildvcs=false ./mcp-stock install --exe /usr/local/bin/mcp-stock /rootfs/srv/mcp/tools \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt \
 && printf 'root:x:0:0:root:/:/sbin/nologin\nmcp:x:10001:10001:mcp-route:/srv/mcp/root:/sbin/nologin\n' > /rootfs/etc/passwd \
 && printf 'root:x:0:\nmcp:x:10001:\n' > /rootfs/etc/group \
 && chmod 1777 /rootfs/tmp

FROM scratch
LABEL org.opencontainers.image.title="mcp-route" \
      org.opencontainers.image.description="mcpipe's mcp-route: every executable in a directory served as an MCP tool, over Streamable HTTP" \
      org.opencontainers.image.source="https://github.com/mcpipe/mcpipe" \
      org.opencontainers.image.licenses="Apache-2.0" \
      io.modelcontextprotocol.server.name="io.github.mcpipe/mcp-route"
COPY --from=build /rootfs/ /
# The root is the one place the tools write; the tools' directory stays
# root's, which they cannot change.
COPY --from=build --chown=10001:10001 /rootfs/srv/mcp/root /srv/mcp/root
USER 10001:10001
VOLUME ["/srv/mcp/tools", "/srv/mcp/root"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcp-route"]
CMD ["--http=0.0.0.0:8080", "--http-token-file=/run/secrets/mcp-route/http-tokens", "--tools=/srv/mcp/tools", "--root=/srv/mcp/root"]
