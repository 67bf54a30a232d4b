"""The fault suite: appends through faults.FaultProxy, which breaks the connections between
rustpad-mcp and Rustpad at the moments a write is most exposed to (before the snapshot, between
an edit and its acknowledgement, in the middle of a long history, on a slow link that drops
connections), and with Rustpad paused, restarted, or the server itself killed mid-write.

Each test starts its own test Rustpad and proxy, and judges every call by the pad's text read
straight from that Rustpad, never through the proxy: every write that succeeded is there exactly
once, every write that said "nothing was written" is absent, and what a person typed meanwhile
is all there. Every append writes a marker line of its own (`[b17]\\n`, made of characters the
typist never types), so presence and doubling can be counted.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import anyio
import pytest

from conftest import (
    MCP_BIN,
    TEST_SERVER_BIN,
    RustpadServer,
    call,
    failed,
    mcp_client,
    minimal_env,
    ok,
    pad_id_for,
    text_of,
)
from faults import KINDS, FaultProxy

pytestmark = pytest.mark.anyio

NOTHING_WRITTEN = "nothing was written"
UNKNOWN = "Outcome unknown: "
START = "start\n"


class Rig:
    """A test Rustpad of the test's own, a FaultProxy in front of it, and clients through it."""

    def __init__(self, label: str):
        self.rustpad = RustpadServer(str(TEST_SERVER_BIN))
        self.proxy = FaultProxy(self.rustpad.port, seed=20261205)
        self.pad = pad_id_for(label)

    def client(self, command: list[str] | None = None):
        return mcp_client("legacy", minimal_env(RUSTPAD_URL=self.proxy.url), command=command)

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


async def appends_while_typing(
    rig: Rig, prefix: str, count: int
) -> dict[str, tuple[str, str, int]]:
    """`count` appends of their own markers in a row while a person types into the pad; checks
    the pad and the person's typing, and returns each marker's outcome, the call's text, and how
    many faults the proxy injected during the call."""
    marks = [marker(f"{prefix}{i}") for i in range(count)]
    outcomes: dict[str, tuple[str, str, int]] = {}
    report: dict = {}

    async def person() -> None:
        report.update(
            await rig.rustpad.type(rig.pad, seed=7, count=60, delay_us=50_000, avoid=marks)
        )

    async with rig.client() as client, anyio.create_task_group() as group:
        group.start_soon(person)
        for mark in marks:
            before = sum(rig.proxy.counts[kind] for kind in KINDS)
            outcome, message = await append(client, rig.pad, mark)
            outcomes[mark] = (outcome, message, sum(rig.proxy.counts[k] for k in KINDS) - before)
    text = rig.rustpad.text(rig.pad)
    check_pad(text, {mark: outcome for mark, (outcome, _, _) in outcomes.items()})
    check_typing(text, report)
    return outcomes


async def test_resets_before_the_snapshot_are_retried_and_the_write_lands_once(rig):
    rig.rustpad.seed(rig.pad, START)
    outcomes = {}
    async with rig.client() as client:
        for i in range(3):
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


async def test_cuts_between_edit_and_ack_leave_every_call_telling_the_truth(rig):
    rig.rustpad.seed(rig.pad, START)
    rig.proxy.cut_after_edit(chance=0.3)
    outcomes = await appends_while_typing(rig, "b", 40)
    assert rig.proxy.counts["after_edit"] >= 5, rig.proxy.counts
    for mark, (outcome, message, faults) in outcomes.items():
        # Rustpad kept running, so its history always tells.
        assert outcome != "unknown", (mark, message)
        # A call no fault touched just succeeds.
        assert faults or outcome == "written", (mark, message)


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

    async with rig.client() as client:
        # Once the edit went out, then once a write's socket opened.
        for i, kind in enumerate(["edits", "sockets"]):
            async with anyio.create_task_group() as group:
                group.start_soon(pause, kind, rig.proxy.counts[kind] + 1)
                outcome, message = await append(client, rig.pad, marker(f"d{i}"))
            assert outcome in ("written", "not written"), message
            outcomes[marker(f"d{i}")] = outcome
    check_pad(rig.rustpad.text(rig.pad), outcomes)


async def test_rustpad_restarted_between_edit_and_ack_is_an_unknown_outcome(rig):
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
            # A new start time: /api/stats counts in seconds.
            await anyio.sleep(1.1)
            await anyio.to_thread.run_sync(rig.restart)
            rig.proxy.cut()
    message = failed(results[0])
    assert message.startswith(UNKNOWN), message
    assert "restarted" in message or "no longer holds" in message, message
    # Nor did the server make the edit again on the new Rustpad.
    assert rig.rustpad.text(rig.pad) == ""


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
