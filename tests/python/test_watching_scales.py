"""Watching that costs the change, not the history: a watched pad stays joined between updates
(the test Rustpad counts the joins that were sent the whole history), a Rustpad restart or a
paste bigger than a held look takes is told of and watched on, and one process follows hundreds
of pads with its default settings, with room left for the next client."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import MCPError

from conftest import TEST_SERVER_BIN, RustpadServer, call, ok
from test_subscriptions import UPDATE_WITHIN, legacy, staying_looks, subscribe, watcher_joined

pytestmark = pytest.mark.anyio


def history_reads(rustpad: RustpadServer, pad: str) -> int:
    """How many connections the test Rustpad sent pad `pad`'s whole history as they joined."""
    status, body = rustpad.request("GET", f"/_test/history-reads/{pad}")
    assert status == 200, body
    return json.loads(body)["reads"]


async def test_a_watched_pad_with_a_long_history_is_read_once(rustpad, pad):
    """On a pad of 100,000 edits, a subscription's updates after the first read no history:
    the watcher's look stays joined, hears each person's edit, and still not this server's."""
    rustpad.seed(pad, ops=100_000)
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            await subscribe(client, uri)
            watcher = await watcher_joined(ana)
            joined = history_reads(rustpad, pad)
            for word in ("one", "two", "three"):
                await ana.append(word)
                assert await updates.next() == uri
                # Past the coalescing interval, so each edit is its own update.
                await anyio.sleep(1.2)
            ok(await call(client, "append_to_document", {"id": pad, "text": "ours"}))
            await updates.none_for()
            await ana.append("four")
            assert await updates.next() == uri
            # The write took a join of its own; the watcher took none, and is the same look
            # (beside it stays the append's connection, which the host keeps for the next one).
            assert history_reads(rustpad, pad) == joined + 1
            looks = staying_looks(ana)
            assert looks[0] == watcher and len(looks) <= 2, looks


async def test_a_paste_bigger_than_a_held_look_takes_is_heard_and_watched_on(rustpad, pad):
    """A held look takes live messages of at most 256 KiB: a bigger paste ends it, and the
    watcher joins again from where it was, so the paste is heard, and so is what follows."""
    rustpad.seed(pad, "start\n")
    uri = f"rustpad://{pad}"
    with rustpad.person(pad, "Ana") as ana:
        async with legacy(rustpad) as (client, updates):
            await subscribe(client, uri)
            await watcher_joined(ana)
            joined = history_reads(rustpad, pad)
            # 140,000 code points (under Rustpad's 256 Ki), 280,000 bytes on the wire.
            await ana.set_text("é" * 140_000)
            assert await updates.next() == uri
            assert history_reads(rustpad, pad) == joined + 1
            await anyio.sleep(1.2)
            await ana.append("after")
            assert await updates.next() == uri
            [content] = (await client.read_resource(uri)).contents
            assert content.text.endswith("é" * 10 + "after")


async def test_a_rustpad_restart_under_a_joined_look_is_told_then_watched_afresh(pad):
    """Rustpad restarting closes the held look: the subscriber is told (the pad was begun
    again), and once Rustpad is back the pad is watched as before."""
    first = RustpadServer(str(TEST_SERVER_BIN))
    port = first.port
    try:
        first.seed(pad, "before the restart\n")
        uri = f"rustpad://{pad}"
        async with legacy(first) as (client, updates):
            with first.person(pad, "Ana") as ana:
                await subscribe(client, uri)
                await watcher_joined(ana)
            first.stop()
            again = RustpadServer(str(TEST_SERVER_BIN), port=port)
            try:
                assert await updates.next(within=UPDATE_WITHIN + 30) == uri
                # The pad Rustpad begun again is empty; the watcher is on it again.
                with again.person(pad, "Bo") as bo:
                    await watcher_joined(bo)
                    await anyio.sleep(1.2)
                    updates.taken = len(updates.uris)
                    await bo.append("typed\n")
                    assert await updates.next() == uri
            finally:
                again.stop()
    finally:
        first.stop()


async def subscribe_and_hear_an_edit(rustpad, client, updates, pad) -> None:
    """The client subscribes to `pad` with a person in it, who then edits: the update comes."""
    with rustpad.person(pad, "Ana") as ana:
        await subscribe(client, f"rustpad://{pad}")
        await watcher_joined(ana)
        await ana.append("edited\n")
        assert await updates.next() == f"rustpad://{pad}"


async def test_two_hundred_and_fifty_pads_in_one_session_leave_room_for_the_next_client(
    rustpad, new_pad
):
    """With the default settings one stdio session subscribes to 250 pads (its most) and hears
    an edit to the last; a second client still subscribes beside it, and once the first goes
    away, a third takes as many as it did."""
    pads = [new_pad(str(n)) for n in range(251)]
    for pad in pads:
        rustpad.seed(pad, "line\n" * 50)
    async with legacy(rustpad) as (second, second_updates):
        async with legacy(rustpad) as (client, updates):
            for pad in pads[:249]:
                await subscribe(client, f"rustpad://{pad}")
            await subscribe_and_hear_an_edit(rustpad, client, updates, pads[249])
            with pytest.raises(MCPError, match="one subscriber may watch at most 250 pads here"):
                await subscribe(client, f"rustpad://{pads[250]}")
            await subscribe_and_hear_an_edit(rustpad, second, second_updates, pads[250])
        # The first client went away, and its watches with it.
        async with legacy(rustpad) as (third, _):
            for pad in pads[:250]:
                await subscribe(third, f"rustpad://{pad}")


async def test_a_held_look_that_floods_is_told_of(rustpad, pad):
    """A held look is read without an instance, carets dropped; one that sends more than 20,000
    such messages within a round's time is let go as a round that cannot go on: told once."""
    rustpad.seed(pad, "text\n")
    # The flood starts once the watcher's look is joined and held.
    rustpad.set_mode(pad, "flood-after:3000")
    uri = f"rustpad://{pad}"
    async with legacy(rustpad) as (client, updates):
        await subscribe(client, uri)
        await updates.none_for(2.5)
        assert await updates.next(within=30) == uri
