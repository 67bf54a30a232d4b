"""spin.toml, checked without Spin (which no registry our CI reaches ships) against Spin's own
matching rules, as its source has them (the files are named in spin.toml): a version 2 manifest
whose one component is the component for WebAssembly hosts, served at /mcp, allowed to reach
exactly the Rustpad origin of its RUSTPAD_URL over HTTP and exactly the IP address and port of
RUSTPAD_SOCKET_ADDRESS over TCP (Spin matches a tcp:// entry against the resolved address of a
connect, never a name, and lets a component look up no names), and given only settings the
component knows, no secrets."""

from __future__ import annotations

import copy
import ipaddress
import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = tomllib.loads((ROOT / "spin.toml").read_text())
COMPONENT_SETTINGS = {
    "RUSTPAD_URL",
    "RUSTPAD_READ_ONLY",
    "RUSTPAD_INSECURE_TLS",
    "RUSTPAD_ALLOW_TOOLS",
    "RUSTPAD_DENY_TOOLS",
    "ELICITATION",
    "RUSTPAD_SOCKET_ADDRESS",
    "RUSTPAD_MCP_HTTP_HOSTS",
    "RUSTPAD_MCP_HTTP_ORIGINS",
}
SECRETS = {"RUSTPAD_SEAL_KEY", "RUSTPAD_MCP_HTTP_TOKEN"}


def component(manifest: dict = MANIFEST) -> dict:
    components = manifest["component"]
    assert list(components) == ["rustpad-mcp"]
    return components["rustpad-mcp"]


def tcp_entry_problem(entry: str) -> str | None:
    """What Spin would make of a tcp:// entry: an IP (or CIDR) and a port, or nothing at all."""
    hostport = entry.removeprefix("tcp://")
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    try:
        ipaddress.ip_network(host, strict=False)
    except ValueError:
        return f"{entry}: Spin matches tcp:// entries against the IP address a socket connects to, so the name {host!r} would never match"
    if not port.isdigit():
        return f"{entry}: a tcp:// entry needs a port"
    return None


def outbound_problems(manifest: dict) -> list[str]:
    """Every way `manifest` does not hold the component to exactly Rustpad under Spin's rules."""
    settings = component(manifest)["environment"]
    url = urlsplit(settings["RUSTPAD_URL"])
    port = url.port or (443 if url.scheme == "https" else 80)
    entries = component(manifest)["allowed_outbound_hosts"]
    problems = []
    http = [entry for entry in entries if not entry.startswith("tcp://")]
    if http != [f"{url.scheme}://{url.hostname}:{port}"]:
        problems.append(f"the HTTP entries {http} are not exactly RUSTPAD_URL's origin")
    tcp = [entry for entry in entries if entry.startswith("tcp://")]
    problems += [problem for problem in map(tcp_entry_problem, tcp) if problem]
    try:
        literal = ipaddress.ip_address(url.hostname)
    except ValueError:
        literal = None
    socket = settings.get("RUSTPAD_SOCKET_ADDRESS")
    if socket is None and literal is None:
        problems.append("RUSTPAD_URL names a host and Spin looks up no names: RUSTPAD_SOCKET_ADDRESS must give the socket's IP and port")
    expected = socket or (f"[{literal}]:{port}" if literal and literal.version == 6 else f"{literal}:{port}")
    if tcp != [f"tcp://{expected}"]:
        problems.append(f"the tcp:// entries {tcp} are not exactly the socket's address {expected}")
    return problems


def test_it_is_a_version_2_manifest_serving_the_component_at_mcp():
    assert MANIFEST["spin_manifest_version"] == 2
    assert MANIFEST["application"]["name"] == "rustpad-mcp"
    assert MANIFEST["trigger"]["http"] == [{"route": "/mcp", "component": "rustpad-mcp"}]
    # The path `make build` writes (Makefile: HTTP_WASM).
    makefile = (ROOT / "Makefile").read_text()
    built = re.search(r"^HTTP_WASM\s*:= (\S+)$", makefile, re.MULTILINE).group(1)
    assert component()["source"] == built


def test_outbound_hosts_are_exactly_the_rustpad_origin_and_its_socket_address():
    assert outbound_problems(MANIFEST) == []


def test_a_host_name_in_a_tcp_entry_is_caught():
    named = copy.deepcopy(MANIFEST)
    component(named)["allowed_outbound_hosts"][1] = "tcp://rustpad.example.net:443"
    problems = outbound_problems(named)
    assert any("would never match" in problem for problem in problems), problems
    # Nor may the socket's address be dropped while RUSTPAD_URL names a host.
    unnamed = copy.deepcopy(MANIFEST)
    del component(unnamed)["environment"]["RUSTPAD_SOCKET_ADDRESS"]
    assert any("RUSTPAD_SOCKET_ADDRESS must" in p for p in outbound_problems(unnamed))
    # An IP in RUSTPAD_URL is its own socket address.
    literal = copy.deepcopy(MANIFEST)
    del component(literal)["environment"]["RUSTPAD_SOCKET_ADDRESS"]
    component(literal)["environment"]["RUSTPAD_URL"] = "http://10.0.0.5:3030"
    component(literal)["allowed_outbound_hosts"] = ["http://10.0.0.5:3030", "tcp://10.0.0.5:3030"]
    assert outbound_problems(literal) == []


def test_the_environment_holds_only_settings_and_no_secrets():
    environment = component()["environment"]
    assert set(environment) <= COMPONENT_SETTINGS, set(environment) - COMPONENT_SETTINGS
    assert "RUSTPAD_MCP_HTTP_HOSTS" in environment
    assert not SECRETS & set(environment)
    assert not {key for key in component() if key not in {"source", "allowed_outbound_hosts", "environment"}}
