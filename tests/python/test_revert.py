"""`revert_changes` through the real SDK client, in both eras, on the test Rustpad's wire: a
write's change taken back while a person types, whose changes since a base, the pad put back at
a base, a second run that takes nothing back, a refusal once the history is gone, the guard
where a revert removes people's text, and what it puts back counting as people's text again."""

from __future__ import annotations

import json
import re
import time
from collections import Counter

import anyio
import pytest

from conftest import (
    HANG_GUARD_SECONDS,
    RustpadServer,
    call,
    client_info_named,
    edits,
    failed,
    marks,
    minimal_env,
    ok,
    text_of,
)
from test_act import TOKEN as ACT_TOKEN
from test_act import act_client
from test_act import data as act_data
from test_act import refusal as act_refusal
from test_guard import Person, guarded_client, token_in

pytestmark = pytest.mark.anyio

CHANGE = re.compile(r"^r(0|[1-9][0-9]*)\.[0-9a-f]{16}:c(0|[1-9][0-9]*):t(0|[1-9][0-9]*)$")


@pytest.fixture
async def client(rustpad, era):
    async with guarded_client(rustpad, era) as client:
        yield client


def paragraph(label: str, size: int) -> str:
    line = f"{label}: a person's own words, typed by hand.\n"
    return (line * (size // len(line) + 1))[:size].rsplit("\n", 1)[0] + "\n"


@pytest.mark.parametrize("how", ["change", "base_before"])
async def test_an_append_taken_back_leaves_exactly_the_persons_text(rustpad, pad, client, how):
    """A model appends 50 lines while a person types in the middle of the pad; taken back by the
    append's change, or by this server's writes since its base_before."""
    rustpad.seed(pad, "first line\nlast line\n")
    appended = "".join(f"model line {n}\n" for n in range(50))
    with rustpad.person(pad, name="typist") as person:
        await person.set_text("first line\nTYPED 🎉\nlast line\n")
        result = ok(await call(client, "append_to_document", {"id": pad, "text": appended}))
        await person.set_text(rustpad.text(pad).replace("TYPED 🎉", "TYPED BY A PERSON 🎉"))
    assert CHANGE.match(result["change"]), result
    assert result["base"] != result["base_before"]
    if how == "change":
        arguments = {"id": pad, "change": result["change"]}
    else:
        arguments = {"id": pad, "base": result["base_before"], "by": "this_server"}
    undone = ok(await call(client, "revert_changes", arguments))
    assert rustpad.text(pad) == "first line\nTYPED BY A PERSON 🎉\nlast line\n"
    assert undone["taken_back"] == 1 and undone["removed_characters"] == len(appended)
    assert undone["restored_characters"] == 0 and undone["kept_lines"] == []
    assert CHANGE.match(undone["change"])
    # Again: nothing left to take back, and nothing written.
    again = await call(client, "revert_changes", arguments)
    assert ok(again)["taken_back"] == 0
    assert "Nothing to take back" in text_of(again)
    assert rustpad.text(pad) == "first line\nTYPED BY A PERSON 🎉\nlast line\n"


async def test_a_change_handle_takes_back_one_write_of_a_kept_connection(rustpad, pad, client):
    """Appends in a row go on one kept connection (the host keeps it between calls); the handle
    of the middle one takes back that write alone, not the connection's later ones."""
    rustpad.seed(pad, "start\n")
    written = [
        ok(await call(client, "append_to_document", {"id": pad, "text": f"{word}\n"}))
        for word in ("one", "two", "three")
    ]
    connections = {CHANGE.match(w["change"]).group(2) for w in written}
    assert len(connections) == 1, written
    undone = ok(await call(client, "revert_changes", {"id": pad, "change": written[1]["change"]}))
    assert undone["taken_back"] == 1 and undone["removed_characters"] == len("two\n")
    assert rustpad.text(pad) == "start\none\nthree\n"


async def test_appends_of_a_held_connection_are_this_servers_to_take_back(rustpad, pad, client):
    """From its third append on, a held connection sends only the edit, no mark: those appends are
    still this server's writes, which "by": "this_server" takes back with the rest."""
    rustpad.seed(pad, "start\n")
    written = [
        ok(await call(client, "append_to_document", {"id": pad, "text": f"{word}\n"}))
        for word in ("one", "two", "three", "four")
    ]
    assert len(marks(rustpad, pad)) == 6, "one mark, a run of five, then none"
    rustpad.set_by_person(pad, "A person's title\n" + rustpad.text(pad))
    undone = ok(
        await call(client, "revert_changes", {"id": pad, "base": written[0]["base_before"], "by": "this_server"})
    )
    assert undone["taken_back"] == 4, undone
    assert rustpad.text(pad) == "A person's title\nstart\n"


async def test_this_servers_writes_since_a_base_are_taken_back_and_no_one_elses(rustpad, pad, client):
    rustpad.seed(pad, "one\ntwo\n")
    first = ok(await call(client, "append_to_document", {"id": pad, "text": "three\n"}))
    rustpad.set_by_person(pad, "zero\none\ntwo\nthree\n")
    ok(await call(client, "replace_in_document", {"id": pad, "search": "two", "replace": "TWO"}))
    undone = ok(
        await call(client, "revert_changes", {"id": pad, "base": first["base_before"], "by": "this_server"})
    )
    assert rustpad.text(pad) == "zero\none\ntwo\n"
    assert undone["taken_back"] == 2
    again = ok(await call(client, "revert_changes", {"id": pad, "base": first["base_before"]}))
    assert again["taken_back"] == 0 and rustpad.text(pad) == "zero\none\ntwo\n"


async def test_a_persons_deleted_paragraph_comes_back_and_another_persons_typing_stays(rustpad, pad, client):
    kept = "Intro.\n"
    gone = "The paragraph someone deleted by mistake.\n"
    rustpad.seed(pad, kept + gone + "End.\n")
    read = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
    deleter = rustpad.set_by_person(pad, kept + "End.\n", name="deleter")
    rustpad.set_by_person(pad, kept + "End.\nAnother person's line.\n", name="other")
    changes = ok(await call(client, "get_changes", {"id": pad, "base": read["base"]}))
    connections = [n for author in changes["authors"] for n in author["connections"]]
    assert deleter["identity"] in connections, changes
    undone = ok(
        await call(
            client,
            "revert_changes",
            {"id": pad, "base": read["base"], "by": {"connection": deleter["identity"]}},
        )
    )
    assert rustpad.text(pad) == kept + gone + "End.\nAnother person's line.\n"
    assert undone["restored_characters"] == len(gone) and undone["removed_characters"] == 0
    assert undone["lines"] == [2, 2]
    again = ok(
        await call(
            client,
            "revert_changes",
            {"id": pad, "base": read["base"], "by": {"connection": deleter["identity"]}},
        )
    )
    assert again["taken_back"] == 0


async def test_typing_inside_text_taken_back_stays_and_the_result_says_where(rustpad, pad, client):
    rustpad.seed(pad, "top\n")
    result = ok(await call(client, "append_to_document", {"id": pad, "text": "model words here\n"}))
    rustpad.set_by_person(pad, "top\nmodel words PERSON here\n")
    reverted = await call(client, "revert_changes", {"id": pad, "change": result["change"]})
    undone = ok(reverted)
    # The person's edit was "PERSON " inside the model's line: that stays, the line's ends go.
    assert rustpad.text(pad) == "top\nPERSON "
    assert undone["kept_lines"] == [2], undone
    assert "their characters stay, on line 2" in text_of(reverted)


async def test_an_approved_set_document_is_undone_to_the_text_read_before_it(rustpad, pad, era):
    old = paragraph("old", 2000)
    rustpad.seed(pad, old)
    person = Person("accept")
    async with guarded_client(rustpad, era, person) as client:
        before = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
        arguments = {"id": pad, "text": "entirely new text\n"}
        written = ok(await call(client, "set_document", arguments))
        assert len(person.asked) == 1
        assert rustpad.text(pad) == "entirely new text\n"
        undone = ok(
            await call(client, "revert_changes", {"id": pad, "base": written["base_before"], "by": "everyone"})
        )
        assert rustpad.text(pad) == old
        # Nothing differs from what the read before gave.
        changes = ok(await call(client, "get_changes", {"id": pad, "base": before["base"]}))
        assert changes["changed"] is False and changes["diff"] == ""
        assert undone["restored_characters"] > 0
        again = ok(
            await call(client, "revert_changes", {"id": pad, "base": written["base_before"], "by": "everyone"})
        )
        assert again["taken_back"] == 0


async def test_a_restored_paragraph_removed_whole_asks_as_before(rustpad, pad, era):
    words = paragraph("restored", 3000)
    rustpad.seed(pad, "head\n")
    read = None
    async with guarded_client(rustpad, era) as client:
        read = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
        rustpad.set_by_person(pad, "head\n" + words)
        before_removal = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
        rustpad.set_by_person(pad, "head\n")
        # Taking back the person's removal puts their words back, unasked.
        undone = ok(
            await call(client, "revert_changes", {"id": pad, "base": before_removal["base"], "by": "everyone"})
        )
        assert rustpad.text(pad) == "head\n" + words and undone["restored_characters"] == len(words)
        # Removing them whole asks, as it would have before they were removed and restored.
        asked = await call(client, "replace_in_document", {"id": pad, "search": words, "replace": ""})
        assert token_in(text_of(asked))
        assert rustpad.text(pad) == "head\n" + words
        # Taking back the person's insert is a removal of people's text: asked too.
        asked = await call(client, "revert_changes", {"id": pad, "base": read["base"], "by": "everyone"})
        assert token_in(text_of(asked)) and rustpad.text(pad) == "head\n" + words


async def test_taking_back_this_servers_own_text_does_not_ask(rustpad, pad):
    rustpad.seed(pad, "a person's line\n")
    async with guarded_client(rustpad, "legacy") as client:
        written = ok(await call(client, "append_to_document", {"id": pad, "text": paragraph("model", 5000)}))
        undone = ok(await call(client, "revert_changes", {"id": pad, "change": written["change"]}))
        assert undone["removed_characters"] > 4000 and rustpad.text(pad) == "a person's line\n"


async def test_a_change_or_base_from_a_history_that_is_gone_is_refused(rustpad, pad, client):
    rustpad.seed(pad, "before\n")
    written = ok(await call(client, "append_to_document", {"id": pad, "text": "added\n"}))
    # The pad dropped and written again from empty, as after Rustpad's expiry.
    rustpad.seed(pad, "someone else's pad now\n")
    refused = failed(await call(client, "revert_changes", {"id": pad, "change": written["change"]}))
    assert "nothing can be taken back" in refused and "history" in refused, refused
    refused = failed(await call(client, "revert_changes", {"id": pad, "base": written["base_before"]}))
    assert "nothing can be taken back" in refused, refused
    assert rustpad.text(pad) == "someone else's pad now\n"


async def test_a_change_from_before_rustpad_restarted_is_refused(tmp_path, pad):
    first = RustpadServer(str(__import__("conftest").TEST_SERVER_BIN))
    port = int(first.url.rsplit(":", 1)[1])
    other = f"{pad}-other"
    try:
        first.seed(pad, "before\n")
        first.seed(other, "a person's text\n")
        async with guarded_client(first, "legacy") as client:
            written = ok(await call(client, "append_to_document", {"id": pad, "text": "added\n"}))
            read = ok(await call(client, "get_document", {"id": other, "start_line": 1}))
    finally:
        first.stop()
    # Rustpad's start time counts whole seconds, as the real one's does: a restart within the
    # same second with the same history up to the handle could not be told apart on the wire.
    time.sleep(1.1)
    again = RustpadServer(str(__import__("conftest").TEST_SERVER_BIN), port=port)
    try:
        # The same text at the same revision again: only the start time tells the histories apart.
        again.seed(pad, "before\n")
        async with guarded_client(again, "legacy") as client:
            ok(await call(client, "append_to_document", {"id": pad, "text": "added\n"}))
            refused = failed(await call(client, "revert_changes", {"id": pad, "change": written["change"]}))
            assert "Rustpad has restarted" in refused, refused
            # A pad the restart emptied: its base names a revision the new history never reached.
            refused = failed(
                await call(client, "revert_changes", {"id": other, "base": read["base"], "by": "everyone"})
            )
            assert "nothing can be taken back" in refused and "history it was read from is gone" in refused, refused
            # Refused before anything was sent: not even a mark.
            assert again.text(other) == "" and edits(again, other) == [] and marks(again, other) == []
        assert again.text(pad) == "before\nadded\n"
    finally:
        again.stop()


async def test_by_name_takes_the_one_person_of_that_name_or_lists_connections(rustpad, pad, client):
    rustpad.seed(pad, "start\n")
    read = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
    with rustpad.person(pad, name="alice") as alice:
        await alice.set_text("start\nalice's line\n")
        rustpad.set_by_person(pad, "start\nalice's line\nbob's line\n", name="bob")
        refused = failed(
            await call(client, "revert_changes", {"id": pad, "base": read["base"], "by": {"name": "bob"}})
        )
        assert "nobody of that name is in the pad now" in refused and str(alice.identity) in refused
        by_alice = {"id": pad, "base": read["base"], "by": {"name": "alice"}}
        undone = ok(await call(client, "revert_changes", by_alice))
        assert rustpad.text(pad) == "start\nbob's line\n" and undone["taken_back"] == 1
        again = ok(await call(client, "revert_changes", by_alice))
        assert again["taken_back"] == 0 and rustpad.text(pad) == "start\nbob's line\n"


async def test_bad_arguments_are_refused_before_anything_is_read(rustpad, pad, client):
    for arguments, expected in [
        ({"id": pad}, "say what to take back"),
        ({"id": pad, "change": "r1.0123456789abcdef"}, "not a change this server gives out"),
        ({"id": pad, "base": "r1.0123456789abcdef", "by": "someone"}, "\"this_server\", \"everyone\""),
        ({"id": pad, "base": "r1.0123456789abcdef", "by": {"connection": -1}}, "\"this_server\""),
        (
            {"id": pad, "change": "r1.0123456789abcdef:c1:t1", "base": "r1.0123456789abcdef"},
            "either change, or base",
        ),
    ]:
        assert expected in failed(await call(client, "revert_changes", arguments)), arguments
    assert rustpad.text(pad) == ""


async def test_a_dry_run_shows_the_diff_and_writes_nothing(rustpad, pad, client):
    rustpad.seed(pad, "keep\n")
    written = ok(await call(client, "append_to_document", {"id": pad, "text": "drop me\n"}))
    preview = ok(await call(client, "revert_changes", {"id": pad, "change": written["change"], "dry_run": True}))
    assert preview["dry_run"] is True and preview["would_ask"] is False
    assert "-drop me" in preview["diff"]
    assert rustpad.text(pad) == "keep\ndrop me\n"


async def test_set_language_says_what_it_replaced(rustpad, pad, client):
    rustpad.seed(pad, "x\n", language="python")
    result = ok(await call(client, "set_language", {"id": pad, "language": "rust"}))
    assert result["language_before"] == "python"


def test_readonly_has_no_revert(rustpad):
    from conftest import initialize_message, request, run_server

    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_READ_ONLY="true"),
        [initialize_message(), request(1, "tools/list", {})],
    )
    names = [tool["name"] for tool in run.response(1)["result"]["tools"]]
    assert "revert_changes" not in names and "get_changes" in names


MARK = "§"


async def test_two_hundred_reverts_while_a_person_types_lose_no_typed_character(rustpad, pad):
    """The concurrency trial's typist types throughout (one session after another, so that it is in
    the pad for every revert); the server appends a line and takes it back, 200 times. Every
    character typed is in the pad at the end, and nothing of the server's."""
    initial = "the person's page\n"
    rustpad.seed(pad, initial)
    typed: list[str] = []
    finished = anyio.Event()

    async def type_() -> None:
        seed = 1
        while not finished.is_set():
            command = rustpad.typist_command(pad, seed=seed, count=100, delay_us=3000, name="typist")
            with anyio.fail_after(HANG_GUARD_SECONDS):
                done = await anyio.run_process(command, check=False)
            assert done.returncode == 0, done.stderr.decode(errors="replace")
            report = json.loads(done.stdout)
            assert report["skipped"] == 0
            typed.extend(report["typed"])
            seed += 1

    async with guarded_client(rustpad, "auto") as client, anyio.create_task_group() as group:
        group.start_soon(type_)
        await rustpad.wait_for_frame(pad, client_info_named("typist"))
        for n in range(200):
            line = f"{MARK}{n}{MARK}\n"
            written = ok(await call(client, "append_to_document", {"id": pad, "text": line}))
            undone = ok(await call(client, "revert_changes", {"id": pad, "change": written["change"]}))
            assert undone["taken_back"] == 1, undone
            assert undone["removed_characters"] == len(line), undone
        finished.set()
    final = rustpad.text(pad)
    assert MARK not in final
    assert Counter(final) == Counter(initial) + Counter("".join(typed)), final
    assert len(typed) >= 100


async def test_two_deployments_on_one_pad_each_take_back_only_their_own(rustpad, pad):
    rustpad.seed(pad, "a person's start\n")
    ours_env = {"RUSTPAD_SEAL_KEY": "a" * 64}
    theirs_env = {"RUSTPAD_SEAL_KEY": "b" * 64}
    async with guarded_client(rustpad, "legacy", **ours_env) as ours, guarded_client(
        rustpad, "legacy", **theirs_env
    ) as theirs:
        first = ok(await call(ours, "append_to_document", {"id": pad, "text": "ours one\n"}))
        ok(await call(theirs, "append_to_document", {"id": pad, "text": "theirs\n"}))
        ok(await call(ours, "append_to_document", {"id": pad, "text": "ours two\n"}))
        undone = ok(await call(ours, "revert_changes", {"id": pad, "base": first["base_before"]}))
        assert undone["taken_back"] == 2 and rustpad.text(pad) == "a person's start\ntheirs\n"
        # The other deployment has nothing of its own since that base but its line.
        again = ok(await call(theirs, "revert_changes", {"id": pad, "base": first["base_before"]}))
        assert again["taken_back"] == 1 and rustpad.text(pad) == "a person's start\n"


async def test_under_act_a_revert_goes_through_by_token(rustpad, pad):
    rustpad.seed(pad, "the person's notes\n")
    async with act_client("stdio", rustpad) as client:
        written = act_data(await call(client, "append_to_document", {"id": pad, "text": "a model's line\n"}))
        arguments = {"id": pad, "change": written["change"]}
        offer = act_refusal(await call(client, "revert_changes", arguments))
        [token] = ACT_TOKEN.findall(offer)
        undone = act_data(await call(client, "revert_changes", {**arguments, "confirm_token": token}))
        assert undone["taken_back"] == 1 and rustpad.text(pad) == "the person's notes\n"
        again = act_data(await call(client, "revert_changes", arguments))
        assert again["taken_back"] == 0


async def test_over_http_a_write_is_taken_back_and_a_persons_text_asks_first(rustpad, pad, era):
    """`rustpad-mcp --http`, in each era: this process's own append is taken back unasked, and
    taking a person's long insert back asks the person (a dialog)."""
    from http_harness import http_client, http_server

    rustpad.seed(pad, "head\n")
    person = Person("accept")
    with http_server(rustpad) as server:
        async with http_client(server.url, era, elicitation_callback=person) as client:
            read = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
            written = ok(await call(client, "append_to_document", {"id": pad, "text": "a model's line\n"}))
            ok(await call(client, "revert_changes", {"id": pad, "change": written["change"]}))
            assert rustpad.text(pad) == "head\n" and person.asked == []
            words = paragraph("typed", 1500)
            rustpad.set_by_person(pad, "head\n" + words)
            undone = ok(await call(client, "revert_changes", {"id": pad, "base": read["base"], "by": "everyone"}))
            assert len(person.asked) == 1 and undone["removed_characters"] == len(words)
            assert rustpad.text(pad) == "head\n"
