"""What a write (or read) reports when Rustpad does not behave: no acknowledgement, a dropped
connection, redirects and error pages on the HTTP API, and a slow snapshot."""

from __future__ import annotations

import anyio
import pytest

from conftest import ERAS, append_while_the_pad_is_replaced, call, edits, failed, ok

pytestmark = pytest.mark.anyio

# Where a failure says its edit may or may not have been made (guest/src/tools/outcome.rs).
OUTCOME_KEY = "rustpad-mcp/outcome"


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param) as client:
        yield client


# What a write's result adds when its acknowledgement was lost and its edit then found in the
# pad's history (guest/src/tools/session.rs).
FOUND_IN_HISTORY = "found the edit in the pad's history, so it was made, once"


async def append_x_in_every_era(open_client, rustpad, new_pad, mode: str) -> dict:
    """Appends "X" to a pad "abc" in `mode`, once per era, side by side (these calls wait out a
    deadline of the server's); returns each era's pad and call result."""
    pads = {era: new_pad(era) for era in ERAS}
    for pad in pads.values():
        rustpad.set_mode(pad, mode)
        rustpad.seed(pad, "abc")
    results = {}

    async def attempt(era: str, pad: str) -> None:
        async with open_client(era) as client:
            results[era] = await call(client, "append_to_document", {"id": pad, "text": "X"})

    async with anyio.create_task_group() as group:
        for era, pad in pads.items():
            group.start_soon(attempt, era, pad)
    return {era: (pads[era], results[era]) for era in ERAS}


async def test_an_edit_never_acknowledged_is_found_in_the_history_and_succeeds(
    open_client, rustpad, new_pad
):
    # The server waits out its acknowledgement deadline here, so both eras run side by side.
    outcomes = await append_x_in_every_era(open_client, rustpad, new_pad, "no-ack")
    for pad, result in outcomes.values():
        structured = ok(result)
        assert structured["characters"] == 4, structured
        assert not (result.meta or {}).get(OUTCOME_KEY), result
        assert FOUND_IN_HISTORY in result.content[0].text, result
        # Made once: not sent again after the lost acknowledgement.
        assert rustpad.text(pad) == "abcX"


async def test_a_connection_dropped_on_edit_is_tried_again_and_says_nothing_was_written(
    client, rustpad, pad
):
    rustpad.set_mode(pad, "close-on-edit")
    rustpad.seed(pad, "abc")
    result = await call(client, "append_to_document", {"id": pad, "text": "X"})
    message = failed(result)
    # Each attempt's edit was shown not made (the connection gone, no entry of its own), so the
    # server tried again, up to its limit.
    assert "closed that connection without making the edit" in message, message
    assert message.endswith("Tried 3 times; nothing was written."), message
    assert not (result.meta or {}).get(OUTCOME_KEY), result
    assert rustpad.text(pad) == "abc"
    assert len(edits(rustpad, pad)) == 3, rustpad.log(pad)


async def test_a_connection_dropped_after_applying_is_found_in_the_history(client, rustpad, pad):
    rustpad.set_mode(pad, "apply-then-close")
    rustpad.seed(pad, "abc")
    result = await call(client, "append_to_document", {"id": pad, "text": "X"})
    ok(result)
    assert FOUND_IN_HISTORY in result.content[0].text, result
    assert rustpad.text(pad) == "abcX"


async def test_a_pad_replaced_before_the_acknowledgement_leaves_the_outcome_unknown(
    client, rustpad, pad
):
    # As if Rustpad restarted and loaded the pad from its storage: the history the edit was made
    # on is gone, so an entry of the same connection number would prove nothing.
    rustpad.seed(pad, "abc", ops=3, char="d")
    result = await append_while_the_pad_is_replaced(client, rustpad, pad, "X")
    message = failed(result)
    assert message.startswith("Outcome unknown: "), message
    assert "no longer holds the history this edit was made on" in message, message
    assert (result.meta or {}).get(OUTCOME_KEY) == "unknown", result
    assert "append_to_document" in message, message


async def test_an_edit_that_is_not_the_one_sent_leaves_the_outcome_unknown(client, rustpad, pad):
    # Rustpad (or something between) made another edit of that connection's than the one sent:
    # the history cannot say the write was made, nor that nothing was written.
    rustpad.set_mode(pad, "alter-then-close")
    rustpad.seed(pad, "abc")
    result = await call(client, "append_to_document", {"id": pad, "text": "X"})
    message = failed(result)
    assert message.startswith("Outcome unknown: "), message
    assert "an edit of that connection's that is not the one sent" in message, message
    assert (result.meta or {}).get(OUTCOME_KEY) == "unknown", result
    # Not sent again on the strength of a history that cannot tell.
    assert rustpad.text(pad) == "abcX!"


async def test_a_connection_rustpad_still_lists_leaves_the_outcome_unknown(open_client, rustpad, new_pad):
    # The socket closed right after the edit, but Rustpad lists the connection for 30 s more (as
    # a half-open one it has not noticed is gone), longer than the 20 s a write waits to learn
    # its outcome: the edit could still arrive, so neither "written" nor "not written" is true.
    # Both eras wait out those 20 s side by side.
    outcomes = await append_x_in_every_era(open_client, rustpad, new_pad, "vanish-on-edit")
    for pad, result in outcomes.values():
        message = failed(result)
        assert (result.meta or {}).get(OUTCOME_KEY) == "unknown", result
        assert message.startswith("Outcome unknown: "), message
        assert "still held the old connection open at the deadline" in message, message
        assert rustpad.text(pad) == "abc"


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
