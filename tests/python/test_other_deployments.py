"""Text another deployment of rustpad-mcp wrote is never this server's own.

A mark says a connection is a writer of rustpad-mcp's, not whose: it carries no key. So the
removal rule's exemption for a draft of one's own reaches only what this process's host noted it
wrote (checked against the pad's history), and every other marked writer's text counts as its
author's. Pads written by deployments with 100 random seal keys, and by one with none:
removing all of one through `replace_in_document` asks, every time, in our host and in the
component under `wasmtime serve` (the ACT plugin: test_act.py). A draft of this process's own
goes unasked in our host; where the host keeps nothing, there is no record of one's own, and it
asks as any other deployment's would.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

import pytest

from conftest import RustpadServer, call, edits, legacy_session, marks, mcp_client, minimal_env, ok, request, run_server
from http_harness import SEAL_KEY, http_client
from wasm_hosts import BEARER, wasm_host

pytestmark = pytest.mark.anyio

OTHER_DEPLOYMENTS = 100
# As long as the draft the attack found removed whole.
DRAFT_CHARS = 4_061


def draft(seed: int) -> str:
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(DRAFT_CHARS // 4)
    ]
    text = " ".join(words)[: DRAFT_CHARS - 1] + "\n"
    assert len(text) == DRAFT_CHARS
    return text


def create_elsewhere(rustpad: RustpadServer, pad: str, text: str, seal_key: str | None) -> None:
    """Another deployment (its own process and seal key, or none) creates `pad` with `text`, as a
    person's assistant would."""
    env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false", RUSTPAD_SEAL_KEY=seal_key)
    message = request(1, "tools/call", {"name": "create_document", "arguments": {"id": pad, "text": text}})
    run = run_server(env, legacy_session(message))
    assert run.returncode == 0, run.stderr
    result = run.response(1)["result"]
    assert not result.get("isError"), result


@asynccontextmanager
async def this_deployment(kind: str, rustpad: RustpadServer) -> AsyncIterator[Any]:
    """The SDK's client on this deployment: our host on stdio, or the component under wasmtime
    serve; both with ELICITATION=false, so that a question comes back as a token."""
    if kind == "wasmtime":
        with wasm_host(rustpad, ELICITATION="false") as host:
            async with http_client(host.url, "legacy", headers=BEARER) as client:
                yield client
        return
    env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION="false", RUSTPAD_SEAL_KEY=SEAL_KEY)
    async with mcp_client("legacy", env) as client:
        yield client


async def remove_all(client: Any, pad: str, text: str):
    return await call(client, "replace_in_document", {"id": pad, "search": text, "replace": ""})


def asked(result: Any) -> bool:
    return result.is_error and "confirm_token=" in result.content[0].text


@pytest.mark.parametrize("kind", ["stdio", "wasmtime"])
async def test_another_deployments_draft_is_never_removed_unasked(kind, rustpad, pad):
    keys = [secrets.token_hex(32) for _ in range(OTHER_DEPLOYMENTS)] + [None]
    pads = [(f"{pad}-{index}", draft(index), key) for index, key in enumerate(keys)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda item: create_elsewhere(rustpad, *item), pads))
    async with this_deployment(kind, rustpad) as client:
        for name, text, _ in pads:
            result = await remove_all(client, name, text)
            assert asked(result), (name, result)
            message = result.content[0].text
            assert f"{DRAFT_CHARS} are text another writer of rustpad-mcp's put there" in message, message
            assert rustpad.text(name) == text
    # Each deployment's write was marked (its first entry), and none of the removals was made.
    for name, text, _ in pads[:3]:
        assert marks(rustpad, name)[0]["revision"] == 0 and len(edits(rustpad, name)) == 1


@pytest.mark.parametrize("kind", ["stdio", "wasmtime"])
async def test_a_draft_of_this_processs_own_as_documented(kind, rustpad, pad):
    text = draft(7)
    async with this_deployment(kind, rustpad) as client:
        ok(await call(client, "create_document", {"id": pad, "text": text}))
        result = await remove_all(client, pad, text)
        if kind == "stdio":
            # Our host noted the write: revising one's own draft takes nothing of anyone else's.
            assert ok(result)["replacements"] == 1
            assert rustpad.text(pad) == ""
        else:
            # A host that keeps nothing holds no record of what this server wrote.
            assert asked(result), result
            assert rustpad.text(pad) == text
