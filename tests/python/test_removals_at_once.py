"""Removals sent at the same moment add up, wherever they land: a person's pad of N equal
blocks and N calls sent at once, each removing another block, end with at most half of it gone
and every other call asking, in fresh stdio processes, one stdio process, one or two `--http`
servers, and the component under `wasmtime serve` and `wash dev`. The same with removals made
earlier that this server's tally cannot know of (another process made them, a person who left,
or the tally forgot them), and a write that never finishes holds the others up only until they
ask, and holds back any approval while it may still land. Also: entries that change nothing do not move the removal rule's window, and an approval
given before a Rustpad restart is refused after it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from conftest import RustpadServer, TEST_SERVER_BIN, legacy_session, marks, minimal_env, request, run_server
from test_guard_everywhere import (
    Deployment,
    FreshProcesses,
    HttpPlaces,
    asks,
    deployment,
    question_text,
    result_text,
    with_approval,
)
from http_harness import SEAL_KEY, http_server

pytestmark = pytest.mark.anyio

# Each block is one line of a person's, 60 characters.
BLOCK_CHARS = 60
# How many times each spread is tried with each N.
RUNS = 2
# The removal rule waits this long for an earlier write, then asks (guard::removal::QUEUE_SECONDS).
QUEUE_SECONDS = 5


def blocks(n: int) -> list[str]:
    return [f"block {i:02d} of a person's notes ".ljust(BLOCK_CHARS - 1, ".") + "\n" for i in range(n)]


class OneStdioProcess(Deployment):
    """Our host on stdio, one process taking every call of a batch at once (token era)."""

    era = "token"

    def __init__(self, rustpad: RustpadServer, **variables: str):
        self.rustpad = rustpad
        self.env = minimal_env(
            RUSTPAD_URL=rustpad.url, ELICITATION="false", RUSTPAD_SEAL_KEY=SEAL_KEY, **variables
        )

    def call(self, at, tool, arguments, **extra):
        return self.at_once([(tool, arguments)])[0]

    def at_once(self, calls: list[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
        messages = [
            request(i + 1, "tools/call", {"name": tool, "arguments": dict(arguments)})
            for i, (tool, arguments) in enumerate(calls)
        ]
        run = run_server(self.env, legacy_session(*messages))
        assert run.returncode == 0, run.stderr
        return [run.response(i + 1)["result"] for i in range(len(calls))]


def at_once(place: Deployment, calls: list[tuple[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Sends every call of `calls` at the same moment (each to its own place, where there are
    several) and returns their results in order."""
    if isinstance(place, OneStdioProcess):
        return place.at_once(calls)
    start = threading.Barrier(len(calls))

    def one(index: int) -> dict[str, Any]:
        tool, arguments = calls[index]
        start.wait()
        return place.call(index, tool, arguments)

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(one, range(len(calls))))


def asked(result: dict[str, Any]) -> bool:
    """Whether the call asked a person (a dialog, or the two-call token) and changed nothing."""
    if result.get("resultType") == "input_required":
        return True
    return result.get("isError") is True and "confirm_token=" in result_text(result)


def went_ahead(result: dict[str, Any]) -> bool:
    return result.get("resultType", "complete") == "complete" and result.get("isError") is not True


def remove_each(place: Deployment, pad: str, pieces: list[str]) -> list[dict[str, Any]]:
    """One replace_in_document per piece, all at once, each removing its piece."""
    calls = [("replace_in_document", {"id": pad, "search": piece, "replace": ""}) for piece in pieces]
    return at_once(place, calls)


def check_at_most_half_gone(
    rustpad: RustpadServer, pad: str, original: list[str], results: list[dict], earlier: int = 0
) -> int:
    """Every call went ahead or asked; what went ahead is exactly what is missing from the pad
    besides the `earlier` blocks removed before, and with them at most half of the blocks.
    Returns how many went ahead."""
    for result in results:
        assert went_ahead(result) or asked(result), result
    text = rustpad.text(pad)
    gone = [block for block in original if block not in text]
    done = [result for result in results if went_ahead(result)]
    assert len(gone) == earlier + len(done), (gone, results)
    assert 2 * len(gone) <= len(original), f"{len(gone)} of {len(original)} blocks gone: {results}"
    return len(done)


@contextmanager
def spread_of(kind: str, rustpad: RustpadServer, **variables: str) -> Iterator[Deployment]:
    if kind == "one-stdio":
        yield OneStdioProcess(rustpad, **variables)
        return
    if kind == "one-http-modern":
        with http_server(rustpad, RUSTPAD_SEAL_KEY=SEAL_KEY, **variables) as server:
            yield HttpPlaces(rustpad, [server.url], "modern")
        return
    with deployment(kind, rustpad) as place:
        yield place


SPREADS = [
    "fresh-processes",
    "one-stdio",
    "one-http-modern",
    "replicas-modern",
    "replicas-token",
    "wasmtime-modern",
    "wasmtime-token",
    "wash-modern",
]


@pytest.mark.parametrize("kind", SPREADS)
async def test_blocks_removed_at_once_never_take_more_than_half(kind, rustpad, pad):
    with spread_of(kind, rustpad) as place:
        for n in (3, 4, 8):
            for run in range(RUNS):
                name = f"{pad}-{n}-{run}"
                original = blocks(n)
                place.rustpad.seed(name, "".join(original))
                results = remove_each(place, name, original)
                done = check_at_most_half_gone(place.rustpad, name, original, results)
                # In Rustpad's order, the first half go ahead and the rest ask.
                assert done == n // 2, results


async def test_removals_beside_appends_on_kept_connections_still_add_up(rustpad, pad):
    """Appends in our host go on connections it keeps between calls, each carrying many writes:
    removals sent at the same moment as such appends still add up to at most half of a person's
    pad, and every append lands once."""
    with spread_of("one-http-modern", rustpad) as place:
        for n in (4, 8):
            name = f"{pad}-{n}"
            original = blocks(n)
            place.rustpad.seed(name, "".join(original))
            # Appends at once leave the host a kept connection each; a second round says on each
            # that it is held, so the appends beside the removals send no mark at all.
            for round in ("note", "again"):
                calls = [("append_to_document", {"id": name, "text": f"{round} {i}\n"}) for i in range(4)]
                results = at_once(place, calls)
                assert all(went_ahead(result) for result in results), results
            calls = [("replace_in_document", {"id": name, "search": block, "replace": ""}) for block in original]
            calls += [("append_to_document", {"id": name, "text": f"later {i}\n"}) for i in range(4)]
            results = at_once(place, calls)
            check_at_most_half_gone(place.rustpad, name, original, results[:n])
            assert all(went_ahead(result) for result in results[n:]), results[n:]
            text = place.rustpad.text(name)
            for i in range(4):
                for round in ("note", "again", "later"):
                    assert text.count(f"{round} {i}\n") == 1, text


EARLIER = ["another-process", "a-person-who-left", "forgotten-by-the-tally"]


@pytest.mark.parametrize(
    "kind, earlier",
    [
        *((kind, earlier) for kind in ("one-stdio", "one-http-modern", "wasmtime-modern") for earlier in EARLIER[:2]),
        # Forgetting needs a tally, and one process that takes both the first call and the rest.
        ("one-http-modern", EARLIER[2]),
    ],
)
async def test_earlier_removals_the_tally_does_not_hold_still_count(kind, earlier, rustpad, pad):
    variables = {"RUSTPAD_MCP_TALLY_SECONDS": "1"} if earlier == "forgotten-by-the-tally" else {}
    with spread_of(kind, rustpad, **variables) as place:
        for run in range(RUNS):
            name = f"{pad}-{run}"
            original = blocks(10)
            place.rustpad.seed(name, "".join(original))
            first = "".join(original[:4])  # 40 % of the pad
            if earlier == "a-person-who-left":
                place.rustpad.set_by_person(name, "".join(original[4:]))
            elif earlier == "another-process":
                other = FreshProcesses(place.rustpad)
                assert went_ahead(other.call(0, "replace_in_document", {"id": name, "search": first, "replace": ""}))
            else:
                assert went_ahead(place.call(0, "replace_in_document", {"id": name, "search": first, "replace": ""}))
                time.sleep(1.5)
            assert place.rustpad.text(name) == "".join(original[4:])
            results = remove_each(place, name, original[4:])
            done = check_at_most_half_gone(place.rustpad, name, original, results, earlier=4)
            assert done == 1, results


@pytest.mark.parametrize("kind", ["fresh-processes", "one-http-modern", "wasmtime-modern"])
async def test_a_mark_that_never_becomes_an_edit_makes_the_next_removal_ask_within_the_bound(
    kind, rustpad, pad
):
    original = blocks(4)
    arguments = {"id": pad, "search": original[0], "replace": ""}
    with spread_of(kind, rustpad) as place:
        place.rustpad.seed(pad, "".join(original))
        with place.rustpad.person(pad, name="rustpad-mcp") as writer:
            # A connection named as this server's that sends a mark and never its edit.
            await writer.keep(1)
            started = time.monotonic()
            result = place.call(0, "replace_in_document", arguments)
            took = time.monotonic() - started
            assert asked(result), result
            question = question_text(result)
            assert (
                "Another write of this server's to this pad, begun just before this one, had not finished"
                in question
            ), question
            assert QUEUE_SECONDS - 0.5 <= took < QUEUE_SECONDS + 5, took
            # An approval given now is not used while that write may still land: after the same
            # wait, the call says so and changes nothing.
            approval = asks(result)
            held = with_approval(place, 1, "replace_in_document", arguments, approval)
            assert held.get("isError") is True and "the approval was not used" in result_text(held), held
            assert place.rustpad.text(pad) == "".join(original)
        # Once it has left, the same approval goes through.
        complete = with_approval(place, 2, "replace_in_document", arguments, approval)
        assert went_ahead(complete), complete
        assert place.rustpad.text(pad) == "".join(original[1:])


async def test_entries_that_change_nothing_do_not_move_the_window(rustpad, pad):
    # Fresh processes: nothing but the pad's history counts what was removed.
    place = FreshProcesses(rustpad)
    text = "".join(blocks(10))
    rustpad.seed(pad, text)
    first = text[: 4 * BLOCK_CHARS]
    assert went_ahead(place.call(0, "replace_in_document", {"id": pad, "search": first, "replace": ""}))
    with rustpad.person(pad) as person:
        # A real edit first, so the connection is nobody's writer, then edits that change nothing.
        await person.append("x")
        await person.keep(1000)
    # 40 % gone; another 20 % would be 60 %.
    second = text[4 * BLOCK_CHARS : 6 * BLOCK_CHARS]
    result = place.call(1, "replace_in_document", {"id": pad, "search": second, "replace": ""})
    assert asked(result), result
    assert second in rustpad.text(pad)
    keeps = [entry for entry in marks(rustpad, pad) if entry["operation"] == [len(text) - len(first) + 1]]
    assert len(keeps) >= 1000, len(keeps)


async def test_an_approval_given_before_rustpad_restarted_is_refused_after(pad):
    rustpad = RustpadServer(str(TEST_SERVER_BIN))
    port = rustpad.port
    try:
        rustpad.seed(pad, "the person's notes\n")
        place = FreshProcesses(rustpad)
        arguments = {"id": pad, "text": "replaced"}
        approval = asks(place.call(0, "set_document", arguments))
    finally:
        rustpad.stop()
    # A Rustpad start time is in seconds: the next instance starts in another one.
    time.sleep(1.1)
    again = RustpadServer(str(TEST_SERVER_BIN), port=port)
    try:
        again.seed(pad, "the person's notes\n")
        # More connections than the pad had when the token was given, so that only the
        # instance tells them apart.
        for _ in range(5):
            with again.person(pad):
                pass
        refused = FreshProcesses(again).call(1, "set_document", {**arguments, **approval["arguments"]})
        assert refused.get("isError") is True, refused
        message = result_text(refused)
        assert "Rustpad restarted or forgot the pad" in message, message
        assert again.text(pad) == "the person's notes\n"
    finally:
        again.stop()
