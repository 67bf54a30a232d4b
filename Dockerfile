# The release image: the Linux binary dist built for the release (the component is inside, already
# compiled), on a base with nothing but the C library it links. The release workflow lays the
# binaries out as target/container/<arch>/rustpad-mcp and builds for amd64 and arm64
# (.github/workflows/publish-packages.yml); no step of it compiles anything.
#
#   docker run -i --rm -e RUSTPAD_URL=https://rustpad.example.net ghcr.io/rustpad-mcp/rustpad-mcp
#
# or over Streamable HTTP. A container's loopback is its own, so it listens on all its
# interfaces, which needs a token and the host names clients will use (docs/deployment.md):
#
#   docker run --rm -p 127.0.0.1:8080:8080 -e RUSTPAD_URL=https://rustpad.example.net \
#     -e RUSTPAD_MCP_HTTP_TOKEN=$(openssl rand -hex 32) -e RUSTPAD_MCP_HTTP_HOSTS=localhost:8080 \
#     ghcr.io/rustpad-mcp/rustpad-mcp --http 0.0.0.0:8080
#
# Untested here: the development machines have no container engine.

FROM gcr.io/distroless/cc-debian12:nonroot
ARG TARGETARCH
COPY --chmod=0755 target/container/${TARGETARCH}/rustpad-mcp /usr/local/bin/rustpad-mcp
ENTRYPOINT ["/usr/local/bin/rustpad-mcp"]
