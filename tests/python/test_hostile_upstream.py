"""A Rustpad server that sends hostile or broken data over the collaboration socket: labels are
cleaned, lists are capped, and a state that cannot be trusted is refused (never written on)."""

from __future__ import annotations

import unicodedata

import pytest

from conftest import ERAS, UNTRUSTWORTHY, call, failed, ok

pytestmark = pytest.mark.anyio


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param) as client:
        yield client


BIDI_CONTROLS = set("\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def is_clean_label(label: str) -> bool:
    """One line, no control characters, no bidi overrides."""
    return not any(unicodedata.category(c) == "Cc" or c in BIDI_CONTROLS for c in label)


async def test_hostile_names_and_language_are_cleaned(client, rustpad, pad):
    rustpad.seed(pad, "text")
    rustpad.set_mode(pad, "hostile-names")
    structured = ok(await call(client, "get_document_info", {"id": pad}))
    users = structured["active_users"]
    assert len(users) == 7
    for name in users:
        assert is_clean_label(name), repr(name)
        assert len(name) <= 101, len(name)
    assert "invoicefdp.exe" in users
    assert any(name.startswith("W" * 100) for name in users)
    language = structured["language"]
    assert is_clean_label(language), repr(language)
    assert language.startswith("rust")
    assert structured["length_characters"] == 4


async def test_the_user_list_is_capped(client, rustpad, pad):
    rustpad.seed(pad, "text")
    rustpad.set_mode(pad, "many-users:300")
    structured = ok(await call(client, "get_document_info", {"id": pad}))
    assert 0 < len(structured["active_users"]) <= 200


@pytest.mark.parametrize("mode", ["binary-frame", "huge-ids", "flood"])
async def test_harmless_oddities_do_not_stop_a_write(client, rustpad, pad, mode):
    rustpad.seed(pad, "base")
    rustpad.set_mode(pad, mode)
    structured = ok(await call(client, "append_to_document", {"id": pad, "text": "+1"}))
    assert structured["characters"] == 6
    assert rustpad.text(pad) == "base+1"
    info = ok(await call(client, "get_document_info", {"id": pad}))
    assert info["length_characters"] == 6




@pytest.mark.parametrize("mode", UNTRUSTWORTHY)
async def test_an_untrustworthy_snapshot_is_refused_and_never_written_on(
    client, rustpad, pad, mode
):
    rustpad.seed(pad, "original")
    rustpad.set_mode(pad, mode)
    failed(await call(client, "get_document_info", {"id": pad}))
    failed(await call(client, "append_to_document", {"id": pad, "text": "X"}))
    assert not any("Edit" in frame for frame in rustpad.log(pad))
    assert rustpad.text(pad) == "original"
    # The server keeps serving afterwards.
    assert ok(await call(client, "get_stats", {}))["database_size"] == 0


async def test_what_a_hostile_rustpad_sends_never_reaches_an_error_unmarked(client, rustpad, pad):
    rustpad.seed(pad, "original")
    rustpad.set_mode(pad, "hostile-message")
    for tool, arguments in [
        ("get_document_info", {"id": pad}),
        ("append_to_document", {"id": pad, "text": "X"}),
        ("replace_in_document", {"id": pad, "search": "original", "replace": ""}),
    ]:
        message = failed(await call(client, tool, arguments))
        assert "does not understand" in message and "line 1 column" in message, message
        for word in ("IGNORE", "INSTRUCTIONS", "EMPTY", "obey"):
            assert word not in message, message
    assert rustpad.text(pad) == "original"


async def test_a_wait_on_a_pad_that_floods_carets_ends_at_its_timeout(client, rustpad, pad):
    rustpad.seed(pad, "base\n")
    base = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))["base"]
    rustpad.set_mode(pad, "flood")
    answer = ok(await call(client, "wait_for_changes", {"id": pad, "base": base, "timeout_seconds": 2}))
    assert answer["timed_out"] is True and answer["base"] == base
    assert 1950 <= answer["waited_ms"] < 6000
    # The flooding connection never said who it is, so it is nobody's caret.
    assert "people" not in answer
