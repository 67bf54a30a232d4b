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
# The binary carries the component already compiled: no cache, nothing to warm up.
RUN cargo build --release --locked -p rustpad-mcp

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin rustpad-mcp
COPY --from=build /src/target/release/rustpad-mcp /usr/local/bin/rustpad-mcp
USER rustpad-mcp
ENTRYPOINT ["/usr/local/bin/rustpad-mcp"]
