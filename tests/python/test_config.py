"""Configuration from the environment: what stops startup (exit 1, a reason on stderr), what is
accepted, what it prints, and which tools it offers."""

from __future__ import annotations

import subprocess

import pytest
from mcp import MCPError

from catalogue import ESSENTIAL, TOOLS
from conftest import (
    ALL_TOOLS,
    ERAS,
    MCP_BIN,
    call,
    failed,
    legacy_session,
    minimal_env,
    request,
    run_server,
)

pytestmark = pytest.mark.anyio

READ_TOOLS = [tool.name for tool in TOOLS if tool.hints[0]]
ELICITATION_OFF_LINE = (
    "rustpad-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
)


def refuses(run, *reasons: str) -> None:
    """The server stopped at startup, served nothing and said why."""
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert run.stdout == ""
    for reason in reasons:
        assert reason in run.stderr, run.stderr


def list_tools_raw(env: dict) -> tuple[list[str], str]:
    run = run_server(env, legacy_session(request(1, "tools/list")))
    assert run.returncode == 0, run.stderr
    return [tool["name"] for tool in run.response(1)["result"]["tools"]], run.stderr


# -- ELICITATION -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["yes", "1", "off", "flase"])
def test_an_unclear_elicitation_value_stops_startup_naming_both_valid_values(value, rustpad):
    run = run_server(minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION=value), legacy_session())
    refuses(run, "ELICITATION", '"true"', '"false"')


def test_elicitation_false_is_accepted_in_any_case_and_spacing_and_said_once(rustpad):
    env = minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION=" FALSE ")
    run = run_server(
        env,
        legacy_session(
            request(1, "tools/list"),
            request(2, "tools/call", {"name": "get_stats", "arguments": {}}),
            request(3, "tools/call", {"name": "get_stats", "arguments": {}}),
        ),
    )
    assert run.returncode == 0, run.stderr
    assert len(run.response(1)["result"]["tools"]) == len(ALL_TOOLS)
    assert "isError" not in run.response(3)["result"]
    assert run.stderr.splitlines().count(ELICITATION_OFF_LINE) == 1, run.stderr


@pytest.mark.parametrize("value", ["true", " True ", ""])
def test_elicitation_on_prints_no_fallback_line(value, rustpad):
    run = run_server(minimal_env(RUSTPAD_URL=rustpad.url, ELICITATION=value), legacy_session())
    assert run.returncode == 0, run.stderr
    assert "ELICITATION=false" not in run.stderr


# -- tool filters and read-only ----------------------------------------------------------------


def test_an_allow_entry_that_matches_no_tool_stops_startup_naming_it(rustpad):
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_ALLOW_TOOLS="get_documnt"), legacy_session()
    )
    refuses(run, "RUSTPAD_ALLOW_TOOLS", "get_documnt", "get_document")


def test_a_deny_entry_that_matches_no_tool_stops_startup_naming_it(rustpad):
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_DENY_TOOLS="nope*"), legacy_session()
    )
    refuses(run, "RUSTPAD_DENY_TOOLS", "nope*")


def test_denying_every_read_tool_under_read_only_stops_startup(rustpad):
    env = minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_DENY_TOOLS="get_*,wait_*", RUSTPAD_READ_ONLY="true")
    refuses(run_server(env, legacy_session()), "empty tool list")


def test_allowing_a_write_tool_by_name_under_read_only_stops_startup_with_the_reason(rustpad):
    env = minimal_env(
        RUSTPAD_URL=rustpad.url,
        RUSTPAD_ALLOW_TOOLS="get_document,set_document",
        RUSTPAD_READ_ONLY="true",
    )
    refuses(run_server(env, legacy_session()), "set_document", "RUSTPAD_READ_ONLY")


def test_a_read_only_typo_stops_startup(rustpad):
    env = minimal_env(RUSTPAD_URL=rustpad.url, RUSTPAD_READ_ONLY="ture")
    refuses(run_server(env, legacy_session()), "RUSTPAD_READ_ONLY")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RUSTPAD_MCP_MAX_MEMORY", "10"),
        ("RUSTPAD_MCP_MAX_MEMORY", "2GB"),
        ("RUSTPAD_MCP_MAX_CALLS", "0"),
        ("RUSTPAD_MCP_MAX_CALLS", "many"),
    ],
)
def test_a_host_limit_that_is_not_a_number_in_range_stops_startup(rustpad, variable, value):
    run = run_server(minimal_env(RUSTPAD_URL=rustpad.url, **{variable: value}), legacy_session())
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert f"{variable} must be a whole number from" in run.stderr, run.stderr


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("value", ["true", "1", "YES"])
async def test_read_only_lists_exactly_the_read_tools(open_client, era, value):
    async with open_client(era, RUSTPAD_READ_ONLY=value) as client:
        tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == READ_TOOLS


@pytest.mark.parametrize("era", ERAS)
async def test_the_essential_preset_lists_exactly_five_tools(open_client, era):
    async with open_client(era, RUSTPAD_ALLOW_TOOLS="essential") as client:
        tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ESSENTIAL


def test_allow_and_deny_combine(rustpad):
    names, _ = list_tools_raw(
        minimal_env(
            RUSTPAD_URL=rustpad.url,
            RUSTPAD_ALLOW_TOOLS=" Get_* , set_language ",
            RUSTPAD_DENY_TOOLS="get_stats",
        )
    )
    assert names == ["get_document", "get_document_info", "get_changes", "set_language"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_filtered_tool_is_unknown_on_call(open_client, rustpad, pad, era):
    rustpad.seed(pad, "untouched")
    async with open_client(era, RUSTPAD_ALLOW_TOOLS="essential") as client:
        with pytest.raises(MCPError) as raised:
            await call(client, "set_language", {"id": pad, "language": "rust"})
        assert raised.value.code == -32602
        assert "set_language" in raised.value.message
    assert rustpad.log(pad) == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_read_only_server_does_not_know_the_write_tools(open_client, rustpad, pad, era):
    async with open_client(era, RUSTPAD_READ_ONLY="true") as client:
        with pytest.raises(MCPError) as raised:
            await call(client, "append_to_document", {"id": pad, "text": "x"})
        assert raised.value.code == -32602
    assert rustpad.log(pad) == []


# -- RUSTPAD_URL -------------------------------------------------------------------------------

SECRET = "s3cr3tValue42"


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{SECRET}@rustpad.example.net",
        f"https://{SECRET}@rustpad.example.net",
        f"https://rustpad.example.net/?token={SECRET}",
        f"https://rustpad.example.net/#{SECRET}",
        f"ftp://{SECRET}.example.net",
        f"{SECRET}:deadbeef",
        f"rustpad.example.net/{SECRET}",
    ],
)
def test_a_bad_url_stops_startup_without_echoing_it(url):
    run = run_server(minimal_env(RUSTPAD_URL=url), legacy_session())
    refuses(run, "RUSTPAD_URL")
    assert SECRET not in run.stderr


def test_plain_http_to_another_host_warns_but_starts():
    run = run_server(
        minimal_env(RUSTPAD_URL="http://rustpad.example.net"),
        legacy_session(request(1, "tools/list")),
    )
    assert run.returncode == 0, run.stderr
    assert len(run.response(1)["result"]["tools"]) == len(ALL_TOOLS)
    assert "warning" in run.stderr.lower()
    assert "unencrypted" in run.stderr


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "https://rustpad.example.net"],
)
def test_loopback_or_https_does_not_warn(url):
    run = run_server(minimal_env(RUSTPAD_URL=url), legacy_session())
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr.lower()


# -- unconfigured ------------------------------------------------------------------------------

VALID_ARGUMENTS = {
    "get_document": {"id": "a"},
    "get_document_info": {"id": "a"},
    "get_stats": {},
    "create_document": {"id": "a"},
    "set_document": {"id": "a", "text": "x"},
    "append_to_document": {"id": "a", "text": "x"},
    "replace_in_document": {"id": "a", "search": "x", "replace": "y"},
    "set_language": {"id": "a", "language": "rust"},
}


def test_unconfigured_starts_and_explains_on_stderr():
    run = run_server(minimal_env(), legacy_session(request(1, "tools/list")))
    assert run.returncode == 0, run.stderr
    assert [tool["name"] for tool in run.response(1)["result"]["tools"]] == ALL_TOOLS
    assert "RUSTPAD_URL" in run.stderr


@pytest.mark.parametrize("era", ERAS)
async def test_unconfigured_lists_every_tool_and_every_call_explains_the_setup(open_client, era):
    async with open_client(era, RUSTPAD_URL=None) as client:
        tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ALL_TOOLS
        for tool, arguments in VALID_ARGUMENTS.items():
            message = failed(await call(client, tool, arguments))
            assert "RUSTPAD_URL" in message, (tool, message)
            assert "https://" in message, (tool, message)


def test_an_empty_url_counts_as_unconfigured():
    run = run_server(minimal_env(RUSTPAD_URL="  "), legacy_session(request(1, "tools/list")))
    assert run.returncode == 0, run.stderr
    assert len(run.response(1)["result"]["tools"]) == len(ALL_TOOLS)


# -- the command line --------------------------------------------------------------------------


def test_the_server_takes_no_arguments():
    done = subprocess.run(
        [str(MCP_BIN), "--bogus"], env=minimal_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stdout == ""
    help_run = subprocess.run(
        [str(MCP_BIN), "--help"], env=minimal_env(), capture_output=True, text=True, timeout=60
    )
    assert help_run.returncode == 0
    for variable in ("RUSTPAD_URL", "RUSTPAD_READ_ONLY", "RUSTPAD_ALLOW_TOOLS", "ELICITATION"):
        assert variable in help_run.stdout


# -- RUSTPAD_URL forms that work ---------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("form", ["trailing-slashes", "upper-case-scheme", "localhost", "spaces"])
async def test_url_forms_are_normalised_and_links_follow_them(open_client, rustpad, pad, era, form):
    url, base = {
        "trailing-slashes": (rustpad.url + "///", rustpad.url),
        "upper-case-scheme": (rustpad.url.replace("http://", "HTTP://"), rustpad.url),
        "localhost": (
            f"http://localhost:{rustpad.port}",
            f"http://localhost:{rustpad.port}",
        ),
        "spaces": (f"  {rustpad.url}/  ", rustpad.url),
    }[form]
    rustpad.seed(pad, "reachable")
    async with open_client(era, RUSTPAD_URL=url) as client:
        document = await call(client, "get_document", {"id": pad})
        assert not document.is_error, document.content
        assert document.structured_content["text"] == "reachable"
        info = await call(client, "get_document_info", {"id": pad})
        assert not info.is_error, info.content
        assert info.structured_content["url"] == f"{base}/#{pad}"


@pytest.mark.parametrize("era", ERAS)
async def test_a_url_path_that_does_not_lead_to_rustpad_is_explained(
    open_client, rustpad, pad, era
):
    rustpad.seed(pad, "unreachable through the prefix")
    async with open_client(era, RUSTPAD_URL=rustpad.url + "/proxy") as client:
        message = failed(await call(client, "get_document", {"id": pad}))
        assert "404" in message
        assert "/api" in message
        message = failed(await call(client, "get_document_info", {"id": pad}))
        assert "404" in message
        assert "WebSocket" in message
    assert rustpad.log(pad) == []


@pytest.mark.parametrize("era", ERAS)
async def test_an_unreachable_instance_is_explained(open_client, pad, era):
    # Port 9 (discard) on loopback: nothing listens there.
    async with open_client(era, RUSTPAD_URL="http://127.0.0.1:9") as client:
        for tool, arguments in [
            ("get_document", {"id": pad}),
            ("get_document_info", {"id": pad}),
            ("append_to_document", {"id": pad, "text": "x"}),
        ]:
            message = failed(await call(client, tool, arguments))
            assert "RUSTPAD_URL" in message or "connect" in message, (tool, message)
