# rustpad-mcp as a container: MCP over stdio (run with `docker run -i`).
#   docker build -t rustpad-mcp .
#   docker run -i --rm -e RUSTPAD_URL=https://rustpad.example.net rustpad-mcp
# or over Streamable HTTP. A container's loopback is its own, so it listens on
# all its interfaces, which needs a token (docs/deployment.md):
#   docker run --rm -p 127.0.0.1:8080:8080 -e RUSTPAD_URL=https://rustpad.example.net \
#     -e RUSTPAD_MCP_HTTP_TOKEN=$(openssl rand -hex 32) rustpad-mcp --http 0.0.0.0:8080

FROM rust:1.95-bookworm AS build
RUN rustup target add wasm32-wasip2
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p rustpad-mcp
# Compile the embedded component once at build time so containers start warm
# (the check itself fails without RUSTPAD_URL; only the cache matters here).
RUN mkdir -p /cache && RUSTPAD_MCP_CACHE_DIR=/cache target/release/rustpad-mcp --check || true

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin rustpad-mcp
COPY --from=build /src/target/release/rustpad-mcp /usr/local/bin/rustpad-mcp
COPY --from=build --chown=rustpad-mcp /cache /var/cache/rustpad-mcp
ENV RUSTPAD_MCP_CACHE_DIR=/var/cache/rustpad-mcp
USER rustpad-mcp
ENTRYPOINT ["/usr/local/bin/rustpad-mcp"]
