"""Word when people change a pad, through the real SDK clients against the test Rustpad with
scripted people in the pad: 2025-11-25 `resources/subscribe` (stdio, and an HTTP session's GET
stream) and 2026-07-28 `subscriptions/listen` (stdio and HTTP). A person's edit is heard of,
this server's own writes are not, a burst is a few updates rather than one per edit, ending a
subscription stops them and closes the watcher's socket at Rustpad, and the caps refuse with the
documented messages; one client opening session after session cannot take every place. The
component under WebAssembly hosts is tests/python/test_wasm_host.py."""

from __future__ import annotations

import queue
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp import MCPError

from conftest import call, cursor_of, mcp_client, minimal_env, ok
from http_harness import TOKEN, LegacySession, http_client, http_server

pytestmark = pytest.mark.anyio

# How long a test lets a person's edit take to reach the client as an update.
UPDATE_WITHIN = 10
# How long a test waits to see that no update comes.
QUIET_FOR = 2.5


class Updates:
    """The `notifications/resources/updated` a 2025-11-25 client was sent, in order."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.taken = 0
        self._arrived = anyio.Event()

    async def handle(self, message) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            self.uris.append(str(message.params.uri))
            self._arrived.set()

    async def next(self, within: float = UPDATE_WITHIN) -> str:
        """The first update not taken yet, once it came."""
        with anyio.fail_after(within):
            while len(self.uris) == self.taken:
                self._arrived = anyio.Event()
                await self._arrived.wait()
        self.taken += 1
        return self.uris[self.taken - 1]

    async def none_for(self, seconds: float = QUIET_FOR) -> None:
        """No update comes (nor came untaken) for `seconds`."""
        await anyio.sleep(seconds)
        assert self.uris[self.taken :] == [], self.uris


async def subscribe(client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the SDK's word that 2026-07-28 has listen instead
        await client.subscribe_resource(uri)


async def unsubscribe(client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.unsubscribe_resource(uri)


@asynccontextmanager
async def legacy(rustpad, **variables) -> AsyncIterator[tuple[object, Updates]]:
    updates = Updates()
    env = minimal_env(RUSTPAD_URL=rustpad.url, **variables)
    async with mcp_client("legacy", env, message_handler=updates.handle) as client:
        yield client, updates


def staying_looks(person, since: int = 0) -> list[int]:
    """The invisible looks that joined the person's pad in what it saw from line `since` on, and
    have not left (a subscription's answer takes a short look of its own, which leaves at once)."""
    joined, gone = [], set()
    for line in person.seen[since:]:
        if (c := cursor_of(line)) is not None and c[0] != person.identity and c[0] not in joined:
            joined.append(c[0])
        info = line.get("server", {}).get("UserInfo")
        if isinstance(info, dict) and info.get("info") is None:
            gone.add(info.get("id"))
    return [connection for connection in joined if connection not in gone]


async def watcher_joined(person, since: int | None = None) -> int:
    """The connection id of the watcher's look, once it has joined and stayed for a moment."""
    since = len(person.seen) if since is None else since
    with anyio.fail_after(UPDATE_WITHIN):
        while True:
            try:
                await person.expect(lambda line: False, timeout=0.5)
            except (TimeoutError, queue.Empty):
                pass  # what came is in person.seen
            if staying := staying_looks(person, since):
                return staying[0]


async def left(person, connection: int) -> None:
    await person.expect(
        lambda line: line.get("server", {}).get("UserInfo", {}).get("id") == connection
        and line["server"]["UserInfo"]["info"] is None,
        timeout=10,
    )


# -- 2025-11-25: resources/subscribe ----------------------------------------------------------------


async def test_a_subscription_hears_a_persons_edit_and_not_this_servers_own(rustpad, pad):
    rustpad.seed(pad, "start\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            assert client.server_capabilities.resources.subscribe is True
            await subscribe(client, uri)
            await watcher_joined(ana)
            ok(await call(client, "append_to_document", {"id": pad, "text": "ours\n"}))
            await updates.none_for()
            await ana.append("theirs\n")
            assert await updates.next() == uri
            [content] = (await client.read_resource(uri)).contents
            assert content.text.endswith("\n\nstart\nours\ntheirs\n")


async def test_a_burst_of_fifty_edits_is_a_few_updates(rustpad, pad):
    rustpad.seed(pad, "")
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            await subscribe(client, f"rustpad://{pad}")
            await watcher_joined(ana)
            for n in range(50):
                await ana.append(f"{n} ")
            await updates.next()
            await anyio.sleep(QUIET_FOR)
    assert 1 <= len(updates.uris) < 50, updates.uris
    assert len(updates.uris) <= 10, f"{len(updates.uris)} updates for one burst"


async def test_unsubscribing_stops_the_updates_and_closes_the_watchers_socket(rustpad, pad):
    rustpad.seed(pad, "text\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            await subscribe(client, uri)
            watcher = await watcher_joined(ana)
            await unsubscribe(client, uri)
            await left(ana, watcher)
            await ana.append("more\n")
            await updates.none_for()
            # Unsubscribing from what is not subscribed is no error.
            await unsubscribe(client, uri)


async def test_a_client_that_goes_away_frees_its_watchers(rustpad, pad):
    rustpad.seed(pad, "text\n")
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, _):
            await subscribe(client, f"rustpad://{pad}")
            watcher = await watcher_joined(ana)
        await left(ana, watcher)


async def test_two_subscribers_share_one_watcher(rustpad, pad):
    rustpad.seed(pad, "text\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        with http_server(rustpad) as server:
            first, second = Updates(), Updates()
            async with http_client(server.url, "legacy", message_handler=first.handle) as one:
                async with http_client(server.url, "legacy", message_handler=second.handle) as two:
                    since = len(ana.seen)
                    await subscribe(one, uri)
                    await subscribe(two, uri)
                    await watcher_joined(ana, since)
                    assert len(staying_looks(ana, since)) == 1, ana.seen[since:]
                    await ana.append("more\n")
                    assert await first.next() == uri
                    assert await second.next() == uri


async def test_caps_refuse_with_their_messages(rustpad, pad):
    async with legacy(rustpad, RUSTPAD_MCP_WATCHES_PER_SESSION="2") as (client, _):
        await subscribe(client, f"rustpad://{pad}-a")
        await subscribe(client, f"rustpad://{pad}-b")
        await subscribe(client, f"rustpad://{pad}-a")  # again: no new watch
        with pytest.raises(MCPError) as refused:
            await subscribe(client, f"rustpad://{pad}-c")
        assert refused.value.error.code == -32600
        assert "one subscriber may watch at most 2 pads here" in refused.value.error.message
    async with legacy(rustpad, RUSTPAD_MCP_WATCHED_PADS="1") as (client, _):
        await subscribe(client, f"rustpad://{pad}-a")
        with pytest.raises(MCPError, match="this server watches at most 1 pads at once"):
            await subscribe(client, f"rustpad://{pad}-b")
    async with legacy(rustpad) as (client, _):
        with pytest.raises(MCPError) as refused:
            await subscribe(client, "rustpad://..")
        assert refused.value.error.code == -32002
        assert refused.value.error.data == {"uri": "rustpad://.."}


async def test_a_cap_out_of_range_stops_startup(rustpad):
    env = minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_WATCHES_PER_LISTEN="0")
    with pytest.raises(Exception):
        async with mcp_client("legacy", env) as client:
            await client.list_tools()


async def test_an_http_session_hears_updates_on_its_stream(rustpad, pad):
    rustpad.seed(pad, "text\n")
    uri = f"rustpad://{pad}"
    updates = Updates()
    with rustpad.person(pad, "Ana") as ana, http_server(rustpad) as server:
        async with http_client(server.url, "legacy", message_handler=updates.handle) as client:
            await subscribe(client, uri)
            watcher = await watcher_joined(ana)
            await ana.append("more\n")
            assert await updates.next() == uri
        # Ending the session (the client's DELETE) lets go of its watcher.
        await left(ana, watcher)


def subscribe_raw(session: LegacySession, request_id: int, uri: str) -> dict:
    answer = session.post({"jsonrpc": "2.0", "id": request_id, "method": "resources/subscribe", "params": {"uri": uri}})
    # (A refusal travels as 400, with its JSON-RPC error.)
    assert answer.status == (400 if "error" in answer.json() else 200), answer.body
    return answer.json()


async def test_one_address_cannot_take_every_watch_place(rustpad, pad):
    """Sessions cost nothing, and `--http` has one bearer token for everyone: a client that opens
    session after session and subscribes until refused is stopped by its address's cap, and a
    client at another (loopback) address, on the SDK, still subscribes; so does a 2026-07-28
    listen from there, while one from the first address is refused."""
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    caps = {
        "RUSTPAD_MCP_HTTP_TOKEN": TOKEN,
        "RUSTPAD_MCP_WATCHED_PADS": "12",
        "RUSTPAD_MCP_WATCHES_PER_SESSION": "3",
        "RUSTPAD_MCP_WATCHES_PER_ADDRESS": "8",
    }
    with http_server(rustpad, **caps) as server:
        taken, refusal, sessions = 0, None, []
        while refusal is None and len(sessions) < 10:
            session = LegacySession(server.url, headers=bearer)
            sessions.append(session)
            for _ in range(3):
                answer = subscribe_raw(session, taken + 1, f"rustpad://{pad}-{taken}")
                if "error" in answer:
                    refusal = answer["error"]
                    break
                taken += 1
        assert taken == 8, (taken, refusal)
        assert refusal["code"] == -32600, refusal
        assert (
            "the clients of one address (127.0.0.1) may have at most 8 pads watched here at once, and this would make 9"
            in refusal["message"]
        ), refusal
        # Another client, at another address: the SDK over connections from 127.0.0.2.
        async with http_client(server.url, "legacy", headers=bearer, source="127.0.0.2") as other:
            for index in range(3):
                await subscribe(other, f"rustpad://{pad}-elsewhere-{index}")
        async with http_client(server.url, "auto", headers=bearer, source="127.0.0.2") as other:
            async with other.listen(resource_subscriptions=[f"rustpad://{pad}-listened"]) as listening:
                assert listening.honored.resource_subscriptions == [f"rustpad://{pad}-listened"]
        async with http_client(server.url, "auto", headers=bearer) as first:
            with pytest.raises(MCPError, match="the clients of one address"):
                async with first.listen(resource_subscriptions=[f"rustpad://{pad}-more"]):
                    pass
        # Ending its sessions gives the address its places back.
        for session in sessions:
            assert session.end().status == 204
        async with http_client(server.url, "legacy", headers=bearer) as first:
            await subscribe(first, f"rustpad://{pad}-again")


# -- 2026-07-28: subscriptions/listen ---------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_listen_hears_a_persons_edit_and_ends_when_the_client_leaves(rustpad, pad, transport):
    rustpad.seed(pad, "start\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana, http_server(rustpad) as server:

        def client():
            if transport == "http":
                return http_client(server.url, "auto")
            return mcp_client("auto", minimal_env(RUSTPAD_URL=rustpad.url))

        async with client() as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(resource_subscriptions=[uri, uri]) as subscription:
                assert subscription.honored.resource_subscriptions == [uri]
                assert not subscription.honored.tools_list_changed
                watcher = await watcher_joined(ana)
                ok(await call(client, "append_to_document", {"id": pad, "text": "ours\n"}))
                await ana.append("theirs\n")
                with anyio.fail_after(UPDATE_WITHIN):
                    event = await subscription.__anext__()
                assert event.uri == uri
            await left(ana, watcher)
            # The client goes on as before.
            assert ok(await call(client, "get_document", {"id": pad}))["text"] == "start\nours\ntheirs\n"


async def test_a_listen_over_its_cap_or_naming_no_pad_is_refused(rustpad, pad):
    env = minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_WATCHES_PER_LISTEN="1")
    async with mcp_client("auto", env) as client:
        with pytest.raises(MCPError, match="Cannot listen: one subscriber may watch at most 1 pads"):
            async with client.listen(resource_subscriptions=[f"rustpad://{pad}-a", f"rustpad://{pad}-b"]):
                pass
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["file:///etc/passwd"]):
                pass
        assert refused.value.error.code == -32602
        # A listen for nothing this server sends is acknowledged with nothing honoured.
        async with client.listen(tools_list_changed=True) as subscription:
            assert not subscription.honored.tools_list_changed
            assert not subscription.honored.resource_subscriptions


async def test_stdin_closing_ends_a_listen_with_its_result(rustpad, pad):
    """The raw wire: the acknowledgement first, then, when stdin closes, the listen's result."""
    import json
    import subprocess

    from conftest import MCP_BIN

    listen = {
        "jsonrpc": "2.0",
        "id": "listen-9",
        "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "notifications": {"resourceSubscriptions": [f"rustpad://{pad}"]},
        },
    }
    process = subprocess.run(
        [str(MCP_BIN)],
        input=json.dumps(listen) + "\n",
        env=minimal_env(RUSTPAD_URL=rustpad.url),
        capture_output=True,
        text=True,
        timeout=15,
    )
    ack, end = [json.loads(line) for line in process.stdout.splitlines()]
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-9"}
    assert end["id"] == "listen-9" and end["result"]["resultType"] == "complete"
    assert end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-9"


def test_a_session_has_one_stream_at_a_time_and_it_carries_the_updates(rustpad, pad):
    """The raw wire of an HTTP session's stream: a second GET while one is open is refused (409);
    a subscription's update arrives on the open one as a server-sent event."""
    import http.client
    import json
    from urllib.parse import urlsplit

    from http_harness import LEGACY, LegacySession

    rustpad.seed(pad, "text\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana, http_server(rustpad) as server:
        session = LegacySession(server.url)
        where = urlsplit(server.url)
        headers = {"Mcp-Session-Id": session.id, "MCP-Protocol-Version": LEGACY, "Accept": "text/event-stream"}

        def get() -> http.client.HTTPResponse:
            connection = http.client.HTTPConnection(where.hostname, where.port, timeout=UPDATE_WITHIN)
            connection.request("GET", where.path, headers=headers)
            return connection.getresponse()

        stream = get()
        assert stream.status == 200 and stream.headers["content-type"] == "text/event-stream"
        second = get()
        assert second.status == 409 and b"open already" in second.read()
        subscribed = session.post(
            {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": uri}}
        )
        assert subscribed.json()["result"] == {}
        anyio.run(watcher_joined, ana)
        anyio.run(ana.append, "more\n")

        def next_event() -> dict:
            while not (line := stream.readline().decode()).startswith("data: "):
                pass
            return json.loads(line[len("data: ") :])

        # The subscription put the pad on the session's list of pads it used (test_recent_pads.py).
        assert next_event() == {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
        assert next_event() == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": uri},
        }


async def test_a_pad_that_floods_or_is_begun_again_is_told_of(rustpad, pad):
    """A watcher never hangs on a pad: one that sends without pause is told of (then watched
    again later), and so is one Rustpad forgot and began again (here: seeded anew)."""
    rustpad.seed(pad, "text\n")
    flooding = f"{pad}-flood"
    rustpad.seed(flooding, "text\n")
    rustpad.set_mode(flooding, "flood")
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            await subscribe(client, f"rustpad://{flooding}")
            assert await updates.next(within=20) == f"rustpad://{flooding}"
            await subscribe(client, f"rustpad://{pad}")
            await watcher_joined(ana)
            await ana.append("more\n")
            assert await updates.next() == f"rustpad://{pad}"
            rustpad.seed(pad, "")
            assert await updates.next() == f"rustpad://{pad}"
            [content] = (await client.read_resource(f"rustpad://{pad}")).contents
            assert content.text.endswith("\n\n")


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_an_edit_right_after_the_answer_is_heard(rustpad, pad, era):
    """A subscription watches from the revision it was answered at, not from whenever its watcher
    joins: a person's edit sent the moment the answer arrives is heard."""
    rustpad.seed(pad, "start\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        if era == "legacy":
            async with legacy(rustpad) as (client, updates):
                await subscribe(client, uri)
                await ana.append("at once\n")
                assert await updates.next() == uri
        else:
            async with mcp_client("auto", minimal_env(RUSTPAD_URL=rustpad.url)) as client:
                async with client.listen(resource_subscriptions=[uri]) as subscription:
                    await ana.append("at once\n")
                    with anyio.fail_after(UPDATE_WITHIN):
                        event = await subscription.__anext__()
                    assert event.uri == uri
