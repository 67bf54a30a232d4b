"""The write tools in both eras: what they write, what they report, what they refuse, and that
input errors cost no connection at all.

Not covered here on purpose: set_document on a non-empty pad with different text, and
replace_in_document changing more than one match (both ask a person first)."""

from __future__ import annotations

import hashlib
import re

import pytest

from conftest import (
    ERAS,
    MAX_DOCUMENT_CHARS,
    MAX_WRITTEN_CHARS,
    call,
    changes_nothing,
    edits,
    failed,
    frame_kinds,
    marks,
    ok,
    text_of,
)

pytestmark = pytest.mark.anyio

MCP_CLIENT_INFO = {"ClientInfo": {"name": "rustpad-mcp", "hue": 200}}


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param) as client:
        yield client


def write_outcome(result, rustpad, pad: str) -> dict:
    """Checks the fields every write result has and returns the structured content."""
    structured = ok(result)
    assert structured["id"] == pad
    assert structured["url"] == rustpad.share_link(pad)
    assert isinstance(structured["characters"], int)
    assert structured["note"]
    assert "untrusted" not in structured
    assert text_of(result)
    return structured


async def info(client, pad: str) -> dict:
    return ok(await call(client, "get_document_info", {"id": pad}))


# -- create_document ---------------------------------------------------------------------------


async def test_create_without_an_id_picks_a_random_twelve_character_one(client, rustpad):
    result = await call(client, "create_document", {})
    structured = ok(result)
    pad = structured["id"]
    assert re.fullmatch(r"[a-z0-9]{12}", pad), pad
    write_outcome(result, rustpad, pad)
    assert structured["created"] is True
    assert structured["characters"] == 0
    assert "language" not in structured
    assert pad in text_of(result)
    other = ok(await call(client, "create_document", {}))["id"]
    assert re.fullmatch(r"[a-z0-9]{12}", other) and other != pad


async def test_create_with_id_text_and_language(client, rustpad, pad):
    text = "# Notes 🎉\nline two"
    result = await call(
        client, "create_document", {"id": pad, "text": text, "language": "markdown"}
    )
    structured = write_outcome(result, rustpad, pad)
    assert structured["created"] is True
    assert structured["characters"] == len(text)
    assert structured["language"] == "markdown"
    assert rustpad.text(pad) == text
    details = await info(client, pad)
    assert details["language"] == "markdown"
    # The write's mark, then its text.
    assert details["revision"] == 2


async def test_create_with_only_an_id_writes_nothing(client, rustpad, pad):
    structured = write_outcome(await call(client, "create_document", {"id": pad}), rustpad, pad)
    assert structured["characters"] == 0
    kinds = frame_kinds(rustpad.log(pad))
    assert "Edit" not in kinds and "SetLanguage" not in kinds
    assert rustpad.text(pad) == ""


async def test_create_refuses_a_pad_that_has_content(client, rustpad, pad):
    rustpad.seed(pad, "someone else's notes")
    message = failed(await call(client, "create_document", {"id": pad, "text": "mine"}))
    assert pad in message
    assert "set_document" in message or "append_to_document" in message
    assert rustpad.text(pad) == "someone else's notes"
    assert edits(rustpad, pad) == []


# -- append_to_document ------------------------------------------------------------------------


async def test_append_lands_at_the_end_and_reports_the_lengths(client, rustpad, pad):
    rustpad.seed(pad, "hello")
    result = await call(client, "append_to_document", {"id": pad, "text": " world 🎉"})
    structured = write_outcome(result, rustpad, pad)
    assert structured["appended_characters"] == 8
    assert structured["characters"] == 13
    assert rustpad.text(pad) == "hello world 🎉"
    (edit,) = edits(rustpad, pad)
    assert edit == {"revision": 1, "operation": [5, " world 🎉"]}


async def test_append_to_a_fresh_pad_creates_it(client, rustpad, pad):
    structured = write_outcome(
        await call(client, "append_to_document", {"id": pad, "text": "first"}), rustpad, pad
    )
    assert structured["characters"] == 5
    assert rustpad.text(pad) == "first"


async def test_append_counts_code_points(client, rustpad, pad):
    rustpad.seed(pad, "h🎉")
    family = "👨\u200d👨\u200d👦\u200d👦"
    structured = write_outcome(
        await call(client, "append_to_document", {"id": pad, "text": family}), rustpad, pad
    )
    assert structured["appended_characters"] == 7
    assert structured["characters"] == 9
    assert rustpad.text(pad) == "h🎉" + family


async def test_append_up_to_the_limit_in_code_points_succeeds(client, rustpad, pad):
    rustpad.seed(pad, "x" * (MAX_WRITTEN_CHARS - 4))
    structured = write_outcome(
        await call(client, "append_to_document", {"id": pad, "text": "🎉🎉🎉🎉"}), rustpad, pad
    )
    assert structured["characters"] == MAX_WRITTEN_CHARS
    assert rustpad.text(pad).endswith("🎉🎉🎉🎉")


async def test_append_past_the_limit_is_refused_before_sending(client, rustpad, pad):
    rustpad.seed(pad, "x" * (MAX_WRITTEN_CHARS - 1))
    message = failed(await call(client, "append_to_document", {"id": pad, "text": "🎉🎉"}))
    assert str(MAX_WRITTEN_CHARS) in message
    assert edits(rustpad, pad) == []
    assert len(rustpad.text(pad)) == MAX_WRITTEN_CHARS - 1


# -- set_document (empty pads and identical content only) --------------------------------------


async def test_set_document_on_an_empty_pad_writes_directly(client, rustpad, pad):
    text = "fresh content\nwith 🎉"
    structured = write_outcome(
        await call(client, "set_document", {"id": pad, "text": text}), rustpad, pad
    )
    assert structured["changed"] is True
    assert structured["characters_before"] == 0
    assert structured["characters"] == len(text)
    assert rustpad.text(pad) == text


async def test_set_document_on_a_cleared_pad_writes_directly(client, rustpad, pad):
    rustpad.seed(pad, "gone", ops=0)
    rustpad.seed(pad, "")
    structured = write_outcome(
        await call(client, "set_document", {"id": pad, "text": "new"}), rustpad, pad
    )
    assert structured["changed"] is True
    assert rustpad.text(pad) == "new"


async def test_set_document_with_identical_content_writes_nothing(client, rustpad, pad, new_pad):
    rustpad.seed(pad, "same 🎉 text")
    structured = write_outcome(
        await call(client, "set_document", {"id": pad, "text": "same 🎉 text"}), rustpad, pad
    )
    assert structured["changed"] is False
    assert structured["characters_before"] == structured["characters"] == 11
    assert edits(rustpad, pad) == []
    assert rustpad.text(pad) == "same 🎉 text"

    empty = new_pad("empty")
    structured = write_outcome(
        await call(client, "set_document", {"id": empty, "text": ""}), rustpad, empty
    )
    assert structured["changed"] is False
    assert edits(rustpad, empty) == []


# -- replace_in_document (at most one match) ---------------------------------------------------


@pytest.mark.parametrize("replace_all", [None, True, False])
async def test_replace_a_single_match(client, rustpad, pad, replace_all):
    rustpad.seed(pad, "alpha 🎉 beta gamma")
    arguments = {"id": pad, "search": "🎉 beta", "replace": "BETA👨\u200d💻"}
    if replace_all is not None:
        arguments["replace_all"] = replace_all
    structured = write_outcome(await call(client, "replace_in_document", arguments), rustpad, pad)
    assert structured["replacements"] == 1
    assert rustpad.text(pad) == "alpha BETA👨\u200d💻 gamma"
    assert structured["characters"] == len("alpha BETA👨\u200d💻 gamma")
    (edit,) = edits(rustpad, pad)
    # Only the matched range is touched: retain, delete and insert (in OT's canonical order,
    # insert first), retain.
    operation = edit["operation"]
    assert operation[0] == 6 and operation[-1] == 6
    assert sorted(operation[1:-1], key=str) == sorted([-6, "BETA👨\u200d💻"], key=str)


async def test_replace_with_an_empty_string_deletes_the_match(client, rustpad, pad):
    rustpad.seed(pad, "keep DROP keep")
    structured = write_outcome(
        await call(client, "replace_in_document", {"id": pad, "search": "DROP ", "replace": ""}),
        rustpad,
        pad,
    )
    assert structured["replacements"] == 1
    assert rustpad.text(pad) == "keep keep"


async def test_replace_without_a_match_is_an_error(client, rustpad, pad):
    rustpad.seed(pad, "nothing to see")
    message = failed(
        await call(client, "replace_in_document", {"id": pad, "search": "absent", "replace": "x"})
    )
    assert "not found" in message
    assert pad in message
    assert edits(rustpad, pad) == []


async def test_an_ambiguous_replace_without_replace_all_is_an_error_with_the_count(
    client, rustpad, pad
):
    rustpad.seed(pad, "a-b a-b a-b")
    message = failed(
        await call(client, "replace_in_document", {"id": pad, "search": "a-b", "replace": "z"})
    )
    assert "3 times" in message
    assert "replace_all" in message
    assert edits(rustpad, pad) == []
    assert rustpad.text(pad) == "a-b a-b a-b"


async def test_identical_search_and_replace_is_refused_without_connecting(client, rustpad, pad):
    rustpad.seed(pad, "same same")
    message = failed(
        await call(client, "replace_in_document", {"id": pad, "search": "same", "replace": "same"})
    )
    assert "identical" in message
    assert rustpad.raw_log(pad) == []


# -- set_language ------------------------------------------------------------------------------


async def test_set_language_changes_the_pads_language(client, rustpad, pad):
    rustpad.seed(pad, "print('hi')", language="plaintext")
    structured = write_outcome(
        await call(client, "set_language", {"id": pad, "language": "python"}), rustpad, pad
    )
    assert structured["language"] == "python"
    assert structured["characters"] == len("print('hi')")
    assert {"SetLanguage": "python"} in rustpad.log(pad)
    assert (await info(client, pad))["language"] == "python"
    assert rustpad.text(pad) == "print('hi')"


# -- who writes --------------------------------------------------------------------------------


async def test_writes_announce_the_server_as_collaborator_rustpad_mcp(client, rustpad, pad):
    ok(await call(client, "create_document", {"id": pad, "text": "y"}))
    frames = rustpad.log(pad)
    kinds = frame_kinds(frames)
    assert frames[kinds.index("ClientInfo")] == MCP_CLIENT_INFO
    assert kinds.index("ClientInfo") < kinds.index("Edit")
    assert kinds.count("ClientInfo") == 1
    # Its mark first (an edit that keeps the whole text), then the change.
    assert len(marks(rustpad, pad)) == 1 and len(edits(rustpad, pad)) == 1
    assert kinds.count("Edit") == 2


async def test_appends_go_on_one_kept_connection_that_people_never_see(client, rustpad, pad):
    rustpad.seed(pad, "x")
    with rustpad.person(pad) as person:
        for letter in "abcd":
            ok(await call(client, "append_to_document", {"id": pad, "text": letter}))
        await person.expect(lambda line: "History" in line.get("server", {}) and any(
            entry["operation"][-1:] == ["d"] for entry in line["server"]["History"]["operations"]
        ))
        relayed = [line["server"] for line in person.seen if "server" in line]
    entries = [
        entry for message in relayed if "History" in message
        for entry in message["History"]["operations"]
    ]
    writers = {entry["id"] for entry in entries if entry["id"] != person.identity}
    # One connection carried all four writes: the first its mark and edit, the second a run of
    # five marks (the connection is held) and its edit, the others only their edit.
    assert len(writers) == 1, entries
    assert [changes_nothing(entry["operation"]) for entry in entries] == (
        [True, False] + [True] * 5 + [False] * 3
    ), entries
    # Nothing else reached the person: no name, and at most the empty caret it joined with.
    (writer,) = writers
    assert not [m for m in relayed if "UserInfo" in m and m["UserInfo"]["id"] == writer]
    carets = [m for m in relayed if "UserCursor" in m and m["UserCursor"]["id"] == writer]
    assert carets in ([], [{"UserCursor": {"id": writer, "data": {"cursors": [], "selections": []}}}])
    # Only the first write joined: one snapshot barrier.
    assert frame_kinds(rustpad.log(pad)).count("CursorData") == 1
    assert rustpad.text(pad) == "xabcd"


async def test_bases_of_appends_on_a_kept_connection_name_the_whole_text(client, rustpad, pad):
    """A kept connection hashes only what its pad gained since its last write (its cursor
    carries how far the text is hashed); each result's bases must still name the whole text,
    when a person appends meanwhile and when one edits near the top (hashed from the start)."""
    rustpad.seed(pad, "".join(f"line {n} of the pad\n" for n in range(1_000)))

    def fingerprint(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    for step, meanwhile in enumerate([None, "at the end", "at the top", None, "at the end"]):
        if meanwhile == "at the end":
            rustpad.set_by_person(pad, rustpad.text(pad) + f"a person's line {step}\n")
        elif meanwhile == "at the top":
            rustpad.set_by_person(pad, "A title\n" + rustpad.text(pad))
        before = rustpad.text(pad)
        result = ok(await call(client, "append_to_document", {"id": pad, "text": f"append {step}\n"}))
        after = rustpad.text(pad)
        assert after.startswith(before) and after != before
        assert result["base_before"].split(".")[1] == fingerprint(before), (step, meanwhile)
        assert result["base"].split(".")[1] == fingerprint(after), (step, meanwhile)
    # Every append but the first went on from the kept connection.
    assert frame_kinds(rustpad.log(pad)).count("CursorData") == 1


async def test_an_append_refused_at_the_size_limit_keeps_the_connection_for_the_next(client, rustpad, pad):
    """A refusal sends nothing, so the connection is as it was: the next append goes on from it
    rather than join the pad again (and put a caret and a departure in everyone's queue)."""
    rustpad.seed(pad, "x" * (MAX_WRITTEN_CHARS - 10))
    ok(await call(client, "append_to_document", {"id": pad, "text": "a"}))
    assert "nothing was written" in failed(await call(client, "append_to_document", {"id": pad, "text": "b" * 20}))
    ok(await call(client, "append_to_document", {"id": pad, "text": "c"}))
    assert frame_kinds(rustpad.log(pad)).count("CursorData") == 1
    assert rustpad.text(pad).endswith("xac")


# -- input errors: refused before any connection -----------------------------------------------

BAD_IDS = ["../x", "%2F", ".", "..", "a/b", "a b", "", "x" * 101, "pad#1", "é"]


@pytest.mark.parametrize("bad_id", BAD_IDS)
async def test_bad_ids_are_input_errors(client, rustpad, bad_id):
    before = rustpad.stats()["num_documents"]
    for tool, arguments in [
        ("get_document", {"id": bad_id}),
        ("get_document_info", {"id": bad_id}),
        ("create_document", {"id": bad_id}),
        ("append_to_document", {"id": bad_id, "text": "x"}),
        ("set_language", {"id": bad_id, "language": "rust"}),
    ]:
        message = failed(await call(client, tool, arguments))
        assert "id" in message, (tool, message)
    # No socket was opened anywhere (a socket would have created a document).
    assert rustpad.stats()["num_documents"] == before


@pytest.mark.parametrize(
    "tool,arguments,named",
    [
        ("get_document", {"dispatcher": 1}, "dispatcher"),
        ("append_to_document", {"text": "x", "__proto__": {}}, "__proto__"),
        ("set_language", {"language": "rust", "lang": "go"}, "lang"),
        ("create_document", {"txt": "hi"}, "txt"),
    ],
)
async def test_unknown_arguments_are_refused_without_connecting(
    client, rustpad, pad, tool, arguments, named
):
    message = failed(await call(client, tool, {"id": pad, **arguments}))
    assert f'"{named}"' in message
    assert rustpad.raw_log(pad) == []


@pytest.mark.parametrize(
    "tool,arguments",
    [
        ("get_document", {"id": 5}),
        ("append_to_document", {"text": 5}),
        ("append_to_document", {"text": ["a"]}),
        ("set_document", {"text": None}),
        ("replace_in_document", {"search": "a", "replace": "b", "replace_all": "yes"}),
        ("replace_in_document", {"search": 1, "replace": "b"}),
        ("set_language", {"language": 3}),
        ("set_language", {"language": "c++ 17"}),
        ("set_language", {"language": ""}),
        ("append_to_document", {"text": ""}),
        ("replace_in_document", {"search": "", "replace": "b"}),
        ("create_document", {"language": "x" * 51}),
        ("set_document", {"text": "x", "confirm_token": ""}),
        ("set_document", {"text": "x", "confirm_token": "t" * 65}),
    ],
)
async def test_wrong_types_and_values_are_input_errors(client, rustpad, pad, tool, arguments):
    arguments = {"id": pad, **arguments} if arguments.get("id") != 5 else arguments
    failed(await call(client, tool, arguments))
    assert rustpad.raw_log(pad) == []


@pytest.mark.parametrize(
    "tool,field",
    [
        ("append_to_document", "text"),
        ("set_document", "text"),
        ("create_document", "text"),
        ("replace_in_document", "search"),
        ("replace_in_document", "replace"),
    ],
)
async def test_text_over_the_limit_is_refused_without_connecting(client, rustpad, pad, tool, field):
    arguments = (
        {"id": pad, "search": "a", "replace": "b"} if tool == "replace_in_document" else {"id": pad}
    )
    arguments[field] = "🎉" * (MAX_DOCUMENT_CHARS + 1)
    message = failed(await call(client, tool, arguments))
    assert str(MAX_DOCUMENT_CHARS) in message
    assert rustpad.raw_log(pad) == []


async def test_missing_required_arguments_are_input_errors(client, rustpad, pad):
    for tool, arguments, missing in [
        ("get_document", {}, "id"),
        ("append_to_document", {"id": pad}, "text"),
        ("replace_in_document", {"id": pad, "search": "a"}, "replace"),
        ("set_language", {"id": pad}, "language"),
    ]:
        message = failed(await call(client, tool, arguments))
        assert f'"{missing}"' in message
    assert rustpad.raw_log(pad) == []
