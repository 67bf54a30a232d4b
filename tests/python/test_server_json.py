"""server.json, the MCP registry entry, holds what the registry requires and names the packages
that are really published (no registry package ships the registry's JSON schema to validate
against, so each rule the registry checks is a test here).

guest/tests/server_json.rs keeps its identity equal to the server's serverInfo.
"""

import json
import re
import tomllib

import pytest

from conftest import ROOT

SERVER = json.loads((ROOT / "server.json").read_text())
CRATE_VERSION = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["version"]
PYPROJECT = tomllib.loads((ROOT / "host" / "pyproject.toml").read_text())
PACKAGE_README = (ROOT / "host" / "README.md").read_text()
NPM_PACKER = (ROOT / "host" / "npm" / "pack.mjs").read_text()
README = (ROOT / "README.md").read_text()

REGISTRY_TYPES = {"npm", "pypi", "oci", "nuget", "mcpb"}
TRANSPORTS = {"stdio", "streamable-http", "sse"}
INPUT_FORMATS = {"string", "number", "boolean", "filepath"}


def packages_of(kind: str) -> list[dict]:
    return [p for p in SERVER["packages"] if p["registryType"] == kind]


def test_top_level_fields_the_registry_requires():
    assert re.fullmatch(r"https://static\.modelcontextprotocol\.io/schemas/\d{4}-\d{2}-\d{2}/server\.schema\.json", SERVER["$schema"])
    # Reverse-DNS namespace and a name; io.github.<owner>/ is what GitHub sign-in may publish.
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", SERVER["name"])
    assert 3 <= len(SERVER["name"]) <= 200
    assert SERVER["name"].startswith("io.github.rustpad-mcp/")
    assert 1 <= len(SERVER["description"]) <= 100
    # A version, never a range, and the crate's: one version for every channel.
    assert SERVER["version"] == CRATE_VERSION
    assert not re.search(r"[\^~><=*x]|\|\|", SERVER["version"])
    assert SERVER["repository"] == {"url": "https://github.com/rustpad-mcp/rustpad-mcp", "source": "github"}


@pytest.mark.parametrize("package", SERVER["packages"], ids=lambda p: p["registryType"])
def test_each_package_is_complete(package):
    assert package["registryType"] in REGISTRY_TYPES
    assert package["identifier"]
    assert package["version"] == CRATE_VERSION
    assert package["transport"] == {"type": "stdio"}
    names = [variable["name"] for variable in package["environmentVariables"]]
    assert len(names) == len(set(names))
    for variable in package["environmentVariables"]:
        assert set(variable) <= {"name", "description", "isRequired", "isSecret", "format", "default", "choices", "value"}
        assert variable["description"]
        assert variable["format"] in INPUT_FORMATS
        # Every variable offered is one the README documents.
        assert f"`{variable['name']}`" in README
    required = [v["name"] for v in package["environmentVariables"] if v.get("isRequired")]
    assert required == ["RUSTPAD_URL"]


def test_the_registry_types_it_understands_are_listed():
    # cargo is not a registry type the MCP registry knows; crates.io is in the README only.
    assert {p["registryType"] for p in SERVER["packages"]} == {"npm", "pypi", "oci"}


def test_npm_entry_is_the_package_pack_mjs_makes():
    (npm,) = packages_of("npm")
    assert f"const MAIN_PACKAGE = '{npm['identifier']}';" in NPM_PACKER
    # Not the TypeScript server's unscoped name.
    assert npm["identifier"] != "rustpad-mcp"
    # The registry verifies ownership by the package's mcpName.
    assert f"const MCP_NAME = '{SERVER['name']}';" in NPM_PACKER
    assert npm["runtimeHint"] == "npx"


def test_pypi_entry_is_the_wheel_maturin_makes():
    (pypi,) = packages_of("pypi")
    assert PYPROJECT["project"]["name"] == pypi["identifier"]
    assert PYPROJECT["project"]["readme"] == "README.md"
    # The registry verifies ownership by this line in the package's description.
    assert f"mcp-name: {SERVER['name']}" in PACKAGE_README
    assert pypi["runtimeHint"] == "uvx"


def test_the_readme_install_lines_name_the_same_packages():
    (npm,) = packages_of("npm")
    (pypi,) = packages_of("pypi")
    (oci,) = packages_of("oci")
    assert f"npx -y {npm['identifier']}" in README
    assert f"uvx {pypi['identifier']}" in README
    assert oci["identifier"] in README
