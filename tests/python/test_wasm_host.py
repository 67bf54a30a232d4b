"""The component for WebAssembly hosts (target/wasm/rustpad-mcp-http.wasm) under the stock
`wasmtime serve`, with the fewest grants that work (-Scli -Sinherit-network
-Sallow-ip-name-lookup), driven by the official Python SDK over Streamable HTTP (2026-07-28) and
on the raw wire: reads, a write while a person types, the guard through input_required rounds,
the gate, and the settings every request needs.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
from collections.abc import Iterator, Mapping
from typing import Any
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp.types import ElicitResult

from conftest import ALL_TOOLS, RustpadServer, call, failed, ok, stop_process
from test_tls import tls_rustpad  # noqa: F401 (a fixture)
from test_http import (
    LEGACY,
    SEAL_KEY,
    TOKEN,
    exchange,
    http_client,
    modern_headers,
    modern_request,
)

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
WASMTIME = Path(os.environ.get("WASMTIME_BIN", ROOT / "target/wasmtime-cli/wasmtime_cli/wasmtime"))
COMPONENT = Path(os.environ.get("RUSTPAD_MCP_HTTP_WASM", ROOT / "target/wasm/rustpad-mcp-http.wasm"))
GRANTS = ["-Scli", "-Sinherit-network", "-Sallow-ip-name-lookup"]
# The documented second line of defence: longer than any call the component makes (see
# docs/deployment.md), so it only ever ends a call something else has hung.
LIMITS = ["-W", "timeout=60s"]
SERVING = re.compile(r"Serving HTTP on (http://\S+?)/?$")
BEARER = {"Authorization": f"Bearer {TOKEN}"}


class WasmHost:
    """`wasmtime serve` running the component with exactly `env` passed in."""

    def __init__(self, env: Mapping[str, str]):
        for path in (WASMTIME, COMPONENT):
            if not path.exists():
                raise RuntimeError(f"{path} is missing: run `make build` and `make test-clients`")
        settings = [arg for name, value in env.items() for arg in ("--env", f"{name}={value}")]
        self.process = subprocess.Popen(
            [str(WASMTIME), "serve", *GRANTS, *LIMITS, "--addr", f"127.0.0.1:{free_port()}", *settings, str(COMPONENT)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")},
        )
        assert self.process.stdout is not None
        self.output: list[str] = []
        for line in self.process.stdout:
            self.output.append(line)
            if match := SERVING.search(line.strip()):
                self.url = f"{match.group(1)}/mcp"
                break
        else:
            raise RuntimeError(f"wasmtime serve did not start: {''.join(self.output)}")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> None:
        stop_process(self.process)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def settings(rustpad: RustpadServer, **overrides: str | None) -> dict[str, str]:
    env = {
        "RUSTPAD_URL": rustpad.url,
        "RUSTPAD_SEAL_KEY": SEAL_KEY,
        "RUSTPAD_MCP_HTTP_TOKEN": TOKEN,
        "RUSTPAD_MCP_HTTP_HOSTS": "127.0.0.1",
    }
    env.update(overrides)
    return {name: value for name, value in env.items() if value is not None}


@contextmanager
def wasm_host(rustpad: RustpadServer, **overrides: str | None) -> Iterator[WasmHost]:
    host = WasmHost(settings(rustpad, **overrides))
    try:
        yield host
    finally:
        host.stop()


@pytest.fixture(scope="module")
def served(rustpad) -> Iterator[WasmHost]:
    with wasm_host(rustpad) as host:
        yield host


def sdk(host: WasmHost, **options):
    return http_client(host.url, "auto", headers=BEARER, **options)


async def test_tools_list_and_every_read_tool(served, rustpad, pad):
    rustpad.seed(pad, "first line\nsecond line\n", language="markdown")
    async with sdk(served) as client:
        assert client.protocol_version == "2026-07-28"
        assert [tool.name for tool in (await client.list_tools()).tools] == ALL_TOOLS
        assert ok(await call(client, "get_document", {"id": pad}))["text"] == "first line\nsecond line\n"
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert (info["length_characters"], info["language"]) == (23, "markdown")
        assert ok(await call(client, "get_stats", {}))["num_documents"] >= 1
        window = ok(await call(client, "get_document", {"id": pad, "start_line": 2}))
        assert window["text"] == "second line\n" and window["revision"] == 1
        changes = ok(await call(client, "get_changes", {"id": pad, "base": window["base"]}))
        assert (changes["operations"], changes["changed"]) == (0, False)


async def test_a_write_while_a_person_types_loses_nothing(served, rustpad, pad):
    rustpad.seed(pad, "start\n")
    appended = " [added by the model]"
    report: dict = {}
    async with sdk(served) as client:

        async def person() -> None:
            report.update(await rustpad.type(pad, seed=21, count=40, delay_us=3000, avoid=[appended]))

        async with anyio.create_task_group() as group:
            group.start_soon(person)
            await anyio.sleep(0.05)
            ok(await call(client, "append_to_document", {"id": pad, "text": appended}))
    text = rustpad.text(pad)
    assert text == report["final_text"]
    assert text.count(appended) == 1
    typed = "".join(report["typed"])
    assert len(text) == len("start\n") + len(typed) + len(appended)


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_set_document_asks_a_person_through_input_required(served, rustpad, pad, answer):
    original = "the person's notes\n"
    rustpad.seed(pad, original)
    asked = []

    async def person(context, params) -> ElicitResult:
        asked.append(params.message)
        if answer == "accept":
            return ElicitResult(action="accept", content={"confirm": True})
        return ElicitResult(action="decline")

    async with sdk(served, elicitation_callback=person) as client:
        result = await call(client, "set_document", {"id": pad, "text": "replaced"})
    assert len(asked) == 1 and f'pad "{pad}"' in asked[0]
    if answer == "accept":
        ok(result)
        assert rustpad.text(pad) == "replaced"
    else:
        assert "not confirmed (the person declined)" in failed(result)
        assert rustpad.text(pad) == original


async def test_a_pad_id_that_would_lead_elsewhere_is_refused(served, rustpad):
    for bad in ("../api/stats", "a/b", "%2e%2e", ".."):
        message = modern_request(1, "tools/call", {"name": "get_document", "arguments": {"id": bad}})
        reply = exchange(served.url, message, headers={**modern_headers("tools/call", "get_document"), **BEARER})
        assert reply.status == 200
        result = reply.json()["result"]
        assert result["isError"] is True and "invalid pad id" in result["content"][0]["text"], bad


def test_the_gate_asks_for_the_token_and_a_listed_host(served):
    listing = modern_request(1, "tools/list")
    refused = exchange(served.url, listing, headers=modern_headers("tools/list"))
    assert refused.status == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    wrong = exchange(served.url, listing, headers={**modern_headers("tools/list"), "Authorization": "Bearer nope"})
    assert wrong.status == 401
    elsewhere = exchange(
        served.url, listing, headers={**modern_headers("tools/list"), **BEARER, "Host": "evil.example"}
    )
    assert elsewhere.status == 403 and b"RUSTPAD_MCP_HTTP_HOSTS" in elsewhere.body
    foreign = exchange(
        served.url, listing, headers={**modern_headers("tools/list"), **BEARER, "Origin": "https://evil.example"}
    )
    assert foreign.status == 403
    assert exchange(served.url, None, method="GET", headers=BEARER).status == 405
    assert exchange(served.url.replace("/mcp", "/other"), listing, headers=BEARER).status == 404
    plain = exchange(served.url, "x", headers={**BEARER, "Content-Type": "text/plain"}, replace_headers=True)
    assert plain.status == 415


def test_a_legacy_request_stands_alone_and_gets_the_token(served, rustpad, pad):
    rustpad.seed(pad, "keep me\n")
    legacy = {"MCP-Protocol-Version": LEGACY, **BEARER}
    opened = exchange(
        served.url,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        headers=BEARER,
    )
    assert opened.status == 200 and "mcp-session-id" not in opened.headers
    assert opened.json()["result"]["protocolVersion"] == LEGACY
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "set_document", "arguments": {"id": pad, "text": "gone"}},
    }
    headers = {**legacy, "Mcp-Method": "tools/call", "Mcp-Name": "set_document"}
    first = exchange(served.url, request, headers=headers).json()["result"]
    text = first["content"][0]["text"]
    assert "WebAssembly host without sessions" in text and "works once" in text
    token = re.search(r'confirm_token="([0-9a-f]{64})"', text).group(1)
    assert rustpad.text(pad) == "keep me\n"
    request["params"]["arguments"]["confirm_token"] = token
    second = exchange(served.url, request, headers=headers).json()["result"]
    assert second.get("isError") is not True, second
    assert rustpad.text(pad) == "gone"


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"RUSTPAD_SEAL_KEY": None}, "RUSTPAD_SEAL_KEY"),
        ({"RUSTPAD_MCP_HTTP_TOKEN": None}, "RUSTPAD_MCP_HTTP_TOKEN"),
        ({"RUSTPAD_MCP_HTTP_HOSTS": None}, "RUSTPAD_MCP_HTTP_HOSTS"),
        ({"RUSTPAD_READONLY": "true"}, "RUSTPAD_READONLY"),
    ],
)
def test_a_missing_or_unknown_setting_is_named_on_every_request(rustpad, overrides, named):
    with wasm_host(rustpad, **overrides) as host:
        for _ in range(2):
            reply = exchange(host.url, modern_request(1, "tools/list"), headers={**modern_headers("tools/list"), **BEARER})
            assert reply.status == 500 and named.encode() in reply.body, reply.body


# -- wss:// ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("insecure", [True, False])
async def test_a_wss_pad_needs_its_certificate_accepted(tls_rustpad, pad, insecure):
    tls_rustpad.seed(pad, "behind TLS\n")
    overrides = {"RUSTPAD_INSECURE_TLS": "true"} if insecure else {}
    with wasm_host(tls_rustpad, **overrides) as host:
        async with sdk(host) as client:
            info = await call(client, "get_document_info", {"id": pad})
            appended = await call(client, "append_to_document", {"id": pad, "text": "more\n"})
            read = await call(client, "get_document", {"id": pad})
    if insecure:
        assert ok(info)["length_characters"] == len("behind TLS\n")
        ok(appended)
        assert tls_rustpad.text(pad) == "behind TLS\nmore\n"
    else:
        for refused in (info, appended):
            message = failed(refused)
            assert "certificate was not accepted" in message and "RUSTPAD_INSECURE_TLS=true" in message
        assert tls_rustpad.text(pad) == "behind TLS\n"
    # Reads over HTTP go through the WebAssembly host, which checks the certificate itself.
    message = failed(read)
    assert "not accepted by the WebAssembly host" in message and "only the collaboration socket" in message


# -- a Rustpad that stops reading ------------------------------------------------------------------


def test_calls_to_a_rustpad_that_never_reads_end_within_their_bound(served, rustpad, new_pad):
    """Ten calls at once on a pad whose server floods pings and never reads: each ends with the
    documented error within the stall bound, not at the host's timeout (or never, as when a
    socket's drop waited for the peer)."""
    pads = [new_pad(f"deaf{n}") for n in range(10)]
    for pad in pads:
        rustpad.seed(pad, "base")
        rustpad.set_mode(pad, "ping-flood")
    replies: dict[int, Any] = {}

    def one(n: int) -> None:
        tool, arguments = ("get_document_info", {"id": pads[n]}) if n % 2 else ("append_to_document", {"id": pads[n], "text": "x"})
        message = modern_request(n, "tools/call", {"name": tool, "arguments": arguments})
        replies[n] = exchange(
            served.url, message, headers={**modern_headers("tools/call", tool), **BEARER}, timeout=45
        )

    threads = [threading.Thread(target=one, args=(n,)) for n in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    # A call the host's timeout ended would be a 500 without the component's message.
    assert len(replies) == 10, f"{10 - len(replies)} calls did not end"
    for n, reply in sorted(replies.items()):
        assert reply.status == 200, (n, reply.body)
        message = reply.json()["result"]["content"][0]["text"]
        assert "Rustpad stopped reading" in message, (n, message)


def test_a_repeated_host_reaches_the_component_as_the_first_one_only(served):
    """`wasmtime serve` keeps the first Host of a request as its authority and hands the component
    no Host header (wasmtime-wasi-http strips it as forbidden), so the component cannot refuse a
    repeated one as `rustpad-mcp --http` does (docs/deployment.md). Pinned, so that a wasmtime
    that hands them over shows here; the component's gate refuses two whenever it sees them."""
    from test_http_strict import raw_request

    port = int(served.url.rsplit(":", 1)[1].split("/")[0])
    body = json.dumps(modern_request(1, "tools/list")).encode()
    base = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", BEARER["Authorization"]),
        *modern_headers("tools/list").items(),
    ]
    ours, theirs = ("Host", f"127.0.0.1:{port}"), ("Host", "evil.example")
    assert raw_request(port, "/mcp", [ours, *base], body) == 200
    assert raw_request(port, "/mcp", [ours, theirs, *base], body) == 200
    assert raw_request(port, "/mcp", [theirs, ours, *base], body) == 403
