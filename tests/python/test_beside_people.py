"""Working beside people, through the real SDK client in both eras against the test Rustpad with
scripted people in the pad (`rustpad-test-server person`): `wait_for_changes` answers a person's
edit and not this server's own writes, one burst is one answer, a wait times out and can be
cancelled; the reads report where people have their carets, `edit_document` says which edits
touched their lines, and a person sees this server's caret where it writes."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import MCPError

from conftest import call, changes_nothing, cursor_of, failed, mcp_client, minimal_env, ok, without_connections
from test_changes import client, patch  # noqa: F401 (client is a fixture)
from test_precise_edits import listing, window

pytestmark = pytest.mark.anyio

# How long a test lets a person's edit take to reach the answer of a wait.
ANSWER_WITHIN = 10


async def base_of(client, pad: str) -> str:
    return ok(await call(client, "get_document", window(pad, 1)))["base"]


class Waiting:
    """A wait_for_changes call running beside the test; `result` once it has answered."""

    def __init__(self, client, arguments):
        self.client, self.arguments = client, arguments
        self.result = None
        self.answered = anyio.Event()
        self.scope = anyio.CancelScope()

    async def run(self) -> None:
        with self.scope:
            self.result = await self.client.call_tool("wait_for_changes", self.arguments)
            self.answered.set()

    async def answer(self, within: float = ANSWER_WITHIN) -> dict:
        with anyio.fail_after(within):
            await self.answered.wait()
        return ok(self.result)


# -- waiting for people ---------------------------------------------------------------------------


async def test_a_wait_answers_a_persons_edit_with_its_author(client, rustpad, pad):
    rustpad.seed(pad, "question?\n")
    base = await base_of(client, pad)
    with rustpad.person(pad, "Ana") as ana:
        async with anyio.create_task_group() as group:
            waiting = Waiting(client, {"id": pad, "base": base, "timeout_seconds": 40})
            group.start_soon(waiting.run)
            await anyio.sleep(0.5)
            assert not waiting.answered.is_set()
            await ana.set_text("question?\nanswer\n")
            answer = await waiting.answer()
    assert answer["timed_out"] is False and answer["changed"] is True
    assert without_connections(answer["authors"]) == [{"name": "Ana", "in_pad": True, "operations": 1}]
    assert patch("question?\n", answer["diff"]) == "question?\nanswer\n"
    assert answer["base"] != base and answer["since_revision"] < answer["revision"]
    assert answer["waited_ms"] >= 400
    summary, body = listing(waiting.result)
    assert f"call wait_for_changes with base {answer['base']}" in summary
    assert "Ana" not in summary and "Ana (in the pad, connection " in body and "): 1 operation" in body


async def test_this_servers_own_write_does_not_end_a_wait_but_the_next_persons_edit_does(
    client, rustpad, pad
):
    rustpad.seed(pad, "start\n")
    base = await base_of(client, pad)
    with rustpad.person(pad, "Ana") as ana:
        async with anyio.create_task_group() as group:
            waiting = Waiting(client, {"id": pad, "base": base, "timeout_seconds": 40})
            group.start_soon(waiting.run)
            await anyio.sleep(0.3)
            ok(await call(client, "append_to_document", {"id": pad, "text": "ours\n"}))
            await ana.expect(lambda line: "History" in line.get("server", {}))
            await anyio.sleep(1.5)
            assert not waiting.answered.is_set(), waiting.result
            await ana.append("theirs\n")
            answer = await waiting.answer()
    assert answer["timed_out"] is False
    assert {"name": "Ana", "in_pad": True, "operations": 1} in without_connections(answer["authors"])
    assert answer["waited_ms"] >= 1700
    assert patch("start\n", answer["diff"]) == "start\nours\ntheirs\n"


async def test_a_burst_of_typing_is_one_answer_with_the_final_text(client, rustpad, pad):
    rustpad.seed(pad, "")
    base = await base_of(client, pad)
    with rustpad.person(pad, "Ana") as ana:
        async with anyio.create_task_group() as group:
            waiting = Waiting(client, {"id": pad, "base": base})
            group.start_soon(waiting.run)
            await anyio.sleep(0.3)
            for word in ["one ", "two ", "three ", "four ", "five"]:
                await ana.append(word)
            answer = await waiting.answer()
    assert answer["operations"] == 5
    assert patch("", answer["diff"]) == "one two three four five"


async def test_a_quiet_pad_times_out_with_the_base_given(client, rustpad, pad):
    rustpad.seed(pad, "quiet\n")
    base = await base_of(client, pad)
    result = await call(client, "wait_for_changes", {"id": pad, "base": base, "timeout_seconds": 1})
    answer = ok(result)
    assert answer["timed_out"] is True and answer["changed"] is False
    assert answer["base"] == base and answer["authors"] == [] and answer["diff"] == ""
    assert 950 <= answer["waited_ms"] < 5000
    assert f"call wait_for_changes again with base {base}" in answer["note"]


async def test_a_wait_checks_its_arguments_before_it_connects(client, rustpad, pad):
    base = await base_of(client, pad)
    for seconds in [0, 51, 1.5, "10"]:
        message = failed(
            await call(client, "wait_for_changes", {"id": pad, "base": base, "timeout_seconds": seconds})
        )
        assert message.startswith('argument "timeout_seconds"'), message
        assert "from 1 to 50" in message, message
    stale = "r99." + "0" * 16
    message = failed(await call(client, "wait_for_changes", {"id": pad, "base": stale}))
    assert "now has only" in message


async def test_cancelling_a_wait_ends_it_at_once_and_closes_its_socket(client, rustpad, pad):
    rustpad.seed(pad, "text\n")
    base = await base_of(client, pad)
    with rustpad.person(pad, "Ana") as ana:
        async with anyio.create_task_group() as group:
            waiting = Waiting(client, {"id": pad, "base": base})
            group.start_soon(waiting.run)
            # The wait's look shows itself to the pad only by its empty barrier caret.
            line = await ana.expect(lambda line: (c := cursor_of(line)) is not None and c[0] != ana.identity)
            look = cursor_of(line)[0]
            waiting.scope.cancel()
        left = await ana.expect(
            lambda line: line.get("server", {}).get("UserInfo", {}).get("id") == look, timeout=5
        )
    assert left["server"]["UserInfo"]["info"] is None
    assert waiting.result is None


async def test_waits_have_places_of_their_own_so_writes_are_never_busy(rustpad, pad):
    rustpad.seed(pad, "text\n")
    env = minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_MAX_CALLS="4")
    async with mcp_client("legacy", env) as client:
        base = await base_of(client, pad)
        async with anyio.create_task_group() as group:
            waiting = Waiting(client, {"id": pad, "base": base, "timeout_seconds": 20})
            group.start_soon(waiting.run)
            await anyio.sleep(0.5)
            with pytest.raises(MCPError) as refused:
                await call(client, "wait_for_changes", {"id": pad, "base": base})
            message = str(refused.value)
            assert "Server busy: 1 calls are already waiting for changes" in message, message
            assert "RUSTPAD_MCP_MAX_CALLS" in message
            for _ in range(3):
                ok(await call(client, "append_to_document", {"id": pad, "text": "x"}))
            waiting.scope.cancel()


# -- where people are -----------------------------------------------------------------------------


async def test_the_reads_say_where_two_people_are_working(client, rustpad, pad):
    rustpad.seed(pad, "one\ntwo\nthree\n")
    with rustpad.person(pad, "Ana") as ana, rustpad.person(pad, "Bo\u001b[31m") as bo:
        await ana.point([5, 999])
        await bo.point([], [[13, 8]])
        expected = [
            {"name": "Ana", "this_server": False, "cursors": [{"line": 2, "column": 2}], "selections": []},
            {
                "name": "Bo[31m",
                "this_server": False,
                "cursors": [],
                "selections": [{"start": {"line": 3, "column": 1}, "end": {"line": 3, "column": 6}}],
            },
        ]
        read = await call(client, "get_document", window(pad, 1))
        assert ok(read)["people"] == expected
        _, body = listing(read)
        assert "Where people are working:\nAna: caret at line 2, column 2\n" in body
        info = ok(await call(client, "get_document_info", {"id": pad}))
        assert info["people"] == expected
        changes = ok(await call(client, "get_changes", {"id": pad, "base": ok(read)["base"]}))
        assert changes["people"] == expected

        # An edit on Ana's line says so; one elsewhere does not; neither asks or refuses.
        base = ok(read)["base"]
        edits = [{"old_text": "two", "new_text": "TWO"}, {"old_text": "one", "new_text": "ONE"}]
        dry = ok(await call(client, "edit_document", {"id": pad, "edits": edits, "base": base, "dry_run": True}))
        assert [edit.get("people") for edit in dry["edits"]] == [["Ana"], None]
        done = await call(client, "edit_document", {"id": pad, "edits": edits, "base": base})
        assert [edit.get("people") for edit in ok(done)["edits"]] == [["Ana"], None]
        _, body = listing(done)
        assert body.endswith("Edit 1 changed a line where Ana is working.")
    assert rustpad.text(pad) == "ONE\nTWO\nthree\n"


async def test_an_answer_inserted_at_a_persons_caret_names_them(client, rustpad, pad):
    rustpad.seed(pad, "Notes\nWho owns the release?\n")
    with rustpad.person(pad, "Ana") as ana:
        await ana.point([len("Notes\nWho owns the release?\n")])
        base = ok(await call(client, "get_document", window(pad, 1)))["base"]
        answer = {"old_text": "", "new_text": "Ben does.\n", "line": 3}
        done = ok(await call(client, "edit_document", {"id": pad, "edits": [answer], "base": base}))
    assert done["edits"] == [{"edit": 1, "start_line": 3, "end_line": 3, "people": ["Ana"]}]


async def test_only_a_few_places_of_each_person_are_kept(client, rustpad, pad):
    rustpad.seed(pad, "x" * 100)
    with rustpad.person(pad, "Ana") as ana:
        await ana.point(list(range(1000)), [[n, n + 1] for n in range(500)])
        [person] = ok(await call(client, "get_document", window(pad, 1)))["people"]
    assert person["cursors"] == [{"line": 1, "column": n + 1} for n in range(8)]
    assert len(person["selections"]) == 8


async def test_a_pad_without_carets_has_no_people_field(client, rustpad, pad):
    rustpad.seed(pad, "alone\n")
    assert "people" not in ok(await call(client, "get_document", window(pad, 1)))
    assert "people" not in ok(await call(client, "get_document_info", {"id": pad}))


async def test_a_person_sees_this_servers_caret_where_it_writes(client, rustpad, pad):
    """A write that replaces text shows its caret and selection there just before its edit; an
    append, on a connection the host keeps between appends, shows none (nothing of it but its
    history entries reaches people's editors)."""
    rustpad.seed(pad, "abc\ndef\n")
    with rustpad.person(pad, "Ana") as ana:
        base = await base_of(client, pad)
        # Reads and dry runs show only the empty caret of their invisible look.
        ok(await call(client, "get_document_info", {"id": pad}))
        edits = [{"old_text": "def", "new_text": "DEF"}]
        ok(await call(client, "edit_document", {"id": pad, "edits": edits, "base": base, "dry_run": True}))
        ok(await call(client, "edit_document", {"id": pad, "edits": edits, "base": base}))
        ok(await call(client, "append_to_document", {"id": pad, "text": "end"}))
        # Rustpad relays carets and edits on separate paths, so they may reach a person in
        # either order: wait for the caret, and for the append's edit.
        await ana.expect(lambda line: (c := cursor_of(line)) is not None and c[1]["cursors"] == [4])
        await ana.expect(lambda line: "end" in json.dumps(line.get("server", {}).get("History", {})))
    carets = [cursor_of(line) for line in ana.seen if cursor_of(line) is not None]
    shown = [data for who, data in carets if who != ana.identity and data["cursors"]]
    assert shown == [{"cursors": [4], "selections": [[4, 7]]}]
    # This server sent the caret before the edit it shows, and after its mark, so that whoever
    # sees the caret finds the write marked in the history.
    frames = [frame for frame in rustpad.log(pad) if "CursorData" in frame or "Edit" in frame]
    (moved,) = [frame for frame in frames if frame.get("CursorData", {}).get("cursors")]
    writes = [frame for frame in frames if "Edit" in frame and not changes_nothing(frame["Edit"]["operation"])]
    assert len(writes) == 2
    assert frames.index(moved) < frames.index(writes[0])
    since = frames[: frames.index(moved)]
    assert any("Edit" in frame and changes_nothing(frame["Edit"]["operation"]) for frame in since), since


async def test_a_write_shows_no_caret_while_another_write_of_ours_is_under_way(client, rustpad, pad):
    """Many writes at once would each put a caret in the queue Rustpad relays to every editor;
    people see the text arrive anyway, so a write beside another one under way sends none."""
    rustpad.seed(pad, "abc\n")

    def carets_sent():
        return [frame for frame in rustpad.log(pad) if frame.get("CursorData", {}).get("cursors")]

    with rustpad.person(pad, "Ana") as ana:
        # A write of this server's under way elsewhere: named like ours, marked, no edit yet.
        with rustpad.person(pad, "rustpad-mcp") as other_write:
            await other_write.keep(1)
            ok(await call(client, "append_to_document", {"id": pad, "text": "one\n"}))
            assert carets_sent() == []
        # Once it has gone (Rustpad forgets it before it tells the others), a write shows its
        # caret again.
        gone = {"UserInfo": {"id": other_write.identity, "info": None}}
        await ana.expect(lambda line: line.get("server") == gone)
        replace = {"id": pad, "search": "one\n", "replace": "one\ntwo\n"}
        ok(await call(client, "replace_in_document", replace))
        assert [frame["CursorData"]["cursors"] for frame in carets_sent()] == [[8]]
    assert rustpad.text(pad) == "abc\none\ntwo\n"
