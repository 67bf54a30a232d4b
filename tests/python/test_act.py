"""The ACT plugin (target/wasm/rustpad-mcp-act.wasm) under act-cli 0.14.6 (`act run --mcp`, from
its PyPI wheel: tests/python/act.txt), driven by the official Python SDK over stdio and Streamable
HTTP (`--http`), with the documented command: settings as session args, grants for exactly the
test Rustpad's origin.

Tools as every build lists them; every read; a write while a person types; an edit against a
base; the guard's two-call token (nobody can be asked there), a removal split over calls, removals
sent at once to one act process and to two, one approval sent at once used once, another
deployment's draft never this server's own; a pad id that would lead elsewhere; settings checked
as everywhere, and none a model can change per call; act itself refusing a socket and an HTTP
request outside its grant though the component would make them; and what act-cli does with two
calls at once.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import CallToolResult

from catalogue import ALL_TOOLS, BY_NAME, SHIPPED
from conftest import RustpadServer, append_while_the_pad_is_replaced, append_while_a_person_types, call, edits, mcp_client, minimal_env, stop_process
from http_harness import SEAL_KEY, LegacySession, http_client
from test_approvals_at_once import NEW_TEXT, OLD_TEXT, changed
from test_other_deployments import create_elsewhere, draft
from test_removals_at_once import blocks, check_at_most_half_gone
from wasm_hosts import free_port, needs

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
ACT = ROOT / "target/act-cli/bin/act"
PLUGIN = ROOT / "target/wasm/rustpad-mcp-act.wasm"
TOKEN = re.compile(r'confirm_token="([0-9a-f]{64})"')
TRANSPORTS = ["stdio", "http"]


def prerequisites() -> None:
    needs(ACT.exists(), f"{ACT} is missing: run `make test-python` (it installs tests/python/act.txt)")
    needs(PLUGIN.exists(), f"{PLUGIN} is missing: run `make build`")


def act_command(
    rustpad: RustpadServer,
    *,
    settings: Mapping[str, str] | None = None,
    grants: list[str] | None = None,
    http_port: int | None = None,
) -> list[str]:
    """`act run --mcp` as docs/deployment.md gives it: the settings as session args, and grants
    for exactly Rustpad's origin (HTTP) and its host and port (the socket)."""
    prerequisites()
    host_port = rustpad.url.removeprefix("http://")
    args = {"RUSTPAD_URL": rustpad.url, "RUSTPAD_SEAL_KEY": SEAL_KEY} if settings is None else dict(settings)
    if grants is None:
        grants = [f"http={rustpad.url}", f"sockets={host_port}/tcp"]
    command = [str(ACT), "run", "--mcp", str(PLUGIN), "--session-args", json.dumps(args), "--no-audit"]
    for grant in grants:
        command += ["--allow", grant]
    if http_port is not None:
        command += ["--http", "--listen", f"127.0.0.1:{http_port}"]
    return command


@contextmanager
def act_http(rustpad: RustpadServer, **options: Any) -> Iterator[str]:
    """`act run --mcp --http` on a free port: its MCP endpoint's URL while it runs."""
    port = free_port()
    process = subprocess.Popen(
        act_command(rustpad, http_port=port, **options),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read().decode(errors="replace")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "act did not start listening within 60 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(process)


@asynccontextmanager
async def act_client(transport: str, rustpad: RustpadServer, **options: Any) -> AsyncIterator[Any]:
    """The SDK's client on act serving the plugin, over `transport`."""
    if transport == "stdio":
        async with mcp_client("legacy", minimal_env(), command=act_command(rustpad, **options)) as client:
            yield client
        return
    with act_http(rustpad, **options) as url:
        async with http_client(url, "legacy") as client:
            yield client


def data(result: CallToolResult) -> dict[str, Any]:
    """A successful result's data: the JSON part act passes on as a second text block, or the
    JSON the text block ends with (after the untrusted-content notice where there is one)."""
    texts = [block.text for block in result.content]
    assert not result.is_error, texts
    assert result.structured_content is None  # act-cli 0.14.6 sets it only for a lone JSON part
    if len(texts) == 2:
        return json.loads(texts[1])
    [text] = texts
    return json.loads(text[text.index("{") :])


def refusal(result: CallToolResult) -> str:
    assert result.is_error, result
    [block] = result.content
    return block.text


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


async def test_tools_are_listed_as_every_build_lists_them(transport, rustpad, open_client):
    async with open_client() as ours:
        expected = {tool.name: tool for tool in (await ours.list_tools()).tools}
    shipped = json.loads((SHIPPED / "input-schemas.json").read_text(encoding="utf-8"))
    async with act_client(transport, rustpad) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ALL_TOOLS
    for tool in tools:
        # A plugin keeps no tally of its own removals (nothing outlives a call there): only the
        # pad's history counts, as in every WebAssembly host.
        ours = re.sub(r", and what this server process removed in the last \d+ minutes", "", expected[tool.name].description)
        assert tool.description == ours, tool.name
        assert tool.input_schema == shipped[tool.name], tool.name
        hints = tool.annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == BY_NAME[tool.name].hints[:3]
        # What ACT's tool definition cannot carry.
        assert (tool.title, hints.open_world_hint, tool.output_schema) == (None, None, None)


async def test_every_read_tool(transport, rustpad, pad):
    rustpad.seed(pad, "first line\nsecond line\n", language="markdown")
    async with act_client(transport, rustpad) as client:
        whole = await call(client, "get_document", {"id": pad})
        assert whole.content[0].text.startswith("Untrusted content from Rustpad follows.")
        assert data(whole)["text"] == "first line\nsecond line\n" and data(whole)["untrusted"] is True
        info = data(await call(client, "get_document_info", {"id": pad}))
        assert (info["length_characters"], info["language"]) == (23, "markdown")
        assert data(await call(client, "get_stats", {}))["num_documents"] >= 1
        window = data(await call(client, "get_document", {"id": pad, "start_line": 2}))
        assert (window["text"], window["revision"]) == ("second line\n", 1)
        changes = data(await call(client, "get_changes", {"id": pad, "base": window["base"]}))
        assert (changes["operations"], changes["changed"]) == (0, False)
        rustpad.set_by_person(pad, "first line\nsecond line, changed\n")
        waited = data(await call(client, "wait_for_changes", {"id": pad, "base": window["base"], "timeout_seconds": 5}))
        assert waited["changed"] is True, waited


async def test_a_write_while_a_person_types_loses_nothing(transport, rustpad, pad):
    async with act_client(transport, rustpad) as client:

        async def append(text: str) -> None:
            data(await call(client, "append_to_document", {"id": pad, "text": text}))

        await append_while_a_person_types(rustpad, pad, append)


async def test_an_edit_against_a_base_lands_where_it_was_read_while_a_person_types(transport, rustpad, pad):
    rustpad.seed(pad, "alpha line\nbeta line\n")
    async with act_client(transport, rustpad) as client:
        base = data(await call(client, "get_document", {"id": pad, "start_line": 1}))["base"]
        typed = await rustpad.type(pad, seed=13, count=15, avoid=["alpha", "beta"])
        edits_ = [{"old_text": "alpha", "new_text": "ALPHA"}, {"old_text": "beta", "new_text": "BETA"}]
        result = data(await call(client, "edit_document", {"id": pad, "base": base, "edits": edits_}))
    assert rustpad.text(pad) == typed["final_text"].replace("alpha", "ALPHA").replace("beta", "BETA")
    assert result["base"].startswith(f"r{result['revision']}.")


async def test_a_guarded_write_goes_through_by_token_once(transport, rustpad, pad):
    original = "the person's notes\n"
    rustpad.seed(pad, original)
    arguments = {"id": pad, "text": "replaced"}
    async with act_client(transport, rustpad) as client:
        offer = refusal(await call(client, "set_document", arguments))
        assert "passes no question of ours on to a person, so nobody was asked" in offer, offer
        [token] = TOKEN.findall(offer)
        assert rustpad.text(pad) == original and len(edits(rustpad, pad)) == 0
        data(await call(client, "set_document", {**arguments, "confirm_token": token}))
        assert rustpad.text(pad) == "replaced"
        rustpad.set_by_person(pad, original)
        replayed = refusal(await call(client, "set_document", {**arguments, "confirm_token": token}))
        assert "this confirmation token was already used" in replayed and not TOKEN.findall(replayed), replayed
    assert rustpad.text(pad) == original
    assert len(edits(rustpad, pad)) == 2  # the approved write and the person's


async def test_a_removal_split_over_calls_asks(transport, rustpad, pad):
    first, second = "a" * 40, "b" * 24
    rustpad.seed(pad, first + second + "c" * 36)
    async with act_client(transport, rustpad) as client:
        data(await call(client, "replace_in_document", {"id": pad, "search": first, "replace": ""}))
    # Another act process: nothing but the pad's history joins the two calls.
    async with act_client(transport, rustpad) as client:
        question = refusal(await call(client, "replace_in_document", {"id": pad, "search": second, "replace": ""}))
    assert "This removes 24 of the pad's 60 characters." in question, question
    assert "64 characters would be gone, of the 100" in question, question
    assert rustpad.text(pad) == second + "c" * 36


async def test_a_write_whose_outcome_is_unknown_says_so_in_its_kind_and_metadata(rustpad, pad):
    # The pad is replaced (as a restarted Rustpad loads it) while the edit waits for its
    # acknowledgement: the history it was made on is gone, so its fate cannot be read there.
    rustpad.seed(pad, "abc")
    async with act_client("stdio", rustpad) as client:
        result = await append_while_the_pad_is_replaced(client, rustpad, pad, "maybe")
    assert result.is_error and result.meta["dev.actcore/error-kind"] == "rustpad-mcp:outcome-unknown", result
    assert result.meta["dev.actcore/error-metadata"] == {"rustpad-mcp/outcome": "unknown"}, result


async def test_a_pad_id_that_would_lead_elsewhere_is_refused(transport, rustpad):
    async with act_client(transport, rustpad) as client:
        for bad in ("../api/stats", "a/b", "%2e%2e", ".."):
            assert "invalid pad id" in refusal(await call(client, "get_document", {"id": bad})), bad


# act's Streamable HTTP (rmcp) names its sessions with UUIDs.
ACT_SESSION_ID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def session_call(session: LegacySession, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """One tools/call in a raw 2025-11-25 session with an `act --http` endpoint: its result."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": dict(arguments)}}
    answer = session.post(message)
    assert answer.status == 200, answer.body
    return answer.messages()[-1]["result"]


@pytest.mark.parametrize("processes", [1, 2])
async def test_removals_sent_at_once_never_take_more_than_half(processes, rustpad, pad):
    """All sent at the same moment: one act process takes them one at a time (its actor runs one
    call at a time); two take theirs side by side, and only the pad's history joins them."""
    with ExitStack() as stack:
        urls = [stack.enter_context(act_http(rustpad)) for _ in range(processes)]
        for n in (4, 8):
            name = f"{pad}-{n}"
            original = blocks(n)
            rustpad.seed(name, "".join(original))
            sessions = [LegacySession(urls[i % processes], elicitation=False, id_format=ACT_SESSION_ID) for i in range(n)]
            start = threading.Barrier(n)

            def remove(index: int) -> dict[str, Any]:
                start.wait()
                return session_call(sessions[index], "replace_in_document", {"id": name, "search": original[index], "replace": ""})

            with ThreadPoolExecutor(n) as pool:
                results = list(pool.map(remove, range(n)))
            done = check_at_most_half_gone(rustpad, name, original, results)
            assert done == n // 2, results


def at_once_over_act(urls: list[str], tool: str, arguments: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    """The same call sent `n` times at the same moment, each in a session of its own, spread
    over the act processes at `urls`."""
    sessions = [LegacySession(urls[i % len(urls)], elicitation=False, id_format=ACT_SESSION_ID) for i in range(n)]
    start = threading.Barrier(n)

    def one(index: int) -> dict[str, Any]:
        start.wait()
        return session_call(sessions[index], tool, arguments)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


@pytest.mark.parametrize("processes", [1, 2])
async def test_one_approval_sent_at_once_replaces_once(processes, rustpad, pad):
    with ExitStack() as stack:
        urls = [stack.enter_context(act_http(rustpad)) for _ in range(processes)]
        for n in (4, 8):
            name = f"{pad}-{n}"
            rustpad.seed(name, OLD_TEXT)
            arguments = {"id": name, "text": NEW_TEXT}
            offer = session_call(LegacySession(urls[0], elicitation=False, id_format=ACT_SESSION_ID), "set_document", arguments)
            [token] = TOKEN.findall(offer["content"][0]["text"])
            results = at_once_over_act(urls, "set_document", {**arguments, "confirm_token": token}, n)
            assert rustpad.text(name) == NEW_TEXT, results
            assert sum(changed(result) for result in results) == 1, results
        # Four calls with one text for an empty pad: written once.
        empty = f"{pad}-empty"
        results = at_once_over_act(urls, "set_document", {"id": empty, "text": NEW_TEXT}, 4)
        assert rustpad.text(empty) == NEW_TEXT, results
        assert sum(changed(result) for result in results) == 1, results


async def test_another_deployments_draft_asks_and_so_does_its_own(rustpad, pad):
    """No key marks whose a write is, and a plugin keeps no record of its own writes."""
    for index, key in enumerate(["an-other-deployments-seal-key-0123456789", None]):
        text = draft(index)
        create_elsewhere(rustpad, f"{pad}-{index}", text, key)
        async with act_client("stdio", rustpad) as client:
            question = refusal(await call(client, "replace_in_document", {"id": f"{pad}-{index}", "search": text, "replace": ""}))
            assert f"{len(text)} are text another writer of rustpad-mcp's put there" in question, question
    own = draft(9)
    async with act_client("stdio", rustpad) as client:
        data(await call(client, "create_document", {"id": pad, "text": own}))
        question = refusal(await call(client, "replace_in_document", {"id": pad, "search": own, "replace": ""}))
    assert TOKEN.findall(question), question
    assert rustpad.text(pad) == own


def test_act_info_lists_every_tool_without_settings():
    """`act info --tools`, ACT's way to see what a component offers, opens no session: the plugin
    lists every tool as the server does unconfigured; a call without settings says how to give
    them."""
    prerequisites()
    done = subprocess.run(
        [str(ACT), "info", "--tools", "--format", "json", str(PLUGIN)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    info = json.loads(done.stdout)
    tools = {tool["name"]: tool for tool in info["tools"]}
    assert list(tools) == ALL_TOOLS, list(tools)
    shipped = json.loads((SHIPPED / "input-schemas.json").read_text(encoding="utf-8"))
    for name, tool in tools.items():
        assert (tool["read_only"], tool["destructive"], tool["idempotent"]) == BY_NAME[name].hints[:3], tool
        assert tool["parameters_schema"] == shipped[name], name
    called = subprocess.run(
        [str(ACT), "call", str(PLUGIN), "get_stats", "--args", "{}"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
    )
    said = (called.stdout + called.stderr).decode(errors="replace")
    assert called.returncode != 0 and "no settings: start the host with the session args" in said, said


@pytest.mark.parametrize(
    "settings, named",
    [
        ({"RUSTPAD_URLL": "http://127.0.0.1:1", "RUSTPAD_SEAL_KEY": SEAL_KEY}, "RUSTPAD_URLL"),
        ({"RUSTPAD_URL": "http://127.0.0.1:1", "RUSTPAD_SEAL_KEY": SEAL_KEY, "RUSTPAD_READ_ONLY": "maybe"}, "RUSTPAD_READ_ONLY"),
        ({"RUSTPAD_URL": "http://127.0.0.1:1", "RUSTPAD_SEAL_KEY": "short"}, "RUSTPAD_SEAL_KEY"),
        ({"RUSTPAD_URL": "http://127.0.0.1:1"}, "RUSTPAD_SEAL_KEY"),
        ({"RUSTPAD_URL": "http://127.0.0.1:1", "RUSTPAD_SEAL_KEY": SEAL_KEY, "ELICITATION": "no"}, "ELICITATION"),
    ],
)
def test_a_setting_that_could_be_a_typo_stops_the_start_naming_it(rustpad, settings, named):
    command = act_command(rustpad, settings=settings)
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert done.returncode != 0
    assert named in done.stderr.decode(errors="replace"), done.stderr


async def test_no_call_can_change_a_setting(rustpad, pad):
    rustpad.seed(pad, "kept\n")
    settings = {"RUSTPAD_URL": rustpad.url, "RUSTPAD_SEAL_KEY": SEAL_KEY, "RUSTPAD_READ_ONLY": "true"}
    async with act_client("stdio", rustpad, settings=settings) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "set_document" not in names and "get_document" in names
        # act merges a call's `_meta` argument into the call's metadata: settings are not read there.
        meta = {"RUSTPAD_READ_ONLY": "false", "std:session-id": "rustpad-mcp-00"}
        result = await call(client, "append_to_document", {"id": pad, "text": "x", "_meta": meta})
        assert "Unknown tool: append_to_document" in refusal(result)
        assert result.meta["dev.actcore/error-kind"] == "std:not-found"
        # Started with its session, act offers no session tools: the names reach the plugin as
        # tools it does not have, and the session stays.
        for name, arguments in (("close_session", {"session_id": "anything"}), ("open_session", settings)):
            assert f"Unknown tool: {name}" in refusal(await call(client, name, arguments))
        meta = {"RUSTPAD_URL": "http://127.0.0.1:1", "std:session-id": "forged"}
        assert data(await call(client, "get_document", {"id": pad, "_meta": meta}))["text"] == "kept\n"
    assert rustpad.text(pad) == "kept\n"


def test_a_session_a_client_closes_makes_no_room_for_another(rustpad, pad):
    """Started without --session-args (against the docs), act lets clients open and close
    sessions: the first one opened fixes the settings, and once closed, none opens again. (Raw
    JSON-RPC: act's own open_session and close_session are tools only in that mode.)"""
    rustpad.seed(pad, "kept\n")
    command = act_command(rustpad)
    at = command.index("--session-args")
    del command[at : at + 2]
    read_only = {"RUSTPAD_URL": rustpad.url, "RUSTPAD_SEAL_KEY": SEAL_KEY, "RUSTPAD_READ_ONLY": "true"}
    writable = {"RUSTPAD_URL": rustpad.url, "RUSTPAD_SEAL_KEY": SEAL_KEY}
    calls = [
        ("open_session", read_only),
        ("open_session", writable),
        ("close_session", {"session_id": "SESSION"}),
        ("open_session", writable),
    ]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:

        def send(message: dict[str, Any]) -> None:
            process.stdin.write(json.dumps(message) + "\n")
            process.stdin.flush()

        def answer(request_id: int) -> dict[str, Any]:
            while True:
                message = json.loads(process.stdout.readline())
                if message.get("id") == request_id:
                    return message

        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
        answer(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        results, session = [], None
        for number, (tool, arguments) in enumerate(calls, start=1):
            arguments = {k: (session if v == "SESSION" else v) for k, v in arguments.items()}
            send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            results.append(json.dumps(answer(number)))
            session = session or re.search(r"rustpad-mcp-[0-9a-f]{32}", results[-1]).group(0)
    finally:
        stop_process(process)
    opened, second, closed, again = results
    assert '"isError": true' not in opened and session in opened, opened
    assert "serves one session" in second, second
    assert '"isError": true' not in closed, closed
    assert "takes no other, even after that one is closed" in again, again
    assert rustpad.text(pad) == "kept\n"


async def test_act_refuses_a_socket_and_a_request_outside_its_grant(rustpad, pad):
    """The plugin would reach RUSTPAD_URL's origin; act, granted another port, does not let it,
    and what the user reads names the grant to add."""
    rustpad.seed(pad, "text\n")
    host = rustpad.url.removeprefix("http://").split(":")[0]
    elsewhere = free_port()
    grants = [f"http=http://{host}:{elsewhere}", f"sockets={host}:{elsewhere}/tcp"]
    async with act_client("stdio", rustpad, grants=grants) as client:
        read = refusal(await call(client, "get_document", {"id": pad}))
        assert "--allow 'http=" in read, read
        written = refusal(await call(client, "append_to_document", {"id": pad, "text": "more"}))
        assert "--allow 'sockets=" in written and "access-denied" in written, written
    assert rustpad.text(pad) == "text\n"


async def test_act_runs_one_call_at_a_time_per_process(rustpad, pad):
    """act-cli 0.14.6 hands its one instance one call at a time, so a wait holds the calls of
    the same process behind it (docs/deployment.md says so); another act process, as each stdio
    client starts its own, is not held."""
    rustpad.seed(pad, "quiet\n")
    finished: list[str] = []
    async with act_client("stdio", rustpad) as waiting, act_client("stdio", rustpad) as other:
        base = data(await call(waiting, "get_document", {"id": pad, "start_line": 1}))["base"]

        async def wait() -> None:
            await call(waiting, "wait_for_changes", {"id": pad, "base": base, "timeout_seconds": 4})
            finished.append("wait")

        async def read(client, name: str) -> None:
            await anyio.sleep(0.5)
            data(await call(client, "get_stats", {}))
            finished.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            group.start_soon(read, waiting, "same process")
            group.start_soon(read, other, "other process")
    assert finished == ["other process", "wait", "same process"], finished
