"""What wasmCloud's `wash dev` itself refuses, whatever the component it runs would do: the probe
component (tests/probe-guest, built with `wasi-http`) tries outbound HTTP, name lookups, raw TCP
and memory under the very config the product component runs with
(tests/wasmcloud/dev/.wash/config.yaml), which grants exactly Rustpad's origin.

Outbound HTTP outside `allowedHosts` and name lookups outside `allowedIpNameLookups` are refused
by wash. Raw TCP outside the lists is only counted in `wash dev` (logged at debug and allowed;
`wash host --socket-egress enforce` refuses it in production): asserted as it is, so that a later
wash that enforces it shows here. The per-instance memory cap (256 MiB, wash's
WASMTIME_POOLING_MAX_MEMORY_SIZE) fails an allocation past it without harming the host.
"""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator

import pytest

from wasm_hosts import PROBE, RUSTPAD_MACHINE, RUSTPAD_MACHINE_PORT, HostProcess, Place, needs, place, wait_until


@pytest.fixture(scope="module")
def machine(rustpad) -> Iterator[Place]:
    with place("wash", rustpad) as at:
        yield at


@pytest.fixture(scope="module")
def probe(machine: Place) -> Iterator[HostProcess]:
    needs(PROBE.exists(), f"{PROBE} is missing: run `make build`")
    with machine.start(component=PROBE) as host:
        yield host


def ask(host: HostProcess, what: str) -> str:
    url = host.url.removesuffix("/mcp") + what
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read().decode().strip()


@pytest.fixture
def outside_listener() -> Iterator[tuple[str, int]]:
    """A TCP listener on this machine's end of the veth pair: an address no list names."""
    with socket.socket() as listener:
        listener.bind(("10.231.0.1", 0))
        listener.listen()
        listener.settimeout(10)
        accepted = threading.Thread(target=lambda: listener.accept()[0].close(), daemon=True)
        accepted.start()
        yield listener.getsockname()


def test_outbound_http_goes_only_where_the_config_allows(probe, machine):
    assert ask(probe, f"/http?url=http://{RUSTPAD_MACHINE}:{RUSTPAD_MACHINE_PORT}/api/stats") == "status 200"
    assert ask(probe, "/http?url=http://10.231.0.1:9/") == "refused: ErrorCode::HttpRequestDenied"
    assert ask(probe, f"/http?url=http://{RUSTPAD_MACHINE}:9/api/stats") == "refused: ErrorCode::HttpRequestDenied"


def test_no_name_is_looked_up(probe):
    for name in ("localhost", RUSTPAD_MACHINE, "example.net"):
        assert ask(probe, f"/lookup?name={name}") == "refused: permanent-resolver-failure", name


def test_raw_tcp_outside_the_lists_is_counted_not_refused_in_wash_dev(probe, outside_listener):
    host, port = outside_listener
    assert ask(probe, f"/tcp?address={host}:{port}") == f"ok connected to {host}:{port}"
    assert wait_until(lambda: any(f"{host}:{port}" in line for line in probe.count_mode_refusals())), "".join(probe.output[-20:])
    # 127.0.0.1 inside a workload is the workload's own network, not this machine's.
    assert ask(probe, "/tcp?address=127.0.0.1:9") == "refused: connection-refused"


def test_memory_past_the_cap_fails_the_request_not_the_host(probe):
    assert ask(probe, "/memory?mib=200").startswith("ok 200 MiB")
    assert ask(probe, "/memory?mib=300").startswith("refused: ")
    assert ask(probe, "/memory?mib=1").startswith("ok 1 MiB")
