"""One call lifecycle on both transports: a request sent without an id is never carried out,
and a call that ends without the answer to its dialog withdraws the dialog
(`notifications/cancelled` for the server's `elicitation/create`)."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from mcp.types import ElicitResult

from conftest import (
    HANG_GUARD_SECONDS,
    RustpadServer,
    legacy_session,
    mcp_client,
    minimal_env,
    request,
    run_server,
)
from http_harness import LegacySession, exchange, http_client, http_server, modern_headers, modern_request

pytestmark = pytest.mark.anyio

TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')


def set_document(pad: str, **extra: Any) -> dict[str, Any]:
    return {"name": "set_document", "arguments": {"id": pad, "text": "written", **extra}}


def idless(params: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tools/call that forgot its id (a notification in JSON-RPC's terms)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "tools/call", "params": dict(params)}
    if meta is not None:
        message["params"]["_meta"] = meta
    return message


# -- requests without an id -------------------------------------------------------------------


def test_an_idless_tool_call_on_stdio_changes_nothing_spends_nothing_and_says_nothing(
    rustpad: RustpadServer, pad: str, new_pad
):
    empty = new_pad("empty")
    rustpad.seed(pad, "kept")
    env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false")
    offer = run_server(env, legacy_session(request(1, "tools/call", set_document(pad))))
    [token] = TOKEN.findall(offer.response(1)["result"]["content"][0]["text"])
    run = run_server(
        env,
        legacy_session(
            # On an empty pad set_document asks nobody: carried out, it would write.
            idless(set_document(empty)),
            idless(set_document(pad, confirm_token=token)),
            request(2, "ping"),
        ),
    )
    assert run.returncode == 0, run.stderr
    assert [message.get("id") for message in run.messages] == [0, 2], run.messages
    assert rustpad.text(empty) == "" and rustpad.text(pad) == "kept"
    # The token was not spent: the call with an id still goes ahead with it.
    done = run_server(env, legacy_session(request(3, "tools/call", set_document(pad, confirm_token=token))))
    assert done.response(3)["result"].get("isError") is not True, done.messages
    assert rustpad.text(pad) == "written"


def test_an_idless_tool_call_over_http_changes_nothing_and_says_nothing(
    rustpad: RustpadServer, pad: str, new_pad
):
    empty, other = new_pad("empty"), new_pad("other")
    with http_server(rustpad) as server:
        modern = modern_request(None, "tools/call", set_document(empty))
        del modern["id"]
        answer = exchange(server.url, modern, headers=modern_headers("tools/call", "set_document"))
        assert answer.status == 202 and answer.body == b""
        session = LegacySession(server.url)
        answer = session.post(idless(set_document(other)))
        assert answer.status == 202 and answer.body == b""
    assert rustpad.text(empty) == "" and rustpad.text(other) == ""


# -- a dialog withdrawn when its call ends ------------------------------------------------------


class PatientPerson:
    """An elicitation callback that never answers, and notes when the server withdraws the
    question (the SDK cancels the callback when `notifications/cancelled` names its request)."""

    def __init__(self) -> None:
        self.asked = anyio.Event()
        self.withdrawn = anyio.Event()

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.withdrawn.set()
            raise
        raise AssertionError("unreachable")


async def cancel_once_asked(client, person: PatientPerson, pad: str) -> None:
    """Calls set_document, and cancels the call once the person sees the dialog."""
    async with anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def call() -> None:
            with scope:
                await client.call_tool("set_document", {"id": pad, "text": "written"})

        group.start_soon(call)
        with anyio.fail_after(HANG_GUARD_SECONDS):
            await person.asked.wait()
        scope.cancel()
    with anyio.fail_after(HANG_GUARD_SECONDS):
        await person.withdrawn.wait()


async def test_cancelling_a_call_withdraws_its_dialog_on_stdio(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "kept")
    person = PatientPerson()
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    async with mcp_client("legacy", env, elicitation_callback=person) as client:
        await cancel_once_asked(client, person, pad)
    assert rustpad.text(pad) == "kept"


async def test_cancelling_a_call_withdraws_its_dialog_over_http(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "kept")
    person = PatientPerson()
    with http_server(rustpad) as server:
        async with http_client(server.url, "legacy", elicitation_callback=person) as client:
            await cancel_once_asked(client, person, pad)
    assert rustpad.text(pad) == "kept"
