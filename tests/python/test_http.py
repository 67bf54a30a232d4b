"""rustpad-mcp --http: MCP's Streamable HTTP transport, through the official Python SDK and on
the raw wire.

- Both revisions over HTTP: 2026-07-28 statelessly, 2025-11-25 in a session whose dialogs travel
  on the response stream.
- Replicas: two processes sharing a seal key behind a round-robin proxy; a confirmation asked on
  one and answered on the other executes exactly once, and a replayed approval asks again.

The gate and the limits are test_http_gate.py's; the harness is http_harness.py."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import anyio
import pytest

from conftest import (
    ALL_TOOLS,
    HANG_GUARD_SECONDS,
    RustpadServer,
    call,
    edits,
    ok,
)
from http_harness import (
    JSON_HEADERS,
    LEGACY,
    MODERN,
    TOKEN,
    TOKEN_PATTERN,
    Exchange,
    OpenCall,
    exchange,
    guarded_replace,
    http_client,
    http_server,
    LegacySession,
    modern_call,
    modern_headers,
    modern_request,
    Person,
    replace_everywhere,
    two_replicas,
)

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------------------------
# Both revisions through the SDK
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto", MODERN])
async def test_the_sdk_reads_and_writes_over_http(rustpad: RustpadServer, pad: str, mode: str):
    rustpad.seed(pad, "hello")
    with http_server(rustpad) as server:
        async with http_client(server.url, mode) as client:
            assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ALL_TOOLS
            read = await call(client, "get_document", {"id": pad})
            assert ok(read)["text"] == "hello"
            ok(await call(client, "append_to_document", {"id": pad, "text": " world"}))
    assert rustpad.text(pad) == "hello world"


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_confirmation_dialog_works_over_http(rustpad: RustpadServer, pad: str, mode: str):
    """2025-11-25: the question travels on the call's event stream and the answer comes back in
    a POST; 2026-07-28: input_required and a retry."""
    rustpad.seed(pad, "a-b-a")
    person = Person()
    with http_server(rustpad) as server:
        async with http_client(server.url, mode, elicitation_callback=person) as client:
            result = await replace_everywhere(client, pad, "a", "c")
            assert ok(result)["replacements"] == 2
    assert len(person.asked) == 1
    assert person.asked[0].startswith(f'This will replace 2 occurrences in pad "{pad}".')
    assert rustpad.text(pad) == "c-b-c"


async def test_a_bearer_token_gets_the_sdk_in(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "x")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with http_client(server.url, MODERN, headers) as client:
            assert ok(await call(client, "get_document", {"id": pad}))["text"] == "x"


# ---------------------------------------------------------------------------------------------
# Replicas
# ---------------------------------------------------------------------------------------------


async def test_a_confirmation_asked_on_one_replica_and_answered_on_another_runs_once(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "cat cat cat")
    person = Person()
    with two_replicas(rustpad) as balancer:
        async with http_client(balancer.url, MODERN, elicitation_callback=person) as client:
            result = await replace_everywhere(client, pad, "cat", "cats")
            assert ok(result)["replacements"] == 3
        served = balancer.calls()
    assert len(person.asked) == 1
    # The question came from one replica and the retry went to the other.
    assert len(served) == 2 and served[0] != served[1], balancer.served
    assert rustpad.text(pad) == "cats cats cats"
    assert len(edits(rustpad, pad)) == 1


async def test_an_approval_replayed_at_the_other_replica_asks_again(
    rustpad: RustpadServer, pad: str
):
    """The replacement keeps the match count (cat -> cats), so only the content binding can
    tell that the approval was used; the second replica never saw it spent."""
    rustpad.seed(pad, "cat cat")
    arguments = {"id": pad, "search": "cat", "replace": "cats", "replace_all": True}
    with two_replicas(rustpad) as balancer:
        first, second = (backend.url for backend in balancer.backends)
        asked = modern_call(first, 1, "replace_in_document", arguments)["result"]
        assert asked["resultType"] == "input_required"
        (key,) = asked["inputRequests"]
        approval = {
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            "requestState": asked["requestState"],
        }
        done = modern_call(second, 2, "replace_in_document", arguments, **approval)["result"]
        assert done["resultType"] == "complete" and not done.get("isError"), done
        assert rustpad.text(pad) == "cats cats"
        for replica in (first, second):
            replayed = modern_call(replica, 3, "replace_in_document", arguments, **approval)
            assert replayed["result"]["resultType"] == "input_required", replayed
    assert rustpad.text(pad) == "cats cats"


async def test_a_token_spent_on_one_replica_does_not_work_again_on_another(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "cat cat")
    arguments = {"id": pad, "search": "cat", "replace": "cats", "replace_all": True}
    with two_replicas(rustpad, ELICITATION="false") as balancer:
        first, second = (backend.url for backend in balancer.backends)
        asked = modern_call(first, 1, "replace_in_document", arguments)["result"]
        (token,) = TOKEN_PATTERN.findall(asked["content"][0]["text"])
        confirmed = {**arguments, "confirm_token": token}
        done = modern_call(second, 2, "replace_in_document", confirmed)["result"]
        assert not done.get("isError"), done
        replayed = modern_call(first, 3, "replace_in_document", confirmed)["result"]
        assert replayed["isError"]
        # The pad no longer matches what was approved.
        assert "has changed since this confirmation token was issued" in replayed["content"][0]["text"], replayed
    assert rustpad.text(pad) == "cats cats"


# ---------------------------------------------------------------------------------------------
# 2025-11-25 sessions on the wire
# ---------------------------------------------------------------------------------------------


async def test_a_session_ends_with_delete_and_is_then_unknown(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        listed = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert listed.status == 200
        assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ALL_TOOLS
        ended = exchange(server.url, None, method="DELETE", headers={"Mcp-Session-Id": session.id})
        assert ended.status == 204
        gone = session.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert gone.status == 404
        assert "initialize again" in gone.body.decode()
        # Headers a legacy client sends must agree with the body too.
        create = {"name": "create_document", "arguments": {}}
        smuggled = exchange(
            server.url,
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": create},
            headers={"Mcp-Session-Id": LegacySession(server.url).id, "Mcp-Name": "get_stats"},
        )
        assert smuggled.status == 400 and smuggled.json()["error"]["code"] == -32020
        # Requests must name the revision the session agreed on.
        wrong_revision = exchange(
            server.url,
            {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
            headers={"Mcp-Session-Id": LegacySession(server.url).id, "MCP-Protocol-Version": "2025-06-18"},
        )
        assert wrong_revision.status == 400
        assert "2025-11-25" in wrong_revision.json()["error"]["message"]
        # A made-up session is just as unknown.
        session.id = "0" * 32
        assert session.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status == 404


async def test_a_legacy_request_without_its_session_is_a_bad_request(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        answer = exchange(server.url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert answer.status == 400
        assert answer.json()["error"]["code"] == -32600
        assert "initialize" in answer.json()["error"]["message"]
        # A revision this server does not speak is refused before anything else.
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert exchange(server.url, ping, headers={"MCP-Protocol-Version": LEGACY}).status == 200
        unknown = exchange(server.url, ping, headers={"MCP-Protocol-Version": "1900-01-01"})
        assert unknown.status == 400
        assert "2025-11-25" in unknown.json()["error"]["message"]


async def test_a_dialog_travels_on_the_call_stream_and_the_answer_in_a_post(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(7, pad))
        assert open_call.response.getheader("Content-Type") == "text/event-stream"
        question = open_call.next_message()
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"].startswith("This will replace 2 occurrences")
        answer = {"action": "accept", "content": {"confirm": True}}
        posted = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert posted.status == 202 and posted.body == b""
        (response,) = open_call.rest()
        assert response["id"] == 7
        assert response["result"]["structuredContent"]["replacements"] == 2
        # The question is closed: a second answer has nothing to go to.
        again = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert again.status == 400
    assert rustpad.text(pad) == "b b"


def withdrawal_of(question: dict[str, Any]) -> dict[str, Any]:
    """The notice withdrawing `question` once its call ended without the answer."""
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {
            "requestId": question["id"],
            "reason": "the call that asked this has ended without an answer",
        },
    }


async def test_a_cancelled_call_withdraws_its_question_and_sends_no_response(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(8, pad))
        question = open_call.next_message()
        session.cancel(8)
        # The dialog is withdrawn on the stream before it closes; the call itself says nothing more.
        assert open_call.rest() == [withdrawal_of(question)]
        answer = {"action": "accept", "content": {"confirm": True}}
        late = session.post({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        assert late.status == 400
    assert rustpad.text(pad) == "a a"


async def test_a_call_cancelled_before_it_asks_gets_an_empty_stream(
    rustpad: RustpadServer, pad: str
):
    rustpad.set_mode(pad, "silent-after-identity")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        call = {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "append_to_document", "arguments": {"id": pad, "text": "x"}},
        }
        answers: list[Exchange] = []
        caller = threading.Thread(target=lambda: answers.append(session.post(call)))
        caller.start()
        # The call is running once it has spoken on the pad's socket.
        await rustpad.wait_for_frame(pad, lambda frame: True)
        session.cancel(9)
        caller.join(timeout=HANG_GUARD_SECONDS)
        (answer,) = answers
        assert answer.status == 200
        assert answer.headers["content-type"] == "text/event-stream"
        assert answer.messages() == []
    assert not any("error" in line.lower() for line in server.stderr), server.stderr


async def test_a_request_id_in_use_is_refused_until_its_call_ends(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(1, pad))
        question = open_call.next_message()
        again = session.post(guarded_replace(1, pad))
        assert again.status == 400
        assert "still running" in again.json()["error"]["message"]
        session.cancel(1)
        assert open_call.rest() == [withdrawal_of(question)]
        listed = session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert listed.status == 200
    assert rustpad.text(pad) == "a a"


async def test_a_client_that_takes_no_event_stream_is_told_it_cannot_be_asked(
    rustpad: RustpadServer, pad: str
):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        answer = exchange(
            server.url,
            guarded_replace(1, pad),
            headers={
                "Accept": "application/json",
                "Mcp-Session-Id": session.id,
                "MCP-Protocol-Version": LEGACY,
            },
        )
        assert answer.status == 200
        assert answer.headers["content-type"] == "application/json"
        result = answer.json()["result"]
        assert result["isError"]
        assert "text/event-stream" in result["content"][0]["text"]
        assert "nothing was changed" in result["content"][0]["text"]
    assert rustpad.text(pad) == "a a"


async def test_calls_beyond_the_limit_are_told_to_retry(rustpad: RustpadServer, pad: str):
    rustpad.seed(pad, "a a")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_MAX_CALLS="1") as server:
        session = LegacySession(server.url)
        # A call waiting for a person holds its place.
        open_call = OpenCall(session, guarded_replace(1, pad))
        open_call.next_message()
        stats = {"name": "get_stats", "arguments": {}}
        busy = session.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": stats})
        assert busy.status == 503
        assert busy.headers["retry-after"] == "1"
        assert busy.json()["id"] == 2
        # Listing and discovery (health checks) are answered however busy.
        assert session.post({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).status == 200
        discover = exchange(
            server.url, modern_request(5, "server/discover"), headers=modern_headers("server/discover")
        )
        assert discover.status == 200
        session.cancel(1)
        open_call.rest()
        again = session.post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": stats})
        assert again.status == 200


# ---------------------------------------------------------------------------------------------
# 2026-07-28 on the wire
# ---------------------------------------------------------------------------------------------


async def test_modern_errors_carry_their_http_status(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        # Headers that disagree with the body.
        wrong = exchange(
            server.url, modern_request(1, "tools/list"), headers=modern_headers("prompts/list")
        )
        assert wrong.status == 400
        assert wrong.json()["error"]["code"] == -32020 and wrong.json()["id"] == 1
        unnamed = exchange(
            server.url,
            modern_request(2, "tools/call", {"name": "get_stats", "arguments": {}}),
            headers=modern_headers("tools/call"),
        )
        assert unnamed.status == 400 and "Mcp-Name" in unnamed.json()["error"]["message"]
        # A method 2026-07-28 does not have.
        missing = exchange(server.url, modern_request(3, "ping"), headers=modern_headers("ping"))
        assert missing.status == 404 and missing.json()["error"]["code"] == -32601
        # _meta without the client's capabilities.
        request = modern_request(4, "tools/list")
        del request["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        incomplete = exchange(server.url, request, headers=modern_headers("tools/list"))
        assert incomplete.status == 400 and incomplete.json()["error"]["code"] == -32602
        # A revision this server does not speak.
        request = modern_request(5, "tools/list")
        request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
        headers = {**modern_headers("tools/list"), "MCP-Protocol-Version": "2099-01-01"}
        unsupported = exchange(server.url, request, headers=headers)
        assert unsupported.status == 400
        assert unsupported.json()["error"]["data"]["requested"] == "2099-01-01"
        # A tool error is a result, not an HTTP error.
        failing = exchange(
            server.url,
            modern_request(6, "tools/call", {"name": "get_document", "arguments": {}}),
            headers=modern_headers("tools/call", "get_document"),
        )
        assert failing.status == 200 and failing.json()["result"]["isError"]
        # A routed key given twice is refused, so headers cannot name one tool while the body
        # runs another.
        body = json.dumps(modern_request(8, "tools/call", {"name": "get_stats", "arguments": {}}))
        doubled = body.replace('"name": "get_stats"', '"name": "get_stats", "name": "create_document"')
        assert doubled != body
        smuggled = exchange(server.url, doubled, headers=modern_headers("tools/call", "get_stats"))
        assert smuggled.status == 400 and smuggled.json()["error"]["code"] == -32600
        assert "duplicate field" in smuggled.json()["error"]["message"]
        # A routed value that cannot be read is refused rather than routed on a guess.
        unpaired = body.replace('"name": "get_stats"', '"name": "get_stats\\ud800"')
        assert unpaired != body
        unreadable = exchange(server.url, unpaired, headers=modern_headers("tools/call", "get_stats"))
        assert unreadable.status == 400 and unreadable.json()["error"]["code"] == -32700
        # Elsewhere it is the component's to judge, as on stdio: not text, so an input error.
        unpaired = body.replace('"arguments": {}', '"arguments": {"x": "\\ud800"}')
        assert unpaired != body
        judged = exchange(server.url, unpaired, headers=modern_headers("tools/call", "get_stats"))
        assert judged.status == 200 and judged.json()["result"]["isError"]
        # No session is minted or needed, and a stale session header is ignored.
        listed = exchange(
            server.url,
            modern_request(7, "tools/list"),
            headers={**modern_headers("tools/list"), "Mcp-Session-Id": "f" * 32},
        )
        assert listed.status == 200 and "mcp-session-id" not in listed.headers


async def test_closing_a_modern_request_cancels_its_call(rustpad: RustpadServer, pad: str):
    """Without sessions, the connection is the call: closing it stops the call and gives back
    its place (here the only one)."""
    rustpad.set_mode(pad, "silent-after-identity")
    with http_server(rustpad, RUSTPAD_MCP_HTTP_MAX_CALLS="1") as server:
        message = modern_request(1, "tools/call", {"name": "append_to_document", "arguments": {"id": pad, "text": "x"}})
        body = json.dumps(message).encode()
        headers = {**JSON_HEADERS, **modern_headers("tools/call", "append_to_document")}
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=HANG_GUARD_SECONDS) as hanging:
            hanging.sendall(head.encode() + body)
            await rustpad.wait_for_frame(pad, lambda frame: True)
            stats = modern_request(2, "tools/call", {"name": "get_stats", "arguments": {}})
            busy = exchange(server.url, stats, headers=modern_headers("tools/call", "get_stats"))
            assert busy.status == 503
        # Closed: the call stops and its place is free again. Left running, it would hold the
        # place until the component gave up on the silent pad (20 s), so the wait is bounded
        # well below that; this tells the two apart, and says nothing about speed.
        for _ in range(10 * 20):
            answer = exchange(server.url, stats, headers=modern_headers("tools/call", "get_stats"))
            if answer.status != 503:
                break
            await anyio.sleep(0.05)
        assert answer.status == 200, answer.body
