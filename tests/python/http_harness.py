"""The harness for MCP over Streamable HTTP: rustpad-mcp --http as a process, the SDK's client
on it, raw exchanges for what the SDK does not send (wrong headers, held streams), a 2025-11-25
session kept by hand, and a round-robin proxy in front of two replicas. The HTTP suites here
(test_http.py, test_http_gate.py, test_http_strict.py) and those of subscriptions, the guard,
the lattice and the WebAssembly hosts share it."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ElicitResult

from conftest import (
    HANG_GUARD_SECONDS,
    MCP_BIN,
    RustpadServer,
    call,
    minimal_env,
    stop_process,
)

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
    url: str, mode: str, headers: Mapping[str, str] | None = None, source: str | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The SDK's Streamable HTTP client on `url`, speaking `mode`, its connections made from the
    local address `source` when one is given (another loopback address, as another machine's)."""
    transport_client = create_mcp_http_client(headers=dict(headers or {}))
    if source is not None:
        transport_client = httpx2.AsyncClient(
            headers=dict(headers or {}),
            timeout=transport_client.timeout,
            transport=httpx2.AsyncHTTPTransport(local_address=source),
        )
    async with transport_client:
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
            # (An event with empty data primes a stream for resumption: no message.)
            if line.startswith("data: ") and line[len("data: ") :].strip()
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
    source: str | None = None,
) -> Exchange:
    """Sends one request to `url` and reads the whole answer (or fails after `timeout`), from
    the local address `source` when one is given (another loopback address, say)."""
    host, port_path = url.removeprefix("http://").split(":", 1)
    port, _, path = port_path.partition("/")
    if isinstance(body, Mapping):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    sent = dict(headers or {}) if replace_headers else {**JSON_HEADERS, **(headers or {})}
    bind = (source, 0) if source is not None else None
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout, source_address=bind)
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

    def __init__(
        self,
        url: str,
        elicitation: bool = True,
        id_format: str = r"[0-9a-f]{32}",
        headers: Mapping[str, str] | None = None,
        source: str | None = None,
    ):
        """`id_format`: what the server's session ids look like (ours: 32 hex digits); `headers`
        go with every request (a bearer token), sent from the local address `source`."""
        self.url = url
        self.headers, self.source = dict(headers or {}), source
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
            headers=self.headers,
            source=source,
        )
        assert answer.status == 200, answer.body
        self.id = answer.headers["mcp-session-id"]
        assert re.fullmatch(id_format, self.id), self.id
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status == 202

    def post(self, message: Mapping[str, Any] | str) -> Exchange:
        return exchange(
            self.url,
            message,
            headers={**self.headers, "Mcp-Session-Id": self.id, "MCP-Protocol-Version": LEGACY},
            source=self.source,
        )

    def end(self) -> Exchange:
        """Ends the session (DELETE)."""
        return exchange(
            self.url,
            None,
            method="DELETE",
            headers={**self.headers, "Mcp-Session-Id": self.id, "MCP-Protocol-Version": LEGACY},
            source=self.source,
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
