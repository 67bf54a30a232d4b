"""rustpad-mcp --http: MCP's Streamable HTTP transport, through the official Python SDK and on
the raw wire.

- Both revisions over HTTP: 2026-07-28 statelessly, 2025-11-25 in a session whose dialogs travel
  on the response stream.
- Replicas: two processes sharing a seal key behind a round-robin proxy; a confirmation asked on
  one and answered on the other executes exactly once, and a replayed approval asks again.
- The gate and the limits: token, Origin, Host, sizes, media types, sessions, concurrency.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ElicitResult

from conftest import (
    ALL_TOOLS,
    HANG_GUARD_SECONDS,
    MCP_BIN,
    RustpadServer,
    call,
    edits,
    failed,
    minimal_env,
    ok,
    stop_process,
)

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
SEAL_KEY = "http-tests-share-this-seal-key-0123456789"
TOKEN = "a-bearer-token-that-is-long-enough-0123456789"
TOKEN_PATTERN = re.compile(r'confirm_token="([0-9a-f]{64})"')
LISTENING = re.compile(r"serving MCP at (http://\S+/mcp)")


# ---------------------------------------------------------------------------------------------
# The server over HTTP
# ---------------------------------------------------------------------------------------------


class HttpServer:
    """rustpad-mcp --http LISTEN with exactly `env`; `url` is its MCP endpoint."""

    def __init__(self, env: Mapping[str, str], listen: str = "127.0.0.1:0"):
        self.process = subprocess.Popen(
            [str(MCP_BIN), "--http", listen],
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        self.stderr: list[str] = []
        for line in self.process.stderr:
            self.stderr.append(line)
            if match := LISTENING.search(line):
                self.url = match.group(1)
                break
        else:
            raise RuntimeError(f"rustpad-mcp --http did not start: {''.join(self.stderr)}")
        # Keep draining stderr, so the server never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def stop(self) -> None:
        stop_process(self.process)


@contextmanager
def http_server(rustpad: RustpadServer, listen: str = "127.0.0.1:0", **variables: str | None):
    variables.setdefault("RUSTPAD_URL", rustpad.url)
    server = HttpServer(minimal_env(**variables), listen)
    try:
        yield server
    finally:
        server.stop()


@asynccontextmanager
async def http_client(
    url: str, mode: str, headers: Mapping[str, str] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The SDK's Streamable HTTP client on `url`, speaking `mode`."""
    async with create_mcp_http_client(headers=dict(headers or {})) as transport_client:
        transport = streamable_http_client(url, http_client=transport_client)
        async with Client(transport, mode=mode, **options) as client:
            yield client


class Exchange:
    """One raw HTTP exchange: status, headers (lower-case names) and body."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[Any]:
        """The JSON messages of an event-stream body."""
        return [
            json.loads(line[len("data: ") :])
            for line in self.body.decode().splitlines()
            if line.startswith("data: ")
        ]

    def messages(self) -> list[Any]:
        """What the body carries, whichever way it was sent."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            return self.events()
        return [self.json()]


JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def exchange(
    url: str,
    body: bytes | str | Mapping[str, Any] | None,
    *,
    method: str = "POST",
    headers: Mapping[str, str] | None = None,
    replace_headers: bool = False,
    timeout: float = HANG_GUARD_SECONDS,
) -> Exchange:
    """Sends one request to `url` and reads the whole answer (or fails after `timeout`)."""
    host, port_path = url.removeprefix("http://").split(":", 1)
    port, _, path = port_path.partition("/")
    if isinstance(body, Mapping):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    sent = dict(headers or {}) if replace_headers else {**JSON_HEADERS, **(headers or {})}
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request(method, "/" + path, body=body, headers=sent)
        response = connection.getresponse()
        return Exchange(
            response.status,
            {name.lower(): value for name, value in response.getheaders()},
            response.read(),
        )
    finally:
        connection.close()


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def modern_request(
    request_id: Any, method: str, params: Mapping[str, Any] | None = None, elicitation: bool = True
) -> dict[str, Any]:
    capabilities = {"elicitation": {"form": {}}} if elicitation else {}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {
            **(params or {}),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
            },
        },
    }


def modern_call(
    url: str,
    request_id: Any,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
):
    """A 2026-07-28 tools/call on the raw wire (with `headers` besides the standard ones);
    returns the JSON-RPC response."""
    message = modern_request(request_id, "tools/call", {"name": tool, "arguments": dict(arguments), **extra})
    answer = exchange(url, message, headers={**modern_headers("tools/call", tool), **(headers or {})})
    assert answer.status == 200, answer.body
    return answer.json()


class LegacySession:
    """A raw 2025-11-25 session: initialize once, then requests with the session id."""

    def __init__(self, url: str, elicitation: bool = True):
        self.url = url
        capabilities = {"elicitation": {"form": {}}} if elicitation else {}
        answer = exchange(
            url,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
        )
        assert answer.status == 200, answer.body
        self.id = answer.headers["mcp-session-id"]
        assert re.fullmatch(r"[0-9a-f]{32}", self.id)
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202

    def post(self, message: Mapping[str, Any] | str) -> Exchange:
        return exchange(
            self.url,
            message,
            headers={"Mcp-Session-Id": self.id, "MCP-Protocol-Version": LEGACY},
        )

    def cancel(self, request_id: Any) -> None:
        """Sends notifications/cancelled for `request_id`, which is accepted without an answer."""
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        assert self.post(cancel).status == 202


# ---------------------------------------------------------------------------------------------
# A round-robin load balancer
# ---------------------------------------------------------------------------------------------


class RoundRobin:
    """An HTTP proxy in front of `backends`, sending each request to the next one in turn
    and streaming the answer back. `served` records (backend index, JSON-RPC method)."""

    def __init__(self, backends: list[HttpServer]):
        self.backends = backends
        self.served: list[tuple[int, str | None]] = []
        self.turn = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                proxy.forward(self)

            do_GET = do_DELETE = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else None
        try:
            method = json.loads(body)["method"] if body else None
        except (ValueError, KeyError, TypeError):
            method = None
        with self.lock:
            index = self.turn % len(self.backends)
            self.turn += 1
            self.served.append((index, method))
        backend = self.backends[index]
        headers = {
            name: value
            for name, value in handler.headers.items()
            if name.lower() not in ("host", "connection", "content-length")
        }
        upstream = http.client.HTTPConnection("127.0.0.1", backend.port, timeout=HANG_GUARD_SECONDS)
        upstream.request(handler.command, handler.path, body=body, headers=headers)
        response = upstream.getresponse()
        handler.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                handler.send_header(name, value)
        handler.send_header("Connection", "close")
        handler.end_headers()
        # Streamed as it comes: a dialog's question must reach the client before the answer.
        while chunk := response.read1(65536):
            handler.wfile.write(chunk)
            handler.wfile.flush()
        upstream.close()

    def calls(self) -> list[int]:
        """Which backend served each tools/call, in order."""
        return [index for index, method in self.served if method == "tools/call"]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def two_replicas(rustpad: RustpadServer, **variables: str | None) -> Iterator[RoundRobin]:
    variables.setdefault("RUSTPAD_SEAL_KEY", SEAL_KEY)
    with http_server(rustpad, **variables) as first, http_server(rustpad, **variables) as second:
        balancer = RoundRobin([first, second])
        try:
            yield balancer
        finally:
            balancer.stop()


class Person:
    """An elicitation callback that approves every dialog it is shown."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})


async def replace_everywhere(client: Client, pad: str, search: str, replace: str):
    """replace_in_document with replace_all: the call that asks a person when it matches twice."""
    arguments = {"id": pad, "search": search, "replace": replace, "replace_all": True}
    return await call(client, "replace_in_document", arguments)


# ---------------------------------------------------------------------------------------------
# Both revisions through the SDK
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN])
async def test_the_sdk_reads_and_writes_over_http(rustpad: RustpadServer, pad: str, mode: str):
    rustpad.seed(pad, "hello")
    with http_server(rustpad) as server:
        async with http_client(server.url, mode) as client:
            assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ALL_TOOLS
            read = await call(client, "get_document", {"id": pad})
            assert ok(read)["text"] == "hello"
            ok(await call(client, "append_to_document", {"id": pad, "text": " world"}))
    assert rustpad.text(pad) == "hello world"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_confirmation_dialog_works_over_http(rustpad: RustpadServer, pad: str, mode: str):
    """2025-11-25: the question travels on the call's event stream and the answer comes back in
    a POST; 2026-07-28: input_required and a retry."""
    rustpad.seed(pad, "a-b-a")
    person = Person()
    with http_server(rustpad) as server:
        async with http_client(server.url, mode, elicitation_callback=person) as client:
            result = await replace_everywhere(client, pad, "a", "c")
            assert ok(result)["replacements"] == 2
    assert len(person.asked) == 1
    assert person.asked[0].startswith(f'This will replace 2 occurrences in pad "{pad}".')
    assert rustpad.text(pad) == "c-b-c"


async def test_a_bearer_token_gets_the_sdk_in(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "x")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with http_client(server.url, MODERN, headers) as client:
            assert ok(await call(client, "get_document", {"id": pad}))["text"] == "x"


# ---------------------------------------------------------------------------------------------
# Replicas
# ---------------------------------------------------------------------------------------------


async def test_a_confirmation_asked_on_one_replica_and_answered_on_another_runs_once(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "cat cat cat")
    person = Person()
    with two_replicas(rustpad) as balancer:
        async with http_client(balancer.url, MODERN, elicitation_callback=person) as client:
            result = await replace_everywhere(client, pad, "cat", "cats")
            assert ok(result)["replacements"] == 3
        served = balancer.calls()
    assert len(person.asked) == 1
    # The question came from one replica and the retry went to the other.
    assert len(served) == 2 and served[0] != served[1], balancer.served
    assert rustpad.text(pad) == "cats cats cats"
    assert len(edits(rustpad, pad)) == 1


async def test_an_approval_replayed_at_the_other_replica_asks_again(
    rustpad: RustpadServer, pad: str
):
    """The replacement keeps the match count (cat -> cats), so only the content binding can
    tell that the approval was used; the second replica never saw it spent."""
    rustpad.seed(pad, "cat cat")
    arguments = {"id": pad, "search": "cat", "replace": "cats", "replace_all": True}
    with two_replicas(rustpad) as balancer:
        first, second = (backend.url for backend in balancer.backends)
        asked = modern_call(first, 1, "replace_in_document", arguments)["result"]
        assert asked["resultType"] == "input_required"
        (key,) = asked["inputRequests"]
        approval = {
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            "requestState": asked["requestState"],
        }
        done = modern_call(second, 2, "replace_in_document", arguments, **approval)["result"]
        assert done["resultType"] == "complete" and not done.get("isError"), done
        assert rustpad.text(pad) == "cats cats"
        for replica in (first, second):
            replayed = modern_call(replica, 3, "replace_in_document", arguments, **approval)
            assert replayed["result"]["resultType"] == "input_required", replayed
    assert rustpad.text(pad) == "cats cats"


async def test_a_token_spent_on_one_replica_does_not_work_again_on_another(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "cat cat")
    arguments = {"id": pad, "search": "cat", "replace": "cats", "replace_all": True}
    with two_replicas(rustpad, ELICITATION="false") as balancer:
        first, second = (backend.url for backend in balancer.backends)
        asked = modern_call(first, 1, "replace_in_document", arguments)["result"]
        (token,) = TOKEN_PATTERN.findall(asked["content"][0]["text"])
        confirmed = {**arguments, "confirm_token": token}
        done = modern_call(second, 2, "replace_in_document", confirmed)["result"]
        assert not done.get("isError"), done
        replayed = modern_call(first, 3, "replace_in_document", confirmed)["result"]
        assert replayed["isError"]
        # The pad no longer matches what was approved.
        assert "has changed since this confirmation token was issued" in replayed["content"][0]["text"], replayed
    assert rustpad.text(pad) == "cats cats"


# ---------------------------------------------------------------------------------------------
# 2025-11-25 sessions on the wire
# ---------------------------------------------------------------------------------------------


async def test_a_session_ends_with_delete_and_is_then_unknown(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        listed = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert listed.status == 200
        assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ALL_TOOLS
        ended = exchange(server.url, None, method="DELETE", headers={"Mcp-Session-Id": session.id})
        assert ended.status == 204
        gone = session.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert gone.status == 404
        assert "initialize again" in gone.body.decode()
        # Headers a legacy client sends must agree with the body too.
        create = {"name": "create_document", "arguments": {}}
        smuggled = exchange(
            server.url,
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": create},
            headers={"Mcp-Session-Id": LegacySession(server.url).id, "Mcp-Name": "get_stats"},
        )
        assert smuggled.status == 400 and smuggled.json()["error"]["code"] == -32020
        # Requests must name the revision the session agreed on.
        wrong_revision = exchange(
            server.url,
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
            headers={"Mcp-Session-Id": LegacySession(server.url).id, "MCP-Protocol-Version": "2025-06-18"},
        )
        assert wrong_revision.status == 400
        assert "2025-11-25" in wrong_revision.json()["error"]["message"]
        # A made-up session is just as unknown.
        session.id = "0" * 32
        assert session.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status == 404


async def test_a_legacy_request_without_its_session_is_a_bad_request(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        answer = exchange(server.url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert answer.status == 400
        assert answer.json()["error"]["code"] == -32600
        assert "initialize" in answer.json()["error"]["message"]
        # A revision this server does not speak is refused before anything else.
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert exchange(server.url, ping, headers={"MCP-Protocol-Version": LEGACY}).status == 200
        unknown = exchange(server.url, ping, headers={"MCP-Protocol-Version": "1900-01-01"})
        assert unknown.status == 400
        assert "2025-11-25" in unknown.json()["error"]["message"]


class OpenCall:
    """A tools/call whose answer is being read as it streams."""

    def __init__(self, session: LegacySession, message: Mapping[str, Any]):
        port = int(session.url.rsplit(":", 1)[1].split("/")[0])
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_SECONDS)
        headers = {**JSON_HEADERS, "Mcp-Session-Id": session.id, "MCP-Protocol-Version": LEGACY}
        self.connection.request("POST", "/mcp", body=json.dumps(message), headers=headers)
        self.response = self.connection.getresponse()

    def next_message(self) -> Any:
        """The next event's message (the stream must still be open)."""
        while line := self.response.readline():
            if line.startswith(b"data: "):
                return json.loads(line[len(b"data: ") :])
        raise AssertionError("the stream ended")

    def rest(self) -> list[Any]:
        """Every message until the stream ends."""
        body = self.response.read().decode()
        self.connection.close()
        return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]


def guarded_replace(request_id: int, pad: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "replace_in_document",
            "arguments": {"id": pad, "search": "a", "replace": "b", "replace_all": True},
        },
    }


async def test_a_dialog_travels_on_the_call_stream_and_the_answer_in_a_post(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(7, pad))
        assert open_call.response.getheader("Content-Type") == "text/event-stream"
        question = open_call.next_message()
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"].startswith("This will replace 2 occurrences")
        answer = {"action": "accept", "content": {"confirm": True}}
        posted = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert posted.status == 202 and posted.body == b""
        (response,) = open_call.rest()
        assert response["id"] == 7
        assert response["result"]["structuredContent"]["replacements"] == 2
        # The question is closed: a second answer has nothing to go to.
        again = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert again.status == 400
    assert rustpad.text(pad) == "b b"


def withdrawal_of(question: dict[str, Any]) -> dict[str, Any]:
    """The notice withdrawing `question` once its call ended without the answer."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {
            "requestId": question["id"],
            "reason": "the call that asked this has ended without an answer",
        },
    }


async def test_a_cancelled_call_withdraws_its_question_and_sends_no_response(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(8, pad))
        question = open_call.next_message()
        session.cancel(8)
        # The dialog is withdrawn on the stream before it closes; the call itself says nothing more.
        assert open_call.rest() == [withdrawal_of(question)]
        answer = {"action": "accept", "content": {"confirm": True}}
        late = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert late.status == 400
    assert rustpad.text(pad) == "a a"


async def test_a_call_cancelled_before_it_asks_gets_an_empty_stream(
    rustpad: RustpadServer, pad: str
):
    rustpad.set_mode(pad, "silent-after-identity")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "append_to_document", "arguments": {"id": pad, "text": "x"}},
        }
        answers: list[Exchange] = []
        caller = threading.Thread(target=lambda: answers.append(session.post(call)))
        caller.start()
        # The call is running once it has spoken on the pad's socket.
        await rustpad.wait_for_frame(pad, lambda frame: True)
        session.cancel(9)
        caller.join(timeout=HANG_GUARD_SECONDS)
        (answer,) = answers
        assert answer.status == 200
        assert answer.headers["content-type"] == "text/event-stream"
        assert answer.messages() == []
    assert not any("error" in line.lower() for line in server.stderr), server.stderr


async def test_a_request_id_in_use_is_refused_until_its_call_ends(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(1, pad))
        question = open_call.next_message()
        again = session.post(guarded_replace(1, pad))
        assert again.status == 400
        assert "still running" in again.json()["error"]["message"]
        session.cancel(1)
        assert open_call.rest() == [withdrawal_of(question)]
        listed = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert listed.status == 200
    assert rustpad.text(pad) == "a a"


async def test_a_client_that_takes_no_event_stream_is_told_it_cannot_be_asked(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        answer = exchange(
            server.url,
            guarded_replace(1, pad),
            headers={
                "Accept": "application/json",
                "Mcp-Session-Id": session.id,
                "MCP-Protocol-Version": LEGACY,
            },
        )
        assert answer.status == 200
        assert answer.headers["content-type"] == "application/json"
        result = answer.json()["result"]
        assert result["isError"]
        assert "text/event-stream" in result["content"][0]["text"]
        assert "nothing was changed" in result["content"][0]["text"]
    assert rustpad.text(pad) == "a a"


async def test_calls_beyond_the_limit_are_told_to_retry(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "a a")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_MAX_CALLS="1") as server:
        session = LegacySession(server.url)
        # A call waiting for a person holds its place.
        open_call = OpenCall(session, guarded_replace(1, pad))
        open_call.next_message()
        stats = {"name": "get_stats", "arguments": {}}
        busy = session.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": stats})
        assert busy.status == 503
        assert busy.headers["retry-after"] == "1"
        assert busy.json()["id"] == 2
        # Listing and discovery (health checks) are answered however busy.
        assert session.post({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).status == 200
        discover = exchange(
            server.url, modern_request(5, "server/discover"), headers=modern_headers("server/discover")
        )
        assert discover.status == 200
        session.cancel(1)
        open_call.rest()
        again = session.post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": stats})
        assert again.status == 200


# ---------------------------------------------------------------------------------------------
# 2026-07-28 on the wire
# ---------------------------------------------------------------------------------------------


async def test_modern_errors_carry_their_http_status(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        # Headers that disagree with the body.
        wrong = exchange(
            server.url, modern_request(1, "tools/list"), headers=modern_headers("prompts/list")
        )
        assert wrong.status == 400
        assert wrong.json()["error"]["code"] == -32020 and wrong.json()["id"] == 1
        unnamed = exchange(
            server.url,
            modern_request(2, "tools/call", {"name": "get_stats", "arguments": {}}),
            headers=modern_headers("tools/call"),
        )
        assert unnamed.status == 400 and "Mcp-Name" in unnamed.json()["error"]["message"]
        # A method 2026-07-28 does not have.
        missing = exchange(server.url, modern_request(3, "ping"), headers=modern_headers("ping"))
        assert missing.status == 404 and missing.json()["error"]["code"] == -32601
        # _meta without the client's capabilities.
        request = modern_request(4, "tools/list")
        del request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        incomplete = exchange(server.url, request, headers=modern_headers("tools/list"))
        assert incomplete.status == 400 and incomplete.json()["error"]["code"] == -32602
        # A revision this server does not speak.
        request = modern_request(5, "tools/list")
        request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        headers = {**modern_headers("tools/list"), "MCP-Protocol-Version": "2099-01-01"}
        unsupported = exchange(server.url, request, headers=headers)
        assert unsupported.status == 400
        assert unsupported.json()["error"]["data"]["requested"] == "2099-01-01"
        # A tool error is a result, not an HTTP error.
        failing = exchange(
            server.url,
            modern_request(6, "tools/call", {"name": "get_document", "arguments": {}}),
            headers=modern_headers("tools/call", "get_document"),
        )
        assert failing.status == 200 and failing.json()["result"]["isError"]
        # A routed key given twice is refused, so headers cannot name one tool while the body
        # runs another.
        body = json.dumps(modern_request(8, "tools/call", {"name": "get_stats", "arguments": {}}))
        doubled = body.replace('"name": "get_stats"', '"name": "get_stats", "name": "create_document"')
        assert doubled != body
        smuggled = exchange(server.url, doubled, headers=modern_headers("tools/call", "get_stats"))
        assert smuggled.status == 400 and smuggled.json()["error"]["code"] == -32600
        assert "duplicate field" in smuggled.json()["error"]["message"]
        # A routed value that cannot be read is refused rather than routed on a guess.
        unpaired = body.replace('"name": "get_stats"', '"name": "get_stats\\ud800"')
        assert unpaired != body
        unreadable = exchange(server.url, unpaired, headers=modern_headers("tools/call", "get_stats"))
        assert unreadable.status == 400 and unreadable.json()["error"]["code"] == -32700
        # Elsewhere it is the component's to judge, as on stdio: not text, so an input error.
        unpaired = body.replace('"arguments": {}', '"arguments": {"x": "\\ud800"}')
        assert unpaired != body
        judged = exchange(server.url, unpaired, headers=modern_headers("tools/call", "get_stats"))
        assert judged.status == 200 and judged.json()["result"]["isError"]
        # No session is minted or needed, and a stale session header is ignored.
        listed = exchange(
            server.url,
            modern_request(7, "tools/list"),
            headers={**modern_headers("tools/list"), "Mcp-Session-Id": "f" * 32},
        )
        assert listed.status == 200 and "mcp-session-id" not in listed.headers


async def test_closing_a_modern_request_cancels_its_call(rustpad: RustpadServer, pad: str):
    """Without sessions, the connection is the call: closing it stops the call and gives back
    its place (here the only one)."""
    rustpad.set_mode(pad, "silent-after-identity")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_MAX_CALLS="1") as server:
        message = modern_request(1, "tools/call", {"name": "append_to_document", "arguments": {"id": pad, "text": "x"}})
        body = json.dumps(message).encode()
        headers = {**JSON_HEADERS, **modern_headers("tools/call", "append_to_document")}
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=HANG_GUARD_SECONDS) as hanging:
            hanging.sendall(head.encode() + body)
            await rustpad.wait_for_frame(pad, lambda frame: True)
            stats = modern_request(2, "tools/call", {"name": "get_stats", "arguments": {}})
            busy = exchange(server.url, stats, headers=modern_headers("tools/call", "get_stats"))
            assert busy.status == 503
        # Closed: the call stops and its place is free again. Left running, it would hold the
        # place until the component gave up on the silent pad (20 s), so the wait is bounded
        # well below that; this tells the two apart, and says nothing about speed.
        for _ in range(10 * 20):
            answer = exchange(server.url, stats, headers=modern_headers("tools/call", "get_stats"))
            if answer.status != 503:
                break
            await anyio.sleep(0.05)
        assert answer.status == 200, answer.body


# ---------------------------------------------------------------------------------------------
# The gate and the limits
# ---------------------------------------------------------------------------------------------


def start_failure(rustpad: RustpadServer, listen: str, **variables: str) -> tuple[int, str]:
    variables.setdefault("RUSTPAD_URL", rustpad.url)
    done = subprocess.run(
        [str(MCP_BIN), "--http", listen],
        env=minimal_env(**variables),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    return done.returncode, done.stderr


def test_unsafe_or_unusable_http_settings_stop_startup(rustpad: RustpadServer):
    code, stderr = start_failure(rustpad, "0.0.0.0:0")
    assert code == 2
    assert "RUSTPAD_MCP_HTTP_TOKEN" in stderr and "without a bearer token" in stderr
    code, stderr = start_failure(rustpad, "0.0.0.0:0", RUSTPAD_MCP_HTTP_TOKEN="short")
    assert code == 2 and "at least 32" in stderr
    for bad in ["nonsense", "127.0.0.1:99999", ""]:
        code, stderr = start_failure(rustpad, bad)
        assert code == 2 and "--http" in stderr, (bad, stderr)
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_MAX_CALLS="lots")
    assert code == 2 and "RUSTPAD_MCP_HTTP_MAX_CALLS" in stderr
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_ORIGINS="example.net")
    assert code == 2 and "RUSTPAD_MCP_HTTP_ORIGINS" in stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, stderr = start_failure(rustpad, f"127.0.0.1:{port}")
    assert code == 1 and f"cannot listen on 127.0.0.1:{port}" in stderr


def test_host_variables_that_do_nothing_are_named_at_startup(rustpad: RustpadServer):
    done = subprocess.run(
        [str(MCP_BIN)],
        env=minimal_env(
            RUSTPAD_URL=rustpad.url, RUSTPAD_MCP_HTTP_TOKEN=TOKEN, RUSTPAD_MCP_HTTP_ORIGNS="x"
        ),
        input="",
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    assert done.returncode == 0
    assert "RUSTPAD_MCP_HTTP_TOKEN applies only with --http" in done.stderr
    assert "RUSTPAD_MCP_HTTP_ORIGNS is not a setting of this server" in done.stderr
    # And the other way round: the stdio call limit does nothing with --http.
    with http_server(rustpad, RUSTPAD_MCP_MAX_CALLS="4") as server:
        assert any(
            "RUSTPAD_MCP_MAX_CALLS applies only on stdio" in line
            and "RUSTPAD_MCP_HTTP_MAX_CALLS" in line
            for line in server.stderr
        ), server.stderr


def test_with_a_token_every_request_must_carry_it(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, "0.0.0.0:0", RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        assert "bearer token required" in "".join(server.stderr)
        url = f"http://127.0.0.1:{server.port}/mcp"
        for presented in [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"]:
            sent = dict(headers)
            if presented:
                sent["Authorization"] = presented
            refused = exchange(url, discover, headers=sent)
            assert refused.status == 401, presented
            assert refused.headers["www-authenticate"].startswith("Bearer")
        allowed = exchange(url, discover, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert allowed.status == 200
        # Beyond loopback the Host header is the gateway's business.
        named = exchange(
            url,
            discover,
            headers={**headers, "Authorization": f"Bearer {TOKEN}", "Host": "mcp.example.net"},
        )
        assert named.status == 200


def test_listed_browser_origins_get_cors(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    listed = "https://chat.example.net"
    with http_server(
        rustpad, RUSTPAD_MCP_HTTP_ORIGINS=listed, RUSTPAD_MCP_HTTP_TOKEN=TOKEN
    ) as server:
        preflight_headers = {
            "Origin": listed,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-method",
        }
        # The preflight carries no token; the origin decides.
        preflight = exchange(
            server.url, None, method="OPTIONS", headers=preflight_headers, replace_headers=True
        )
        assert preflight.status == 204
        assert preflight.headers["access-control-allow-origin"] == listed
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "mcp-session-id" in preflight.headers["access-control-allow-headers"]
        elsewhere = {**preflight_headers, "Origin": "https://evil.example"}
        assert exchange(server.url, None, method="OPTIONS", headers=elsewhere, replace_headers=True).status == 403
        # The request itself needs the token, and its answer names the origin.
        authorized = {**headers, "Origin": listed, "Authorization": f"Bearer {TOKEN}"}
        answer = exchange(server.url, discover, headers=authorized)
        assert answer.status == 200
        assert answer.headers["access-control-allow-origin"] == listed
        assert "mcp-session-id" in answer.headers["access-control-expose-headers"]
        assert answer.headers["vary"] == "Origin"
        # Without the token, nothing else about the request is looked at; a listed page may
        # read the 401 to learn that it needs one.
        anonymous = exchange(server.url, discover, headers={**headers, "Origin": "https://evil.example"})
        assert anonymous.status == 401
        assert "access-control-allow-origin" not in anonymous.headers
        tokenless = exchange(server.url, discover, headers={**headers, "Origin": listed})
        assert tokenless.status == 401
        assert tokenless.headers["access-control-allow-origin"] == listed
        # A page on another local port passes the rebinding check but is not invited.
        local = {**headers, "Origin": "http://localhost:5173", "Authorization": f"Bearer {TOKEN}"}
        answer = exchange(server.url, discover, headers=local)
        assert answer.status == 200 and "access-control-allow-origin" not in answer.headers


def test_a_proxied_request_needs_the_token(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = {**modern_headers("server/discover"), "X-Forwarded-For": "203.0.113.9"}
    with http_server(rustpad) as server:
        refused = exchange(server.url, discover, headers=headers)
        assert refused.status == 403
        assert "RUSTPAD_MCP_HTTP_TOKEN" in refused.body.decode()
    with http_server(rustpad, RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        answer = exchange(server.url, discover, headers={**headers, "Authorization": f"Bearer {TOKEN}"})
        assert answer.status == 200


def test_browser_origins_and_host_names_are_checked(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_ORIGINS="https://chat.example.net") as server:
        for origin, status in [
            ("https://evil.example", 403),
            ("null", 403),
            ("https://chat.example.net.evil.example", 403),
            (f"http://localhost:{server.port}", 200),
            ("http://127.0.0.1:5173", 200),
            ("https://chat.example.net", 200),
        ]:
            answer = exchange(server.url, discover, headers={**headers, "Origin": origin})
            assert answer.status == status, (origin, answer.body)
        # DNS rebinding: a name that resolves to this machine but is not loopback's.
        rebound = exchange(server.url, discover, headers={**headers, "Host": "evil.example"})
        assert rebound.status == 403
        assert "localhost" in rebound.body.decode()


def test_a_host_list_names_the_only_hosts_served(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_HOSTS="mcp.example.net, 127.0.0.1") as server:
        for host, status in [
            ("mcp.example.net", 200),
            ("MCP.example.net:8443", 200),
            (f"127.0.0.1:{server.port}", 200),
            (f"localhost:{server.port}", 403),
            ("evil.example", 403),
        ]:
            answer = exchange(server.url, discover, headers={**headers, "Host": host})
            assert answer.status == status, (host, answer.body)
        refused = exchange(server.url, discover, headers={**headers, "Host": "evil.example"})
        assert "RUSTPAD_MCP_HTTP_HOSTS" in refused.body.decode()
    code, stderr = start_failure(rustpad, "127.0.0.1:0", RUSTPAD_MCP_HTTP_HOSTS="https://mcp.example.net/path")
    assert code == 2 and "RUSTPAD_MCP_HTTP_HOSTS" in stderr


def oversized_status(port: int, declared: bool) -> int:
    """Starts a 17 MiB POST (declared up front, or chunked) and returns the status line's code;
    the server may answer before the body is all sent."""
    size = 17 << 20
    framing = f"Content-Length: {size}" if declared else "Transfer-Encoding: chunked"
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\n{framing}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_SECONDS) as connection:
        connection.sendall(head)
        chunk = b"a" * (1 << 20)
        try:
            for _ in range(size >> 20):
                connection.sendall(chunk if declared else b"100000\r\n" + chunk + b"\r\n")
        except OSError:
            pass  # the server stopped reading: its answer is already waiting
        status_line = connection.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_malformed_requests_get_clear_4xx_answers(rustpad: RustpadServer):
    discover = modern_request(1, "server/discover")
    headers = modern_headers("server/discover")
    with http_server(rustpad) as server:
        base = server.url.removesuffix("/mcp")
        assert exchange(base + "/other", discover, headers=headers).status == 404
        answer = exchange(server.url, None, method="PUT")
        assert answer.status == 405 and answer.headers["allow"] == "GET, POST, DELETE"
        # GET opens a session's stream, and DELETE ends a session: both need one.
        stream = exchange(server.url, None, method="GET")
        assert stream.status == 400 and b"Mcp-Session-Id" in stream.body
        unknown = exchange(server.url, None, method="GET", headers={"Mcp-Session-Id": "0" * 32})
        assert unknown.status == 404
        assert exchange(server.url, None, method="DELETE").status == 400
        as_text = exchange(server.url, discover, headers={**headers, "Content-Type": "text/plain"})
        assert as_text.status == 415
        html_only = exchange(server.url, discover, headers={**headers, "Accept": "text/html"})
        assert html_only.status == 406
        reversed_accept = exchange(
            server.url, discover, headers={**headers, "Accept": "text/event-stream, application/json"}
        )
        assert reversed_accept.status == 200
        assert oversized_status(server.port, declared=True) == 413
        # A large message is bounded by the memory budget, whatever its method.
        padded = modern_request(1, "server/discover")
        padded["params"]["padding"] = "x" * (1 << 20)
        assert exchange(server.url, padded, headers=headers).status == 200
        assert oversized_status(server.port, declared=False) == 413
        for body, code in [("{not json", -32700), ("[]", -32600), ("{}", -32600), ("\"x\"", -32600)]:
            answer = exchange(server.url, body, headers=headers)
            assert answer.status == 400, body
            assert answer.json()["error"]["code"] == code, body
        invalid_utf8 = exchange(server.url, b'{"a":"\xff"}', headers=headers)
        assert invalid_utf8.status == 400 and invalid_utf8.json()["error"]["code"] == -32700
        # Notifications are accepted without an answer.
        note = exchange(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status == 202 and note.body == b""
        # The server still works.
        assert exchange(server.url, discover, headers=headers).status == 200
