"""Arguments a model (or a prompt injection steering it) might send, beyond what
test_write_tools.py already refuses: ids that try to be paths, queries, fragments or look-alikes
around a real pad, on every pad tool; arguments of many MiB; unknown arguments on every tool;
wrong types including null for required arguments and a non-object `arguments`; a 10 KB
confirm_token. Each is an input error (isError), answered without touching Rustpad: the real
pad's client log stays empty, its text unchanged, and no pad is created.

Unpaired surrogates in JSON strings are in tests/host-tests/tests/hostile.rs (the raw driver sends them)."""

from __future__ import annotations

import pytest

from conftest import (
    ERAS,
    MAX_DOCUMENT_CHARS,
    call,
    failed,
    legacy_session,
    minimal_env,
    ok,
    request,
    run_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=ERAS)
async def client(request, open_client):
    async with open_client(request.param, ELICITATION="false") as client:
        yield client


# The pad tools with otherwise valid arguments; `id` is filled in per case.
PAD_TOOLS = [
    ("get_document", {}),
    ("get_document_info", {}),
    ("create_document", {"text": "created"}),
    ("set_document", {"text": "replaced"}),
    ("append_to_document", {"text": "X"}),
    ("replace_in_document", {"search": "original", "replace": "changed"}),
    ("set_language", {"language": "rust"}),
]


def tricky_ids(pad: str) -> list[str]:
    """Ids that, read as a path, URL or look-alike, could reach `pad` (or another pad)."""
    return [
        f"../{pad}",
        f"..%2F{pad}",
        f"{pad}/..",
        f"x/../{pad}",
        f"{pad}/",
        f"/{pad}",
        f"{pad}%2Fx",
        f"{pad}%2F..%2Fx",
        f"{pad}%00",
        f"{pad}\x00",
        f"{pad}?x=1",
        f"{pad}?",
        f"{pad}#x",
        f"{pad}#",
        f"{pad}\\x",
        f"{pad};x",
        f"{pad}:x",
        f"{pad}@x",
        f" {pad}",
        f"{pad}\n",
        f"{pad}\u2215x",  # division slash
        f"{pad}\uff0fx",  # fullwidth solidus
        f"{pad}\u2024\u2024",  # one dot leaders
        f"{pad}\u202e",  # right-to-left override
        f"{pad}\u200b",  # zero width space
        f"{pad}\u0301",  # combining acute accent
        "\uff41\uff42",  # fullwidth "ab"
        "\u0130d",  # capital I with dot: lower-cases to two code points
        "\u0661\u0662",  # Arabic-Indic digits
        "\u2460",  # circled digit one
        "\U0001f389",
    ]


async def test_ids_with_path_tricks_are_input_errors_on_every_pad_tool(client, rustpad, pad):
    rustpad.seed(pad, "original")
    before = rustpad.stats()["num_documents"]
    problems = []
    for bad_id in tricky_ids(pad):
        for tool, arguments in PAD_TOOLS:
            result = await call(client, tool, {"id": bad_id, **arguments})
            if not result.is_error:
                problems.append(f"{tool} accepted id {bad_id!r}")
                continue
            message = failed(result)
            if "id" not in message:
                problems.append(f"{tool} {bad_id!r}: the error does not name the id: {message!r}")
    assert not problems, "\n".join(problems)
    assert rustpad.raw_log(pad) == []
    assert rustpad.text(pad) == "original"
    assert rustpad.stats()["num_documents"] == before


NINE_MB = 9 * 1000 * 1000


# (tool, the 9 MB argument, the other arguments, what the error must name)
NINE_MB_CASES = [
    ("append_to_document", "text", {}, str(MAX_DOCUMENT_CHARS)),
    ("set_document", "text", {}, str(MAX_DOCUMENT_CHARS)),
    ("create_document", "text", {}, str(MAX_DOCUMENT_CHARS)),
    ("replace_in_document", "replace", {"search": "original"}, "replace"),
    ("replace_in_document", "search", {"replace": "b"}, "search"),
    ("get_document", "id", {}, "id"),
    ("set_language", "language", {}, "language"),
    ("append_to_document", "padding", {"text": "x"}, "padding"),
    ("set_document", "confirm_token", {"text": "x"}, "confirm_token"),
]


@pytest.mark.parametrize(
    "tool,big,others,named",
    [pytest.param(*case, id=f"{case[0]}-{case[1]}") for case in NINE_MB_CASES],
)
async def test_a_9_mb_argument_is_an_input_error(client, rustpad, pad, tool, big, others, named):
    rustpad.seed(pad, "original")
    # Two-byte characters in text, so the limit is met in neither bytes nor code points.
    value = "é" * (NINE_MB // 2) if big == "text" else "x" * NINE_MB
    arguments = {"id": pad, **others, big: value}
    message = failed(await call(client, tool, arguments))
    assert named in message, message[:500]
    # The refusal says what is wrong without echoing the argument back.
    assert len(message) < 2_000, len(message)
    assert rustpad.raw_log(pad) == []
    assert rustpad.text(pad) == "original"
    assert ok(await call(client, "get_stats", {}))["database_size"] == 0


@pytest.mark.parametrize("tool,arguments", PAD_TOOLS)
async def test_an_unknown_argument_stops_every_pad_tool_before_it_connects(
    client, rustpad, pad, tool, arguments
):
    rustpad.seed(pad, "original")
    for extra in [{"path": "../etc/passwd"}, {"ID": pad}, {"": 1}, {"id ": pad}]:
        message = failed(await call(client, tool, {"id": pad, **arguments, **extra}))
        assert "unknown argument" in message, (extra, message)
    assert rustpad.raw_log(pad) == []
    assert rustpad.text(pad) == "original"


WRONG_TYPES = [
    ("get_document", {"id": None}),
    ("get_document", {"id": ["a"]}),
    ("get_document", {"id": {"id": "a"}}),
    ("get_document", {"id": True}),
    ("get_document_info", {"id": 1.5}),
    ("create_document", {"id": 7}),
    ("create_document", {"text": 7}),
    ("create_document", {"language": ["rust"]}),
    ("set_document", {"text": ["replaced"]}),
    ("set_document", {"text": {"text": "replaced"}}),
    ("set_document", {"text": "replaced", "confirm_token": 12345}),
    ("append_to_document", {"text": None}),
    ("append_to_document", {"text": False}),
    ("replace_in_document", {"search": None, "replace": "b"}),
    ("replace_in_document", {"search": "original", "replace": None}),
    ("replace_in_document", {"search": ["original"], "replace": "b"}),
    ("replace_in_document", {"search": "original", "replace": "b", "replace_all": 1}),
    ("replace_in_document", {"search": "original", "replace": "b", "replace_all": "true"}),
    ("set_language", {"language": None}),
    ("set_language", {"language": {"name": "rust"}}),
    ("get_stats", {"id": None}),
]


@pytest.mark.parametrize("tool,arguments", WRONG_TYPES)
async def test_wrong_types_and_null_for_required_are_input_errors(
    client, rustpad, pad, tool, arguments
):
    rustpad.seed(pad, "original")
    if "id" not in arguments and tool != "get_stats":
        arguments = {"id": pad, **arguments}
    failed(await call(client, tool, arguments))
    assert rustpad.raw_log(pad) == []
    assert rustpad.text(pad) == "original"


@pytest.mark.parametrize("arguments", [["id", "x"], "id=x", 5, True])
def test_arguments_that_are_not_an_object_are_refused(rustpad, pad, arguments):
    # The SDK will not send these; a raw client can. A JSON-RPC invalid-params error or an
    # isError result are both clear refusals; nothing may reach Rustpad.
    rustpad.seed(pad, "original")
    run = run_server(
        minimal_env(RUSTPAD_URL=rustpad.url),
        legacy_session(
            request(1, "tools/call", {"name": "append_to_document", "arguments": arguments}),
            request(2, "ping"),
        ),
    )
    assert run.returncode == 0, run.stderr
    reply = run.response(1)
    refused = reply.get("error", {}).get("code") == -32602 or reply.get("result", {}).get(
        "isError"
    )
    assert refused, reply
    assert run.response(2)["result"] == {}
    assert rustpad.raw_log(pad) == []


async def test_a_10_kb_confirm_token_is_an_input_error_and_not_echoed(client, rustpad, pad):
    rustpad.seed(pad, "original")
    for token in ["A" * 10_240, "🎉" * 2_560, "0" * 10_240]:
        for tool, arguments in [
            ("set_document", {"text": "replaced"}),
            ("replace_in_document", {"search": "i", "replace": "I", "replace_all": True}),
        ]:
            message = failed(
                await call(client, tool, {"id": pad, **arguments, "confirm_token": token})
            )
            assert "confirm_token" in message, message[:300]
            assert token[:100] not in message
            assert len(message) < 2_000
    assert rustpad.raw_log(pad) == []
    assert rustpad.text(pad) == "original"
