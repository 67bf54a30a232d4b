"""The room this server leaves to people at the end of Rustpad's size limit.

Rustpad ends the connection of anyone whose edit would pass its limit, so a pad that a model
filled to the brim throws off the next person to press a key. Every write tool stops short of the
limit by ROOM_FOR_PEOPLE characters when it lengthens a pad, says so and writes nothing; a write
that does not lengthen the pad is never refused for that room; people go on typing in it."""

from __future__ import annotations

import pytest

from conftest import (
    ERAS,
    MAX_DOCUMENT_CHARS,
    MAX_WRITTEN_CHARS,
    ROOM_FOR_PEOPLE,
    call,
    edits,
    failed,
    ok,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param) as client:
        yield client


def refused_for_room(result, length: int) -> None:
    message = failed(result)
    assert f"the pad would be {length} characters long" in message, message
    assert f"at most {MAX_WRITTEN_CHARS} characters long" in message, message
    assert f"the last {ROOM_FOR_PEOPLE} of Rustpad's limit to people" in message, message
    assert message.endswith("nothing was written"), message


async def test_appends_fill_a_pad_up_to_the_room_and_people_type_on_in_it(client, rustpad, pad):
    rustpad.seed(pad, "x" * (MAX_WRITTEN_CHARS - 4))
    written = ok(await call(client, "append_to_document", {"id": pad, "text": "🎉🎉🎉🎉"}))
    assert written["characters"] == MAX_WRITTEN_CHARS
    sent = len(edits(rustpad, pad))
    # One code point more would enter the room: refused before anything is sent.
    refused_for_room(await call(client, "append_to_document", {"id": pad, "text": "y"}), MAX_WRITTEN_CHARS + 1)
    assert len(edits(rustpad, pad)) == sent
    assert len(rustpad.text(pad)) == MAX_WRITTEN_CHARS
    # A person's keystrokes still land, each acknowledged, none past Rustpad's limit.
    typed = await rustpad.type(pad, seed=3, count=30)
    assert len(typed["typed"]) == 30
    assert len(rustpad.text(pad)) == MAX_WRITTEN_CHARS + sum(len(keys) for keys in typed["typed"])


async def test_past_rustpads_own_limit_the_message_names_that_limit(client, rustpad, pad):
    """A pad people filled to one short of Rustpad's limit: an append of two would pass the limit
    itself, and says so."""
    rustpad.seed(pad, "x" * (MAX_DOCUMENT_CHARS - 1))
    message = failed(await call(client, "append_to_document", {"id": pad, "text": "ab"}))
    assert message == (
        f"the pad would be {MAX_DOCUMENT_CHARS + 1} characters long, more than Rustpad's limit of"
        f" {MAX_DOCUMENT_CHARS}; nothing was written"
    )
    assert edits(rustpad, pad) == []


async def test_create_and_set_stop_at_the_room_and_create_makes_no_pad(client, rustpad, pad):
    documents = rustpad.stats()["num_documents"]
    too_long = "z" * (MAX_WRITTEN_CHARS + 1)
    refused_for_room(await call(client, "create_document", {"id": pad, "text": too_long}), MAX_WRITTEN_CHARS + 1)
    assert rustpad.stats()["num_documents"] == documents, "a refused create joins no pad"
    # set_document on an empty pad asks nobody, and is refused the same way.
    refused_for_room(await call(client, "set_document", {"id": pad, "text": too_long}), MAX_WRITTEN_CHARS + 1)
    assert rustpad.text(pad) == "" and edits(rustpad, pad) == []
    ok(await call(client, "create_document", {"id": pad, "text": too_long[1:]}))
    assert len(rustpad.text(pad)) == MAX_WRITTEN_CHARS


async def test_in_a_pad_people_filled_writes_that_do_not_lengthen_it_go_through(client, rustpad, pad):
    """Past the room's start already (people typed there): a replacement of equal length and an
    edit that shortens the pad are made; one that lengthens it is refused."""
    start = "TODO: draft\n"
    length = MAX_DOCUMENT_CHARS - 100
    rustpad.seed(pad, start + "x" * (length - len(start)))
    ok(await call(client, "replace_in_document", {"id": pad, "search": "draft", "replace": "final"}))
    refused_for_room(
        await call(client, "replace_in_document", {"id": pad, "search": "final", "replace": "final!"}), length + 1
    )
    edit = {"id": pad, "edits": [{"line": 1, "old_text": "TODO: final", "new_text": "TODO: final, checked"}]}
    refused_for_room(await call(client, "edit_document", edit), length + len(", checked"))
    edit["edits"][0]["new_text"] = "DONE"
    ok(await call(client, "edit_document", edit))
    assert rustpad.text(pad).startswith("DONE\nxxx")
    assert len(rustpad.text(pad)) == length - len("TODO: final") + len("DONE")


async def test_a_revert_that_would_lengthen_the_pad_into_the_room_is_refused(client, rustpad, pad):
    """A model's removal, then people fill the pad up to the room: taking the removal back would
    lengthen the pad into it, so it is refused like any other write, and nothing is sent."""
    body = "x" * (MAX_WRITTEN_CHARS - 20)
    rustpad.seed(pad, "head\n" + body)
    removed = ok(await call(client, "replace_in_document", {"id": pad, "search": "head\n", "replace": ""}))
    rustpad.set_by_person(pad, body + "y" * 20)
    assert len(rustpad.text(pad)) == MAX_WRITTEN_CHARS
    sent = len(edits(rustpad, pad))
    refused_for_room(
        await call(client, "revert_changes", {"id": pad, "change": removed["change"]}), MAX_WRITTEN_CHARS + 5
    )
    assert len(edits(rustpad, pad)) == sent
    assert rustpad.text(pad) == body + "y" * 20


async def test_a_replacement_too_long_to_count_in_32_bits_is_refused_not_wrapped(client, rustpad, pad):
    """65,536 matches, each replaced by 65,536 characters: 2^32 characters inserted, which a 32-bit
    count would wrap round to 0. It is refused like any write past Rustpad's limit."""
    rustpad.seed(pad, "a" * 65_536)
    arguments = {"id": pad, "search": "a", "replace": "b" * 65_536, "replace_all": True}
    message = failed(await call(client, "replace_in_document", arguments))
    assert f"the pad would be {2**32} characters long, more than Rustpad's limit" in message, message
    assert message.endswith("nothing was written")
    assert rustpad.text(pad) == "a" * 65_536
