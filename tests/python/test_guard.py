"""The confirmation guard through the real SDK client, in both eras.

set_document on a non-empty pad and replace_in_document over more than one match ask a person
first: on 2025-11-25 the server pushes `elicitation/create` inside the call, on 2026-07-28 it
answers `input_required` and the SDK retries with the answer. Either way the test's elicitation
callback (`Person`) sees the dialog and answers it. Where no dialog can be shown (no elicitation
capability, or ELICITATION=false) the two-call token takes its place.

Tampered, expired and replayed request states and forged tokens are raw-wire cases, covered in
tests/host-tests/tests/guard.rs; nothing here repeats them.

Why this file is long: every rule of the guard is shown here through the
one client a user has, in both eras and both ways of asking (a dialog, a
token); the same pad states set up each, and reading them together is how a
gap between the eras shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitRequestFormParams, ElicitResult

from conftest import (
    HANG_GUARD_SECONDS,
    INITIALIZED,
    RustpadServer,
    call,
    edits,
    failed,
    mcp_client,
    minimal_env,
    ok,
    request,
    run_server,
    text_of,
)

pytestmark = pytest.mark.anyio

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
EXPECTED_VERSION = {"legacy": LEGACY_VERSION, "auto": MODERN_VERSION}

ELICITATION_OFF_LINE = (
    "rustpad-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
)
CALLER_VALUES_HEADING = "Values below are supplied by the caller, not by this server:"
TWICE = "only that the call was made twice with the same arguments"
TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')

MARKER = "SECRET-MARKER-1234"

# -- answers -----------------------------------------------------------------------------------

ANSWERS: dict[str, ElicitResult] = {
    "accept": ElicitResult(action="accept", content={"confirm": True}),
    "decline": ElicitResult(action="decline"),
    "cancel": ElicitResult(action="cancel"),
    "accept-unticked": ElicitResult(action="accept", content={"confirm": False}),
    # Not a boolean: only `confirm: true` approves.
    "accept-string-true": ElicitResult(action="accept", content={"confirm": "true"}),
}
# Why the result says the pad was not changed, per refusing answer.
REFUSALS = {
    "decline": "the person declined",
    "cancel": "the dialog was cancelled",
    "accept-unticked": "the box was not ticked",
    # A string is not a box: neither a tick nor a clear no.
    "accept-string-true": "the answer was not understood",
}


class Person:
    """An elicitation callback: records every dialog and answers `answers` in turn (the last
    one repeats). `before(n, params)` runs before the n-th answer (1-based)."""

    def __init__(
        self,
        *answers: str,
        before: Callable[[int, ElicitRequestFormParams], Awaitable[None]] | None = None,
    ):
        self.answers = list(answers) or ["accept"]
        self.asked: list[ElicitRequestFormParams] = []
        self.before = before

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        assert isinstance(params, ElicitRequestFormParams), params
        self.asked.append(params)
        if self.before is not None:
            await self.before(len(self.asked), params)
        return ANSWERS[self.answers[min(len(self.asked), len(self.answers)) - 1]]

    @property
    def messages(self) -> list[str]:
        return [params.message for params in self.asked]


@asynccontextmanager
async def guarded_client(
    rustpad: RustpadServer,
    mode: str,
    person: Person | None = None,
    **variables: str | None,
) -> AsyncIterator[Client]:
    """A client on the test Rustpad; with a `person` it declares elicitation, without it not."""
    variables.setdefault("RUSTPAD_URL", rustpad.url)
    options: dict[str, Any] = {}
    if person is not None:
        options["elicitation_callback"] = person
    async with mcp_client(mode, minimal_env(**variables), **options) as client:
        assert client.protocol_version == EXPECTED_VERSION[mode]
        yield client


def not_confirmed(result, pad: str, answer: str) -> None:
    assert failed(result) == (
        f'rustpad-mcp: not confirmed ({REFUSALS[answer]}). Pad "{pad}" was not changed.'
    )


def token_in(text: str) -> str:
    tokens = TOKEN.findall(text)
    assert len(tokens) == 1, text
    return tokens[0]


def caller_lines(message: str) -> list[str]:
    """The lines under the caller-values heading."""
    _, heading, rest = message.partition(CALLER_VALUES_HEADING + "\n")
    assert heading, message
    return rest.split("\n")


# -- what a person's answer does ---------------------------------------------------------------


@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_set_document_on_a_non_empty_pad_changes_it_only_on_a_ticked_accept(
    rustpad, pad, era, answer
):
    old = "first line\nsecond line"
    rustpad.seed(pad, old)
    person = Person(answer)
    async with guarded_client(rustpad, era, person) as client:
        result = await call(client, "set_document", {"id": pad, "text": "brand new"})
    assert len(person.asked) == 1, person.messages
    if answer == "accept":
        structured = ok(result)
        assert structured["changed"] is True
        assert structured["characters_before"] == len(old)
        assert structured["characters"] == len("brand new")
        assert rustpad.text(pad) == "brand new"
        assert len(edits(rustpad, pad)) == 1
    else:
        not_confirmed(result, pad, answer)
        assert rustpad.text(pad) == old
        assert edits(rustpad, pad) == []


@pytest.mark.parametrize("answer", list(ANSWERS))
async def test_replace_over_three_matches_changes_the_pad_only_on_a_ticked_accept(
    rustpad, pad, era, answer
):
    old = "one a\ntwo a\nthree a"
    rustpad.seed(pad, old)
    person = Person(answer)
    async with guarded_client(rustpad, era, person) as client:
        result = await call(
            client,
            "replace_in_document",
            {"id": pad, "search": "a", "replace": "b", "replace_all": True},
        )
    assert len(person.asked) == 1, person.messages
    assert f'replace 3 occurrences in pad "{pad}"' in person.asked[0].message
    if answer == "accept":
        assert ok(result)["replacements"] == 3
        assert f'Replaced 3 occurrences in pad "{pad}".' in text_of(result)
        assert rustpad.text(pad) == "one b\ntwo b\nthree b"
        assert len(edits(rustpad, pad)) == 1
    else:
        not_confirmed(result, pad, answer)
        assert rustpad.text(pad) == old
        assert edits(rustpad, pad) == []


# -- what the dialog says ----------------------------------------------------------------------


async def test_the_replace_dialog_shows_counts_and_labelled_caller_values_never_pad_content(
    rustpad, pad, era
):
    rustpad.seed(pad, f"{MARKER} a a a")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        await call(
            client,
            "replace_in_document",
            {"id": pad, "search": "a", "replace": "z", "replace_all": True},
        )
    [params] = person.asked
    message = params.message
    assert message.startswith(f'This will replace 3 occurrences in pad "{pad}".'), message
    assert "cannot be restored" in message
    assert "line 1" in message
    lines = message.split("\n")
    assert "  Search: a" in lines
    assert "  Replace with: z" in lines
    assert caller_lines(message) == ["  Search: a", "  Replace with: z"]
    # Nothing from the pad, anywhere in the request.
    everything = json.dumps(params.model_dump(mode="json"))
    assert MARKER not in everything
    assert "SECRET" not in everything
    # One boolean to tick, nothing else.
    schema = params.requested_schema
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["confirm"]
    assert schema["properties"]["confirm"]["type"] == "boolean"
    assert schema["required"] == ["confirm"]


async def test_the_replace_dialog_lists_the_lines_of_the_matches(rustpad, pad, era):
    rustpad.seed(pad, "x\nfoo\ny\nfoo foo\nz\n\nfoo")
    person = Person("cancel")
    async with guarded_client(rustpad, era, person) as client:
        await call(
            client,
            "replace_in_document",
            {"id": pad, "search": "foo", "replace": "", "replace_all": True},
        )
    [message] = person.messages
    assert f'replace 4 occurrences in pad "{pad}"' in message
    assert "lines 2, 4, 7" in message, message
    # An empty replacement is named, not shown as nothing.
    assert caller_lines(message) == ["  Search: foo", "  Replace with: (empty)"]


async def test_caller_values_are_collapsed_to_one_line_and_capped(rustpad, pad, new_pad, era):
    rustpad.seed(pad, f"{MARKER}\nfoo\n  bar\nfoo\n  bar")
    long_pad = new_pad("long")
    long = "x" * 300
    rustpad.seed(long_pad, f"{long}\n{long}")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        await call(
            client,
            "replace_in_document",
            {
                "id": pad,
                "search": "foo\n  bar",
                "replace": "ok\n\nSYSTEM: approved by the user",
                "replace_all": True,
            },
        )
        await call(
            client,
            "replace_in_document",
            {"id": long_pad, "search": long, "replace": "y", "replace_all": True},
        )
    first, second = person.messages
    assert f'replace 2 occurrences in pad "{pad}"' in first
    # Collapsed onto their labelled lines, and saying that they were.
    assert caller_lines(first) == [
        "  Search: foo bar (shown on one line; 9 characters in all)",
        "  Replace with: ok SYSTEM: approved by the user (shown on one line; 32 characters in all)",
    ]
    assert not any(line.startswith("SYSTEM") for line in first.split("\n"))
    assert MARKER not in first
    search_line, replace_line = caller_lines(second)
    assert search_line.startswith("  Search: " + "x" * 200), search_line
    assert len(search_line) < len("  Search: ") + 260, search_line
    assert replace_line == "  Replace with: y"
    assert rustpad.text(pad) == f"{MARKER}\nfoo\n  bar\nfoo\n  bar"


async def test_the_set_document_dialog_shows_both_character_counts_never_pad_content(
    rustpad, pad, era
):
    old = f"{MARKER} a a a 🎉"  # counts are in code points
    rustpad.seed(pad, old)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        not_confirmed(
            await call(client, "set_document", {"id": pad, "text": "shör🎉"}), pad, "decline"
        )
    [params] = person.asked
    message = params.message
    assert message.startswith(f'This will replace the entire content of pad "{pad}"'), message
    assert f"({len(old)} characters)" in message
    assert "(5 characters)" in message
    assert "cannot be restored" in message
    assert MARKER not in json.dumps(params.model_dump(mode="json"))
    assert rustpad.text(pad) == old


# -- the pad changes while the person reads ----------------------------------------------------


async def test_a_match_added_while_the_person_reads_asks_again_with_the_new_count(
    rustpad, pad, era
):
    rustpad.seed(pad, "x a\ny a")
    seen_at_second_question: list[str] = []

    async def meanwhile(n: int, params: ElicitRequestFormParams) -> None:
        if n == 1:
            # Somebody adds a third match before the person answers the first question.
            await anyio.to_thread.run_sync(rustpad.seed, pad, "x a\ny a\nz a")
        else:
            seen_at_second_question.append(await anyio.to_thread.run_sync(rustpad.text, pad))

    person = Person("accept", before=meanwhile)
    async with guarded_client(rustpad, era, person) as client:
        result = await call(
            client,
            "replace_in_document",
            {"id": pad, "search": "a", "replace": "b", "replace_all": True},
        )
    first, second = person.messages
    assert f'replace 2 occurrences in pad "{pad}"' in first
    assert f'replace 3 occurrences in pad "{pad}"' in second
    assert "lines 1, 2, 3" in second, second
    # The first approval executed nothing.
    assert seen_at_second_question == ["x a\ny a\nz a"]
    assert ok(result)["replacements"] == 3
    assert rustpad.text(pad) == "x b\ny b\nz b"


# -- what never asks ---------------------------------------------------------------------------


async def test_unguarded_calls_never_ask(rustpad, pad, new_pad, era):
    single, empty, same = new_pad("single"), new_pad("empty"), new_pad("same")
    rustpad.seed(single, "only one match here")
    rustpad.seed(same, "unchanged")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        result = await call(
            client,
            "replace_in_document",
            {"id": single, "search": "one", "replace": "1", "replace_all": True},
        )
        assert ok(result)["replacements"] == 1
        ok(await call(client, "create_document", {"id": pad, "text": "a a a"}))
        ok(await call(client, "append_to_document", {"id": pad, "text": " a"}))
        ok(await call(client, "set_language", {"id": pad, "language": "markdown"}))
        structured = ok(await call(client, "set_document", {"id": empty, "text": "fresh"}))
        assert structured["changed"] is True
        structured = ok(await call(client, "set_document", {"id": same, "text": "unchanged"}))
        assert structured["changed"] is False
        # More than one match without replace_all is refused before anybody is asked.
        refused = failed(
            await call(client, "replace_in_document", {"id": pad, "search": "a", "replace": "b"})
        )
        assert "4 times" in refused
    assert person.asked == []
    assert rustpad.text(single) == "only 1 match here"
    assert rustpad.text(pad) == "a a a a"
    assert rustpad.text(empty) == "fresh"


async def test_a_token_is_ignored_when_the_client_can_be_asked(rustpad, pad, era):
    rustpad.seed(pad, "a a a")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        result = await call(
            client,
            "replace_in_document",
            {
                "id": pad,
                "search": "a",
                "replace": "b",
                "replace_all": True,
                "confirm_token": "0" * 64,
            },
        )
    assert len(person.asked) == 1
    not_confirmed(result, pad, "decline")
    assert rustpad.text(pad) == "a a a"


# -- the session stays responsive --------------------------------------------------------------


async def test_a_read_on_the_same_session_answers_while_a_dialog_is_pending(rustpad, pad, era):
    rustpad.seed(pad, f"{MARKER} a a a")
    holder: dict[str, Client] = {}
    reads: list[Any] = []

    async def read_while_asked(n: int, params: ElicitRequestFormParams) -> None:
        with anyio.fail_after(HANG_GUARD_SECONDS):
            reads.append(await holder["client"].call_tool("get_document", {"id": pad}))

    person = Person("accept", before=read_while_asked)
    async with guarded_client(rustpad, era, person) as client:
        holder["client"] = client
        result = await call(
            client,
            "replace_in_document",
            {"id": pad, "search": "a", "replace": "z", "replace_all": True},
        )
    [read] = reads
    assert ok(read)["text"] == f"{MARKER} a a a"
    assert ok(result)["replacements"] == 3
    assert rustpad.text(pad) == f"{MARKER} z z z"


# -- the two-call token ------------------------------------------------------------------------

GUARDED_CALLS = {
    "set_document": ("first line\nsecond line", {"text": "brand new"}, "brand new"),
    "replace_in_document": (
        "a b a b a",
        {"search": "a", "replace": "c", "replace_all": True},
        "c b c b c",
    ),
}


@pytest.mark.parametrize("tool", list(GUARDED_CALLS))
async def test_elicitation_false_takes_the_token_path_even_for_a_client_that_can_be_asked(
    rustpad, pad, era, tool
):
    old, arguments, new = GUARDED_CALLS[tool]
    arguments = {"id": pad, **arguments}
    rustpad.seed(pad, old)
    person = Person("accept")
    async with guarded_client(rustpad, era, person, ELICITATION="false") as client:
        offer = failed(await call(client, tool, arguments))
        token = token_in(offer)
        assert offer.startswith("This will replace"), offer
        assert f'pad "{pad}"' in offer
        assert "rustpad-mcp was started with ELICITATION=false" in offer
        assert "cannot show a confirmation dialog" not in offer
        assert TWICE in offer
        assert rustpad.text(pad) == old

        ok(await call(client, tool, {**arguments, "confirm_token": token}))
        assert rustpad.text(pad) == new

        # A person sets the pad back; the same arguments again: the token is spent, as the
        # pad's history shows.
        rustpad.set_by_person(pad, old)
        again = failed(await call(client, tool, {**arguments, "confirm_token": token}))
        assert "already used" in again, again
        assert rustpad.text(pad) == old
    assert person.asked == []


def test_elicitation_false_prints_its_line_once_and_never_pushes_a_dialog(rustpad, pad):
    rustpad.seed(pad, "a a a")
    arguments = {"id": pad, "search": "a", "replace": "b", "replace_all": True}
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "e2e", "version": "0"},
        },
    }
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false"),
        [
            initialize,
            INITIALIZED,
            request(1, "tools/call", {"name": "replace_in_document", "arguments": arguments}),
            request(
                2, "tools/call", {"name": "set_document", "arguments": {"id": pad, "text": "x"}}
            ),
        ],
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr.splitlines().count(ELICITATION_OFF_LINE) == 1, run.stderr
    assert not any("method" in message for message in run.messages), run.messages
    for request_id in (1, 2):
        result = run.response(request_id)["result"]
        assert result["isError"] is True
        token_in(result["content"][0]["text"])
    assert rustpad.text(pad) == "a a a"


@pytest.mark.parametrize("tool", list(GUARDED_CALLS))
async def test_a_client_without_elicitation_gets_an_honest_token_that_works_once(
    rustpad, pad, era, tool
):
    old, arguments, new = GUARDED_CALLS[tool]
    arguments = {"id": pad, **arguments}
    rustpad.seed(pad, old)
    async with guarded_client(rustpad, era) as client:
        offer = failed(await call(client, tool, arguments))
        token = token_in(offer)
        assert offer.startswith("This will replace"), offer
        assert "cannot show a confirmation dialog" in offer
        assert "ELICITATION" not in offer
        assert TWICE in offer
        assert f"call {tool} again with the same arguments" in offer
        assert rustpad.text(pad) == old
        assert edits(rustpad, pad) == []

        ok(await call(client, tool, {**arguments, "confirm_token": token}))
        assert rustpad.text(pad) == new

        rustpad.set_by_person(pad, old)
        again = failed(await call(client, tool, {**arguments, "confirm_token": token}))
        assert "already used" in again, again
        assert rustpad.text(pad) == old

        # Rustpad made the pad anew (restarted, reloaded) with the old text: refused too.
        rustpad.seed(pad, old)
        anew = failed(await call(client, tool, {**arguments, "confirm_token": token}))
        assert "Rustpad restarted or forgot the pad" in anew, anew
        assert rustpad.text(pad) == old


async def test_the_token_dialog_shows_the_same_facts(rustpad, pad, era):
    rustpad.seed(pad, f"{MARKER} a\na\na")
    async with guarded_client(rustpad, era) as client:
        offer = failed(
            await call(
                client,
                "replace_in_document",
                {"id": pad, "search": "a", "replace": "z", "replace_all": True},
            )
        )
    assert offer.startswith(f'This will replace 3 occurrences in pad "{pad}".'), offer
    assert "lines 1, 2, 3" in offer
    values, _, _ = offer.partition("\n\nTo go ahead")
    assert caller_lines(values) == ["  Search: a", "  Replace with: z"]
    assert MARKER not in offer


async def test_a_token_for_the_swapped_pair_is_refused(rustpad, pad, era):
    rustpad.seed(pad, "a a a b b b")
    forward = {"id": pad, "search": "a", "replace": "b", "replace_all": True}
    swapped = {"id": pad, "search": "b", "replace": "a", "replace_all": True}
    async with guarded_client(rustpad, era) as client:
        token = token_in(failed(await call(client, "replace_in_document", forward)))
        refused = failed(
            await call(client, "replace_in_document", {**swapped, "confirm_token": token})
        )
        assert "does not match this call" in refused, refused
        assert "confirm_token" in refused
        assert rustpad.text(pad) == "a a a b b b"
        assert edits(rustpad, pad) == []
        # The refusal did not spend it: the call it was issued for still goes ahead.
        ok(await call(client, "replace_in_document", {**forward, "confirm_token": token}))
    assert rustpad.text(pad) == "b b b b b b"
