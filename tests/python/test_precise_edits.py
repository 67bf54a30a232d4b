"""Precise edits through the real SDK client, in both eras: `get_document` line windows with a
base, and `edit_document` batches stated against the text the model read.

The randomized concurrency oracle (a person typing between the read and the edit, checked
against the operational-transform crate) is tests/host-tests/tests/edit_oracle.rs; here each behaviour a
client can see has its own case.
"""

from __future__ import annotations

import re

import pytest

from conftest import (
    MAX_DOCUMENT_CHARS,
    call,
    failed,
    frame_kinds,
    minimal_env,
    ok,
    request,
    run_server,
    legacy_session,
    text_of,
)
from test_guard import Person, edits, guarded_client, not_confirmed, token_in

pytestmark = pytest.mark.anyio

BASE = re.compile(r"^r(0|[1-9][0-9]*)\.[0-9a-f]{16}$")
PREAMBLE_START = "Untrusted content from Rustpad follows."


@pytest.fixture
async def client(rustpad, era):
    async with guarded_client(rustpad, era) as client:
        yield client


def window(pad: str, start: int | None = None, end: int | None = None) -> dict:
    arguments: dict = {"id": pad}
    if start is not None:
        arguments["start_line"] = start
    if end is not None:
        arguments["end_line"] = end
    return arguments


def change(old: str, new: str, line: int | None = None) -> dict:
    edit = {"old_text": old, "new_text": new}
    if line is not None:
        edit["line"] = line
    return edit


def listing(result) -> tuple[str, str]:
    """The server's summary and the untrusted body of a listing result."""
    summary, _, rest = text_of(result).partition("\n\n")
    preamble, _, body = rest.partition("\n\n")
    assert preamble.startswith(PREAMBLE_START), text_of(result)
    assert PREAMBLE_START not in summary
    return summary, body


# -- get_document windows ------------------------------------------------------------------------


async def test_a_window_numbers_its_lines_and_names_its_base(client, rustpad, pad):
    rustpad.seed(pad, "first\nsecond\nthird\n")
    result = await call(client, "get_document", window(pad, 2, 3))
    structured = ok(result)
    assert structured["untrusted"] is True and structured["source"] == "rustpad"
    assert structured["text"] == "second\nthird\n"
    assert (structured["start_line"], structured["end_line"]) == (2, 3)
    assert structured["total_lines"] == 4
    assert structured["truncated"] is False
    assert "continue_from" not in structured
    assert structured["revision"] == 1
    assert BASE.match(structured["base"]), structured["base"]
    summary, body = listing(result)
    assert f"lines 2–3 of 4, at revision 1 (base {structured['base']})" in summary
    assert body == "     2\tsecond\n     3\tthird"


async def test_window_edges(client, rustpad, pad):
    rustpad.seed(pad, "a\nb\nc")
    past_end = ok(await call(client, "get_document", window(pad, 2, 99)))
    assert (past_end["text"], past_end["end_line"], past_end["truncated"]) == ("b\nc", 3, False)
    only_end = ok(await call(client, "get_document", window(pad, end=1)))
    assert (only_end["text"], only_end["start_line"]) == ("a\n", 1)
    message = failed(await call(client, "get_document", window(pad, 4)))
    assert "start_line 4 is past the end" in message and "has 3 lines" in message
    message = failed(await call(client, "get_document", window(pad, 3, 2)))
    assert "end_line 2 is before start_line 3" in message
    for bad in (0, -1, 1.5, "2", MAX_DOCUMENT_CHARS + 2):
        message = failed(await call(client, "get_document", {"id": pad, "start_line": bad}))
        assert 'argument "start_line" must be a whole line number' in message, message


async def test_a_window_on_an_empty_pad_has_one_empty_line(client, pad):
    structured = ok(await call(client, "get_document", window(pad, 1)))
    assert (structured["text"], structured["total_lines"], structured["revision"]) == ("", 1, 0)
    assert "empty, or it never existed" in structured["note"]


async def test_a_window_is_read_without_joining_the_pad(client, rustpad, pad):
    rustpad.seed(pad, "quiet\n")
    ok(await call(client, "get_document", window(pad, 1)))
    assert frame_kinds(rustpad.log(pad)) == ["CursorData"]


async def test_without_a_window_get_document_is_unchanged(client, rustpad, pad):
    rustpad.seed(pad, "whole\n")
    structured = ok(await call(client, "get_document", {"id": pad}))
    assert set(structured) == {"untrusted", "source", "id", "text"}
    assert rustpad.log(pad) == []


async def test_a_window_on_the_largest_pad_is_cut_and_says_where_to_continue(client, rustpad, pad):
    line = "row {:06d} " + "x" * 20 + "\n"
    lines = MAX_DOCUMENT_CHARS // len(line.format(0))
    text = "".join(line.format(n) for n in range(lines))
    text += "y" * (MAX_DOCUMENT_CHARS - len(text))
    assert len(text) == MAX_DOCUMENT_CHARS
    rustpad.seed(pad, text)
    read, start, bases = "", 1, set()
    while True:
        structured = ok(await call(client, "get_document", window(pad, start)))
        assert structured["start_line"] == start
        assert structured["total_lines"] == lines + 1
        read += structured["text"]
        bases.add(structured["base"])
        if not structured["truncated"]:
            break
        assert structured["continue_from"] == structured["end_line"] + 1
        assert f"start_line {structured['continue_from']}" in structured["note"]
        start = structured["continue_from"]
    assert read == text
    assert start > 1, "one result cannot hold the whole pad"
    assert len(bases) == 1


async def test_a_line_longer_than_one_result_is_shown_in_part(client, rustpad, pad):
    rustpad.seed(pad, "z" * MAX_DOCUMENT_CHARS)
    structured = ok(await call(client, "get_document", window(pad, 1)))
    assert structured["truncated"] is True and "continue_from" not in structured
    shown = len(structured["text"])
    assert 0 < shown < MAX_DOCUMENT_CHARS
    assert f"only its first {shown} of {MAX_DOCUMENT_CHARS} characters" in structured["note"]


ASTRAL_LINES = ["👨\u200d👩\u200d👧 family", "🎉 party 𝄞", "plain", "👩\u200d💻 at work"]


async def test_windows_count_lines_and_code_points_in_astral_and_zwj_text(client, rustpad, pad):
    rustpad.seed(pad, "\n".join(ASTRAL_LINES))
    structured = ok(await call(client, "get_document", window(pad, 2, 2)))
    assert structured["text"] == "🎉 party 𝄞\n"
    assert structured["total_lines"] == 4
    result = await call(
        client,
        "edit_document",
        {"id": pad, "base": structured["base"], "edits": [change("party", "fête 🎊", 2)]},
    )
    done = ok(result)
    assert rustpad.text(pad) == "\n".join(
        [ASTRAL_LINES[0], "🎉 fête 🎊 𝄞", *ASTRAL_LINES[2:]]
    )
    assert done["characters"] == len(rustpad.text(pad))
    assert done["edits"] == [{"edit": 1, "start_line": 2, "end_line": 2}]


async def test_control_characters_are_removed_from_a_window_and_counted(client, rustpad, pad):
    rustpad.seed(pad, "bell\x07\nesc\x1b[0m\n")
    structured = ok(await call(client, "get_document", window(pad, 1)))
    assert structured["text"] == "bell\nesc[0m\n"
    assert "2 control characters were removed" in structured["note"]


# -- edit_document -------------------------------------------------------------------------------


async def test_a_batch_of_50_edits_reaches_rustpad_as_one_operation(client, rustpad, pad):
    rows = [f"row {n:02d}: todo" for n in range(1, 51)]
    rustpad.seed(pad, "\n".join(rows) + "\n")
    base = ok(await call(client, "get_document", window(pad, 1)))["base"]
    batch = [change(f"row {n:02d}: todo", f"row {n:02d}: done") for n in range(50, 0, -1)]
    structured = ok(await call(client, "edit_document", {"id": pad, "base": base, "edits": batch}))
    assert rustpad.text(pad) == "\n".join(r.replace("todo", "done") for r in rows) + "\n"
    assert len(edits(rustpad, pad)) == 1
    # Only what differs is replaced: "todo" → "done" keeps the "o" they end with.
    assert structured["edits"][0] == {"edit": 1, "start_line": 50, "end_line": 50}
    assert structured["edits"][49] == {"edit": 50, "start_line": 1, "end_line": 1}
    # The seed, the write's mark, the batch.
    assert structured["revision"] == 3
    assert structured["diff"].count("\n-row ") == 50
    assert structured["dry_run"] is False and "would_ask" not in structured


async def test_the_result_shows_a_diff_and_a_base_to_continue_from(client, rustpad, pad):
    rustpad.seed(pad, "title\nbody\n")
    result = await call(
        client,
        "edit_document",
        {"id": pad, "edits": [change("", "Summary first.\n", 1), change("body", "body text")]},
    )
    structured = ok(result)
    assert rustpad.text(pad) == "Summary first.\ntitle\nbody text\n"
    summary, body = listing(result)
    assert summary.startswith(f'Applied 2 edits to pad "{pad}" as one change')
    assert body == structured["diff"]
    assert "+Summary first.\n" in body and "-body\n+body text\n" in body
    assert structured["edits"] == [
        {"edit": 1, "start_line": 1, "end_line": 1},
        {"edit": 2, "start_line": 3, "end_line": 3},
    ]
    again = ok(
        await call(
            client,
            "edit_document",
            {"id": pad, "base": structured["base"], "edits": [change("title", "Title")]},
        )
    )
    assert rustpad.text(pad) == "Summary first.\nTitle\nbody text\n"
    # A mark and the edit.
    assert again["revision"] == structured["revision"] + 2


async def test_an_insert_one_past_the_last_line_appends(client, rustpad, pad):
    rustpad.seed(pad, "a\nb")
    ok(await call(client, "edit_document", {"id": pad, "edits": [change("", "\nc", 3)]}))
    assert rustpad.text(pad) == "a\nb\nc"
    message = failed(await call(client, "edit_document", {"id": pad, "edits": [change("", "x", 5)]}))
    assert "line 5 is past the end" in message and "at line 4 at most" in message


async def test_edits_land_where_the_model_read_them_while_a_person_types(client, rustpad, pad):
    rustpad.seed(pad, "alpha line\nbeta line\ngamma line\n")
    base = ok(await call(client, "get_document", window(pad, 1)))["base"]
    olds = ["alpha", "beta line", "gamma"]
    typed = await rustpad.type(pad, seed=7, count=40, avoid=olds)
    assert len(typed["typed"]) == 40
    batch = [change("alpha", "ALPHA"), change("beta line", "second"), change("gamma", "γ")]
    ok(await call(client, "edit_document", {"id": pad, "base": base, "edits": batch}))
    # Each old text was replaced once, and every keystroke is still there. (Where the person
    # typed exactly at an edit's start, the edit's text comes first: the exact outcome of every
    # such tie is checked against the OT crate by tests/host-tests/tests/edit_oracle.rs.)
    typed_text, final = typed["final_text"], rustpad.text(pad)
    for edit in batch:
        assert typed_text.count(edit["old_text"]) == 1 and final.count(edit["new_text"]) == 1
        typed_text = typed_text.replace(edit["old_text"], "")
        final = final.replace(edit["new_text"], "")
    assert final == typed_text


async def test_edits_over_text_changed_since_the_base_are_refused_not_merged(client, rustpad, pad):
    rustpad.seed(pad, "say teh word\n")
    base = ok(await call(client, "get_document", window(pad, 1)))["base"]
    fix = {"id": pad, "base": base, "edits": [change("teh word", "the word")]}
    ok(await call(client, "edit_document", fix))
    assert rustpad.text(pad) == "say the word\n"
    # A retry with the same base (say, after an unknown outcome) would make the fix twice.
    message = failed(await call(client, "edit_document", fix))
    assert "exactly this change was already made" in message and "get_changes" in message
    assert rustpad.text(pad) == "say the word\n"
    # Text a person deleted is not deleted again.
    other = ok(await call(client, "get_document", window(pad, 1)))["base"]
    ok(await call(client, "replace_in_document", {"id": pad, "search": "say ", "replace": ""}))
    stale = {"id": pad, "base": other, "edits": [change("say the", "said the")]}
    assert "was changed since base" in failed(await call(client, "edit_document", stale))
    assert rustpad.text(pad) == "the word\n"


async def test_a_base_from_before_a_reload_is_refused(client, rustpad, pad, new_pad):
    rustpad.seed(pad, "before the restart\n")
    base = ok(await call(client, "get_document", window(pad, 1)))["base"]
    # Same revision number, another text: the pad expired and was written again.
    rustpad.seed(pad, "after the restart\n")
    message = failed(
        await call(client, "edit_document", {"id": pad, "base": base, "edits": [change("after", "x")]})
    )
    assert f"base {base} does not match" in message and "Read the pad again" in message
    assert rustpad.text(pad) == "after the restart\n"
    # A revision the pad no longer reaches.
    other = new_pad("short")
    rustpad.seed(other, "long history", ops=5)
    base = ok(await call(client, "get_document", window(other, 1)))["base"]
    rustpad.seed(other, "fresh")
    message = failed(
        await call(client, "edit_document", {"id": other, "base": base, "edits": [change("fresh", "x")]})
    )
    assert "names revision 6, but" in message and "now has only 1 revision" in message
    assert "Read the pad again" in message
    assert rustpad.text(other) == "fresh"
    assert edits(rustpad, pad) == [] and edits(rustpad, other) == []


async def test_a_batch_with_problems_names_each_one_and_writes_nothing(client, rustpad, pad):
    original = "x = 1\nx = 1\ny = 2\n"
    rustpad.seed(pad, original)
    batch = [
        change("missing", "m"),
        change("x = 1", "x = 3"),
        change("y = 2", "y = 2"),
        change("", "top\n"),
        change("y", "Y"),
        change("y = ", "z"),
    ]
    message = failed(await call(client, "edit_document", {"id": pad, "edits": batch}))
    assert message.startswith("Nothing was written.")
    for part in (
        "edit 1: old_text does not occur in the text",
        "edit 2: old_text occurs 2 times, starting on lines 1, 2",
        "edit 3: old_text and new_text are the same",
        'edit 4: old_text is empty, so it needs "line"',
        "edits 5 and 6 overlap on line 3",
    ):
        assert part in message, (part, message)
    assert rustpad.text(pad) == original
    assert edits(rustpad, pad) == []


BAD_ARGUMENTS = {
    "no edits": ({"edits": []}, 'argument "edits" must hold 1–100 edits; it holds 0'),
    "too many": (
        {"edits": [change(str(n), "x") for n in range(101)]},
        'argument "edits" must hold 1–100 edits; it holds 101',
    ),
    "not a list": ({"edits": "x"}, 'argument "edits" must be an array'),
    "unknown field": (
        {"edits": [{"old_text": "a", "new_text": "b", "lines": 1}]},
        'edit 1: unknown field "lines"',
    ),
    "missing new_text": ({"edits": [{"old_text": "a"}]}, "edit 1: missing new_text"),
    "line zero": ({"edits": [change("a", "b", 0)]}, "edit 1: line must be a whole line number"),
    "bad base": (
        {"edits": [change("a", "b")], "base": "r1.XYZ"},
        'argument "base" is not a base this server gives out',
    ),
}


@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
async def test_bad_arguments_are_refused_before_anything_happens(client, rustpad, pad, case):
    extra, expected = BAD_ARGUMENTS[case]
    rustpad.seed(pad, "a\n")
    message = failed(await call(client, "edit_document", {"id": pad, **extra}))
    assert expected in message, message
    assert rustpad.log(pad) == []
    assert rustpad.text(pad) == "a\n"


async def test_a_dry_run_shows_the_diff_and_changes_nothing(client, rustpad, pad):
    original = "keep\nchange me\nkeep too\n" + "filler line\n" * 10
    rustpad.seed(pad, original)
    arguments = {"id": pad, "edits": [change("change me", "changed")], "dry_run": True}
    result = await call(client, "edit_document", arguments)
    structured = ok(result)
    assert structured["dry_run"] is True and structured["would_ask"] is False
    assert "-change me\n+changed\n" in structured["diff"]
    assert structured["edits"] == [{"edit": 1, "start_line": 2, "end_line": 2}]
    assert structured["revision"] == 1
    summary, _ = listing(result)
    assert "nothing was written" in summary
    assert rustpad.text(pad) == original
    assert frame_kinds(rustpad.log(pad)) == ["CursorData"]
    sweeping = {"id": pad, "edits": [change(original, "gone")], "dry_run": True}
    assert ok(await call(client, "edit_document", sweeping))["would_ask"] is True
    assert rustpad.text(pad) == original


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_batch_that_removes_most_of_the_pad_asks_a_person(rustpad, pad, era, answer):
    original = "Agenda\n1. budget review\n2. hiring plan\n3. office move\nEnd\n"
    rustpad.seed(pad, original)
    person = Person(answer)
    batch = [
        change("1. budget review\n", ""),
        change("2. hiring plan\n", ""),
        change("3. office move\n", "see elsewhere\n"),
    ]
    async with guarded_client(rustpad, era, person) as client:
        result = await call(client, "edit_document", {"id": pad, "edits": batch})
    [params] = person.asked
    assert params.message.startswith(f'This will apply 3 edits to pad "{pad}" as one change.')
    # Without a base, the text as it is once the batch has taken its place in the pad's order of
    # writes: its own mark is revision 2.
    assert "The edits are on lines 2, 3, 4 of the text at revision 2." in params.message
    assert f"of the pad's {len(original)} characters." in params.message
    assert "Edit 2 replaces: 2. hiring plan" in params.message
    assert "Agenda" not in params.message and "End" not in params.message
    if answer == "accept":
        ok(result)
        assert rustpad.text(pad) == "Agenda\nsee elsewhere\nEnd\n"
    else:
        not_confirmed(result, pad, "decline")
        assert rustpad.text(pad) == original
        assert edits(rustpad, pad) == []


async def test_a_token_is_bound_to_the_exact_edits(rustpad, pad, era):
    original = "one two three four five\n"
    rustpad.seed(pad, original)
    batch = [change("one two three four", "1")]
    async with guarded_client(rustpad, era) as client:
        token = token_in(failed(await call(client, "edit_document", {"id": pad, "edits": batch})))
        other = [change("one two three four five", "1")]
        message = failed(
            await call(client, "edit_document", {"id": pad, "edits": other, "confirm_token": token})
        )
        assert "does not match this call" in message
        assert rustpad.text(pad) == original
        ok(await call(client, "edit_document", {"id": pad, "edits": batch, "confirm_token": token}))
    assert rustpad.text(pad) == "1 five\n"


def test_a_deny_list_that_does_not_mention_edit_document_is_told_at_startup(rustpad):
    listed = request(1, "tools/list")
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_DENY_TOOLS="set_document"),
        legacy_session(listed),
    )
    assert run.returncode == 0, run.stderr
    assert "RUSTPAD_DENY_TOOLS does not mention edit_document" in run.stderr
    names = [tool["name"] for tool in run.response(1)["result"]["tools"]]
    assert "edit_document" in names and "set_document" not in names
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_DENY_TOOLS="set_document,edit_document"),
        legacy_session(listed),
    )
    assert "edit_document" not in run.stderr
    assert "edit_document" not in [tool["name"] for tool in run.response(1)["result"]["tools"]]


async def test_a_retry_of_a_batch_that_landed_is_refused_for_insertions_too(client, rustpad, pad):
    """An insertion cannot be "changed since" by its own landing, so a retry after an unknown
    outcome would make it twice; the pad's history shows the batch was made, and it is refused."""
    rustpad.seed(pad, "one\ntwo\n")
    base = ok(await call(client, "get_document", window(pad, 1)))["base"]
    batch = {"id": pad, "base": base, "edits": [change("", "inserted\n", 2)]}
    ok(await call(client, "edit_document", batch))
    assert rustpad.text(pad) == "one\ninserted\ntwo\n"
    message = failed(await call(client, "edit_document", batch))
    assert "exactly this change was already made" in message and "get_changes" in message, message
    assert rustpad.text(pad) == "one\ninserted\ntwo\n"
    # Stated against the new base, the same insertion is a new change and is made.
    again = ok(await call(client, "get_document", window(pad, 1)))["base"]
    ok(await call(client, "edit_document", {**batch, "base": again}))
    assert rustpad.text(pad) == "one\ninserted\ninserted\ntwo\n"
