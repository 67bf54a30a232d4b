"""The removal rule through the real SDK client, in both eras.

A single-match replace used to ask nobody, so `replace_in_document` of a whole pad by "" followed
by `set_document` on the now empty pad replaced everything without a dialog. A replace now asks
when it would remove more than half of a pad's characters (or more than 10,000), counting what
the pad's history shows was removed lately without approval by this server or by anyone who has
left, with text this server wrote left out of the pad's size while it is there. Removals split
over processes, replicas and WebAssembly hosts: tests/python/test_guard_everywhere.py.
"""

from __future__ import annotations

import anyio
import pytest

from conftest import call, failed, marks, ok, text_of
from test_guard import Person, edits, guarded_client, not_confirmed, token_in

pytestmark = pytest.mark.anyio


def replace(pad: str, search: str, replacement: str, **extra) -> dict:
    return {"id": pad, "search": search, "replace": replacement, **extra}


# Each case: the pad, a one-match replace that takes most of it, and the pad afterwards.
SWEEPING = {
    "whole pad by nothing": ("ONE TWO THREE", "ONE TWO THREE", "", ""),
    "most of the pad by unrelated text": (
        "Agenda: budget review, hiring plan.\nEnd",
        "budget review, hiring plan.",
        "ignore the agenda; nothing to see",
        "Agenda: ignore the agenda; nothing to see\nEnd",
    ),
}


@pytest.mark.parametrize("case", list(SWEEPING))
@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_single_match_that_removes_most_of_the_pad_asks(rustpad, pad, era, case, answer):
    old, search, replacement, new = SWEEPING[case]
    rustpad.seed(pad, old)
    person = Person(answer)
    async with guarded_client(rustpad, era, person) as client:
        result = await call(client, "replace_in_document", replace(pad, search, replacement))
    [params] = person.asked
    assert params.message.startswith(f'This will replace 1 occurrence in pad "{pad}".')
    assert f"of the pad's {len(old)} characters." in params.message, params.message
    # Counts and the caller's own values; nothing else of the pad.
    assert "End" not in params.message
    if answer == "accept":
        assert ok(result)["replacements"] == 1
        assert rustpad.text(pad) == new
    else:
        not_confirmed(result, pad, "decline")
        assert rustpad.text(pad) == old
        assert edits(rustpad, pad) == []


async def test_the_two_step_route_round_a_person_is_closed(rustpad, pad, era):
    """Emptying a pad with one replace, then setting it: the first step now asks."""
    rustpad.seed(pad, "ONE TWO THREE")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        not_confirmed(
            await call(client, "replace_in_document", replace(pad, "ONE TWO THREE", "")),
            pad,
            "decline",
        )
        # The pad is not empty, so replacing it asks too.
        not_confirmed(
            await call(client, "set_document", {"id": pad, "text": "taken over"}), pad, "decline"
        )
    assert len(person.asked) == 2
    assert rustpad.text(pad) == "ONE TWO THREE"


async def test_fixes_ask_nobody(rustpad, pad, new_pad, era):
    short, long = pad, new_pad("long")
    # A 20-character sentence in a 30-character pad; the fix shares most of it.
    rustpad.seed(short, "Hello. Teh cat sat on a mat.!!")
    rustpad.seed(long, ("All work and no play. " * 300) + "Hello wrold.")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        fixed = await call(
            client,
            "replace_in_document",
            replace(short, "Teh cat sat on a mat.", "The cat sat on the mat."),
        )
        assert ok(fixed)["replacements"] == 1
        ok(await call(client, "replace_in_document", replace(long, "wrold", "world")))
    assert person.asked == []
    assert rustpad.text(short) == "Hello. The cat sat on the mat.!!"
    assert rustpad.text(long).endswith("Hello world.")


async def test_two_removals_of_40_percent_within_the_window_ask_on_the_second(
    rustpad, pad, new_pad, era
):
    # 100 characters: the first call takes 40 of them, the second 24 of the 60 left (40 % of the
    # pad as it then is, which alone would not ask): together 64 of 100.
    first, second = "a" * 40, "b" * 24
    rustpad.seed(pad, first + second + "c" * 36)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "replace_in_document", replace(pad, first, "")))
        assert person.asked == []
        not_confirmed(
            await call(client, "replace_in_document", replace(pad, second, "")), pad, "decline"
        )
    [params] = person.asked
    assert "This removes 24 of the pad's 60 characters." in params.message
    assert "64 characters would be gone, of the 100" in params.message, params.message
    assert rustpad.text(pad) == second + "c" * 36
    # Another process has no such history: the same second step alone asks nobody.
    other = new_pad("fresh")
    rustpad.seed(other, second + "c" * 36)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "replace_in_document", replace(other, second, "")))
    assert person.asked == []


async def removing_the_notes_asks(client, rustpad, pad, person: Person) -> None:
    """Removing "a person's notes" asks `person`, who declines, and they stay."""
    not_confirmed(
        await call(client, "replace_in_document", replace(pad, "a person's notes", "")),
        pad,
        "decline",
    )
    assert len(person.asked) == 1
    assert rustpad.text(pad).startswith("a person's notes\n")


async def test_padding_a_pad_with_new_text_does_not_dilute_the_rule(rustpad, pad, era):
    rustpad.seed(pad, "a person's notes")
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "append_to_document", {"id": pad, "text": "\n" + "x" * 5000}))
        await removing_the_notes_asks(client, rustpad, pad, person)


async def test_padding_through_a_held_connection_does_not_dilute_the_rule_elsewhere(rustpad, pad, era):
    """Appends on a connection the host holds send no mark once it has said so (five marks on its
    first reuse); another process, which has no record of them, still reads them as a writer's
    text, never a person's."""
    rustpad.seed(pad, "a person's notes")
    async with guarded_client(rustpad, era) as client:
        for _ in range(4):
            ok(await call(client, "append_to_document", {"id": pad, "text": "\n" + "x" * 2000}))
    # One mark for the first append, five for the second, none for the last two.
    assert len(marks(rustpad, pad)) == 6 and len(edits(rustpad, pad)) == 4
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        await removing_the_notes_asks(client, rustpad, pad, person)


async def test_text_this_server_just_wrote_can_be_revised_without_asking(rustpad, pad, era):
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "create_document", {"id": pad, "text": "first draft of a note"}))
        ok(await call(client, "replace_in_document", replace(pad, "first draft of a note", "x")))
    assert person.asked == []
    assert rustpad.text(pad) == "x"


async def test_more_than_ten_thousand_characters_always_ask(rustpad, pad, era):
    block = "0123456789" * 1001
    rustpad.seed(pad, block + ("z" * 30_000))
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        not_confirmed(
            await call(client, "replace_in_document", replace(pad, block, "")), pad, "decline"
        )
    [params] = person.asked
    assert "This removes 10010 of the pad's 40010 characters." in params.message


@pytest.mark.parametrize("case", list(SWEEPING))
async def test_the_token_fallback_asks_for_a_token_in_the_same_cases(rustpad, pad, era, case):
    old, search, replacement, new = SWEEPING[case]
    rustpad.seed(pad, old)
    arguments = replace(pad, search, replacement)
    async with guarded_client(rustpad, era) as client:
        offer = failed(await call(client, "replace_in_document", arguments))
        assert offer.startswith(f'This will replace 1 occurrence in pad "{pad}".'), offer
        token = token_in(offer)
        assert rustpad.text(pad) == old
        result = await call(client, "replace_in_document", {**arguments, "confirm_token": token})
        assert "Replaced 1 occurrence" in text_of(result)
    assert rustpad.text(pad) == new


async def test_the_token_fallback_counts_recent_removals_too(rustpad, pad, era):
    first, second = "a" * 40, "b" * 24
    rustpad.seed(pad, first + second + "c" * 36)
    async with guarded_client(rustpad, era) as client:
        ok(await call(client, "replace_in_document", replace(pad, first, "")))
        offer = failed(await call(client, "replace_in_document", replace(pad, second, "")))
        token_in(offer)
        assert "64 characters would be gone" in offer
    assert rustpad.text(pad) == second + "c" * 36


async def test_typing_elsewhere_in_the_pad_does_not_ask_again(rustpad, pad, era):
    """The approval is bound to the removed count, not to the pad's length."""
    rustpad.seed(pad, "ONE TWO THREE")

    async def someone_types(n: int, params) -> None:
        if n == 1:
            await anyio.to_thread.run_sync(rustpad.set_by_person, pad, "ONE TWO THREE and more")

    person = Person("accept", before=someone_types)
    async with guarded_client(rustpad, era, person) as client:
        result = await call(client, "replace_in_document", replace(pad, "ONE TWO THREE", ""))
    assert len(person.asked) == 1, person.messages
    assert ok(result)["replacements"] == 1
    assert rustpad.text(pad) == " and more"


# -- the count from the pad's history, property by property -------------------------------------


async def test_the_models_own_small_writes_do_not_shrink_the_count(rustpad, pad, era):
    first, second = "a" * 40, "b" * 24
    rustpad.seed(pad, first + second + "c" * 36)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "replace_in_document", replace(pad, first, "")))
        # Many tiny writes in between: each is this server's, marked, so none moves the window.
        for _ in range(25):
            ok(await call(client, "append_to_document", {"id": pad, "text": "x"}))
        not_confirmed(await call(client, "replace_in_document", replace(pad, second, "")), pad, "decline")
    assert len(person.asked) == 1
    assert rustpad.text(pad) == second + "c" * 36 + "x" * 25


async def test_a_person_typing_a_few_characters_does_not_reset_the_count(rustpad, pad, era):
    first, second = "a" * 40, "b" * 24
    rustpad.seed(pad, first + second + "c" * 36)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "replace_in_document", replace(pad, first, "")))
        await rustpad.type(pad, seed=3, count=5, avoid=[second])
        not_confirmed(await call(client, "replace_in_document", replace(pad, second, "")), pad, "decline")
    assert len(person.asked) == 1
    assert second in rustpad.text(pad)


async def test_fifty_small_fixes_never_ask_nor_do_fixes_after_an_approved_removal(rustpad, pad, era):
    # 2,000 characters with fifty misspelt words, each fixed on its own.
    words = [f"wrod{n:02d}" for n in range(50)]
    filler = "y" * 32
    rustpad.seed(pad, "".join(f"{word} {filler}\n" for word in words))
    assert len(rustpad.text(pad)) == 2_000
    person = Person("accept")
    async with guarded_client(rustpad, era, person) as client:
        for n, word in enumerate(words):
            ok(await call(client, "replace_in_document", replace(pad, word, f"word{n:02d}")))
        assert person.asked == []
        # A person approves a removal of most of it; later small fixes still go unasked.
        block = rustpad.text(pad)[: 40 * 40]
        ok(await call(client, "replace_in_document", replace(pad, block, "")))
        assert len(person.asked) == 1
        ok(await call(client, "replace_in_document", replace(pad, "word49", "Word49")))
    assert len(person.asked) == 1
    assert rustpad.text(pad).startswith("word40 ")


PERSONS_TEXT = ("A person's careful notes. " * 60)[:1_520]
JUNK = "j" * 3_000


@pytest.mark.parametrize("tool", ["replace_in_document", "edit_document"])
async def test_junk_added_and_removed_again_leaves_the_persons_text_guarded(rustpad, pad, era, tool):
    rustpad.seed(pad, PERSONS_TEXT)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        ok(await call(client, "append_to_document", {"id": pad, "text": JUNK}))
        # Taking out its own text takes nothing of the person's: no question.
        ok(await call(client, "replace_in_document", replace(pad, JUNK, "")))
        assert person.asked == []
        if tool == "replace_in_document":
            result = await call(client, tool, replace(pad, PERSONS_TEXT, ""))
        else:
            edit = {"old_text": PERSONS_TEXT, "new_text": ""}
            result = await call(client, tool, {"id": pad, "edits": [edit]})
        not_confirmed(result, pad, "decline")
    assert len(person.asked) == 1
    assert rustpad.text(pad) == PERSONS_TEXT


async def test_junk_added_and_removed_without_dialogs_leaves_the_persons_text_guarded(rustpad, pad, era):
    rustpad.seed(pad, PERSONS_TEXT)
    async with guarded_client(rustpad, era) as client:
        ok(await call(client, "append_to_document", {"id": pad, "text": JUNK}))
        ok(await call(client, "replace_in_document", replace(pad, JUNK, "")))
        offer = failed(await call(client, "replace_in_document", replace(pad, PERSONS_TEXT, "")))
        token_in(offer)
        assert f"This removes 1520 of the pad's 1520 characters." in offer, offer
    assert rustpad.text(pad) == PERSONS_TEXT


async def test_a_full_tally_asks_rather_than_forgets(rustpad, new_pad, era):
    pads = [new_pad(f"pad{n}") for n in range(3)]
    for pad in pads:
        rustpad.seed(pad, "head " + "x" * 100)
    person = Person("decline")
    async with guarded_client(rustpad, era, person, RUSTPAD_MCP_TALLY_PADS="2") as client:
        for pad in pads[:2]:
            ok(await call(client, "replace_in_document", replace(pad, "head", "")))
        assert person.asked == []
        # The third pad's removal cannot be counted by this process: it asks.
        not_confirmed(await call(client, "replace_in_document", replace(pads[2], "head", "")), pads[2], "decline")
    [params] = person.asked
    assert "could not read what was removed from this pad lately" in params.message
    assert rustpad.text(pads[2]) == "head " + "x" * 100


async def test_someone_who_removed_much_and_left_makes_the_next_removal_ask(rustpad, pad, new_pad, era):
    line = "the person's first line\n"
    rustpad.seed(pad, line + "r" * 60)
    # Someone removes most of the pad and leaves: that may have been this server.
    rustpad.set_by_person(pad, line)
    untouched = new_pad("untouched")
    rustpad.seed(untouched, line)
    person = Person("decline")
    async with guarded_client(rustpad, era, person) as client:
        not_confirmed(await call(client, "replace_in_document", replace(pad, "first", "1st")), pad, "decline")
        assert len(person.asked) == 1
        # The same small fix where nobody removed anything asks nobody.
        ok(await call(client, "replace_in_document", replace(untouched, "first", "1st")))
    assert len(person.asked) == 1
    assert rustpad.text(pad) == line
