"""Connecting: the legacy initialize handshake, the 2026-07-28 discover probe and pinned use,
and what the server says about itself in each."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from conftest import (
    ALL_TOOLS,
    INITIALIZED,
    MCP_BIN,
    call,
    initialize_message,
    minimal_env,
    ok,
    request,
    run_server,
)

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def modern_meta() -> dict:
    return {META_VERSION: MODERN, META_CAPABILITIES: {}}


def check_identity(client) -> None:
    info = client.server_info
    assert info is not None
    assert info.name == "rustpad-mcp"
    assert info.version
    instructions = client.instructions
    assert instructions is not None
    assert "untrusted" in instructions.lower()


async def test_legacy_handshake_negotiates_2025_11_25(open_client):
    async with open_client("legacy") as client:
        assert client.protocol_version == "2025-11-25"
        check_identity(client)
        assert client.server_capabilities.tools is not None
        assert client.session.initialize_result is not None
        assert client.session.discover_result is None
        tools = await client.list_tools()
        assert len(tools.tools) == len(ALL_TOOLS)


async def test_auto_mode_discovers_2026_07_28(open_client):
    async with open_client("auto") as client:
        assert client.protocol_version == MODERN
        check_identity(client)
        discovered = client.session.discover_result
        assert discovered is not None, "auto mode fell back to initialize"
        assert MODERN in discovered.supported_versions
        assert "2025-11-25" in discovered.supported_versions
        assert client.server_capabilities.tools is not None
        tools = await client.list_tools()
        assert len(tools.tools) == len(ALL_TOOLS)


async def test_pinned_2026_07_28_works_without_any_handshake(open_client, rustpad, pad):
    rustpad.seed(pad, "pinned")
    async with open_client(MODERN) as client:
        assert client.protocol_version == MODERN
        tools = await client.list_tools()
        assert [t.name for t in tools.tools][0] == "get_document"
        result = await call(client, "get_document", {"id": pad})
        assert ok(result)["text"] == "pinned"
        # Stateless results identify the server in their _meta.
        assert result.meta is not None
        assert result.meta[META_SERVER_INFO]["name"] == "rustpad-mcp"


def test_initialize_echoes_a_supported_legacy_version_and_answers_others_with_its_latest():
    env = minimal_env(RUSTPAD_URL="http://127.0.0.1:9")
    run = run_server(
        env,
        [
            initialize_message(1, "2025-06-18"),
            INITIALIZED,
        ],
    )
    assert run.returncode == 0, run.stderr
    result = run.response(1)["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "rustpad-mcp"
    assert "untrusted" in result["instructions"].lower()
    assert "resultType" not in result

    run = run_server(env, [initialize_message(1, "1999-01-01")])
    assert run.response(1)["result"]["protocolVersion"] == "2025-11-25"


def test_modern_requests_carry_result_type_and_cache_hints_and_legacy_ones_need_initialize():
    env = minimal_env(RUSTPAD_URL="http://127.0.0.1:9")
    run = run_server(
        env,
        [
            request(1, "server/discover", {"_meta": modern_meta()}),
            request(2, "tools/list", {"_meta": modern_meta()}),
            request(3, "tools/list"),
            request(
                4, "tools/list", {"_meta": {META_VERSION: "2030-01-01", META_CAPABILITIES: {}}}
            ),
        ],
    )
    assert run.returncode == 0, run.stderr
    discover = run.response(1)["result"]
    assert discover["resultType"] == "complete"
    assert discover["supportedVersions"][0] == MODERN
    assert discover["_meta"][META_SERVER_INFO]["name"] == "rustpad-mcp"
    assert "untrusted" in discover["instructions"].lower()
    listing = run.response(2)["result"]
    assert listing["resultType"] == "complete"
    assert isinstance(listing["ttlMs"], int) and listing["cacheScope"] in ("public", "private")
    assert len(listing["tools"]) == len(ALL_TOOLS)
    # A legacy-looking request before initialize is refused, not served.
    assert "error" in run.response(3)
    unsupported = run.response(4)["error"]
    assert unsupported["code"] == -32022
    assert MODERN in unsupported["data"]["supported"]
    assert unsupported["data"]["requested"] == "2030-01-01"


def test_stdout_carries_only_protocol_messages():
    env = minimal_env(RUSTPAD_URL="http://127.0.0.1:9")
    run = run_server(env, [initialize_message(1), INITIALIZED, request(2, "ping")])
    assert run.returncode == 0
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) == 2
    assert run.response(2)["result"] == {}
    assert "rustpad-mcp" in run.stderr


def test_malformed_lines_get_json_rpc_errors_and_the_server_keeps_going():
    env = minimal_env(RUSTPAD_URL="http://127.0.0.1:9")
    lines = [
        "{not json",
        json.dumps({"jsonrpc": "1.0", "id": 7, "method": "ping"}),
        json.dumps(request(8, "tools/list", {"_meta": {META_VERSION: MODERN}})),
        json.dumps(request(9, "ping")),
    ]
    done = subprocess.run(
        [str(MCP_BIN)],
        input="".join(line + "\n" for line in lines),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {reply.get("id"): reply for reply in replies}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[7]["error"]["code"] == -32600
    # A 2026-07-28 request must say what the client can do.
    assert by_id[8]["error"]["code"] == -32602
    assert by_id[9]["result"] == {}


def test_a_cancelled_call_gets_no_answer_and_the_server_goes_on(rustpad, pad):
    # The socket of this pad never answers, so the call could only end by its own deadline.
    rustpad.set_mode(pad, "never-answer")
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    run = run_server(
        env,
        [
            initialize_message(1),
            INITIALIZED,
            request(2, "tools/call", {"name": "get_document_info", "arguments": {"id": pad}}),
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "the user gave up"},
            },
            request(3, "ping"),
            request(4, "tools/call", {"name": "get_stats", "arguments": {}}),
        ],
    )
    assert run.returncode == 0, run.stderr
    assert [message.get("id") for message in run.messages if message.get("id") == 2] == []
    assert run.response(3)["result"] == {}
    assert "isError" not in run.response(4)["result"]


def test_sigterm_stops_the_server_cleanly():
    process = subprocess.Popen(
        [str(MCP_BIN)],
        env=minimal_env(RUSTPAD_URL="http://127.0.0.1:9"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        process.stdin.write(json.dumps(initialize_message(1)) + "\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert reply["id"] == 1 and "result" in reply
        process.stdin.write(json.dumps(request(2, "ping")) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 2
        # Setup, not a measurement: let the server park in its next read of stdin, which stays
        # open, so the signal has to end a process that is blocked reading.
        time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("rustpad-mcp was still running 60 s after SIGTERM (stdin still open)")
        assert code == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
