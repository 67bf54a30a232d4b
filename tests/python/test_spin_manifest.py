"""spin.toml, checked without Spin (which no registry our CI reaches ships): a version 2
manifest whose one component is the component for WebAssembly hosts, served at /mcp, allowed to
reach exactly the Rustpad origin of its RUSTPAD_URL (the HTTP origin and the socket's TCP
endpoint), and given only settings the component knows, no secrets."""

from __future__ import annotations

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
    "RUSTPAD_MCP_HTTP_HOSTS",
    "RUSTPAD_MCP_HTTP_ORIGINS",
}
SECRETS = {"RUSTPAD_SEAL_KEY", "RUSTPAD_MCP_HTTP_TOKEN"}


def component() -> dict:
    components = MANIFEST["component"]
    assert list(components) == ["rustpad-mcp"]
    return components["rustpad-mcp"]


def test_it_is_a_version_2_manifest_serving_the_component_at_mcp():
    assert MANIFEST["spin_manifest_version"] == 2
    assert MANIFEST["application"]["name"] == "rustpad-mcp"
    assert MANIFEST["trigger"]["http"] == [{"route": "/mcp", "component": "rustpad-mcp"}]
    # The path `make build` writes (Makefile: HTTP_WASM).
    makefile = (ROOT / "Makefile").read_text()
    built = re.search(r"^HTTP_WASM := (\S+)$", makefile, re.MULTILINE).group(1)
    assert component()["source"] == built


def test_outbound_hosts_are_exactly_the_rustpad_origin_over_http_and_tcp():
    url = urlsplit(component()["environment"]["RUSTPAD_URL"])
    assert url.scheme in ("http", "https") and url.hostname
    port = url.port or (443 if url.scheme == "https" else 80)
    assert component()["allowed_outbound_hosts"] == [
        f"{url.scheme}://{url.hostname}:{port}",
        f"tcp://{url.hostname}:{port}",
    ]


def test_the_environment_holds_only_settings_and_no_secrets():
    environment = component()["environment"]
    assert set(environment) <= COMPONENT_SETTINGS, set(environment) - COMPONENT_SETTINGS
    assert "RUSTPAD_MCP_HTTP_HOSTS" in environment
    assert not SECRETS & set(environment)
    assert not {key for key in component() if key not in {"source", "allowed_outbound_hosts", "environment"}}
