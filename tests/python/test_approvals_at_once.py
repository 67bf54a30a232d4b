"""One approval makes its change once, whatever arrives at the same moment.

A guarded write takes its place in the pad's order of writes before it judges or uses an
approval (as removals do), so a second use sent at the same moment finds the first one's change
in the history. Attacked as a hostile client would: one `set_document` approval (the two-call
token, or a person's accepted answer with its `requestState`) sent 2, 4 and 8 times at once; a
multi-match `replace_in_document` approval that removes nothing, sent 4 times at once; and 4
`set_document` calls with the same text for an empty pad at once (the tool says it is
idempotent). Each leaves its text in the pad exactly once, in one stdio process and in fresh
ones, over `--http` (one process and two replicas) and in the component under `wasmtime serve`.
The ACT plugin: test_act.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest

from conftest import RustpadServer, legacy_session, minimal_env, request, run_server
from http_harness import SEAL_KEY, http_server, modern_request
from test_guard_everywhere import Deployment, HttpPlaces, asks, deployment

pytestmark = pytest.mark.anyio

NEW_TEXT = "the new text, which must be in the pad exactly once\n"
OLD_TEXT = "a person's notes, which an approved set_document replaces\n"


def tool_call(request_id: int, tool: str, arguments: Mapping[str, Any], extra: Mapping[str, Any]):
    return request(request_id, "tools/call", {"name": tool, "arguments": dict(arguments), **extra})


class Stdio(Deployment):
    """Our host on stdio in `era`: a fresh process for each call (`fresh`), or one process taking
    every call of a batch at once."""

    def __init__(self, rustpad: RustpadServer, era: str, fresh: bool):
        self.rustpad, self.era, self.fresh = rustpad, era, fresh
        elicitation = "false" if era == "token" else "true"
        self.env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION=elicitation, RUSTPAD_SEAL_KEY=SEAL_KEY)

    def message(self, request_id: int, tool: str, arguments: Mapping[str, Any], extra: Mapping[str, Any]):
        if self.era == "modern":
            return modern_request(request_id, "tools/call", {"name": tool, "arguments": dict(arguments), **extra})
        return tool_call(request_id, tool, arguments, extra)

    def run(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wrapped = messages if self.era == "modern" else legacy_session(*messages)
        run = run_server(self.env, wrapped)
        assert run.returncode == 0, run.stderr
        return [run.response(message["id"])["result"] for message in messages]

    def call(self, at, tool, arguments, **extra):
        return self.run([self.message(1, tool, arguments, extra)])[0]


@contextmanager
def spread_of(kind: str, rustpad: RustpadServer) -> Iterator[Deployment]:
    name, _, era = kind.rpartition("-")
    if name in ("fresh-stdio", "one-stdio"):
        yield Stdio(rustpad, era, fresh=name == "fresh-stdio")
        return
    if name == "one-http":
        variables = {"RUSTPAD_SEAL_KEY": SEAL_KEY}
        if era == "token":
            variables["ELICITATION"] = "false"
        with http_server(rustpad, **variables) as server:
            yield HttpPlaces(rustpad, [server.url], era)
        return
    with ExitStack() as stack:
        yield stack.enter_context(deployment(kind, rustpad))


def at_once(place: Deployment, tool: str, arguments: Mapping[str, Any], extra: Mapping[str, Any], n: int):
    """Sends the same call `n` times at the same moment (to one process, or each to a place of its
    own where there are several) and returns the results."""
    if isinstance(place, Stdio) and not place.fresh:
        return place.run([place.message(i + 1, tool, arguments, extra) for i in range(n)])
    start = threading.Barrier(n)

    def one(index: int) -> dict[str, Any]:
        start.wait()
        return place.call(index, tool, arguments, **extra)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def text_of(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"])


def data(result: dict[str, Any]) -> dict[str, Any]:
    """A successful result's data: its structured content, or where a host passes none on (ACT),
    its JSON part."""
    if "structuredContent" in result:
        return result["structuredContent"]
    *_, last = result["content"]
    return json.loads(last["text"])


def changed(result: dict[str, Any]) -> bool:
    """Whether the call says it changed the pad."""
    if result.get("resultType", "complete") != "complete" or result.get("isError"):
        return False
    return data(result).get("changed", True) is True


def made_nothing(result: dict[str, Any]) -> bool:
    """A call that changed nothing, and said so: the pad already held the text, or a refusal that
    says nothing was changed, or a new question (the approval no longer matched)."""
    if result.get("resultType") == "input_required":
        return True
    text = text_of(result)
    if result.get("isError"):
        return "nothing was changed" in text.lower() or "not done" in text
    return data(result).get("changed") is False and "nothing was written" in text


def approval_of(place: Deployment, tool: str, arguments: Mapping[str, Any]) -> tuple[dict, dict]:
    """The arguments and extra params the approved call carries, from a first call's question."""
    approval = asks(place.call(0, tool, arguments))
    return {**arguments, **approval.get("arguments", {})}, approval.get("extra", {})


SPREADS = [
    "fresh-stdio-token",
    "fresh-stdio-modern",
    "one-stdio-token",
    "one-stdio-modern",
    "one-http-token",
    "one-http-modern",
    "replicas-token",
    "replicas-modern",
    "wasmtime-token",
    "wasmtime-modern",
]


@pytest.mark.parametrize("kind", SPREADS)
async def test_one_set_document_approval_sent_at_once_replaces_once(kind, rustpad, pad):
    with spread_of(kind, rustpad) as place:
        # A token may be sent by anyone any number of times; an answer is replayed by a client.
        for n in (4, 8) if place.era == "token" else (2, 4):
            name = f"{pad}-{n}"
            place.rustpad.seed(name, OLD_TEXT)
            arguments, extra = approval_of(place, "set_document", {"id": name, "text": NEW_TEXT})
            results = at_once(place, "set_document", arguments, extra, n)
            assert place.rustpad.text(name) == NEW_TEXT, results
            assert sum(changed(result) for result in results) == 1, results
            assert all(changed(result) or made_nothing(result) for result in results), results


@pytest.mark.parametrize("kind", ["one-stdio-token", "one-http-modern", "replicas-token", "wasmtime-modern"])
async def test_one_replace_all_approval_that_removes_nothing_sent_at_once_replaces_once(kind, rustpad, pad):
    # "cat" to "cats" keeps every match and removes nothing: only the count asks.
    rustpad.seed(pad, "cat\nanother cat\n")
    with spread_of(kind, rustpad) as place:
        arguments = {"id": pad, "search": "cat", "replace": "cats", "replace_all": True}
        arguments, extra = approval_of(place, "replace_in_document", arguments)
        results = at_once(place, "replace_in_document", arguments, extra, 4)
        assert rustpad.text(pad) == "cats\nanother cats\n", results
        assert sum(changed(result) for result in results) == 1, results


@pytest.mark.parametrize("kind", SPREADS)
async def test_the_same_text_set_at_once_on_an_empty_pad_is_written_once(kind, rustpad, pad):
    with spread_of(kind, rustpad) as place:
        results = at_once(place, "set_document", {"id": pad, "text": NEW_TEXT}, {}, 4)
        assert rustpad.text(pad) == NEW_TEXT, results
        assert sum(changed(result) for result in results) == 1, results
        assert all(changed(result) or made_nothing(result) for result in results), results
