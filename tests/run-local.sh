#!/usr/bin/env bash
# `make run`: serves MCP on stdio (or over HTTP with ARGS="--http PORT"; any
# arguments go to rustpad-mcp). With RUSTPAD_URL set, against that instance;
# without it, against a local test Rustpad started here and stopped when the
# server exits. Everything but MCP goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Makefile names the binaries (its build directory may be elsewhere); the server must not see
# these among its settings.
server=${RUSTPAD_MCP_BIN:-target/release/rustpad-mcp}
test_server=${RUSTPAD_TEST_SERVER_BIN:-target/release/rustpad-test-server}
unset RUSTPAD_MCP_BIN RUSTPAD_TEST_SERVER_BIN
if [[ -n "${RUSTPAD_URL:-}" ]]; then
    exec "$server" "$@"
fi
port_file=$(mktemp)
"$test_server" --port "${RUSTPAD_TEST_PORT:-0}" > "$port_file" &
rustpad=$!
trap 'kill "$rustpad" 2>/dev/null; rm -f "$port_file"' EXIT
for _ in $(seq 100); do
    [[ -s "$port_file" ]] && break
    sleep 0.05
done
url=$(sed -n 's/^listening on //p' "$port_file")
[[ -n "$url" ]] || { echo "rustpad-mcp: the local test Rustpad did not start" >&2; exit 1; }
export RUSTPAD_URL=$url
if [[ " $* " == *" --http "* ]]; then
    echo "rustpad-mcp: RUSTPAD_URL is not set, so a local test Rustpad is serving at $url (pads live in memory until this stops)." >&2
    "$server" "$@"
    exit
fi
cat >&2 <<NOTE
rustpad-mcp: RUSTPAD_URL is not set, so a local test Rustpad is serving at $url
  (pads live in memory until this stops). This process now speaks MCP on stdin/stdout.
  To use it from a client, register this command as a stdio MCP server, e.g.
    claude mcp add rustpad -- make -s -C $PWD run
  or run the binary against your own instance:
    RUSTPAD_URL=https://rustpad.example.net $(realpath "$server")
NOTE
"$server" "$@"
