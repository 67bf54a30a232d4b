"""Text written over the collaboration socket by another client (the typist CLI, which runs the
browser's OT client algorithm) reads back exactly, in both eras, over HTTP and over the socket."""

from __future__ import annotations

import pytest

from conftest import ERAS, call, ok

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("seed", [1, 7, 4242])
async def test_typed_text_reads_back_exactly(open_client, rustpad, pad, era, seed):
    report = await rustpad.type(pad, seed=seed, count=60, delay_us=0, settle_ms=50)
    typed = report["typed"]
    final = report["final_text"]
    assert len(typed) == 60
    assert sorted(final) == sorted("".join(typed))
    assert rustpad.text(pad) == final

    async with open_client(era) as client:
        document = ok(await call(client, "get_document", {"id": pad}))
        assert document["text"] == final
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["length_characters"] == len(final)
        assert info["revision"] == report["revision"]
        assert info["active_users"] == []


@pytest.mark.parametrize("era", ERAS)
async def test_typing_on_top_of_existing_text_reads_back_exactly(open_client, rustpad, pad, era):
    rustpad.seed(pad, "base text 👨\u200d💻\n", ops=3, char="é")
    report = await rustpad.type(pad, seed=99, count=40, delay_us=0, settle_ms=50)
    async with open_client(era) as client:
        document = ok(await call(client, "get_document", {"id": pad}))
        assert document["text"] == report["final_text"] == rustpad.text(pad)
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["revision"] == report["revision"]
        assert info["length_characters"] == len(report["final_text"])
