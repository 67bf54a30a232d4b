"""The install channels: what `cargo install`, a wheel and the npm packages put on a machine.

`make package-test` builds the packages, installs each into an empty place
(tests/package/install.sh) and names the installed commands in RUSTPAD_MCP_INSTALLED, a JSON
object `{channel: {"command": [...], "cwd": ...}}`; without it these tests are skipped. Each
installed server must complete a handshake, list the tools, answer get_stats against the test
Rustpad, and carry the component packaging recorded.
"""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ALL_TOOLS, MCP_BIN, ROOT, call, minimal_env, mcp_client, ok

INSTALLED = json.loads(os.environ.get("RUSTPAD_MCP_INSTALLED") or "{}")
SHIPPED_COMPONENT = ROOT / "host" / "component" / "guest.wasm"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not INSTALLED, reason="make package-test installs the packages and runs these"),
]
CHANNELS = sorted(INSTALLED) or ["none"]


@pytest.mark.parametrize("channel", CHANNELS)
async def test_installed_server_answers_a_client(channel, rustpad):
    installed = INSTALLED[channel]
    env = minimal_env(RUSTPAD_URL=rustpad.url)
    async with mcp_client("legacy", env, command=installed["command"], cwd=installed.get("cwd")) as client:
        assert client.server_info.name == "rustpad-mcp"
        tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ALL_TOOLS
        stats = ok(await call(client, "get_stats", {}))
        assert stats["num_documents"] == rustpad.stats()["num_documents"]


@pytest.mark.parametrize("channel", CHANNELS)
def test_installed_server_carries_the_packaged_component(channel):
    installed = INSTALLED[channel]
    version = subprocess.run(
        [*installed["command"], "--version"],
        cwd=installed.get("cwd"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    digest = hashlib.sha256(SHIPPED_COMPONENT.read_bytes()).hexdigest()
    assert version.strip().endswith(f"(component sha256 {digest})"), version


def test_installed_packages_name_the_registry_entry():
    """The MCP registry checks ownership: npm by package.json's mcpName, PyPI by the mcp-name
    line of the description."""
    server_name = json.loads((ROOT / "server.json").read_text())["name"]
    npm_dir = Path(INSTALLED["npm"]["cwd"]) / "node_modules" / "@rustpad-mcp" / "sandboxed"
    assert json.loads((npm_dir / "package.json").read_text())["mcpName"] == server_name
    venv = Path(INSTALLED["wheel"]["command"][0]).parents[1]
    (metadata,) = venv.glob("lib/python*/site-packages/rustpad_mcp-*.dist-info/METADATA")
    assert f"mcp-name: {server_name}" in metadata.read_text()


def test_npm_launcher_without_its_platform_package_says_what_is_missing():
    answer = subprocess.run(
        ["npx", "--no-install", "rustpad-mcp"],
        cwd=os.environ["RUSTPAD_MCP_NPM_WITHOUT_BINARY"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode == 1
    assert answer.stdout == ""
    # Named as the launcher names it: Node.js's platform and architecture.
    node_platform = subprocess.run(
        ["node", "-p", "process.platform + '-' + process.arch"], capture_output=True, text=True, check=True
    ).stdout.strip()
    platform_package = f"@rustpad-mcp/sandboxed-{node_platform}"
    assert f"rustpad-mcp: {platform_package}, which carries this platform's binary, is not installed" in answer.stderr
    assert "--omit=optional" in answer.stderr


@pytest.mark.parametrize("channel", CHANNELS)
def test_installed_server_stops_on_a_bad_setting_as_the_binary_does(channel):
    """What wraps the binary (the npm launcher, the wheel's script) passes its status and its
    message on unchanged."""
    installed = INSTALLED[channel]
    env = minimal_env(RUSTPAD_URL="http://127.0.0.1:9", RUSTPAD_READ_ONLY="maybe")
    answer = subprocess.run(
        installed["command"],
        cwd=installed.get("cwd"),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode != 0
    assert answer.stdout == ""
    assert "RUSTPAD_READ_ONLY" in answer.stderr
    reference = subprocess.run(
        [str(MCP_BIN)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (answer.returncode, answer.stderr) == (reference.returncode, reference.stderr)
