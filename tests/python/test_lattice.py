"""One deployment served by a wasmCloud lattice of two hosts (tests/python/lattice.py), through
an ordinary load balancer, in 2026-07-28: a question asked at one host is answered at the other,
a replayed approval is refused at the other, removals split over the two hosts add up, writes from
both while a person types lose nothing, and with one host stopped the other goes on answering.

`make test` runs the short part (both hosts up, one guarded call answered across hosts, one
write); `make lattice-test` runs everything (RUSTPAD_MCP_LATTICE=full) and prints the load
figures (docs/performance.md).
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from conftest import ALL_TOOLS, call, ok
from lattice import SERVED_NAME, Lattice, lattice
from http_harness import exchange, http_client, modern_call, modern_headers, modern_request
from wasm_hosts import BEARER

pytestmark = pytest.mark.anyio

FULL = os.environ.get("RUSTPAD_MCP_LATTICE") == "full"
full_only = pytest.mark.skipif(not FULL, reason="the whole lattice suite runs in `make lattice-test`")
ROOT = Path(__file__).resolve().parents[2]
DIRECT = {"Host": SERVED_NAME, **BEARER}
ACCEPT = {"action": "accept", "content": {"confirm": True}}


@pytest.fixture(scope="module")
def net() -> Iterator[Lattice]:
    with lattice() as built:
        yield built


def at(net: Lattice, host: int, request_id: int, tool: str, arguments: dict, **extra) -> dict:
    """One tools/call sent to one host directly, bypassing the balancer."""
    return modern_call(net.hosts[host].url, request_id, tool, arguments, headers=DIRECT, **extra)["result"]


def through(net: Lattice, request_id: int, tool: str, arguments: dict, **extra) -> dict:
    return modern_call(net.url, request_id, tool, arguments, headers=BEARER, **extra)["result"]


def approval(asked: dict, answer: dict = ACCEPT) -> dict:
    assert asked["resultType"] == "input_required", asked
    (key,) = asked["inputRequests"]
    return {"requestState": asked["requestState"], "inputResponses": {key: answer}}


def test_a_question_asked_at_one_host_is_answered_at_the_other(net, pad):
    net.rustpad.seed(pad, "the person's notes\n")
    arguments = {"id": pad, "text": "replaced"}
    asked = at(net, 0, 1, "set_document", arguments)
    done = at(net, 1, 2, "set_document", arguments, **approval(asked))
    assert done.get("isError") is not True, done
    assert net.rustpad.text(pad) == "replaced"


def test_a_write_through_the_balancer(net, pad):
    net.rustpad.seed(pad, "start")
    written = through(net, 1, "append_to_document", {"id": pad, "text": " more"})
    assert written.get("isError") is not True, written
    assert net.rustpad.text(pad) == "start more"


@full_only
async def test_every_tool_through_the_balancer(net, pad):
    notes = "notes a person wrote, long enough that small fixes remove little of them\n"
    net.rustpad.seed(pad, f"one\ntwo\n{notes}")
    async with http_client(net.url, "auto", headers=BEARER) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ALL_TOOLS
        window = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))
        ok(await call(client, "get_document_info", {"id": pad}))
        ok(await call(client, "get_stats", {}))
        ok(await call(client, "get_changes", {"id": pad, "base": window["base"]}))
        ok(await call(client, "create_document", {"id": f"{pad}-new", "text": "fresh"}))
        ok(await call(client, "append_to_document", {"id": pad, "text": "three\n"}))
        ok(await call(client, "replace_in_document", {"id": pad, "search": "two", "replace": "2"}))
        edit = {"old_text": "one", "new_text": "1"}
        ok(await call(client, "edit_document", {"id": pad, "base": window["base"], "edits": [edit]}))
        ok(await call(client, "set_language", {"id": pad, "language": "markdown"}))
    assert net.rustpad.text(pad) == f"1\n2\n{notes}three\n"
    assert net.rustpad.text(f"{pad}-new") == "fresh"


@full_only
def test_a_decline_answered_at_the_other_host_changes_nothing(net, pad):
    net.rustpad.seed(pad, "keep\n")
    arguments = {"id": pad, "text": "gone"}
    asked = at(net, 1, 1, "set_document", arguments)
    declined = at(net, 0, 2, "set_document", arguments, **approval(asked, {"action": "decline"}))
    assert "the person declined" in declined["content"][0]["text"], declined
    assert net.rustpad.text(pad) == "keep\n"


@full_only
def test_an_approval_replayed_at_the_other_host_is_refused(net, pad):
    net.rustpad.seed(pad, "the person's notes\n")
    arguments = {"id": pad, "text": "replaced"}
    given = approval(at(net, 0, 1, "set_document", arguments))
    assert at(net, 0, 2, "set_document", arguments, **given).get("isError") is not True
    net.rustpad.set_by_person(pad, "the person's notes\n")
    replayed = at(net, 1, 3, "set_document", arguments, **given)
    assert replayed["isError"] is True and "works once" in replayed["content"][0]["text"], replayed
    assert net.rustpad.text(pad) == "the person's notes\n"


@full_only
def test_removals_split_over_the_hosts_add_up(net, pad):
    first, second = "a" * 40, "b" * 24
    net.rustpad.seed(pad, first + second + "c" * 36)
    done = at(net, 0, 1, "replace_in_document", {"id": pad, "search": first, "replace": ""})
    assert done.get("isError") is not True, done
    arguments = {"id": pad, "search": second, "replace": ""}
    asked = at(net, 1, 2, "replace_in_document", arguments)
    (question,) = asked["inputRequests"].values()
    assert "64 characters would be gone, of the 100" in question["params"]["message"], question
    declined = at(net, 0, 3, "replace_in_document", arguments, **approval(asked, {"action": "decline"}))
    assert declined["isError"] is True
    assert net.rustpad.text(pad) == second + "c" * 36


@full_only
async def test_writes_from_both_hosts_while_a_person_types_lose_nothing(net, pad):
    net.rustpad.seed(pad, "start\n")
    markers = [f"[from host {n % 2} #{n}]" for n in range(12)]
    report: dict = {}

    async def person() -> None:
        report.update(await net.rustpad.type(pad, seed=17, count=60, delay_us=2000, avoid=markers))

    async def writes() -> None:
        for n, marker in enumerate(markers):
            result = await anyio.to_thread.run_sync(
                lambda: at(net, n % 2, 100 + n, "append_to_document", {"id": pad, "text": marker})
            )
            assert result.get("isError") is not True, result

    async with anyio.create_task_group() as group:
        group.start_soon(person)
        group.start_soon(writes)
    text = net.rustpad.text(pad)
    assert text == report["final_text"]
    for marker in markers:
        assert text.count(marker) == 1, marker
    assert len(text) == len("start\n") + len("".join(report["typed"])) + len("".join(markers))


def requests_per_second(url: str, headers: dict, seconds: float = 5, clients: int = 4) -> float:
    """tools/list from `clients` threads for `seconds`: completed requests a second."""
    done = [0] * clients
    stop = time.monotonic() + seconds

    def client(index: int) -> None:
        while time.monotonic() < stop:
            reply = exchange(url, modern_request(index, "tools/list"), headers={**modern_headers("tools/list"), **headers})
            assert reply.status == 200, reply.body
            done[index] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / seconds


def write_latencies(net: Lattice, pad: str, count: int = 40) -> list[float]:
    latencies = []
    for n in range(count):
        started = time.perf_counter()
        result = through(net, 500 + n, "append_to_document", {"id": pad, "text": "."})
        latencies.append((time.perf_counter() - started) * 1000)
        assert result.get("isError") is not True, result
    return latencies


@full_only
def test_with_one_host_stopped_the_other_answers_and_no_text_is_lost(net, pad, new_pad):
    """Also the load figures: requests a second through the balancer with two hosts and then
    with one, and a write's latency (one machine: overhead and correctness, not scale)."""
    figures = {"with_two_hosts_rps": requests_per_second(net.url, BEARER)}
    figures["write_ms"] = write_latencies(net, new_pad("latency"))
    net.rustpad.seed(pad, "")
    written: list[str] = []
    failed: list[str] = []
    for n in range(30):
        if n == 10:
            net.stop_host(net.hosts[1])
        marker = f"<{n}>"
        message = modern_request(700 + n, "tools/call", {"name": "append_to_document", "arguments": {"id": pad, "text": marker}})
        reply = exchange(net.url, message, headers={**modern_headers("tools/call", "append_to_document"), **BEARER})
        answered = reply.status == 200 and reply.json()["result"].get("isError") is not True
        (written if answered else failed).append(marker)
    text = net.rustpad.text(pad)
    # What was answered as written is there, once; a call caught by the stop may or may not have
    # landed, but never twice.
    assert all(text.count(marker) == 1 for marker in written), (text, written)
    assert all(text.count(marker) <= 1 for marker in failed), (text, failed)
    assert len(failed) <= 1, failed
    assert written[-19:] == [f"<{n}>" for n in range(11, 30)], (written, failed)
    figures["with_one_host_rps"] = requests_per_second(net.url, BEARER)
    latencies = figures.pop("write_ms")
    figures["write_p50_ms"] = statistics.median(latencies)
    figures["write_p90_ms"] = statistics.quantiles(latencies, n=10)[-1]
    out = ROOT / "target/lattice-figures.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print("\nlattice figures:", json.dumps(figures))
