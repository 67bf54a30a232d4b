"""The pad view (MCP Apps) on the wire: which clients are offered it, in our binary over HTTP and
in the component under `wasmtime serve`, and that the view they read is the committed file. What
the view does in a browser is tests/typescript/view.test.mjs."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from conftest import MCP_BIN, RustpadServer, minimal_env
from http_harness import LEGACY, exchange, http_server, modern_headers, modern_request
from wasm_hosts import BEARER, WASMTIME, needs, wasm_host

ROOT = Path(__file__).resolve().parents[2]
VIEW_FILE = ROOT / "guest/view/pad-view.html"
VIEW_URI = "ui://rustpad/pad-view.html"
VIEW_MIME = "text/html;profile=mcp-app"
RENDERS = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [VIEW_MIME]}}}
NO_TOKEN: dict[str, str] = {}
LINKED = ["get_document", "get_changes", "edit_document", "revert_changes"]


@contextmanager
def server(kind: str, rustpad: RustpadServer) -> Iterator[tuple[str, dict[str, str]]]:
    """Our binary with --http, or the component under wasmtime serve: its URL and headers."""
    if kind == "binary":
        with http_server(rustpad) as running:
            yield running.url, NO_TOKEN
        return
    needs(WASMTIME.exists(), f"{WASMTIME} is missing: run `make test-clients`")
    with wasm_host(rustpad) as host:
        yield host.url, BEARER


def modern(url: str, headers: dict[str, str], method: str, capabilities: dict[str, Any], **params: Any) -> bytes:
    message = modern_request(1, method, params, elicitation=False)
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    answer = exchange(url, message, headers={**headers, **modern_headers(method, params.get("uri"))})
    # (An error of this revision comes with 400.)
    assert answer.status == (400 if b'"error"' in answer.body else 200), answer.body
    return answer.body


def legacy_session(url: str, headers: dict[str, str], capabilities: dict[str, Any]) -> dict[str, str]:
    """Opens a 2025-11-25 session declaring `capabilities`; the headers later requests carry."""
    opened = exchange(
        url,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "0"}},
        },
        headers=headers,
    )
    assert opened.status == 200, opened.body
    later = {**headers, "MCP-Protocol-Version": LEGACY}
    if "mcp-session-id" in opened.headers:
        later["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    return later


def legacy(url: str, headers: dict[str, str], method: str, **params: Any) -> bytes:
    answer = exchange(url, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers)
    assert answer.status == 200, answer.body
    return answer.body


def linked(body: bytes) -> list[str]:
    return [
        tool["name"]
        for tool in json.loads(body)["result"]["tools"]
        if tool.get("_meta", {}).get("ui", {}).get("resourceUri") == VIEW_URI
    ]


@pytest.mark.parametrize("kind", ["binary", "wasmtime"])
def test_a_2026_client_that_renders_views_gets_the_view_and_others_get_the_same_list(kind, rustpad):
    with server(kind, rustpad) as (url, headers):
        plain = modern(url, headers, "tools/list", {})
        other_extension = modern(url, headers, "tools/list", {"extensions": {"io.example/other": {}}})
        viewing = modern(url, headers, "tools/list", RENDERS)
        # Clients without the extension are answered byte for byte alike, and publicly cacheable.
        assert plain == other_extension
        assert b"ui://" not in plain and json.loads(plain)["result"]["cacheScope"] == "public"
        assert linked(viewing) == LINKED
        assert json.loads(viewing)["result"]["cacheScope"] == "private"
        # The view's own wait comes last, hidden from the model; the rest is the same list.
        viewing_tools, plain_tools = json.loads(viewing)["result"]["tools"], json.loads(plain)["result"]["tools"]
        assert viewing_tools[-1]["name"] == "follow_pad"
        assert viewing_tools[-1]["_meta"] == {"ui": {"visibility": ["app"]}}
        for viewed, plain_tool in zip(viewing_tools[:-1], plain_tools, strict=True):
            viewed.pop("_meta", None)
            assert viewed == plain_tool
        read = json.loads(modern(url, headers, "resources/read", RENDERS, uri=VIEW_URI))["result"]["contents"][0]
        assert read["mimeType"] == VIEW_MIME
        assert read["text"] == VIEW_FILE.read_text(encoding="utf-8")
        assert read["_meta"]["ui"]["csp"] == {"connectDomains": [], "resourceDomains": []}
        # Any other client is answered as before the view existed.
        refused = json.loads(modern(url, headers, "resources/read", {}, uri=VIEW_URI))
        assert refused["error"]["message"].endswith("this server's resources are rustpad://{id}")


@pytest.mark.parametrize("kind", ["binary", "wasmtime"])
def test_a_2025_client_gets_the_view_only_where_its_session_is_kept(kind, rustpad):
    with server(kind, rustpad) as (url, headers):
        viewing = legacy_session(url, headers, RENDERS)
        plain = legacy_session(url, headers, {})
        assert b"ui://" not in legacy(url, plain, "tools/list")
        if kind == "binary":
            assert linked(legacy(url, viewing, "tools/list")) == LINKED
            assert VIEW_MIME in json.loads(legacy(url, viewing, "resources/read", uri=VIEW_URI))["result"]["contents"][0]["mimeType"]
        else:
            # wasmtime serve keeps no session, so each request stands alone and carries no
            # capabilities: the view is offered there in 2026-07-28 only.
            assert "Mcp-Session-Id" not in viewing
            assert legacy(url, viewing, "tools/list") == legacy(url, plain, "tools/list")


def test_the_view_follows_read_only_and_the_tool_filter(rustpad):
    with http_server(rustpad, RUSTPAD_READ_ONLY="true") as running:
        assert linked(modern(running.url, NO_TOKEN, "tools/list", RENDERS)) == ["get_document", "get_changes"]
    with http_server(rustpad, RUSTPAD_DENY_TOOLS="get_document,get_changes,edit_document,revert_changes") as running:
        body = modern(running.url, NO_TOKEN, "tools/list", RENDERS)
        assert b"ui://" not in body and json.loads(body)["result"]["cacheScope"] == "public"
        refused = json.loads(modern(running.url, NO_TOKEN, "resources/read", RENDERS, uri=VIEW_URI))
        assert "offers none of them here" in refused["error"]["message"]


# The tools/list responses on stdio, to the two requests below, byte for byte, first recorded from
# the build before the view (cc709e8). A change to a tool's definition changes them on purpose:
# then record the new hashes here, from a build that still shows clients without the extension
# nothing new. Recorded again since: `people` items say `this_server` (four output schemas); then
# `revert_changes`, the undo fields of the write results, `language_before` and the authors'
# `connections` (its build shows no `ui://` to such a client, as the test below checks too); then
# `this_server`'s description, once marks were read per write.
LIST_WITHOUT_THE_VIEW = {
    "2025-11-25": "a512cabc59f3f073d81753a945767b6389159ae71314cbf746c35ba8b6ddb95f",
    "2026-07-28": "7bfee9169a931f2a7447fa57f3cfb1d254c26e7581a9220b0a60636d19edd645",
}


def test_a_client_without_the_extension_gets_the_list_it_got_before_the_view(rustpad):
    server = subprocess.Popen(
        [str(MCP_BIN)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_SEAL_KEY="k" * 40),
    )

    def answer_to(message: dict[str, Any]) -> bytes:
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        while True:
            line = server.stdout.readline().rstrip(b"\n")
            if json.loads(line).get("id") == message["id"]:
                return line

    try:
        opening = {"protocolVersion": LEGACY, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "x", "version": "1"}}
        answer_to({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": opening})
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        legacy_list = answer_to({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
        modern_list = answer_to({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
    finally:
        server.kill()
        server.wait()
    assert b"ui://" not in legacy_list and b"ui://" not in modern_list
    assert hashlib.sha256(legacy_list).hexdigest() == LIST_WITHOUT_THE_VIEW["2025-11-25"]
    assert hashlib.sha256(modern_list).hexdigest() == LIST_WITHOUT_THE_VIEW["2026-07-28"]
