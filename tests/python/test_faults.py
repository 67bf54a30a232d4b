"""The fault suite: appends through faults.FaultProxy, which breaks the connections between
rustpad-mcp and Rustpad at the moments a write is most exposed to (before the snapshot, an edit
dropped on its way, between an edit and its acknowledgement, in the middle of a long history, on
a slow link that drops connections), and with Rustpad paused, restarted, or the server itself
killed mid-write; over stdio, the binary's `--http` mode and the component under `wasmtime
serve`. Also: a write whose edit landed is not reported present while its connection lingers,
and removals sent at once through cut connections still take at most half of a pad.

Each test starts its own test Rustpad and proxy, and judges every call by the pad's text read
straight from that Rustpad, never through the proxy: every write that succeeded is there exactly
once, every write that said "nothing was written" is absent, and what a person typed meanwhile
is all there. Every append writes a marker line of its own (`[b17]\\n`, made of characters the
typist never types), so presence and doubling can be counted.

Why this file is long: every fault shares the rig (a Rustpad and a proxy of its own per test) and
the checks that judge each call by the pad's text; split by fault, each part would import all of
it back.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from conftest import (
    MCP_BIN,
    TEST_SERVER_BIN,
    RustpadServer,
    call,
    cursor_of,
    failed,
    mcp_client,
    minimal_env,
    ok,
    pad_id_for,
    text_of,
)
from faults import KINDS, FaultProxy
from http_harness import SEAL_KEY, http_client, http_server
from test_guard_everywhere import HttpPlaces, result_text
from test_removals_at_once import (
    OneStdioProcess,
    asked,
    blocks,
    check_at_most_half_gone,
    remove_each,
    went_ahead,
)
from wasm_hosts import BEARER, COMPONENT, WASMTIME, needs, wasm_host

pytestmark = pytest.mark.anyio

NOTHING_WRITTEN = "nothing was written"
UNKNOWN = "Outcome unknown: "
# What a write's result adds when its acknowledgement was lost and its edit then found.
FOUND_IN_HISTORY = "found the edit in the pad's history, so it was made, once"
START = "start\n"
# Where the calls go, and how many appends each makes under cuts and drops.
TRANSPORTS = {"stdio": 40, "http": 20, "wasmtime": 20}


class Rig:
    """A test Rustpad of the test's own, a FaultProxy in front of it, and clients through it."""

    def __init__(self, label: str):
        self.rustpad = RustpadServer(str(TEST_SERVER_BIN))
        self.proxy = FaultProxy(self.rustpad.port, seed=20261205)
        self.pad = pad_id_for(label)

    def client(self, command: list[str] | None = None):
        return mcp_client("legacy", minimal_env(RUSTPAD_URL=self.proxy.url), command=command)

    @asynccontextmanager
    async def client_over(self, transport: str) -> AsyncIterator:
        """A client whose calls reach Rustpad through the proxy: the binary on stdio, the
        binary's `--http` mode, or the component under `wasmtime serve` (its own sockets)."""
        if transport == "stdio":
            async with self.client() as client:
                yield client
        elif transport == "http":
            with http_server(self.rustpad, RUSTPAD_URL=self.proxy.url) as server:
                async with http_client(server.url, "auto") as client:
                    yield client
        else:
            ready = WASMTIME.exists() and COMPONENT.exists()
            needs(ready, "wasmtime serve needs `make build` and `make test-clients`")
            with wasm_host(self.rustpad, RUSTPAD_URL=self.proxy.url) as host:
                async with http_client(host.url, "auto", headers=BEARER) as client:
                    yield client

    def restart(self) -> None:
        """Kills the test Rustpad and starts a new one on the same port (with no pads)."""
        self.rustpad.process.kill()
        self.rustpad.process.wait()
        self.rustpad = RustpadServer(str(TEST_SERVER_BIN), port=self.rustpad.port)

    def close(self) -> None:
        self.proxy.close()
        self.rustpad.stop()


@pytest.fixture
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    rig = Rig(request.node.name)
    try:
        yield rig
    finally:
        rig.close()


def marker(name: str) -> str:
    return f"[{name}]\n"


async def append(client, pad: str, text: str) -> tuple[str, str]:
    """Appends `text`; returns ("written" | "not written" | "unknown", the result's text). Any
    other failure fails the test."""
    result = await call(client, "append_to_document", {"id": pad, "text": text})
    if not result.is_error:
        ok(result)
        return "written", text_of(result)
    message = failed(result)
    if message.startswith(UNKNOWN):
        return "unknown", message
    assert NOTHING_WRITTEN in message, message
    return "not written", message


def check_pad(text: str, outcomes: dict[str, str]) -> None:
    """Each marker written is in `text` once, each not written is absent, an unknown one at
    most once."""
    for mark, outcome in outcomes.items():
        expected = {"written": [1], "not written": [0], "unknown": [0, 1]}[outcome]
        assert text.count(mark) in expected, (mark, outcome, text)


def without_markers(text: str) -> str:
    return re.sub(r"\[[a-z][0-9]+\]\n", "", text)


def check_typing(text: str, report: dict) -> None:
    """Everything the typist typed is in `text`, and nothing else but the markers."""
    assert without_markers(text) == without_markers(report["final_text"])
    typed = sum(len(piece) for piece in report["typed"])
    assert len(without_markers(text)) == len(START) + typed, (text, report)


@dataclass
class Outcome:
    """What one append said, and the faults the proxy injected while it ran, by kind."""

    outcome: str
    message: str
    faults: dict[str, int]


async def appends_while_typing(
    rig: Rig, prefix: str, count: int, transport: str = "stdio"
) -> dict[str, Outcome]:
    """`count` appends of their own markers in a row while a person types into the pad; checks
    the pad and the person's typing, and returns each marker's outcome."""
    marks = [marker(f"{prefix}{i}") for i in range(count)]
    outcomes: dict[str, Outcome] = {}
    report: dict = {}

    async def person() -> None:
        report.update(
            await rig.rustpad.type(rig.pad, seed=7, count=60, delay_us=50_000, avoid=marks)
        )

    async with rig.client_over(transport) as client, anyio.create_task_group() as group:
        group.start_soon(person)
        for mark in marks:
            before = {kind: rig.proxy.counts[kind] for kind in KINDS}
            outcome, message = await append(client, rig.pad, mark)
            after = {kind: rig.proxy.counts[kind] - before[kind] for kind in KINDS}
            faults = {kind: n for kind, n in after.items() if n}
            outcomes[mark] = Outcome(outcome, message, faults)
    text = rig.rustpad.text(rig.pad)
    check_pad(text, {mark: result.outcome for mark, result in outcomes.items()})
    check_typing(text, report)
    return outcomes


async def test_resets_before_the_snapshot_are_retried_and_the_write_lands_once(rig):
    rig.rustpad.seed(rig.pad, START)
    outcomes = {}
    for i in range(3):
        # A server of its own each time: a second append in the same one would go on from the
        # connection the first one left it, and join nothing.
        async with rig.client() as client:
            rig.proxy.reset_before_snapshot(next=2)
            before = rig.proxy.counts["before_snapshot"]
            outcome, message = await append(client, rig.pad, marker(f"a{i}"))
            assert outcome == "written", message
            # Both resets really hit this write's sockets.
            assert rig.proxy.counts["before_snapshot"] == before + 2
            outcomes[marker(f"a{i}")] = outcome
    text = rig.rustpad.text(rig.pad)
    check_pad(text, outcomes)
    assert text == START + "".join(outcomes)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_edits_dropped_or_cut_before_their_ack_leave_every_call_telling_the_truth(
    rig, transport
):
    rig.rustpad.seed(rig.pad, START)
    # The first write loses its edit, and its next attempt the acknowledgement, so every run
    # has both; after that each edit has a chance of either.
    rig.proxy.drop_edit(next=1, chance=0.15)
    rig.proxy.cut_after_edit(next=1, chance=0.15)
    outcomes = await appends_while_typing(rig, "b", TRANSPORTS[transport], transport)
    rig.proxy.calm()
    counts = rig.proxy.counts
    assert counts["drop_edit"] >= 1 and counts["after_edit"] >= 1, counts
    for mark, result in outcomes.items():
        # Rustpad kept running, so its history always tells.
        assert result.outcome != "unknown", (mark, result)
        # A call no fault touched just succeeds.
        assert result.faults or result.outcome == "written", (mark, result)
        # Only a cut acknowledgement makes a write look for its edit in the history.
        found = FOUND_IN_HISTORY in result.message
        assert not found or result.faults.get("after_edit"), (mark, result)
    # A call whose edit was dropped tried again, and its text is in the pad once (check_pad).
    retried = [
        mark
        for mark, result in outcomes.items()
        if result.outcome == "written" and any(mark in lost for lost in rig.proxy.dropped)
    ]
    assert retried, (rig.proxy.dropped, outcomes)


async def test_resets_in_the_middle_of_a_long_history(rig):
    # About 100 KB of history in the snapshot's History frame.
    rig.rustpad.seed(rig.pad, START, ops=3000, char="·")
    start = rig.rustpad.text(rig.pad)
    rig.proxy.reset_mid_frame(chance=0.5, over=16 << 10)
    outcomes = {}
    async with rig.client() as client:
        for i in range(6):
            outcome, message = await append(client, rig.pad, marker(f"c{i}"))
            assert outcome in ("written", "not written"), message
            outcomes[marker(f"c{i}")] = outcome
    assert rig.proxy.counts["mid_frame"] >= 1, rig.proxy.counts
    text = rig.rustpad.text(rig.pad)
    check_pad(text, outcomes)
    assert text == start + "".join(m for m, o in outcomes.items() if o == "written")


async def test_a_cut_on_a_kept_connection_tells_the_truth_and_the_next_append_joins_afresh(rig):
    """The second append of one server goes on from the connection the first one left it; its
    acknowledgement cut, it still learns whether its edit landed, that connection is not kept
    again, and the third append lands."""
    rig.rustpad.seed(rig.pad, START)
    outcomes = {}
    async with rig.client() as client:
        outcome, message = await append(client, rig.pad, marker("k0"))
        assert outcome == "written", message
        outcomes[marker("k0")] = outcome
        sockets = rig.proxy.counts["sockets"]
        rig.proxy.cut_after_edit(next=1)
        outcome, message = await append(client, rig.pad, marker("k1"))
        assert outcome in ("written", "not written"), message
        outcomes[marker("k1")] = outcome
        assert rig.proxy.counts["after_edit"] == 1
        # No socket of its own but the look that learnt the outcome and, when the edit had not
        # landed, the retry's (a cut right after the edit went out can keep it from Rustpad: the
        # reset throws away what Rustpad had not read yet, so even "written" may be the retry's).
        assert rig.proxy.counts["sockets"] - sockets <= 2, message
        outcome, message = await append(client, rig.pad, marker("k2"))
        assert outcome == "written", message
        outcomes[marker("k2")] = outcome
    check_pad(rig.rustpad.text(rig.pad), outcomes)


async def test_an_edit_lost_on_a_held_connection_is_written_again_on_a_new_one(rig):
    """The third append of one server goes on a connection that says it is held, so it sends its
    edit alone. That edit dropped before Rustpad saw it, the server learns that nothing was
    written, writes it again on a connection of its own, and the appends after it land."""
    rig.rustpad.seed(rig.pad, START)
    outcomes = {}
    async with rig.client() as client:
        for name in ("h0", "h1"):
            outcomes[marker(name)], message = await append(client, rig.pad, marker(name))
            assert outcomes[marker(name)] == "written", message
        rig.proxy.drop_edit(next=1)
        outcome, message = await append(client, rig.pad, marker("h2"))
        assert rig.proxy.counts["drop_edit"] == 1 and rig.proxy.dropped == [marker("h2")]
        assert outcome == "written", message
        outcomes[marker("h2")] = outcome
        for name in ("h3", "h4"):
            outcomes[marker(name)], message = await append(client, rig.pad, marker(name))
            assert outcomes[marker(name)] == "written", message
    text = rig.rustpad.text(rig.pad)
    check_pad(text, outcomes)
    assert text == START + "".join(marker(f"h{i}") for i in range(5))


async def test_rustpad_paused_mid_write(rig):
    rig.rustpad.seed(rig.pad, START)
    pid = rig.rustpad.process.pid
    outcomes = {}

    async def pause(kind: str, at_least: int) -> None:
        await rig.proxy.wait_for(kind, at_least)
        os.kill(pid, signal.SIGSTOP)
        try:
            await anyio.sleep(3)
        finally:
            os.kill(pid, signal.SIGCONT)

    # Once the edit went out, then once a write's socket opened (a server of its own each time,
    # so that the second write opens one rather than go on from the first one's).
    for i, kind in enumerate(["edits", "sockets"]):
        async with rig.client() as client, anyio.create_task_group() as group:
            group.start_soon(pause, kind, rig.proxy.counts[kind] + 1)
            outcome, message = await append(client, rig.pad, marker(f"d{i}"))
        assert outcome in ("written", "not written"), message
        outcomes[marker(f"d{i}")] = outcome
    check_pad(rig.rustpad.text(rig.pad), outcomes)


async def append_while_its_ack_is_held(rig, meanwhile) -> str:
    """Appends "E" with its acknowledgement held by the proxy, runs `meanwhile()` while it is
    held, then cuts it; returns what the failed call said."""
    rig.rustpad.seed(rig.pad, START)
    rig.proxy.cut_after_edit(next=1, hold=True)
    results = []
    async with rig.client() as client:
        async with anyio.create_task_group() as group:

            async def write() -> None:
                arguments = {"id": rig.pad, "text": "E"}
                results.append(await call(client, "append_to_document", arguments))

            group.start_soon(write)
            await rig.proxy.wait_for("held", 1)
            await meanwhile()
            rig.proxy.cut()
    return failed(results[0])


async def test_rustpad_restarted_between_edit_and_ack_is_an_unknown_outcome(rig):
    async def restart() -> None:
        # A new start time: /api/stats counts in seconds.
        await anyio.sleep(1.1)
        await anyio.to_thread.run_sync(rig.restart)

    message = await append_while_its_ack_is_held(rig, restart)
    assert message.startswith(UNKNOWN), message
    assert "restarted" in message or "no longer holds" in message, message
    # Nor did the server make the edit again on the new Rustpad.
    assert rig.rustpad.text(rig.pad) == ""


async def test_rustpad_unreachable_after_a_cut_ack_is_an_unknown_outcome(rig):
    """Every socket opened after the cut is reset: the write cannot read the history again
    within its 20 s, so it says so, and leaves the edit alone."""

    async def refuse_sockets() -> None:
        rig.proxy.reset_before_snapshot(chance=1.0)

    message = await append_while_its_ack_is_held(rig, refuse_sockets)
    assert message.startswith(UNKNOWN), message
    assert "could not reach Rustpad again" in message, message
    # Rustpad had the edit before the cut: it landed, once, and was not sent again.
    assert rig.rustpad.text(rig.pad) == START + "E"


async def test_the_server_killed_while_its_edit_is_held(rig, tmp_path: Path):
    rig.rustpad.seed(rig.pad, START)
    first, second = marker("f0"), marker("f1")
    pidfile = tmp_path / "pid"
    wrapped = ["/bin/sh", "-c", 'echo $$ > "$0"; exec "$1"', str(pidfile), str(MCP_BIN)]
    report: dict = {}

    async def person() -> None:
        report.update(
            await rig.rustpad.type(
                rig.pad, seed=11, count=60, delay_us=50_000, avoid=[first, second]
            )
        )

    async def doomed(client) -> None:
        with suppress(Exception):  # its server dies under it: that is the point
            await append(client, rig.pad, first)

    async with anyio.create_task_group() as group:
        group.start_soon(person)
        rig.proxy.cut_after_edit(next=1, hold=True)
        killed = False
        try:
            async with rig.client(command=wrapped) as client:
                async with anyio.create_task_group() as calls:
                    calls.start_soon(doomed, client)
                    await rig.proxy.wait_for("held", 1)
                    os.kill(int(pidfile.read_text()), signal.SIGKILL)
                    killed = True
                    await anyio.sleep(0.5)
                    calls.cancel_scope.cancel()
        except Exception:
            # Only the client's own complaint that its server is gone is expected.
            if not killed:
                raise
        rig.proxy.cut()
        async with rig.client() as client:
            outcome, message = await append(client, rig.pad, second)
            assert outcome == "written", message
    text = rig.rustpad.text(rig.pad)
    assert text.count(first) <= 1 and text.count(second) == 1, text
    check_typing(text, report)


async def test_a_slow_link_that_drops_connections(rig):
    rig.rustpad.seed(rig.pad, START)
    rig.proxy.slow_and_lossy(delay=0.2, chance=0.05)
    outcomes = {}
    async with rig.client() as client:
        for i in range(20):
            outcome, message = await append(client, rig.pad, marker(f"g{i}"))
            outcomes[marker(f"g{i}")] = outcome
    rig.proxy.calm()
    assert rig.proxy.counts["lossy"] >= 1, rig.proxy.counts
    assert "written" in outcomes.values(), outcomes
    check_pad(rig.rustpad.text(rig.pad), outcomes)


def user_info(line: dict) -> tuple[int, dict | None] | None:
    """(id, info or None once it left) of a `UserInfo` a scripted person was sent, else None."""
    message = line.get("server", {})
    if isinstance(message, dict) and "UserInfo" in message:
        return message["UserInfo"]["id"], message["UserInfo"]["info"]
    return None


def joined_as(line: dict) -> str | None:
    """The name in a `UserInfo` a scripted person was sent that announces one, else None."""
    info = user_info(line)
    return info[1]["name"] if info and info[1] else None


async def test_a_writer_whose_edit_landed_is_not_reported_while_rustpad_still_holds_it(rig):
    rig.rustpad.seed(rig.pad, START)
    written = marker("h0")
    rig.proxy.cut_after_edit(next=1, hold=True)
    results = []
    # The reader talks to the test Rustpad itself, not through the proxy.
    direct = mcp_client("legacy", minimal_env(RUSTPAD_URL=rig.rustpad.url))
    with rig.rustpad.person(rig.pad, name="Ana") as ana:
        await ana.point([1])
        async with rig.client() as writer, direct as reader:
            async with anyio.create_task_group() as group:

                async def write() -> None:
                    # A named write (appends go nameless on a kept connection): it adds only.
                    arguments = {"id": rig.pad, "search": START, "replace": START + written}
                    result = await call(writer, "replace_in_document", arguments)
                    results.append(("written" if not result.is_error else failed(result), text_of(result)))

                group.start_soon(write)
                await rig.proxy.wait_for("held", 1)
                # The edit is in the pad; Rustpad's answer to it is held.
                with anyio.fail_after(60):
                    while written not in await anyio.to_thread.run_sync(rig.rustpad.text, rig.pad):
                        await anyio.sleep(0.02)
                # Ana was told the writer joined, and where its caret is.
                joined = await ana.expect(lambda line: joined_as(line) == "rustpad-mcp")
                writer_id = user_info(joined)[0]
                await ana.expect(lambda line: (cursor_of(line) or (None,))[0] == writer_id)
                seen = len(ana.seen)
                info = ok(await call(reader, "get_document_info", {"id": rig.pad}))
                # Ana's caret, sent after the look, comes back to her after anything Rustpad
                # said before it: the writer had not left by then.
                await ana.point([2])
                since = [user_info(line) for line in ana.seen[seen:]]
                assert (writer_id, None) not in since, ana.seen
                assert info["active_users"] == ["Ana"], info
                assert [person["name"] for person in info.get("people", [])] == ["Ana"], info
                rig.proxy.release()
        assert [outcome for outcome, _ in results] == ["written"], results
        # Once its answer came, the writer left, as Ana was told.
        await ana.expect(lambda line: user_info(line) == (writer_id, None))
    assert rig.rustpad.text(rig.pad).count(written) == 1


@contextmanager
def removals_through(rig: Rig, kind: str) -> Iterator:
    """Where test_removals_at_once sends its removals at once, here through the proxy: one stdio
    process taking them all, or one `--http` server (2026-07-28)."""
    if kind == "one-stdio":
        place = OneStdioProcess(rig.rustpad)
        place.env["RUSTPAD_URL"] = rig.proxy.url
        yield place
        return
    with http_server(rig.rustpad, RUSTPAD_URL=rig.proxy.url, RUSTPAD_SEAL_KEY=SEAL_KEY) as server:
        yield HttpPlaces(rig.rustpad, [server.url], "modern")


@pytest.mark.parametrize("kind", ["one-stdio", "one-http-modern"])
async def test_removals_at_once_through_cut_connections_never_take_more_than_half(rig, kind):
    # The first edit's acknowledgement is cut, so every run has one; then one edit in ten's.
    rig.proxy.cut_after_edit(next=1, chance=0.1)
    found = 0
    with removals_through(rig, kind) as place:
        for n in (4, 8):
            for run in range(3):
                name = f"{rig.pad}-{n}-{run}"
                original = blocks(n)
                rig.rustpad.seed(name, "".join(original))
                results = remove_each(place, name, original)
                text = rig.rustpad.text(name)
                for block, result in zip(original, results):
                    if went_ahead(result):
                        assert block not in text, (block, result)
                        found += FOUND_IN_HISTORY in result_text(result)
                        continue
                    assert block in text, (block, result)
                    if not asked(result):
                        # Rustpad kept running, so a failed removal knows it wrote nothing.
                        assert NOTHING_WRITTEN in result_text(result), result
                settled = [result for result in results if went_ahead(result) or asked(result)]
                done = check_at_most_half_gone(rig.rustpad, name, original, settled)
                assert done >= 1, results
    # Removals whose acknowledgement was lost went ahead (and counted for those after them).
    assert rig.proxy.counts["after_edit"] >= 1 and found >= 1, (found, rig.proxy.counts)
