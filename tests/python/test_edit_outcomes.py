"""What a write (or read) reports when Rustpad does not behave: no acknowledgement, a dropped
connection, redirects and error pages on the HTTP API, and a slow snapshot."""

from __future__ import annotations

import anyio
import pytest

from conftest import ERAS, call, failed, ok

pytestmark = pytest.mark.anyio

# Where a failure says its edit may or may not have been made (guest/src/tools/outcome.rs).
OUTCOME_KEY = "rustpad-mcp/outcome"


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param) as client:
        yield client


async def test_no_ack_reports_an_unknown_outcome_and_warns_against_repeating(
    open_client, rustpad, new_pad
):
    # The server waits out its acknowledgement deadline here, so both eras run side by side.
    messages = {}

    async def attempt(era: str, pad: str) -> None:
        async with open_client(era) as client:
            result = await call(client, "append_to_document", {"id": pad, "text": "X"})
            messages[era] = failed(result)
            # Its own kind of failure, for a client that acts without reading.
            assert (result.meta or {}).get(OUTCOME_KEY) == "unknown", result

    pads = {era: new_pad(era) for era in ERAS}
    for pad in pads.values():
        rustpad.set_mode(pad, "no-ack")
        rustpad.seed(pad, "abc")
    async with anyio.create_task_group() as group:
        for era, pad in pads.items():
            group.start_soon(attempt, era, pad)
    for era, pad in pads.items():
        message = messages[era]
        assert message.startswith("Outcome unknown: "), message
        assert "get_document" in message, message
        assert "append_to_document" in message, message
        # The edit did land: "unknown" was the honest answer, "failed" would have been wrong.
        assert rustpad.text(pad) == "abcX"


async def test_a_connection_dropped_on_edit_is_a_clear_error(client, rustpad, pad):
    rustpad.set_mode(pad, "close-on-edit")
    rustpad.seed(pad, "abc")
    message = failed(await call(client, "append_to_document", {"id": pad, "text": "X"}))
    lowered = message.lower()
    assert any(word in lowered for word in ("closed", "ended", "connection", "socket")), message
    assert "unknown" in lowered or "not" in lowered, message
    assert rustpad.text(pad) == "abc"


async def test_a_connection_dropped_after_applying_reports_an_unknown_outcome(client, rustpad, pad):
    rustpad.set_mode(pad, "apply-then-close")
    rustpad.seed(pad, "abc")
    result = await call(client, "append_to_document", {"id": pad, "text": "X"})
    message = failed(result)
    assert message.startswith("Outcome unknown: "), message
    assert (result.meta or {}).get(OUTCOME_KEY) == "unknown", result
    assert "append_to_document" in message
    assert rustpad.text(pad) == "abcX"


async def test_a_redirect_on_the_text_api_is_reported_and_not_followed(
    client, rustpad, pad, new_pad
):
    elsewhere = new_pad("elsewhere")
    rustpad.seed(elsewhere, "FOLLOWED-THE-REDIRECT")
    rustpad.set_mode(pad, f"http-redirect:{rustpad.url}/api/text/{elsewhere}")
    message = failed(await call(client, "get_document", {"id": pad}))
    assert "redirect" in message.lower()
    assert "302" in message
    assert "FOLLOWED" not in message

    other = new_pad("other-origin")
    rustpad.set_mode(other, "http-redirect:http://127.0.0.1:1/")
    message = failed(await call(client, "get_document", {"id": other}))
    assert "redirect" in message.lower()


async def test_an_html_error_page_is_omitted(client, rustpad, pad):
    rustpad.set_mode(pad, "http-html-error:502")
    message = failed(await call(client, "get_document", {"id": pad}))
    assert "502" in message
    lowered = message.lower()
    assert "<html" not in lowered and "<!doctype" not in lowered
    assert "nginx" not in lowered
    assert "html" in lowered


async def test_a_plain_error_body_is_shown_cleaned_and_labelled_untrusted(client, rustpad, pad):
    rustpad.set_mode(pad, "http-status:503:service \x1b[31mbusy\x07, try later")
    message = failed(await call(client, "get_document", {"id": pad}))
    assert "503" in message
    assert "service [31mbusy, try later" in message
    assert "\x1b" not in message and "\x07" not in message
    assert "untrusted" in message.lower()


async def test_a_body_over_the_read_limit_is_refused(client, rustpad, pad):
    rustpad.set_mode(pad, "http-huge-body:9")
    message = failed(await call(client, "get_document", {"id": pad}))
    assert "8388608" in message


async def test_a_slow_snapshot_still_appends_at_the_end(client, rustpad, pad):
    # The snapshot (Identity included) arrives 400 ms late; only the barrier, not a quiet-time
    # guess, tells the server when it has the whole pad.
    rustpad.set_mode(pad, "delay-snapshot:400")
    rustpad.seed(pad, "start of a long-standing pad 🎉", ops=20, char="·")
    expected = "start of a long-standing pad 🎉" + "·" * 20 + "END"
    structured = ok(await call(client, "append_to_document", {"id": pad, "text": "END"}))
    assert structured["characters"] == len(expected)
    assert rustpad.text(pad) == expected
    info = ok(await call(client, "get_document_info", {"id": pad}))
    # The seed's 21 entries, the write's mark and the append.
    assert info["revision"] == 23
    assert info["length_characters"] == len(expected)


async def test_a_slow_history_still_appends_at_the_end(client, rustpad, pad):
    # Identity at once, the rest 400 ms later: the case a quiet-time guess gets wrong.
    rustpad.set_mode(pad, "delay-history:400")
    rustpad.seed(pad, "existing text")
    structured = ok(await call(client, "append_to_document", {"id": pad, "text": "+END"}))
    assert structured["characters"] == len("existing text+END")
    assert rustpad.text(pad) == "existing text+END"
