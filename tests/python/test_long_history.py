"""A pad with a long edit history (100 000 operations, all folded from the snapshot) can still
be inspected and written, and the revision counts every operation."""

from __future__ import annotations

import pytest

from conftest import ERAS, call, ok

pytestmark = pytest.mark.anyio

OPS = 100_000


@pytest.mark.parametrize("era", ERAS)
async def test_a_pad_with_100_000_operations(open_client, rustpad, pad, era):
    seeded = rustpad.seed(pad, "head:", ops=OPS, char="x")
    assert seeded == {"revision": OPS + 1, "length": 5 + OPS}
    async with open_client(era) as client:
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["revision"] == OPS + 1
        assert info["length_characters"] == 5 + OPS

        appended = ok(await call(client, "append_to_document", {"id": pad, "text": ":tail🎉"}))
        assert appended["appended_characters"] == 6
        assert appended["characters"] == 5 + OPS + 6
        assert rustpad.text(pad) == "head:" + "x" * OPS + ":tail🎉"

        info = ok(await call(client, "get_document_info", {"id": pad}))
        # The write's mark (an entry that keeps the text), then the append.
        assert info["revision"] == OPS + 3
        assert info["length_characters"] == 5 + OPS + 6

        document = ok(await call(client, "get_document", {"id": pad}))
        assert document["text"] == "head:" + "x" * OPS + ":tail🎉"


@pytest.mark.parametrize("era", ERAS)
async def test_a_long_history_of_astral_inserts(open_client, rustpad, pad, era):
    rustpad.seed(pad, ops=OPS, char="🎉")
    async with open_client(era) as client:
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["revision"] == OPS
        assert info["length_characters"] == OPS
        replaced = ok(await call(client, "set_language", {"id": pad, "language": "markdown"}))
        assert replaced["characters"] == OPS
