"""The guard as a whole, wherever the calls land: every call a fresh process of our host (as
clients that start a server per call do), two `--http` replicas sharing a seal key, and the
component for WebAssembly hosts under `wasmtime serve` and wasmCloud's `wash dev`, where nothing
outlives a request.

The record is the pad's own history: an approval's first use breaks what it is bound to there,
so a replay is refused at any process, replica or host, and every removal a call made stays in
the history for the next call to count. On the raw wire, in both eras: 2026-07-28 approvals
(`requestState` with `inputResponses`) and the 2025-11-25 two-call token.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import ExitStack, asynccontextmanager, contextmanager
from typing import Any

import pytest

from conftest import RustpadServer, call, edits, legacy_session, minimal_env, ok, request, run_server
from test_guard import Person, guarded_client
from http_harness import (
    LEGACY,
    SEAL_KEY,
    LegacySession,
    exchange,
    http_client,
    http_server,
    modern_call,
)
from wasm_hosts import BEARER, place, wasm_host

pytestmark = pytest.mark.anyio

TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')
ACCEPT = {"action": "accept", "content": {"confirm": True}}
DECLINE = {"action": "decline"}


class Deployment:
    """Where calls go: `call(at, …)` sends one tools/call to place `at` (a process, a replica)
    and returns its result object; `rustpad` is the Rustpad they reach."""

    era: str
    rustpad: RustpadServer

    def call(self, at: int, tool: str, arguments: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
        raise NotImplementedError


class FreshProcesses(Deployment):
    """Our host on stdio, a new process for every call, all with one seal key (token era)."""

    era = "token"

    def __init__(self, rustpad: RustpadServer):
        self.rustpad = rustpad
        self.env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false", RUSTPAD_SEAL_KEY=SEAL_KEY)

    def call(self, at, tool, arguments, **extra):
        message = request(1, "tools/call", {"name": tool, "arguments": dict(arguments)})
        run = run_server(self.env, legacy_session(message))
        assert run.returncode == 0, run.stderr
        return run.response(1)["result"]


class HttpPlaces(Deployment):
    """Several MCP endpoints, each call to the one `at` names, in the 2026-07-28 era or with
    2025-11-25 tokens (a session of its own at each endpoint)."""

    def __init__(
        self, rustpad: RustpadServer, urls: list[str], era: str, headers: Mapping[str, str] | None = None
    ):
        self.rustpad = rustpad
        self.urls, self.era, self.headers = urls, era, dict(headers or {})
        self.sessions: dict[int, LegacySession] = {}

    def call(self, at, tool, arguments, **extra):
        url = self.urls[at % len(self.urls)]
        if self.era == "modern":
            return modern_call(url, at, tool, arguments, headers=self.headers, **extra)["result"]
        message = {
            "jsonrpc": "2.0",
            "id": at,
            "method": "tools/call",
            "params": {"name": tool, "arguments": dict(arguments)},
        }
        headers = {**self.headers, "MCP-Protocol-Version": LEGACY, "Mcp-Method": "tools/call", "Mcp-Name": tool}
        if not self.headers:
            session = self.sessions.setdefault(at % len(self.urls), LegacySession(url, elicitation=False))
            headers["Mcp-Session-Id"] = session.id
        answer = exchange(url, message, headers=headers)
        assert answer.status == 200, answer.body
        return answer.messages()[-1]["result"]


@contextmanager
def deployment(kind: str, rustpad: RustpadServer) -> Iterator[Deployment]:
    with ExitStack() as stack:
        if kind == "fresh-processes":
            yield FreshProcesses(rustpad)
            return
        if kind.startswith("replicas"):
            era = kind.removeprefix("replicas-")
            variables = {"RUSTPAD_SEAL_KEY": SEAL_KEY}
            if era == "token":
                variables["ELICITATION"] = "false"
            urls = [stack.enter_context(http_server(rustpad, **variables)).url for _ in range(2)]
            yield HttpPlaces(rustpad, urls, era)
            return
        name, era = kind.split("-")
        at = stack.enter_context(place(name, rustpad))
        host = stack.enter_context(at.start())
        yield HttpPlaces(at.rustpad, [host.url], era, headers=BEARER)


DEPLOYMENTS = [
    "fresh-processes",
    "replicas-modern",
    "replicas-token",
    "wasmtime-modern",
    "wasmtime-token",
    "wash-modern",
    "wash-token",
]


@pytest.fixture(params=DEPLOYMENTS)
def spread(request: pytest.FixtureRequest, rustpad: RustpadServer) -> Iterator[Deployment]:
    with deployment(request.param, rustpad) as place:
        yield place


def result_text(result: dict[str, Any]) -> str:
    [block] = result["content"]
    return block["text"]


def asks(result: dict[str, Any]) -> dict[str, Any]:
    """The question a call put: the approval the next call carries once a person says yes."""
    if result.get("resultType") == "input_required":
        (key,) = result["inputRequests"]
        return {"extra": {"requestState": result["requestState"], "inputResponses": {key: ACCEPT}}}
    assert result.get("isError") is True, result
    [token] = TOKEN.findall(result_text(result))
    return {"arguments": {"confirm_token": token}, "offer": result_text(result)}


def question_text(result: dict[str, Any]) -> str:
    if result.get("resultType") == "input_required":
        (question,) = result["inputRequests"].values()
        return question["params"]["message"]
    return result_text(result)


def with_approval(place: Deployment, at: int, tool: str, arguments: dict, approval: dict) -> dict:
    return place.call(at, tool, {**arguments, **approval.get("arguments", {})}, **approval.get("extra", {}))


def complete(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("resultType", "complete") == "complete" and result.get("isError") is not True, result
    return result


def refused(result: dict[str, Any]) -> str:
    assert result.get("resultType", "complete") == "complete" and result.get("isError") is True, result
    return result_text(result)


async def test_an_approval_works_once_wherever_it_is_replayed(spread, pad):
    rustpad = spread.rustpad
    rustpad.seed(pad, "the person's notes\n")
    arguments = {"id": pad, "text": "replaced"}
    approval = asks(spread.call(0, "set_document", arguments))
    complete(with_approval(spread, 1, "set_document", arguments, approval))
    assert rustpad.text(pad) == "replaced"
    # Someone puts the old text back; the same approval, offered again at every place.
    rustpad.set_by_person(pad, "the person's notes\n")
    for at in (0, 1):
        message = refused(with_approval(spread, at, "set_document", arguments, approval))
        assert "works once" in message or "already used" in message, message
        assert rustpad.text(pad) == "the person's notes\n"
    assert len(edits(rustpad, pad)) == 2  # the approved write and the person's


async def test_removals_split_over_calls_and_places_add_up(spread, pad):
    rustpad = spread.rustpad
    first, second = "a" * 40, "b" * 24
    original = first + second + "c" * 36
    rustpad.seed(pad, original)
    complete(spread.call(0, "replace_in_document", {"id": pad, "search": first, "replace": ""}))
    assert rustpad.text(pad) == second + "c" * 36
    arguments = {"id": pad, "search": second, "replace": ""}
    asked = spread.call(1, "replace_in_document", arguments)
    question = question_text(asked)
    assert "This removes 24 of the pad's 60 characters." in question, question
    assert "64 characters would be gone, of the 100" in question, question
    if asked.get("resultType") == "input_required":
        (key,) = asked["inputRequests"]
        declined = {"requestState": asked["requestState"], "inputResponses": {key: DECLINE}}
        assert "the person declined" in refused(spread.call(0, "replace_in_document", arguments, **declined))
    assert rustpad.text(pad) == second + "c" * 36


# -- approvals survive typing that leaves their binding as it was ---------------------------------


@asynccontextmanager
async def sdk_client(kind: str, rustpad: RustpadServer, person) -> AsyncIterator[Any]:
    """The SDK with `person` answering dialogs: our host on stdio in either era, or the
    component under wasmtime serve (2026-07-28)."""
    if kind == "wasmtime":
        with wasm_host(rustpad) as host:
            async with http_client(host.url, "auto", headers=BEARER, elicitation_callback=person) as client:
                yield client
        return
    async with guarded_client(rustpad, kind.removeprefix("stdio-"), person) as client:
        yield client


@pytest.mark.parametrize("kind", ["stdio-legacy", "stdio-auto", "wasmtime"])
async def test_a_multi_match_replace_approved_while_a_person_types_is_made_once(kind, rustpad, pad):
    rustpad.seed(pad, "cat here\nand a cat there\n")

    async def types_elsewhere(n: int, params) -> None:
        if n == 1:
            await rustpad.type(pad, seed=5, count=12, avoid=["cat"])

    person = Person("accept", before=types_elsewhere)
    async with sdk_client(kind, rustpad, person) as client:
        result = await call(
            client, "replace_in_document", {"id": pad, "search": "cat", "replace": "dog", "replace_all": True}
        )
    assert len(person.asked) == 1, person.messages
    assert ok(result)["replacements"] == 2
    text = rustpad.text(pad)
    assert "cat" not in text and text.count("dog") == 2, text
    ours = [e for e in edits(rustpad, pad) if e["operation"] != [] and "dog" in json.dumps(e["operation"])]
    assert len(ours) == 1, edits(rustpad, pad)


@pytest.mark.parametrize("kind", ["stdio-legacy", "stdio-auto", "wasmtime"])
async def test_an_edit_with_a_base_approved_while_a_person_types_is_made_once(kind, rustpad, pad):
    person_text = "a person's long paragraph that the model rewrites entirely\n"
    rustpad.seed(pad, "Title\n" + person_text)

    async def types_elsewhere(n: int, params) -> None:
        if n == 1:
            await rustpad.type(pad, seed=9, count=10, avoid=[person_text])

    person = Person("accept", before=types_elsewhere)
    async with sdk_client(kind, rustpad, person) as client:
        base = ok(await call(client, "get_document", {"id": pad, "start_line": 1}))["base"]
        edit = {"old_text": person_text, "new_text": "short\n"}
        result = await call(client, "edit_document", {"id": pad, "base": base, "edits": [edit]})
    assert len(person.asked) == 1, person.messages
    ok(result)
    text = rustpad.text(pad)
    # (What the person typed at the edge of the rewritten text may land right after "short".)
    assert person_text.strip() not in text and text.count("short") == 1, text
    assert sum('"short"' in json.dumps(e["operation"]) for e in edits(rustpad, pad)) == 1
