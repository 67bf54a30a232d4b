"""`resources/list` for clients that never read the template (Gemini CLI, the Inspector's terminal
UI, LangChain's adapters): the pads this client read, wrote or subscribed to lately, newest first,
kept per stdio connection and per 2025-11-25 HTTP session and shown to nobody else; none over
2026-07-28 HTTP, where no session exists. The Inspector's flow: list, then subscribe to a listed
pad, then hear a person's edit."""

from __future__ import annotations

import anyio
import pytest

from conftest import call, failed, minimal_env, mcp_client, ok
from http_harness import exchange, http_client, http_server, modern_headers, modern_request
from test_subscriptions import UPDATE_WITHIN, Updates, subscribe

pytestmark = pytest.mark.anyio

# The host's bound on one session's list (host/src/state/recently_used.rs).
MAX_LISTED = 20


class Heard(Updates):
    """Updates, and how many times the client was told its resource list changed."""

    def __init__(self) -> None:
        super().__init__()
        self.list_changed = 0

    async def handle(self, message) -> None:
        if getattr(message, "method", None) == "notifications/resources/list_changed":
            self.list_changed += 1
        await super().handle(message)


async def listed(client) -> list[str]:
    return [str(resource.uri) for resource in (await client.list_resources()).resources]


async def test_a_pad_read_on_stdio_is_listed_and_a_subscribe_to_it_is_heard(rustpad, new_pad):
    first, second = new_pad("first"), new_pad("second")
    rustpad.seed(first, "one\n")
    rustpad.seed(second, "two\n")
    heard = Heard()
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    async with mcp_client("legacy", env, message_handler=heard.handle) as client:
        assert client.server_capabilities.resources.list_changed is True
        assert await listed(client) == []
        ok(await call(client, "get_document", {"id": first}))
        [resource] = (await client.list_resources()).resources
        assert (str(resource.uri), resource.name, resource.mime_type) == (f"rustpad://{first}", first, "text/plain")
        with anyio.fail_after(UPDATE_WITHIN):
            while heard.list_changed == 0:
                await anyio.sleep(0.05)
        # The Inspector's way: subscribe to what the list offers, then hear a person's edit.
        await subscribe(client, str(resource.uri))
        rustpad.set_by_person(first, "one\nand a person's line\n")
        assert await heard.next() == f"rustpad://{first}"
        # Newest first; using a listed pad again moves it up without telling the client anew.
        await client.read_resource(f"rustpad://{second}")
        assert await listed(client) == [f"rustpad://{second}", f"rustpad://{first}"]
        told = heard.list_changed
        ok(await call(client, "get_document_info", {"id": first}))
        assert await listed(client) == [f"rustpad://{first}", f"rustpad://{second}"]
        await anyio.sleep(0.3)
        assert heard.list_changed == told


async def test_only_what_a_call_really_used_is_listed_and_the_list_is_bounded(rustpad, new_pad):
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    async with mcp_client("auto", env) as client:
        assert client.protocol_version == "2026-07-28"
        # A call that failed used nothing: a bad id, a search that found nothing.
        failed(await call(client, "get_document", {"id": "no/such"}))
        missing = new_pad("missing")
        failed(await call(client, "replace_in_document", {"id": missing, "search": "x", "replace": "y"}))
        assert await listed(client) == []
        pads = [new_pad(str(n)) for n in range(MAX_LISTED + 1)]
        for pad in pads:
            ok(await call(client, "create_document", {"id": pad, "text": "x"}))
        assert await listed(client) == [f"rustpad://{pad}" for pad in reversed(pads[1:])]
        # A pad whose id the server made up is listed by that id.
        made_up = ok(await call(client, "create_document", {}))["id"]
        assert (await listed(client))[0] == f"rustpad://{made_up}"
        # A 2026-07-28 client on stdio listens to a listed pad.
        uri = (await listed(client))[0]
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri]
            rustpad.set_by_person(made_up, "a person's text\n")
            with anyio.fail_after(UPDATE_WITHIN):
                event = await subscription.__anext__()
            assert event.uri == uri


async def test_an_http_session_lists_only_its_own_pads_and_2026_07_28_lists_none(rustpad, new_pad):
    mine, theirs = new_pad("mine"), new_pad("theirs")
    rustpad.seed(mine, "mine\n")
    rustpad.seed(theirs, "theirs\n")
    with http_server(rustpad) as server:
        async with http_client(server.url, "legacy") as one, http_client(server.url, "legacy") as two:
            ok(await call(one, "get_document", {"id": mine}))
            ok(await call(two, "get_document", {"id": theirs}))
            assert await listed(one) == [f"rustpad://{mine}"]
            assert await listed(two) == [f"rustpad://{theirs}"]
            async with http_client(server.url, "auto") as modern:
                assert modern.protocol_version == "2026-07-28"
                ok(await call(modern, "get_document", {"id": mine}))
                assert await listed(modern) == []
        # A list that varies says so where 2026-07-28 caches results.
        answer = exchange(server.url, modern_request(1, "resources/list"), headers=modern_headers("resources/list"))
        result = answer.json()["result"]
        assert result["resources"] == []
        assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
