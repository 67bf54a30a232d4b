"""The component for WebAssembly hosts (target/wasm/rustpad-mcp-http.wasm) under stock hosts —
`wasmtime serve` with the fewest grants that work, and wasmCloud's `wash dev` with the
repository's config, which grants exactly Rustpad's origin (tests/python/wasm_hosts.py) — driven
by the official Python SDK over Streamable HTTP (2026-07-28) and on the raw wire: reads, a write
while a person types, the guard through input_required rounds, edits against a base, the gate,
and the settings every request needs. What each host itself refuses, whatever a component would
do, is tests/python/test_host_policy.py.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp.types import ElicitResult

from conftest import ALL_TOOLS, append_while_a_person_types, call, failed, ok, text_of, without_connections
from http_harness import LEGACY, exchange, http_client, modern_headers, modern_request
from test_tls import tls_rustpad  # noqa: F401 (a fixture)
from wasm_hosts import BEARER, HOSTS, HostProcess, Place, place, wasm_host

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=HOSTS)
def where(request: pytest.FixtureRequest, rustpad) -> Iterator[Place]:
    """Each host in turn, with the Rustpad it reaches."""
    with place(request.param, rustpad) as at:
        yield at


@pytest.fixture(scope="module")
def served(where: Place) -> Iterator[HostProcess]:
    with where.start() as host:
        yield host


def sdk(host: HostProcess, **options):
    return http_client(host.url, "auto", headers=BEARER, **options)


async def test_tools_list_and_every_read_tool(served, where, pad):
    rustpad = where.rustpad
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


async def test_a_write_while_a_person_types_loses_nothing(served, where, pad):
    async with sdk(served) as client:

        async def append(text: str) -> None:
            ok(await call(client, "append_to_document", {"id": pad, "text": text}))

        await append_while_a_person_types(where.rustpad, pad, append)


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_set_document_asks_a_person_through_input_required(served, where, pad, answer):
    rustpad = where.rustpad
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


async def test_a_pad_id_that_would_lead_elsewhere_is_refused(served):
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


def test_a_legacy_request_stands_alone_and_gets_the_token(served, where, pad):
    rustpad = where.rustpad
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
def test_a_missing_or_unknown_setting_is_named_on_every_request(where, overrides, named):
    with where.start(**overrides) as host:
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


def test_calls_to_a_rustpad_that_never_reads_end_within_their_bound(served, where, new_pad):
    rustpad = where.rustpad
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


def test_a_repeated_host_reaches_the_component_as_the_first_one_only(rustpad):
    """`wasmtime serve` keeps the first Host of a request as its authority and hands the component
    no Host header (wasmtime-wasi-http strips it as forbidden), so the component cannot refuse a
    repeated one as `rustpad-mcp --http` does (docs/deployment.md). Pinned, so that a wasmtime
    that hands them over shows here; the component's gate refuses two whenever it sees them."""
    from test_http_strict import raw_request

    with wasm_host(rustpad) as served:
        pinned(raw_request, served)


def pinned(raw_request, served: HostProcess) -> None:
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


async def test_edits_against_a_base_land_where_they_were_read_while_a_person_types(served, where, pad):
    rustpad = where.rustpad
    rustpad.seed(pad, "alpha line\nbeta line\n")
    async with sdk(served) as client:
        base = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))["base"]
        typed = await rustpad.type(pad, seed=13, count=15, avoid=["alpha", "beta"])
        edits = [{"old_text": "alpha", "new_text": "ALPHA"}, {"old_text": "beta", "new_text": "BETA"}]
        result = ok(await call(client, "edit_document", {"id": pad, "base": base, "edits": edits}))
    text = rustpad.text(pad)
    assert text == typed["final_text"].replace("alpha", "ALPHA").replace("beta", "BETA"), text
    assert result["base"].startswith(f"r{result['revision']}.")


async def test_the_socket_looks_up_no_ip_and_can_be_given_its_address(rustpad, pad):
    """Hosts may allow no lookups (Spin allows none): an IP in RUSTPAD_URL is connected to as it
    is, and RUSTPAD_SOCKET_ADDRESS names the socket's address apart from RUSTPAD_URL's name."""
    without_lookups = ["-Scli", "-Sinherit-network"]
    rustpad.seed(pad, "start")
    with wasm_host(rustpad, grants=without_lookups) as host:
        async with sdk(host) as client:
            ok(await call(client, "append_to_document", {"id": pad, "text": " one"}))
    named = f"http://localhost:{rustpad.port}"
    address = f"127.0.0.1:{rustpad.port}"
    with wasm_host(rustpad, grants=without_lookups, RUSTPAD_URL=named, RUSTPAD_SOCKET_ADDRESS=address) as host:
        async with sdk(host) as client:
            written = ok(await call(client, "append_to_document", {"id": pad, "text": " two"}))
    assert written["url"] == f"{named}/#{pad}"
    assert rustpad.text(pad) == "start one two"
    with wasm_host(rustpad, RUSTPAD_SOCKET_ADDRESS="localhost:1") as host:
        reply = exchange(host.url, modern_request(1, "tools/list"), headers={**modern_headers("tools/list"), **BEARER})
    assert reply.status == 500 and b"RUSTPAD_SOCKET_ADDRESS must be an IP address and a port" in reply.body


async def test_a_socket_the_host_refuses_names_its_policy_not_a_host(rustpad, pad):
    rustpad.seed(pad, "start")
    with wasm_host(rustpad, grants=["-Scli"]) as host:
        async with sdk(host) as client:
            message = failed(await call(client, "append_to_document", {"id": pad, "text": "x"}))
    assert "the WebAssembly host refused this component the connection" in message, message
    assert "outbound policy" in message and "wasmtime" not in message and "-S" not in message
    assert rustpad.text(pad) == "start"


async def test_a_wait_answers_a_person_and_says_this_servers_own_writes_end_it_too(served, where, pad):
    rustpad = where.rustpad
    rustpad.seed(pad, "question?\n")
    async with sdk(served) as client:
        base = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))["base"]
        with rustpad.person(pad, "Ana") as ana:
            await ana.point([3])
            results: list = []

            async def wait(base: str) -> None:
                results.append(await call(client, "wait_for_changes", {"id": pad, "base": base}))

            async with anyio.create_task_group() as group:
                group.start_soon(wait, base)
                await anyio.sleep(0.5)
                await ana.append("answer\n")
            answer = ok(results[0])
            assert without_connections(answer["authors"]) == [{"name": "Ana", "in_pad": True, "operations": 1}]
            assert answer["people"][0]["cursors"] == [{"line": 1, "column": 4}]
            assert "its own writes end a wait too" in text_of(results[0])
            # Where calls keep nothing between them, this server's own write ends a wait.
            async with anyio.create_task_group() as group:
                group.start_soon(wait, answer["base"])
                await anyio.sleep(0.5)
                ok(await call(client, "append_to_document", {"id": pad, "text": "more\n"}))
    own = ok(results[1])
    assert own["timed_out"] is False
    assert without_connections(own["authors"]) == [{"name": "someone who has left", "in_pad": False, "operations": 1}]


async def test_a_pad_reads_as_a_resource(served, where, pad):
    where.rustpad.seed(pad, "resource text\n")
    async with sdk(served) as client:
        [template] = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "rustpad://{id}"
        [content] = (await client.read_resource(f"rustpad://{pad}")).contents
    assert content.text.startswith("Untrusted content from Rustpad follows.")
    assert content.text.endswith("\n\nresource text\n")


async def test_a_pad_is_read_and_listened_to_through_the_component(where, pad):
    """A listen is one open response the component streams: the acknowledgement, an update when
    a person edits, and its own clean end before the host's timeout (here after 6 s), which the
    SDK takes as a graceful close to listen again from."""
    from test_subscriptions import UPDATE_WITHIN, watcher_joined

    rustpad = where.rustpad
    rustpad.seed(pad, "start\n")
    uri = f"rustpad://{pad}"
    with where.start(RUSTPAD_MCP_LISTEN_SECONDS="6") as host, rustpad.person(pad, "Ana") as ana:
        async with sdk(host) as client:
            [content] = (await client.read_resource(uri)).contents
            assert content.text.endswith("\n\nstart\n")
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                assert subscription.honored.resource_subscriptions == [uri]
                await watcher_joined(ana)
                await ana.append("theirs\n")
                with anyio.fail_after(UPDATE_WITHIN):
                    event = await subscription.__anext__()
                assert event.uri == uri
                with anyio.fail_after(15):
                    rest = [event async for event in subscription]
                assert len(rest) <= 1, rest
            [content] = (await client.read_resource(uri)).contents
            assert content.text.endswith("\n\nstart\ntheirs\n")


async def test_a_listen_of_many_pads_hears_each_of_them_through_the_component(where, new_pad):
    """The component waits on every named pad's socket in one poll: an edit to the last of
    sixteen pads is heard, then one to the first, each as its own update."""
    from test_subscriptions import UPDATE_WITHIN

    rustpad = where.rustpad
    pads = [new_pad(str(n)) for n in range(16)]
    for pad in pads:
        rustpad.seed(pad, "start\n")
    uris = [f"rustpad://{pad}" for pad in pads]
    with where.start(RUSTPAD_MCP_LISTEN_SECONDS="20") as host:
        async with sdk(host) as client:
            async with client.listen(resource_subscriptions=uris) as subscription:
                assert subscription.honored.resource_subscriptions == uris
                for pad in (pads[-1], pads[0]):
                    rustpad.set_by_person(pad, "start\nand a person's line\n")
                    with anyio.fail_after(UPDATE_WITHIN):
                        event = await subscription.__anext__()
                    assert event.uri == f"rustpad://{pad}"


async def test_a_revert_asks_where_nothing_is_kept_and_is_made_once(served, where, pad):
    """A host that keeps nothing has no record of this server's own text: taking back even its
    own append removes marked text, so it asks (here by token), and `this_server` finds nothing
    of its own; a person's long typing taken back by `everyone` asks too."""
    rustpad = where.rustpad
    rustpad.seed(pad, "first line\nlast line\n")
    async with sdk(served) as client:
        written = ok(await call(client, "append_to_document", {"id": pad, "text": "appended\n"}))
        nothing = await call(client, "revert_changes", {"id": pad, "base": written["base_before"]})
        assert ok(nothing)["taken_back"] == 0 and "This host keeps nothing between calls" in text_of(nothing)
        arguments = {"id": pad, "change": written["change"]}
        offer = text_of(await call(client, "revert_changes", arguments))
        [token] = re.findall(r'confirm_token="([0-9a-f]{64})"', offer)
        assert rustpad.text(pad) == "first line\nlast line\nappended\n"
        ok(await call(client, "revert_changes", {**arguments, "confirm_token": token}))
        assert rustpad.text(pad) == "first line\nlast line\n"
        # Sent again, token and all: nothing is left to take back, so nothing is asked or written.
        replayed = ok(await call(client, "revert_changes", {**arguments, "confirm_token": token}))
        assert replayed["taken_back"] == 0 and rustpad.text(pad) == "first line\nlast line\n"
        typed = "a person's own words, typed by hand.\n" * 12
        rustpad.set_by_person(pad, "first line\nlast line\n" + typed)
        asked = text_of(
            await call(client, "revert_changes", {"id": pad, "base": written["base_before"], "by": "everyone"})
        )
        assert re.findall(r'confirm_token="([0-9a-f]{64})"', asked) and rustpad.text(pad).endswith(typed)
