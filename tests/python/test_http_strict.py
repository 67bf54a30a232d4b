"""What an adversary tried against --http and lost, and answers that must mean one thing.

- Strangers (connections on which nothing has passed the gate yet) cannot keep an authorised
  client out: their share of the connections is bounded, and a newcomer pushes the oldest out.
- A person's answer that could be read two ways (a key given twice), or a null or malformed
  answer, changes nothing and ends the call at once as not understood, on stdio and on HTTP, in
  both eras where the field exists.
- Several Origin, Host or standard MCP headers, and a request target in absolute form naming
  another authority than Host, are refused.
"""

from __future__ import annotations

import http.client
import json
import resource
import socket
import subprocess
from typing import Any

import pytest

from conftest import HANG_GUARD_SECONDS, MCP_BIN, RustpadServer, minimal_env
from http_harness import (
    LEGACY,
    TOKEN,
    LegacySession,
    OpenCall,
    exchange,
    guarded_replace,
    http_server,
    modern_headers,
    modern_request,
)

pytestmark = pytest.mark.anyio

NOT_UNDERSTOOD = "rustpad-mcp: not confirmed (the answer was not understood). Pad \"{pad}\" was not changed."

# Answers to our elicitation/create, as the client's raw JSON-RPC response. `{id}` is the question.
AMBIGUOUS_RESPONSES = {
    "decline then accept": '{{"jsonrpc":"2.0","id":{id},"result":{{"action":"decline","content":{{"confirm":true}},"action":"accept"}}}}',
    "confirm false then true": '{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"confirm":false,"confirm":true}}}}}}',
    "two results": '{{"jsonrpc":"2.0","id":{id},"result":{{"action":"decline"}},"result":{{"action":"accept","content":{{"confirm":true}}}}}}',
    "null result": '{{"jsonrpc":"2.0","id":{id},"result":null}}',
    "result and error": '{{"jsonrpc":"2.0","id":{id},"result":{{"action":"accept","content":{{"confirm":true}}}},"error":{{"code":1,"message":"x"}}}}',
}

# inputResponses of a 2026-07-28 retry that could be read two ways.
AMBIGUOUS_INPUT_RESPONSES = {
    "decline then accept": '{"confirm":{"action":"decline","content":{"confirm":true},"action":"accept"}}',
    "two confirms": '{"confirm":{"action":"decline"},"confirm":{"action":"accept","content":{"confirm":true}}}',
}


def result_text(response: dict[str, Any]) -> str:
    result = response["result"]
    assert result.get("isError") is True, response
    return result["content"][0]["text"]


# -- strangers --------------------------------------------------------------------------------


def test_strangers_cannot_keep_an_authorised_client_out(rustpad: RustpadServer):
    # 600 connections need 600 descriptors here and in the server, which inherits the limit:
    # this test raises its own soft limit (RLIMIT_NOFILE) to the hard one, and says so if it
    # cannot reach what it needs.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2_000
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"the hard limit on open files is {hard}; this test needs {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    discover = modern_request(1, "server/discover")
    headers = {**modern_headers("server/discover"), "Authorization": f"Bearer {TOKEN}"}
    dawdlers: list[socket.socket] = []
    with http_server(rustpad, RUSTPAD_MCP_HTTP_TOKEN=TOKEN) as server:
        try:
            for n in range(600):
                dawdler = socket.create_connection(("127.0.0.1", server.port), timeout=10)
                if n % 2 == 0:
                    # Only a request line, and then nothing.
                    dawdler.sendall(b"POST /mcp HTTP/1.1\r\n")
                else:
                    # A whole request without the token: a 401, and the connection kept open.
                    dawdler.sendall(
                        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 2\r\n\r\n{}"
                    )
                dawdlers.append(dawdler)
            # A client that has the token, on a connection opened after all of them. Its guard is
            # shorter than the 30 s in which the server gives up on a client's headers, so the
            # answer cannot be owed to dawdlers timing out.
            answer = exchange(server.url, discover, headers=headers, timeout=20)
            assert answer.status == 200, answer.body
            assert answer.json()["result"]["serverInfo"]["name"] == "rustpad-mcp"
            # Answered while every dawdler is still connected on this side.
            assert all(d.fileno() != -1 for d in dawdlers)
        finally:
            for dawdler in dawdlers:
                dawdler.close()


# -- answers read strictly --------------------------------------------------------------------


@pytest.mark.parametrize("case", list(AMBIGUOUS_RESPONSES))
async def test_an_ambiguous_answer_over_http_changes_nothing(rustpad: RustpadServer, pad: str, case):
    rustpad.seed(pad, "a a")
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        open_call = OpenCall(session, guarded_replace(7, pad))
        question = open_call.next_message()
        assert question["method"] == "elicitation/create"
        raw = AMBIGUOUS_RESPONSES[case].format(id=json.dumps(question["id"]))
        posted = session.post(raw)
        assert posted.status == 202, posted.body
        (response,) = open_call.rest()
    assert response["id"] == 7
    assert result_text(response) == NOT_UNDERSTOOD.format(pad=pad)
    assert rustpad.text(pad) == "a a"


def modern_retry_body(request_id: int, pad: str, state: str, responses: str) -> str:
    """A 2026-07-28 retry of the guarded replace whose inputResponses are `responses`, raw."""
    message = modern_request(request_id, "tools/call", guarded_replace(request_id, pad)["params"])
    message["params"]["requestState"] = state
    message["params"]["inputResponses"] = "RESPONSES"
    return json.dumps(message).replace('"RESPONSES"', responses)


@pytest.mark.parametrize("case", list(AMBIGUOUS_INPUT_RESPONSES))
async def test_ambiguous_input_responses_over_http_change_nothing(
    rustpad: RustpadServer, pad: str, case
):
    rustpad.seed(pad, "a a")
    headers = modern_headers("tools/call", "replace_in_document")
    with http_server(rustpad) as server:
        first = modern_request(1, "tools/call", guarded_replace(1, pad)["params"])
        asked = exchange(server.url, first, headers=headers).json()["result"]
        assert asked["resultType"] == "input_required", asked
        body = modern_retry_body(2, pad, asked["requestState"], AMBIGUOUS_INPUT_RESPONSES[case])
        retried = exchange(server.url, body, headers=headers)
    assert retried.status == 200, retried.body
    assert result_text(retried.json()) == NOT_UNDERSTOOD.format(pad=pad)
    assert rustpad.text(pad) == "a a"


class StdioServer:
    """The binary on stdio, driven one line at a time."""

    def __init__(self, rustpad: RustpadServer):
        self.process = subprocess.Popen(
            [str(MCP_BIN)],
            env=minimal_env(RUSTPAD_URL=rustpad.url),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server closed stdout"
        return json.loads(line)

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=HANG_GUARD_SECONDS)


@pytest.mark.parametrize("case", list(AMBIGUOUS_RESPONSES))
def test_an_ambiguous_answer_on_stdio_changes_nothing(rustpad: RustpadServer, pad: str, case):
    rustpad.seed(pad, "a a")
    server = StdioServer(rustpad)
    try:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {"elicitation": {}},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert server.receive()["id"] == 0
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send(guarded_replace(7, pad))
        question = server.receive()
        assert question["method"] == "elicitation/create", question
        server.send(AMBIGUOUS_RESPONSES[case].format(id=json.dumps(question["id"])))
        response = server.receive()
    finally:
        server.close()
    assert response["id"] == 7
    assert result_text(response) == NOT_UNDERSTOOD.format(pad=pad)
    assert rustpad.text(pad) == "a a"


@pytest.mark.parametrize("case", list(AMBIGUOUS_INPUT_RESPONSES))
def test_ambiguous_input_responses_on_stdio_change_nothing(rustpad: RustpadServer, pad: str, case):
    rustpad.seed(pad, "a a")
    server = StdioServer(rustpad)
    try:
        server.send(modern_request(1, "tools/call", guarded_replace(1, pad)["params"]))
        asked = server.receive()["result"]
        assert asked["resultType"] == "input_required", asked
        server.send(modern_retry_body(2, pad, asked["requestState"], AMBIGUOUS_INPUT_RESPONSES[case]))
        response = server.receive()
    finally:
        server.close()
    assert result_text(response) == NOT_UNDERSTOOD.format(pad=pad)
    assert rustpad.text(pad) == "a a"


# -- the gate refuses ambiguity ----------------------------------------------------------------


def raw_request(port: int, target: str, headers: list[tuple[str, str]], body: bytes) -> int:
    """Sends a request with exactly these headers (repeats allowed) and returns its status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_GUARD_SECONDS)
    try:
        connection.putrequest("POST", target, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_several_origins_or_a_foreign_absolute_target_are_refused(rustpad: RustpadServer):
    body = json.dumps(modern_request(1, "server/discover")).encode()
    base = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        *modern_headers("server/discover").items(),
    ]
    with http_server(rustpad) as server:
        host = ("Host", f"127.0.0.1:{server.port}")
        assert raw_request(server.port, "/mcp", [host, *base], body) == 200
        two_origins = [host, ("Origin", f"http://localhost:{server.port}"), ("Origin", "https://evil.example"), *base]
        assert raw_request(server.port, "/mcp", two_origins, body) == 403
        assert raw_request(server.port, "http://evil.example/mcp", [host, *base], body) == 400
        own = f"http://127.0.0.1:{server.port}/mcp"
        assert raw_request(server.port, own, [host, *base], body) == 200
        two_hosts = [host, ("Host", "localhost"), *base]
        assert raw_request(server.port, "/mcp", two_hosts, body) == 400
        # The standard headers too: a gateway could route on one copy while the body says another.
        two_methods = [host, *base, ("Mcp-Method", "tools/call")]
        assert raw_request(server.port, "/mcp", two_methods, body) == 400


# -- one rule for repeated keys -----------------------------------------------------------------

# A key given twice where a parser would keep one copy: each must be refused, on every transport.
REPEATED = {
    "arguments": (
        '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"get_document",'
        '"arguments":{"id":"PAD","id":"OTHER"}}}',
        'params.arguments gives \\"id\\" twice',
    ),
    "an edit": (
        '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"edit_document",'
        '"arguments":{"id":"PAD","edits":[{"old_text":"alpha","old_text":"omega","new_text":"x"}]}}}',
        'params.arguments.edits[0] gives \\"old_text\\" twice',
    ),
    "_meta": (
        '{"jsonrpc":"2.0","id":33,"method":"tools/list","params":{"_meta":{"progressToken":1,"progressToken":2}}}',
        'params._meta gives \\"progressToken\\" twice',
    ),
}


def repeated_message(case: str, pad: str, other: str) -> tuple[str, str]:
    raw, named = REPEATED[case]
    return raw.replace("OTHER", other).replace("PAD", pad), named.replace('\\"', '"')


@pytest.mark.parametrize("case", list(REPEATED))
def test_a_key_given_twice_is_refused_on_stdio(rustpad: RustpadServer, pad: str, new_pad, case):
    other = new_pad("other")
    rustpad.seed(pad, "alpha")
    rustpad.seed(other, "the other pad")
    raw, named = repeated_message(case, pad, other)
    server = StdioServer(rustpad)
    try:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            }
        )
        assert server.receive()["id"] == 0
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send(raw)
        response = server.receive()
    finally:
        server.close()
    assert response["error"]["code"] == -32600, response
    assert named in response["error"]["message"], response
    assert rustpad.text(pad) == "alpha"
    assert rustpad.log(other) == [] and rustpad.log(pad) == []


@pytest.mark.parametrize("case", list(REPEATED))
def test_a_key_given_twice_is_refused_over_http(rustpad: RustpadServer, pad: str, new_pad, case):
    other = new_pad("other")
    rustpad.seed(pad, "alpha")
    rustpad.seed(other, "the other pad")
    raw, named = repeated_message(case, pad, other)
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        answer = session.post(raw)
    # An invalid request travels as 400, as every one does.
    assert answer.status == 400, answer.body
    response = answer.json()
    assert response["error"]["code"] == -32600 and named in response["error"]["message"], response
    assert rustpad.text(pad) == "alpha"
    assert rustpad.log(other) == [] and rustpad.log(pad) == []


def test_a_notifications_headers_must_agree_with_its_body_cancellations_too(rustpad: RustpadServer):
    with http_server(rustpad) as server:
        session = LegacySession(server.url)
        for method in ("notifications/initialized", "notifications/cancelled"):
            params = {"requestId": 99} if method.endswith("cancelled") else {}
            notification = {"jsonrpc": "2.0", "method": method, "params": params}
            agreeing = exchange(
                server.url,
                notification,
                headers={"Mcp-Session-Id": session.id, "MCP-Protocol-Version": LEGACY, "Mcp-Method": method},
            )
            assert agreeing.status == 202, (method, agreeing.body)
            disagreeing = exchange(
                server.url,
                notification,
                headers={"Mcp-Session-Id": session.id, "MCP-Protocol-Version": LEGACY, "Mcp-Method": "tools/list"},
            )
            assert disagreeing.status == 400, (method, disagreeing.body)
            assert "Mcp-Method" in disagreeing.json()["error"]["message"], disagreeing.body


def test_a_2026_notification_need_not_name_its_method_but_may_not_misname_it(rustpad: RustpadServer):
    """The revision asks `Mcp-Method` of requests and defines no method headers for notifications
    (its Streamable HTTP page, "Sending Messages"); the TypeScript SDK's v2 client posts the
    `notifications/cancelled` that closes a listen without one."""
    cancel = modern_request(None, "notifications/cancelled", {"requestId": "listen:1"})
    del cancel["id"]
    with http_server(rustpad) as server:
        bare = exchange(server.url, cancel, headers={"MCP-Protocol-Version": "2026-07-28"})
        assert (bare.status, bare.body) == (202, b""), bare.body
        named = exchange(server.url, cancel, headers=modern_headers("notifications/cancelled"))
        assert named.status == 202, named.body
        misnamed = exchange(server.url, cancel, headers=modern_headers("tools/list"))
        assert misnamed.status == 400, misnamed.body
        assert misnamed.json()["error"]["code"] == -32020, misnamed.body
        assert "Mcp-Method" in misnamed.json()["error"]["message"], misnamed.body
        unversioned = exchange(server.url, cancel, headers={"Mcp-Method": "notifications/cancelled"})
        assert unversioned.status == 400, unversioned.body
        assert "MCP-Protocol-Version" in unversioned.json()["error"]["message"], unversioned.body
        # A request still names its method.
        request = exchange(server.url, modern_request(1, "tools/list"), headers={"MCP-Protocol-Version": "2026-07-28"})
        assert request.status == 400, request.body
        assert "the Mcp-Method header is missing" in request.json()["error"]["message"], request.body
