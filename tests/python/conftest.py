"""Shared harness for the end-to-end tests of rustpad-mcp.

- One test Rustpad server (tests/rustpad-server) per session, on a free loopback port.
- Helpers to seed pads, pick a misbehaviour mode, read a pad and the raw frames clients sent.
- `open_client`: an MCP client (the official Python SDK) over stdio on the real binary, in a
  chosen protocol mode and with a minimal, explicit environment.
- `run_server`: the binary as a plain subprocess, for startup checks (exit status, stderr) and
  for raw JSON-RPC exchanges the SDK does not expose.

Binaries: RUSTPAD_MCP_BIN and RUSTPAD_TEST_SERVER_BIN, by default target/release/... in the
workspace. Nothing here asserts on time: deadlines below only stop a hung test.

Why this file is long: pytest shares fixtures across a suite only through
conftest.py, and every suite here uses the same Rustpad, clients and raw
exchanges; helpers that only one group of suites needs live beside them
(http_harness.py, wasm_hosts.py, lattice.py).
"""

from __future__ import annotations

import json
import os
import re
import ssl
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

# Every tool, in the order tools/list shows them: the suites import it from here.
from catalogue import ALL_TOOLS  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
MCP_BIN = Path(os.environ.get("RUSTPAD_MCP_BIN") or ROOT / "target/release/rustpad-mcp")
TEST_SERVER_BIN = Path(
    os.environ.get("RUSTPAD_TEST_SERVER_BIN") or ROOT / "target/release/rustpad-test-server"
)
# Shared by every spawn, so the component is compiled once per build rather than per test
# (the Makefile exports its own choice).
CACHE_DIR = Path(
    os.environ.get("RUSTPAD_MCP_CACHE_DIR") or ROOT / "target" / "rustpad-mcp-test-cache"
)

# Where stdio servers keep the user's seal key, instead of the real user's home.
STATE_DIR = ROOT / "target" / "rustpad-mcp-test-state"

# Only guards against a hang; generous enough for a loaded 2-core machine.
HANG_GUARD_SECONDS = 120

# Rustpad's document limit in code points.
MAX_DOCUMENT_CHARS = 262_144
# What this server's writes leave to people at the end of that limit, and the longest pad they make.
ROOM_FOR_PEOPLE = 4_096
MAX_WRITTEN_CHARS = MAX_DOCUMENT_CHARS - ROOM_FOR_PEOPLE

# The eras a client can speak: legacy = the 2025-11-25 initialize handshake; auto = the SDK's
# server/discover probe, which settles on 2026-07-28 with this server.
ERAS = ["legacy", "auto"]

_UNSET = object()


def _require(path: Path, variable: str) -> str:
    if not path.is_file():
        pytest.exit(
            f"{path} does not exist: build it with `cargo build --release -p rustpad-mcp "
            f"-p rustpad-test-server`, or point {variable} at it",
            returncode=3,
        )
    return str(path)


def minimal_env(**variables: str | None) -> dict[str, str]:
    """PATH and HOME, the shared compile cache and state directory (the seal key every stdio
    server of the suite shares), plus `variables` (None drops a variable)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "RUSTPAD_MCP_CACHE_DIR": str(CACHE_DIR),
        "XDG_STATE_HOME": str(STATE_DIR),
    }
    for name, value in variables.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


# ---------------------------------------------------------------------------------------------
# The test Rustpad server
# ---------------------------------------------------------------------------------------------


def stop_process(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ten seconds."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class RustpadServer:
    """A running tests/rustpad-server and its /_test controls; with `tls` (certificate and
    key files) it serves HTTPS/WSS and the controls trust that certificate. `prefix` runs it
    through another command (`ip netns exec NS`), listening on `bind` and `port`."""

    def __init__(
        self,
        binary: str,
        tls: tuple[Path, Path] | None = None,
        *,
        prefix: list[str] | None = None,
        bind: str = "127.0.0.1",
        port: int = 0,
    ):
        arguments = [*(prefix or []), str(binary), "--bind", bind, "--port", str(port)]
        if tls is not None:
            arguments += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])]
        self.process = subprocess.Popen(
            arguments,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        match = re.fullmatch(rf"listening on (https?)://{re.escape(bind)}:(\d+)", line)
        if not match or (match.group(1) == "https") != (tls is not None):
            self.process.kill()
            raise RuntimeError(f"the test server did not start: first line {line!r}")
        self.host, self.port = bind, int(match.group(2))
        # Over TLS, the name the certificate is for, so only the trust anchor can be missing.
        self.url = f"https://localhost:{self.port}" if tls else f"http://{bind}:{self.port}"
        self.context = ssl.create_default_context(cafile=str(tls[0])) if tls else None

    def stop(self) -> None:
        stop_process(self.process)

    # -- raw HTTP ------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        req = urllib.request.Request(self.url + path, data=body, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60, context=self.context) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def _control(self, method: str, path: str, body: bytes | None = None) -> bytes:
        status, data = self.request(method, path, body)
        if status != 200:
            raise RuntimeError(f"{method} {path} answered {status}: {data[:500]!r}")
        return data

    # -- controls ------------------------------------------------------------------------------

    def seed(
        self,
        pad: str,
        text: str | None = None,
        *,
        ops: int = 0,
        char: str | None = None,
        language: str | None = None,
    ) -> dict[str, int]:
        """Replaces pad `pad` with `text` (one history entry) plus `ops` one-`char` inserts."""
        body: dict[str, Any] = {"ops": ops}
        if text is not None:
            body["text"] = text
        if char is not None:
            body["char"] = char
        if language is not None:
            body["language"] = language
        data = self._control("POST", f"/_test/seed/{pad}", json.dumps(body).encode())
        return json.loads(data)

    def set_mode(self, pad: str, mode: str) -> None:
        self._control("PUT", f"/_test/mode/{pad}", mode.encode())

    def raw_log(self, pad: str) -> list[str]:
        """Every text frame clients sent on pad `pad`, in arrival order."""
        return json.loads(self._control("GET", f"/_test/log/{pad}"))

    def log(self, pad: str) -> list[Any]:
        """The frames of `raw_log`, parsed."""
        return [json.loads(frame) for frame in self.raw_log(pad)]

    def text(self, pad: str) -> str:
        """The pad's text as upstream's /api/text serves it (bypassing any mode is not possible)."""
        return self._control("GET", f"/api/text/{pad}").decode("utf-8")

    def stats(self) -> dict[str, Any]:
        return json.loads(self._control("GET", "/api/stats"))

    def socket_url(self, pad: str) -> str:
        return f"ws://{self.host}:{self.port}/api/socket/{pad}"

    def share_link(self, pad: str) -> str:
        return f"{self.url}/#{pad}"

    # -- the typist ----------------------------------------------------------------------------

    def typist_command(
        self,
        pad: str,
        *,
        seed: int = 1,
        count: int = 20,
        delay_us: int = 1000,
        settle_ms: int | None = None,
        name: str | None = None,
        avoid: Iterable[str] = (),
    ) -> list[str]:
        command = [
            str(TEST_SERVER_BIN),
            "type",
            "--url",
            self.socket_url(pad),
            "--seed",
            str(seed),
            "--count",
            str(count),
            "--delay-us",
            str(delay_us),
        ]
        if settle_ms is not None:
            command += ["--settle-ms", str(settle_ms)]
        if name is not None:
            command += ["--name", name]
        for needle in avoid:
            command += ["--avoid", needle]
        return command

    async def type(self, pad: str, **options: Any) -> dict[str, Any]:
        """Runs the typist CLI to completion and returns its JSON report."""
        command = self.typist_command(pad, **options)
        with anyio.fail_after(HANG_GUARD_SECONDS):
            done = await anyio.run_process(command, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"the typist failed ({done.returncode}): {done.stderr.decode(errors='replace')}"
            )
        return json.loads(done.stdout)

    def set_by_person(self, pad: str, text: str, name: str = "person") -> dict[str, Any]:
        """Makes the pad's text `text` in one edit (of what lies between the ends old and new
        share), as a person who then leaves would: unlike `seed`, the pad's history keeps what
        it held before. Returns {"identity", "text"}."""
        command = [str(TEST_SERVER_BIN), "set", "--url", self.socket_url(pad), "--name", name]
        done = subprocess.run(
            command, input=text.encode(), capture_output=True, timeout=HANG_GUARD_SECONDS
        )
        if done.returncode != 0:
            raise RuntimeError(f"set failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
        return json.loads(done.stdout)

    @contextmanager
    def person(self, pad: str, name: str = "person") -> Iterator["ScriptedPerson"]:
        """A person in the pad until the block ends (the test server's `person` script): it
        edits and moves its caret when told, and records what the server sends it."""
        command = [str(TEST_SERVER_BIN), "person", "--url", self.socket_url(pad), "--name", name]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        try:
            yield ScriptedPerson(process)
        finally:
            stop_process(process)

    @contextmanager
    def staying(self, pad: str, **options: Any) -> Iterator[dict[str, Any]]:
        """Runs the typist CLI with --stay: yields its report once it has typed and settled, while
        it is still in the pad, and makes it leave on exit."""
        command = self.typist_command(pad, **options) + ["--stay"]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert process.stdout is not None and process.stdin is not None
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"the typist ended without a report ({process.wait()})")
            yield json.loads(line)
            process.stdin.close()
            process.wait(timeout=HANG_GUARD_SECONDS)
        finally:
            stop_process(process)

    async def wait_for_frame(self, pad: str, predicate: Any) -> Any:
        """Polls the pad's client log until a frame satisfies `predicate`; returns that frame."""
        with anyio.fail_after(HANG_GUARD_SECONDS):
            while True:
                frames = await anyio.to_thread.run_sync(self.log, pad)
                for frame in frames:
                    if predicate(frame):
                        return frame
                await anyio.sleep(0.005)


class ScriptedPerson:
    """Drives one `rustpad-test-server person`: commands go in as JSON lines, and every line it
    prints (`identity` first, then `server` messages and `done` reports) is kept in order."""

    def __init__(self, process: subprocess.Popen):
        import queue
        import threading

        self.process = process
        self.lines: "queue.Queue[dict[str, Any] | None]" = queue.Queue()
        self.seen: list[dict[str, Any]] = []

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.lines.put(json.loads(line))
            self.lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        first = self._next(HANG_GUARD_SECONDS)
        self.identity: int = first["identity"]
        self.text: str = first["text"]

    def _next(self, timeout: float) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        if line is None:
            raise RuntimeError(f"the person left ({self.process.wait()})")
        self.seen.append(line)
        return line

    async def expect(self, predicate: Any, timeout: float = HANG_GUARD_SECONDS) -> dict[str, Any]:
        """Waits for the next printed line that satisfies `predicate` (lines seen before the
        call are not looked at again) and returns it."""
        deadline = anyio.current_time() + timeout
        while True:
            left = deadline - anyio.current_time()
            if left <= 0:
                raise TimeoutError(f"the person never saw it; saw {self.seen[-5:]}")
            line = await anyio.to_thread.run_sync(self._next, left)
            if predicate(line):
                return line

    async def _command(self, command: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        done = await self.expect(lambda line: "done" in line)
        self.text = done["done"]["text"]
        return done["done"]

    async def set_text(self, text: str) -> dict[str, Any]:
        """Makes the pad's text `text` in one edit, acknowledged; returns {revision, text}."""
        return await self._command({"text": text})

    async def append(self, text: str) -> dict[str, Any]:
        """Adds `text` at the end of the pad as this person sees it; returns {revision, text}."""
        return await self._command({"append": text})

    async def keep(self, count: int) -> dict[str, Any]:
        """Sends `count` edits that change nothing (each keeps the whole text, as this server's
        marks do), one after another; returns {revision, text}."""
        return await self._command({"keep": count})

    async def point(self, cursors: list[int], selections: list[list[int]] = ()) -> None:
        """Puts this person's carets and selections at these offsets (code points)."""
        await self._command({"cursor": {"cursors": cursors, "selections": list(selections)}})
        # Rustpad has stored them once it relays them back.
        await self.expect(lambda line: cursor_of(line) is not None and cursor_of(line)[0] == self.identity)


async def append_while_a_person_types(rustpad: "RustpadServer", pad: str, append) -> None:
    """Seeds `pad`, has a person type into it while `append(text)` (a call that appends `text`
    through the server under test) runs, and checks that nothing either wrote was lost."""
    rustpad.seed(pad, "start\n")
    appended = " [added by the model]"
    report: dict[str, Any] = {}

    async def person() -> None:
        report.update(await rustpad.type(pad, seed=21, count=40, delay_us=3000, avoid=[appended]))

    async with anyio.create_task_group() as group:
        group.start_soon(person)
        await anyio.sleep(0.05)
        await append(appended)
    text = rustpad.text(pad)
    assert text == report["final_text"] and text.count(appended) == 1
    assert len(text) == len("start\n") + len("".join(report["typed"])) + len(appended)


async def append_while_the_pad_is_replaced(client: Client, rustpad: "RustpadServer", pad: str, text: str):
    """Appends `text` to `pad`, whose edit Rustpad takes and never acknowledges; once it is in,
    the pad is replaced by one of the same text (as a restarted Rustpad loads a pad from its
    storage), so the history the edit was made on is gone. The call's result."""
    rustpad.set_mode(pad, "no-ack")
    outcome = {}

    async def write() -> None:
        outcome["result"] = await call(client, "append_to_document", {"id": pad, "text": text})

    async with anyio.create_task_group() as group:
        group.start_soon(write)
        with anyio.fail_after(HANG_GUARD_SECONDS):
            while not rustpad.text(pad).endswith(text):
                await anyio.sleep(0.05)
        rustpad.seed(pad, rustpad.text(pad))
    return outcome["result"]


def cursor_of(line: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """(id, data) of a `UserCursor` a scripted person was sent, or None for any other line."""
    message = line.get("server", {})
    if isinstance(message, dict) and "UserCursor" in message:
        return message["UserCursor"]["id"], message["UserCursor"]["data"]
    return None


def client_info_named(name: str):
    """A predicate for `ClientInfo` frames that announce `name`."""

    def matches(frame: Any) -> bool:
        return (
            isinstance(frame, dict)
            and isinstance(frame.get("ClientInfo"), dict)
            and frame["ClientInfo"].get("name") == name
        )

    return matches


def changes_nothing(operation: list[Any]) -> bool:
    """An operation that keeps the whole text: what rustpad-mcp's marks are."""
    return all(isinstance(part, int) and part >= 0 for part in operation)


def edits(rustpad: RustpadServer, pad: str) -> list[dict]:
    """The Edit frames a client sent to `pad` that change its text (each write of rustpad-mcp
    first sends its mark, edits that keep the whole text: see `marks`)."""
    return [
        frame["Edit"]
        for frame in rustpad.log(pad)
        if "Edit" in frame and not changes_nothing(frame["Edit"]["operation"])
    ]


def marks(rustpad: RustpadServer, pad: str) -> list[dict]:
    """The Edit frames sent to `pad` that keep the whole text."""
    return [
        frame["Edit"]
        for frame in rustpad.log(pad)
        if "Edit" in frame and changes_nothing(frame["Edit"]["operation"])
    ]


def frame_kinds(frames: list[Any]) -> list[str]:
    """The message type of each frame (`Edit`, `ClientInfo`, `CursorData`, ...)."""
    return [
        next(iter(frame)) if isinstance(frame, dict) and frame else repr(frame) for frame in frames
    ]


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> str:
    """Each era in turn, for a test that takes `era`."""
    return request.param


@pytest.fixture(scope="session")
def rustpad() -> Iterable[RustpadServer]:
    _require(MCP_BIN, "RUSTPAD_MCP_BIN")
    server = RustpadServer(_require(TEST_SERVER_BIN, "RUSTPAD_TEST_SERVER_BIN"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def pad_id_for(label: str) -> str:
    """A fresh pad id that still says which test made it."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.")[:60] or "pad"
    return f"{base}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def pad(request: pytest.FixtureRequest) -> str:
    """A pad id no other test uses."""
    return pad_id_for(request.node.name)


@pytest.fixture
def new_pad(request: pytest.FixtureRequest):
    """A factory of further unique pad ids for the same test."""
    return lambda suffix="": pad_id_for(f"{request.node.name}-{suffix}")


# ---------------------------------------------------------------------------------------------
# MCP clients
# ---------------------------------------------------------------------------------------------


@asynccontextmanager
async def mcp_client(
    mode: str = "legacy",
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    cwd: str | None = None,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """An SDK client on the rustpad-mcp binary (or `command`, run in `cwd`) with exactly `env`
    (see `minimal_env`).

    The SDK adds its usual safe variables (HOME, PATH, USER, ...) and nothing else; the host
    hands the component only RUSTPAD_* and ELICITATION anyway.
    """
    program, *arguments = command or [_require(MCP_BIN, "RUSTPAD_MCP_BIN")]
    parameters = StdioServerParameters(
        command=program,
        args=arguments,
        env=dict(env if env is not None else minimal_env()),
        cwd=cwd,
    )
    # (No deadline around the context itself: a cancel scope must not straddle the client's
    # task groups. Calls made through `call` have their own.)
    async with Client(parameters, mode=mode, **client_options) as client:
        yield client


@pytest.fixture
def open_client(rustpad: RustpadServer):
    """`open_client(mode, **env)`: a client whose server targets the test Rustpad.

    Pass RUSTPAD_URL=None to start it unconfigured.
    """

    def open_(mode: str = "legacy", **variables: str | None):
        variables.setdefault("RUSTPAD_URL", rustpad.url)
        return mcp_client(mode, minimal_env(**variables))

    return open_


async def call(
    client: Client, tool: str, arguments: dict[str, Any] | None = None
) -> CallToolResult:
    with anyio.fail_after(HANG_GUARD_SECONDS):
        return await client.call_tool(tool, arguments if arguments is not None else {})


def text_of(result: CallToolResult) -> str:
    """The single text block of a result."""
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert block.type == "text", block
    return block.text


def without_connections(authors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`get_changes` authors without their connection numbers (which depend on how many
    connections the test Rustpad has seen), once each is checked to have some."""
    for author in authors:
        numbers = author["connections"]
        assert numbers and all(isinstance(n, int) and n >= 0 for n in numbers), author
    return [{key: value for key, value in author.items() if key != "connections"} for author in authors]


def ok(result: CallToolResult) -> dict[str, Any]:
    """Asserts success and returns the structured content."""
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


def failed(result: CallToolResult) -> str:
    """Asserts an isError result and returns its message."""
    assert result.is_error, f"expected an error, got {result.structured_content!r}"
    assert result.structured_content is None
    return text_of(result)


# ---------------------------------------------------------------------------------------------
# The binary as a plain process
# ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    messages: list[dict[str, Any]] = field(default_factory=list)

    def response(self, request_id: Any) -> dict[str, Any]:
        for message in self.messages:
            if message.get("id") == request_id:
                return message
        raise AssertionError(f"no response with id {request_id!r} in {self.messages!r}")


def run_server(env: Mapping[str, str], messages: Iterable[Mapping[str, Any]] = ()) -> Run:
    """Runs the binary with exactly `env`, writes `messages` (JSON-RPC) and closes stdin.

    The server answers what it was sent and exits at end of input; a configuration it refuses
    stops it before it reads anything.
    """
    payload = "".join(json.dumps(message) + "\n" for message in messages)
    done = subprocess.run(
        [_require(MCP_BIN, "RUSTPAD_MCP_BIN")],
        input=payload,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
    )
    parsed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return Run(done.returncode, done.stdout, done.stderr, parsed)


def initialize_message(request_id: Any = 0, version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def legacy_session(*requests: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """initialize + initialized, then `requests`."""
    return [initialize_message(), INITIALIZED, *requests]


def request(
    request_id: Any, method: str, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message



# Test-server modes whose snapshot no client may trust (and so never write on).
UNTRUSTWORTHY = [
    "malformed-float",
    "malformed-zero",
    "malformed-retain-past-end",
    "malformed-not-covering",
    "history-gap",
    "non-integer-id",
    "null-frame",
    "array-frame",
    "hostile-message",
    "huge-history",
    "close-mid-snapshot",
    "oversized-frame",
]
