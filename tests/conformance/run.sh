#!/usr/bin/env bash
# `make conformance`: the official MCP conformance suite against
# `rustpad-mcp --http`, once per protocol revision, judged against
# expected-failures.yaml. Starts a local test Rustpad and stops everything on exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
node="$here/node_modules/node/bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
results="$root/target/conformance"
# Named by the Makefile (its build directory may be elsewhere); not for the server's environment.
mcp_bin=${RUSTPAD_MCP_BIN:-$root/target/release/rustpad-mcp}
test_server_bin=${RUSTPAD_TEST_SERVER_BIN:-$root/target/release/rustpad-test-server}
unset RUSTPAD_MCP_BIN RUSTPAD_TEST_SERVER_BIN
rm -rf "$results" && mkdir -p "$results"

rustpad_out="$results/rustpad.out"
"$test_server_bin" --port 0 > "$rustpad_out" &
pids=($!)
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
wait_for() { # file pattern
    for _ in $(seq 200); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "conformance: timed out waiting for $2 in $1" >&2
    cat "$1" >&2
    return 1
}
wait_for "$rustpad_out" "^listening on "
export RUSTPAD_URL=$(sed -n 's/^listening on //p' "$rustpad_out")

server_err="$results/rustpad-mcp.err"
"$mcp_bin" --http 127.0.0.1:0 2> "$server_err" &
pids+=($!)
wait_for "$server_err" "serving MCP at "
url=$(sed -n 's/.*serving MCP at \(http[^ ]*\).*/\1/p' "$server_err")
echo "conformance: suite $(cd "$here" && "$node" -p 'require("@modelcontextprotocol/conformance/package.json").version') against $url" >&2

status=0
for revision in 2025-11-25 2026-07-28; do
    echo "conformance: revision $revision" >&2
    if ! "$node" "$suite" server --url "$url" --requirements "$revision" \
        --expected-failures "$here/expected-failures.yaml" \
        -o "$results/$revision" > "$results/$revision.log" 2>&1; then
        status=1
        echo "conformance: revision $revision FAILED (full log: $results/$revision.log)" >&2
    fi
    sed -n '/=== SUMMARY ===/,$p' "$results/$revision.log" >&2
done
exit $status
