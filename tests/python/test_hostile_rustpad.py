"""A hostile Rustpad, through the real client, for what test_hostile_upstream.py and
test_edit_outcomes.py leave out: sockets that never answer or go silent after Identity (each call
must end on its own with a clear error, not by a cancel), and every write tool — not only
append_to_document — against a snapshot that cannot be trusted: refused, and no Edit (nor any
other change) ever sent.

Memory bounds (oversized-frame, flood, http-huge-body:20, many-users:5000) are measured in
tests/host-tests/tests/hostile.rs, which knows the server's pid."""

from __future__ import annotations

import anyio
import pytest

from conftest import UNTRUSTWORTHY, call, edits, failed, frame_kinds, ok

pytestmark = pytest.mark.anyio

# What a client may send on a pad whose state it does not trust: nothing that changes the pad.
CHANGES = {"Edit", "SetLanguage"}

# Every tool that changes a pad, with arguments that would change it. create_document only
# writes to an empty pad, so its pad is left unseeded; the others start as "original".
WRITES = [
    ("append_to_document", {"text": "X"}),
    ("set_document", {"text": "replaced"}),
    ("replace_in_document", {"search": "original", "replace": "changed"}),
    ("create_document", {"text": "created", "language": "rust"}),
    ("set_language", {"language": "rust"}),
]


def prepare(rustpad, pad: str, tool: str, mode: str) -> str:
    """Seeds `pad` for `tool`, sets `mode`, returns the text the pad must keep."""
    original = "" if tool == "create_document" else "original"
    if original:
        rustpad.seed(pad, original)
    rustpad.set_mode(pad, mode)
    return original


def changes_sent(rustpad, pad: str) -> list[str]:
    return [kind for kind in frame_kinds(rustpad.log(pad)) if kind in CHANGES]


async def test_sockets_that_never_answer_or_fall_silent_end_with_a_clear_error(
    open_client, rustpad, new_pad
):
    # Both modes are only ended by the server's own snapshot deadline (20 s), so every call runs
    # at once; the SDK client carries concurrent requests over the one stdio connection.
    calls = []
    for mode in ["never-answer", "silent-after-identity"]:
        for tool, arguments in [("get_document_info", {}), *WRITES]:
            pad = new_pad(f"{mode}-{tool}")
            original = prepare(rustpad, pad, tool, mode)
            calls.append((mode, tool, pad, original, {"id": pad, **arguments}))
    messages: dict[str, str] = {}
    async with open_client("legacy", ELICITATION="false") as client:

        async def attempt(tool: str, pad: str, arguments: dict) -> None:
            messages[pad] = failed(await call(client, tool, arguments))

        async with anyio.create_task_group() as group:
            for _, tool, pad, _, arguments in calls:
                group.start_soon(attempt, tool, pad, arguments)
        # The server is still serving afterwards.
        assert ok(await call(client, "get_stats", {}))["database_size"] == 0

    problems = []
    for mode, tool, pad, original, _ in calls:
        message = messages[pad]
        lowered = message.lower()
        if not ("in time" in lowered or "did not" in lowered or "timed out" in lowered):
            problems.append(f"{mode} {tool}: no timeout in {message!r}")
        if "snapshot" not in lowered:
            problems.append(f"{mode} {tool}: does not say what it waited for: {message!r}")
        if changes_sent(rustpad, pad):
            problems.append(f"{mode} {tool}: sent {changes_sent(rustpad, pad)}")
        if rustpad.text(pad) != original:
            problems.append(f"{mode} {tool}: the pad changed to {rustpad.text(pad)!r}")
    assert not problems, "\n".join(problems)




@pytest.mark.parametrize("mode", UNTRUSTWORTHY)
async def test_no_write_tool_changes_a_pad_it_cannot_trust(open_client, rustpad, new_pad, mode):
    # test_hostile_upstream.py covers append_to_document; here every other write, through the
    # dialog-less path (ELICITATION=false: a token would be issued only after reading the pad).
    async with open_client("legacy", ELICITATION="false") as client:
        for tool, arguments in WRITES:
            pad = new_pad(tool)
            original = prepare(rustpad, pad, tool, mode)
            message = failed(await call(client, tool, {"id": pad, **arguments}))
            # Not the two-call question either: a token offered on a state it could not read
            # would approve a change nobody saw.
            assert "confirm_token" not in message, (tool, message)
            assert changes_sent(rustpad, pad) == [], (tool, rustpad.log(pad))
            assert rustpad.text(pad) == original, tool
        assert ok(await call(client, "get_stats", {}))["database_size"] == 0


async def test_an_edit_is_sent_again_only_once_the_history_shows_it_was_not_made(
    open_client, rustpad, new_pad
):
    # A blind retry could apply a change twice. After a lost acknowledgement the server reads the
    # history on a new connection: an edit found there is not sent again; one absent, from a
    # connection Rustpad has let go, is tried anew (up to three attempts). (no-ack waits out the
    # 15 s acknowledgement deadline, so the modes run side by side.)
    pads = {mode: new_pad(mode) for mode in ["close-on-edit", "apply-then-close", "no-ack"]}
    for mode, pad in pads.items():
        rustpad.seed(pad, "abc")
        rustpad.set_mode(pad, mode)
    results = {}
    async with open_client("legacy") as client:

        async def attempt(mode: str, pad: str) -> None:
            results[mode] = await call(client, "append_to_document", {"id": pad, "text": "X"})

        async with anyio.create_task_group() as group:
            for mode, pad in pads.items():
                group.start_soon(attempt, mode, pad)
    dropped = failed(results["close-on-edit"])
    assert dropped.endswith("Tried 3 times; nothing was written."), dropped
    assert len(edits(rustpad, pads["close-on-edit"])) == 3
    assert rustpad.text(pads["close-on-edit"]) == "abc"
    for mode in ["apply-then-close", "no-ack"]:
        ok(results[mode])
        assert len(edits(rustpad, pads[mode])) == 1, mode
        assert rustpad.text(pads[mode]) == "abcX", mode
